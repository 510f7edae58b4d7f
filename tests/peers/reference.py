"""Fixtures for the reference Node Durable Streams server (filled in with the client)."""
