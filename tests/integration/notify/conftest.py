from tests.peers.push_service import push_service  # noqa: F401 (a fixture)
