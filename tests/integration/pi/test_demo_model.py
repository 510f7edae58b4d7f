"""The built-in demo model view, through Django's async stack (every middleware async)."""

import asyncio
import json
import threading
from collections.abc import Iterator

import msgspec
import pytest
import uvicorn
from django.conf import settings
from django.core.asgi import get_asgi_application
from django.test import AsyncClient

from dispatch import demo_model
from dispatch.pi.config import DEMO_MODEL, DEMO_PROVIDER, demo_provider, write_agent_dir
from dispatch.pi.decode import final_text, spend_of
from dispatch.pi.process import PiConfig, PiSession
from tests.integration.pi.conftest import run_to_end
from tests.peers.ports import free_port, wait_for_port

URL = "/demo-model/v1/chat/completions"


def bearer(secret: str | None = None) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret or settings.DEMO_MODEL_SECRET}"}


async def post(body, headers: dict[str, str] | None = None) -> tuple[int, str, bytes]:
    data = body if isinstance(body, bytes) else json.dumps(body)
    response = await AsyncClient().post(
        URL, data, content_type="application/json", headers=bearer() if headers is None else headers
    )
    if response.streaming:
        raw = b"".join([chunk async for chunk in response.streaming_content])
    else:
        raw = response.content
    return response.status_code, response.get("Content-Type", ""), raw


def sse_data(raw: bytes) -> list:
    frames = [f.removeprefix("data: ") for f in raw.decode().split("\n\n") if f]
    assert frames[-1] == "[DONE]"
    return [json.loads(f) for f in frames[:-1]]


def streamed_text(chunks) -> str:
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])


def test_the_view_is_async():
    assert asyncio.iscoroutinefunction(demo_model.chat_completions)


async def test_streams_an_echo_labelled_as_the_demo():
    status, content_type, raw = await post(
        {
            "model": "demo",
            "stream": True,
            "stream_options": {"include_usage": True},
            "messages": [
                {"role": "system", "content": "You are helpful."},
                {"role": "user", "content": [{"type": "text", "text": "what changed?"}]},
            ],
        }
    )
    assert status == 200 and content_type.startswith("text/event-stream")
    chunks = sse_data(raw)
    assert streamed_text(chunks) == "(demo model) I can't think, but I can echo: what changed?"
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "stop"
    usage = chunks[-1]["usage"]
    assert chunks[-1]["choices"] == []
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] > 0


async def test_summarises_a_tool_result():
    status, _, raw = await post(
        {
            "stream": True,
            "messages": [
                {"role": "user", "content": "list files"},
                {"role": "assistant", "content": None, "tool_calls": []},
                {"role": "tool", "content": "README.md\nmanage.py\n", "tool_call_id": "c1"},
            ],
        }
    )
    assert status == 200
    chunks = sse_data(raw)
    assert not any("usage" in c for c in chunks)  # not asked for
    assert streamed_text(chunks) == ("(demo model) The tool finished. It said: README.md manage.py")


async def test_answers_without_streaming_and_rejects_a_bad_body():
    status, _, raw = await post({"messages": [{"role": "user", "content": "hi"}]})
    assert status == 200
    body = json.loads(raw)
    assert body["choices"][0]["message"]["content"].startswith("(demo model)")
    assert (await post({"messages": "nope"}))[0] == 400
    response = await AsyncClient().get(URL)
    assert response.status_code == 405


@pytest.fixture
def live_site(settings) -> Iterator[str]:
    """Django's ASGI app under uvicorn on a free loopback port, in a thread; the demo
    provider's base URL follows it through ``ARBE_INTERNAL_URL``."""
    config = uvicorn.Config(
        get_asgi_application(),
        host="127.0.0.1",
        port=free_port(),
        lifespan="off",
        log_level="warning",
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_for_port(server.config.port)
    settings.ARBE_INTERNAL_URL = f"http://127.0.0.1:{server.config.port}"
    try:
        yield settings.ARBE_INTERNAL_URL
    finally:
        server.should_exit = True
        thread.join(10)


async def test_pi_replies_through_the_demo_model(live_site, tmp_path):
    agent_dir = write_agent_dir(tmp_path / "agent", {DEMO_PROVIDER: demo_provider()})
    config = PiConfig(
        provider=DEMO_PROVIDER,
        model=DEMO_MODEL,
        instructions="",
        session_file=tmp_path / "sessions" / "t.jsonl",
        workspace=tmp_path / "workspace",
        agent_dir=agent_dir,
    )
    async with await PiSession.start(config) as pi:
        events = pi.events()
        await pi.prompt("hello demo")
        seen = await run_to_end(pi, events)

    messages = seen[-1].messages
    assert final_text(messages) == "(demo model) I can't think, but I can echo: hello demo"
    spend = spend_of(messages)
    assert spend.output > 0 and spend.costUsd == 0


def test_the_demo_echoes_the_newest_message_of_a_rendered_conversation():
    from dispatch.demo_model import answer_for

    prompt = "The conversation so far:\n\n[owner]: hi\n\n[Helper]: hello\n\n[owner]: @helper again?"
    message = {"role": "user", "content": prompt + "\n\nReply to the latest messages."}
    answer = answer_for(msgspec.convert([message], list[demo_model.Message]))
    assert answer.endswith("I can't think, but I can echo: @helper again?")


HI = {"messages": [{"role": "user", "content": "hi"}]}


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer demo"},
        {"Authorization": "Bearer "},
        {"Authorization": "Basic ZGVtbzpkZW1v"},
        {"Authorization": "bearer wrong-secret-of-some-length"},
    ],
    ids=["none", "the-old-literal", "empty", "basic", "wrong"],
)
async def test_a_caller_without_the_install_secret_gets_401(headers):
    status, _, raw = await post(HI, headers=headers)
    assert status == 401
    assert "error" in json.loads(raw)
    assert settings.DEMO_MODEL_SECRET.encode() not in raw


@pytest.mark.django_db(transaction=True)
async def test_a_signed_in_browser_without_the_secret_gets_401(django_user_model):
    """A session is not a credential here: the endpoint is CSRF-exempt because Pi calls it,
    so a cookie alone must never be enough."""
    user = await django_user_model.objects.acreate(username="browser")
    client = AsyncClient()
    await client.aforce_login(user)
    response = await client.post(URL, json.dumps(HI), content_type="application/json")
    assert response.status_code == 401


async def test_the_secret_is_checked_before_the_body_is_read():
    status, _, raw = await post(b"{not json", headers={})
    assert status == 401


DEEP = b'{"messages": [], "x": ' + b"[" * 1000 + b"]" * 1000 + b"}"
BAD_BODIES = [
    ("text-part-not-a-string", {"messages": [{"role": "user",
                                              "content": [{"type": "text", "text": 5}]}]}, 400),
    ("stream-options-a-string", {"stream": True, "stream_options": "x", "messages": []}, 400),
    ("content-a-number", {"messages": [{"role": "user", "content": 5}]}, 400),
    ("message-not-an-object", {"messages": ["hi"]}, 400),
    ("role-missing", {"messages": [{"content": "hi"}]}, 400),
    ("stream-not-a-bool", {"stream": "yes", "messages": []}, 400),
    ("messages-missing", {}, 400),
    ("json-array", [1, 2], 400),
    ("nested-1000-deep", DEEP, 400),
    ("nested-1000-deep-in-messages", b'{"messages": ' + b"[" * 1000 + b"]" * 1000 + b"}", 400),
    ("invalid-utf8-in-a-string", b'{"messages": [{"role": "user", "content": "\xff\xfe"}]}', 400),
    ("invalid-utf8-outside-strings", b"\xff" + json.dumps(HI).encode(), 400),
    ("malformed", b'{"messages": [', 400),
]  # fmt: skip


@pytest.mark.parametrize(("case", "body", "status"), BAD_BODIES, ids=[c[0] for c in BAD_BODIES])
async def test_a_body_the_demo_cannot_read_is_a_clear_4xx(case, body, status):
    got, content_type, raw = await post(body)
    assert got == status, case
    assert content_type == "application/json"
    message = json.loads(raw)["error"]["message"]
    assert message.startswith("bad request:")
    assert "Traceback" not in message and "/" not in message.split(":", 1)[1].replace("$", "")


async def test_an_oversized_body_is_413(settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    body = {"messages": [{"role": "user", "content": "x" * 4096}]}
    status, _, raw = await post(body)
    assert status == 413
    assert "too large" in json.loads(raw)["error"]["message"]


async def test_image_parts_and_unknown_fields_are_ignored():
    body = {
        "model": "demo",
        "temperature": 0.2,
        "messages": [
            {"role": "user", "name": "x", "content": [
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}},
                {"type": "text", "text": "look"},
            ]},
        ],
    }  # fmt: skip
    status, _, raw = await post(body)
    assert status == 200
    assert json.loads(raw)["choices"][0]["message"]["content"].endswith("echo: look")
