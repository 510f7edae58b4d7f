"""Fixtures for the embedded Durable Streams server (filled in with the server)."""
