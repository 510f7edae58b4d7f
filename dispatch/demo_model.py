"""The built-in demo model: an OpenAI-compatible chat completions endpoint that echoes.

Bots on the ``arbe-demo`` provider talk to it, so a fresh install can show a whole reply
(Pi, phases, spend) without a model key. Every answer says it comes from the demo model.
Pi calls ``POST {baseUrl}/chat/completions`` with ``stream: true``; a plain JSON answer is
given when ``stream`` is false. It answers only this install's Pi processes (a per-install
secret as their API key, 401 otherwise), and any body it can't read is a 4xx, never a 5xx.
"""

from __future__ import annotations

import hmac
import json
import re
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import msgspec
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

MODEL = "demo"
LABEL = "(demo model)"
ECHO_CHARS = 500


class ContentPart(msgspec.Struct):
    """One part of a message's content; only ``text`` parts are read (images are ignored)."""

    type: str
    text: str | None = None


class Message(msgspec.Struct):
    role: str
    content: str | list[ContentPart] | None = None


class StreamOptions(msgspec.Struct):
    include_usage: bool = False


class CompletionRequest(msgspec.Struct):
    """What the demo reads of an OpenAI chat completions request; other fields are ignored."""

    messages: list[Message]
    stream: bool = False
    stream_options: StreamOptions | None = None


_request = msgspec.json.Decoder(CompletionRequest)


class BadRequest(Exception):
    """A body the demo can't read: answered 400 (or ``status``) with the reason."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def decode_request(request: HttpRequest) -> CompletionRequest:
    """The body as a ``CompletionRequest``; every way it can be wrong is a ``BadRequest``."""
    try:
        return _request.decode(request.body or b"{}")
    except RequestDataTooBig:
        raise BadRequest("body too large", status=413) from None
    except msgspec.ValidationError as exc:
        raise BadRequest(str(exc)) from None
    except msgspec.DecodeError as exc:
        raise BadRequest(f"malformed JSON: {exc}") from None
    except UnicodeDecodeError:
        raise BadRequest("the body is not valid UTF-8") from None
    except RecursionError:  # msgspec has no depth limit of its own
        raise BadRequest("JSON nested too deeply") from None


def authorized(request: HttpRequest) -> bool:
    """Whether the caller is one of this install's Pi processes: they send the per-install
    ``DEMO_MODEL_SECRET`` (their ``models.json`` API key) as a Bearer token."""
    sent = request.headers.get("Authorization", "")
    expected = f"Bearer {settings.DEMO_MODEL_SECRET}"
    return bool(settings.DEMO_MODEL_SECRET) and hmac.compare_digest(
        sent.encode("latin-1", "replace"), expected.encode()
    )


def error(status: int, message: str, kind: str) -> JsonResponse:
    """An error in the shape OpenAI clients (Pi's included) read."""
    response = JsonResponse({"error": {"message": message, "type": kind}}, status=status)
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="arbe demo model"'
    return response


def text_of(content: str | list[ContentPart] | None) -> str:
    """A message's text: OpenAI content is a string or a list of typed parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.text or "" for part in content if part.type == "text")
    return ""


# arbe renders a conversation as "[Name]: text" paragraphs; the demo echoes the newest one.
SPEAKER = re.compile(r"^\[[^\]\n]+\]: ", re.MULTILINE)


def latest_message(prompt: str) -> str:
    starts = [m.end() for m in SPEAKER.finditer(prompt)]
    return prompt[starts[-1] :].split("\n\n")[0] if starts else prompt


def answer_for(messages: list[Message]) -> str:
    last = messages[-1] if messages else None
    if last is not None and last.role == "tool":
        said = " ".join(text_of(last.content).split())
        summary = said[:200] + ("…" if len(said) > 200 else "")
        return f"{LABEL} The tool finished. It said: {summary or '(nothing)'}"
    users = [m for m in messages if m.role == "user"]
    said = latest_message(text_of(users[-1].content).strip()) if users else ""
    if len(said) > ECHO_CHARS:
        said = said[:ECHO_CHARS] + "…"
    return f"{LABEL} I can't think, but I can echo: {said or '(nothing)'}"


def usage_for(messages: list[Message], answer: str) -> dict[str, Any]:
    """Made-up but plausible token counts: about four characters a token."""
    prompt = sum(len(text_of(m.content)) for m in messages) // 4 + len(messages)
    completion = max(1, len(answer) // 4)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0},
    }


def _chunk(completion_id: str, created: int, delta: dict, finish: str | None) -> dict[str, Any]:
    return {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


async def _sse(chunks: list[dict[str, Any]]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield f"data: {json.dumps(chunk)}\n\n".encode()
    yield b"data: [DONE]\n\n"


def stream_chunks(answer: str, usage: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The answer as chunks, a word at a time, then the finish (and usage) chunks."""
    completion_id = f"chatcmpl-demo-{uuid.uuid4().hex[:12]}"
    created = int(time.time())
    words = answer.split(" ")
    pieces = [word if i == 0 else f" {word}" for i, word in enumerate(words)]
    chunks = [
        _chunk(completion_id, created, {"role": "assistant", "content": piece}, None)
        for piece in pieces
    ]
    chunks.append(_chunk(completion_id, created, {}, "stop"))
    if usage is not None:
        chunks.append({**_chunk(completion_id, created, {}, None), "choices": [], "usage": usage})
    return chunks


# Pi calls this with its API key, not a session: CSRF does not apply, the secret is the credential.
@csrf_exempt
@require_POST
async def chat_completions(request: HttpRequest) -> HttpResponse:
    if not authorized(request):
        return error(401, "This endpoint answers arbe's own bots only.", "authentication_error")
    try:
        body = decode_request(request)
    except BadRequest as exc:
        return error(exc.status, f"bad request: {exc}", "invalid_request_error")
    answer = answer_for(body.messages)
    usage = usage_for(body.messages, answer)
    if not body.stream:
        return JsonResponse(
            {
                "id": f"chatcmpl-demo-{uuid.uuid4().hex[:12]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": MODEL,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": answer},
                        "finish_reason": "stop",
                    }
                ],
                "usage": usage,
            }
        )
    include_usage = body.stream_options is not None and body.stream_options.include_usage
    response = StreamingHttpResponse(
        _sse(stream_chunks(answer, usage if include_usage else None)),
        content_type="text/event-stream",
    )
    response["Cache-Control"] = "no-cache"
    return response
