"""The long-running servers' runtime settings (``arbe_lib.runtime``)."""

import pytest

txaio = pytest.importorskip("txaio")


@pytest.fixture
def autobahn_names():
    """autobahn's own debug formatters for the test (an ASGI import in this process may
    have replaced them already); what was there is put back after it."""
    import daphne.server  # noqa: F401 - selects Twisted for txaio, as Daphne does
    from autobahn import util
    from autobahn.twisted import websocket
    from autobahn.websocket import protocol

    saved = {m: (m.hltype, m.hlval) for m in (protocol, websocket)}
    for module in saved:  # as autobahn made them, whatever ran in this process before
        module.hltype, module.hlval = util.hltype, util.hlval
    level = txaio.get_global_log_level()
    yield protocol, websocket
    txaio.set_global_log_level(level)
    for module, (hltype, hlval) in saved.items():
        module.hltype, module.hlval = hltype, hlval


def test_debug_arguments_are_not_built_when_debug_logging_is_off(autobahn_names):
    from arbe_lib.runtime import skip_websocket_debug_arguments

    txaio.set_global_log_level("info")
    skip_websocket_debug_arguments()
    for module in autobahn_names:
        assert module.hltype(skip_websocket_debug_arguments) == ""
        assert module.hlval("127.0.0.1:5000") == ""


def test_debug_logging_keeps_its_arguments(autobahn_names):
    from arbe_lib.runtime import skip_websocket_debug_arguments

    txaio.set_global_log_level("debug")
    skip_websocket_debug_arguments()
    for module in autobahn_names:
        assert "skip_websocket_debug_arguments" in module.hltype(skip_websocket_debug_arguments)


async def test_async_tests_run_on_uvloop():
    """tests/conftest.py gives async tests the loop the servers run (arbe_site.web)."""
    import asyncio

    import uvloop

    assert isinstance(asyncio.get_running_loop(), uvloop.Loop)
