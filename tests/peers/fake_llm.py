"""A loopback fake of an OpenAI-compatible model server, for running a real Pi in tests.

Pi only calls ``POST {baseUrl}/chat/completions`` with ``stream: true``; this server answers
that route with Server-Sent Events and records every request body in ``requests``.

What it answers is scripted. Replies queued with ``script()`` go first, in order; otherwise
a marker in the last user message picks a script, indexed by how many tool results follow
that message (the tool round):

- ``USETOOL``: a ``bash`` call ``echo pi-tool-ok``, then text.
- ``TWOTOOLS``: ``echo round-1``, then ``echo round-2``, then text.
- ``ENVTOOL``: a ``bash`` call ``env``, then text.
- ``FAIL500``: HTTP 500.
- ``SLOW``: a hundred tokens, 0.2 s apart (for timeouts to cut).
- ``LONGTOOL<n>``: a ``bash`` call ``sleep <n>`` (a tool call held open n seconds, a build
  or a test suite), then text.
- anything else: ``Hello from fake LLM!``; after a tool result, ``Tool said: <its text>``.

``hold()`` makes the next request wait until the test releases it, so a test can act at a
known point of a run (steer while the first tool round is pending).
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

MODEL = "fake-model"
PROVIDER = "fakellm"
DEFAULT_TEXT = "Hello from fake LLM!"


@dataclass(frozen=True)
class Text:
    text: str
    delay: float = 0.0  # seconds between tokens


@dataclass(frozen=True)
class ToolCall:
    arguments: dict[str, Any]
    name: str = "bash"


@dataclass(frozen=True)
class Fail:
    status: int = 500
    message: str = "fake upstream failure"


Reply = Text | ToolCall | Fail


def bash(command: str) -> ToolCall:
    return ToolCall({"command": command})


MARKERS: dict[str, list[Reply]] = {
    "USETOOL": [bash("echo pi-tool-ok")],
    "TWOTOOLS": [bash("echo round-1"), bash("echo round-2")],
    "ENVTOOL": [bash("env")],
    "FAIL500": [Fail()],
    "SLOW": [Text(" ".join(f"tok{i}" for i in range(100)), delay=0.2)],
}

LONG_TOOL = re.compile(r"LONGTOOL(\d{1,5})")


@dataclass
class Gate:
    """A held request: ``arrived`` is set when it comes in; it is answered after ``release()``."""

    arrived: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)

    def release(self) -> None:
        self.released.set()


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def choose(messages: list[dict[str, Any]]) -> Reply:
    """The marker-scripted reply for a conversation."""
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    prompt = text_of(messages[last_user].get("content")) if last_user >= 0 else ""
    tool_round = sum(1 for m in messages[last_user + 1 :] if m.get("role") == "tool")
    for marker, replies in MARKERS.items():
        if marker in prompt and tool_round < len(replies):
            return replies[tool_round]
    if (long := LONG_TOOL.search(prompt)) and tool_round == 0:
        return bash(f"sleep {long[1]} && echo slept-{long[1]}")
    if messages and messages[-1].get("role") == "tool":
        return Text(f"Tool said: {text_of(messages[-1].get('content')).strip()}")
    return Text(DEFAULT_TEXT)


class FakeLLM:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._queue: deque[Reply] = deque()
        self._gates: deque[Gate] = deque()
        self._lock = threading.Condition()
        self._closing = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self.port: int = self._server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def script(self, *replies: Reply) -> None:
        """Queue replies for the next requests, ahead of the markers."""
        with self._lock:
            self._queue.extend(replies)

    def hold(self) -> Gate:
        """Hold the next request that arrives until the returned gate is released."""
        gate = Gate()
        with self._lock:
            self._gates.append(gate)
        return gate

    def wait_for_requests(self, count: int, timeout: float = 30.0) -> list[dict[str, Any]]:
        with self._lock:
            if not self._lock.wait_for(lambda: len(self.requests) >= count, timeout):
                raise TimeoutError(f"{len(self.requests)} of {count} requests within {timeout}s")
            return list(self.requests)

    def _take(self, body: dict[str, Any]) -> tuple[Reply, Gate | None]:
        with self._lock:
            self.requests.append(body)
            self._lock.notify_all()
            reply = self._queue.popleft() if self._queue else choose(body.get("messages", []))
            return reply, (self._gates.popleft() if self._gates else None)

    def start(self) -> FakeLLM:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._closing.set()
        with self._lock:
            for gate in self._gates:
                gate.release()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


def _handler_for(fake: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive and chunked streams, as Pi's client expects

        def log_message(self, format, *args):  # noqa: A002 - quiet test output
            pass

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if self.path.rstrip("/") != "/v1/chat/completions":
                return self._json(404, {"error": {"message": f"no route {self.path}"}})
            reply, gate = fake._take(body)
            if gate is not None:
                gate.arrived.set()
                gate.released.wait(60)
            if isinstance(reply, Fail):
                return self._json(reply.status, {"error": {"message": reply.message}})
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self._stream(body, reply)

        def _json(self, status: int, data: dict[str, Any]) -> None:
            raw = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def _stream(self, body: dict[str, Any], reply: Text | ToolCall) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk_id = f"chatcmpl-fake-{time.monotonic_ns()}"
            deltas, finish = _deltas(reply)
            for delta in deltas:
                if isinstance(reply, Text) and reply.delay and fake._closing.wait(reply.delay):
                    break
                self._event(_chunk(chunk_id, delta, None))
            self._event(_chunk(chunk_id, {}, finish))
            if (body.get("stream_options") or {}).get("include_usage"):
                prompt_tokens = len(json.dumps(body.get("messages", []))) // 4
                usage = {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": len(deltas),
                    "total_tokens": prompt_tokens + len(deltas),
                    "prompt_tokens_details": {"cached_tokens": 0},
                }
                self._event({**_chunk(chunk_id, {}, None), "choices": [], "usage": usage})
            self._send(b"data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")

        def _event(self, data: dict[str, Any]) -> None:
            self._send(f"data: {json.dumps(data)}\n\n".encode())

        def _send(self, raw: bytes) -> None:
            self.wfile.write(f"{len(raw):x}\r\n".encode() + raw + b"\r\n")
            self.wfile.flush()

    return Handler


def _deltas(reply: Text | ToolCall) -> tuple[list[dict[str, Any]], str]:
    if isinstance(reply, Text):
        words = reply.text.split(" ")
        tokens = [w if i == 0 else f" {w}" for i, w in enumerate(words)]
        return [{"role": "assistant", "content": t} for t in tokens], "stop"
    arguments = json.dumps(reply.arguments)
    call_id = f"call_fake_{time.monotonic_ns()}"
    head = {"index": 0, "id": call_id, "type": "function"}
    first = {**head, "function": {"name": reply.name, "arguments": ""}}
    halves = [arguments[: len(arguments) // 2], arguments[len(arguments) // 2 :]]
    rest = [{"index": 0, "function": {"arguments": part}} for part in halves]
    deltas = [{"role": "assistant", "content": None, "tool_calls": [first]}]
    return deltas + [{"tool_calls": [part]} for part in rest], "tool_calls"


def _chunk(chunk_id: str, delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    return {
        "id": chunk_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


@contextlib.contextmanager
def fake_llm_server() -> Iterator[FakeLLM]:
    """Run a fake on a free loopback port for the duration of the block."""
    fake = FakeLLM().start()
    try:
        yield fake
    finally:
        fake.stop()


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    with fake_llm_server() as fake:
        yield fake
