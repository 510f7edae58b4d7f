"""Idempotent producers: exactly once through dropped connections, fencing, gaps."""

import pytest

from streams import errors, wire
from tests.integration.streams_client.conftest import make_async_client, make_client
from tests.integration.streams_client.relay import dropping_relay

pytestmark = pytest.mark.timeout(20, func_only=True)

NO_WAIT = wire.Backoff(attempts=5, base=0.01, cap=0.05)


def test_sequence_and_duplicates(client, name):
    client.create(name)
    producer = client.producer(name, "writer-1")
    first = producer.append({"n": 0})
    second = producer.append_batch([{"n": 1}, {"n": 2}])
    assert (first.producer_seq, second.producer_seq) == (0, 1) and not second.duplicate
    # A restarted producer that replays seq 1 gets a duplicate, not a second copy.
    replay = client.producer(name, "writer-1", seq=1).append_batch([{"n": 1}, {"n": 2}])
    assert replay.duplicate
    assert client.catch_up(name).json() == [{"n": 0}, {"n": 1}, {"n": 2}]


def test_dropped_response_is_retried_and_appended_once(server, client, name):
    client.create(name)
    with (
        dropping_relay(server.url) as relay,
        make_client(server.__class__(server.kind, relay.url, server.secret)) as flaky,
    ):
        producer = flaky.producer(name, "writer-drop", backoff=NO_WAIT)
        result = producer.append({"once": True})
        assert relay.dropped == 1
        assert result.duplicate  # the retry found the first try already appended
        producer.append({"after": True})
    assert client.catch_up(name).json() == [{"once": True}, {"after": True}]


def test_a_plain_append_cannot_tell(server, client, name):
    """Why producers exist: without them the dropped append landed but raised."""
    client.create(name)
    with (
        dropping_relay(server.url) as relay,
        make_client(server.__class__(server.kind, relay.url, server.secret)) as flaky,
        pytest.raises(errors.TransportError),
    ):
        flaky.append(name, {"maybe": True})
    assert client.catch_up(name).json() == [{"maybe": True}]


async def test_async_dropped_response_is_retried_and_appended_once(server, name):
    async with make_async_client(server) as direct:
        await direct.create(name)
        with dropping_relay(server.url, drops=2) as relay:
            flaky_server = server.__class__(server.kind, relay.url, server.secret)
            async with make_async_client(flaky_server) as flaky:
                producer = flaky.producer(name, "writer-drop", backoff=NO_WAIT)
                assert (await producer.append({"once": True})).duplicate
                assert relay.dropped == 2
        assert (await direct.catch_up(name)).json() == [{"once": True}]


def test_transient_server_errors_resend_the_same_seq(server, client, name):
    client.create(name)
    producer = client.producer(name, "writer-503", backoff=NO_WAIT)
    producer.append({"n": 0})
    server.inject(name, status=503, count=2)
    result = producer.append({"n": 1})
    assert result.producer_seq == 1 and not result.duplicate
    assert client.catch_up(name).json() == [{"n": 0}, {"n": 1}]


def test_retries_give_up(server, client, name):
    client.create(name)
    producer = client.producer(name, "writer-down", backoff=NO_WAIT)
    server.inject(name, status=500, count=NO_WAIT.attempts, method="POST")
    with pytest.raises(errors.ServerError):
        producer.append({"n": 0})
    assert client.catch_up(name).json() == []


def test_stale_epoch_is_fenced(client, name):
    client.create(name)
    client.producer(name, "shared", epoch=1).append({"new": True})
    zombie = client.producer(name, "shared", epoch=0)
    with pytest.raises(errors.ProducerStale) as caught:
        zombie.append({"old": True})
    assert caught.value.current_epoch == 1 and caught.value.status == 403


def test_auto_claim_is_opt_in(client, name):
    client.create(name)
    client.producer(name, "shared", epoch=3).append({"n": 0})
    claimer = client.producer(name, "shared", epoch=0, auto_claim=True)
    result = claimer.append({"n": 1})
    assert (result.producer_epoch, result.producer_seq) == (4, 0)
    assert client.catch_up(name).json() == [{"n": 0}, {"n": 1}]


def test_sequence_gap(client, name):
    client.create(name)
    client.producer(name, "gappy").append({"n": 0})
    with pytest.raises(errors.ProducerSeqGap) as caught:
        client.producer(name, "gappy", seq=5).append({"n": 5})
    assert (caught.value.expected, caught.value.received) == (1, 5)


def test_producer_close(client, name):
    client.create(name)
    producer = client.producer(name, "closer")
    producer.append({"n": 0})
    assert producer.close().closed
    assert client.catch_up(name).closed


async def test_async_producer(aclient, name):
    await aclient.create(name)
    producer = aclient.producer(name, "async-writer")
    await producer.append({"n": 0})
    await producer.append_batch([{"n": 1}, {"n": 2}])
    await producer.close({"n": 3})
    result = await aclient.catch_up(name)
    assert result.json() == [{"n": i} for i in range(4)] and result.closed
