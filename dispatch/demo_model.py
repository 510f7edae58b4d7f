"""The built-in demo model: an OpenAI-compatible chat completions endpoint that echoes.

Bots on the ``arbe-demo`` provider talk to it, so a fresh install can show a whole reply
(Pi, phases, spend) without a model key. Every answer says it comes from the demo model.
Pi calls ``POST {baseUrl}/chat/completions`` with ``stream: true``; a plain JSON answer is
given when ``stream`` is false.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

MODEL = "demo"
LABEL = "(demo model)"
ECHO_CHARS = 500


def text_of(content: Any) -> str:
    """A message's text: OpenAI content is a string or a list of typed parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "")
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


# arbe renders a conversation as "[Name]: text" paragraphs; the demo echoes the newest one.
SPEAKER = re.compile(r"^\[[^\]\n]+\]: ", re.MULTILINE)


def latest_message(prompt: str) -> str:
    starts = [m.end() for m in SPEAKER.finditer(prompt)]
    return prompt[starts[-1] :].split("\n\n")[0] if starts else prompt


def answer_for(messages: list[dict[str, Any]]) -> str:
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":
        said = " ".join(text_of(last.get("content")).split())
        summary = said[:200] + ("…" if len(said) > 200 else "")
        return f"{LABEL} The tool finished. It said: {summary or '(nothing)'}"
    users = [m for m in messages if m.get("role") == "user"]
    said = latest_message(text_of(users[-1].get("content")).strip()) if users else ""
    if len(said) > ECHO_CHARS:
        said = said[:ECHO_CHARS] + "…"
    return f"{LABEL} I can't think, but I can echo: {said or '(nothing)'}"


def usage_for(messages: list[dict[str, Any]], answer: str) -> dict[str, Any]:
    """Made-up but plausible token counts: about four characters a token."""
    prompt = sum(len(text_of(m.get("content"))) for m in messages) // 4 + len(messages)
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


@csrf_exempt
@require_POST
async def chat_completions(request: HttpRequest) -> HttpResponse:
    try:
        body = json.loads(request.body or b"{}")
        messages = body.get("messages")
        if not isinstance(messages, list):
            raise ValueError("messages must be a list")
    except (ValueError, AttributeError) as exc:
        return JsonResponse({"error": {"message": f"bad request: {exc}"}}, status=400)
    messages = [m for m in messages if isinstance(m, dict)]
    answer = answer_for(messages)
    usage = usage_for(messages, answer)
    if not body.get("stream"):
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
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    response = StreamingHttpResponse(
        _sse(stream_chunks(answer, usage if include_usage else None)),
        content_type="text/event-stream",
    )
    response["Cache-Control"] = "no-cache"
    return response
