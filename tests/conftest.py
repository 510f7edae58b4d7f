"""Shared test set-up. Peers (stream servers, Postgres, Redis) are started by the plugin
modules in ``tests/peers/`` on free loopback ports and stopped by their PIDs."""

pytest_plugins = ["tests.peers.embedded", "tests.peers.reference"]
