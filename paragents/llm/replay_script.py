"""Scripted HTTP responses for :class:`~paragents.llm.replay.ReplayServer`, built by hand, from a
fixture/cassette dict (format: ``tests/fixtures_shared/README.md``) or synthesised from a message."""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from paragents.models import Usage


@dataclass
class ScriptedResponse:
    """One HTTP response to play.

    - ``status`` / ``headers``: status line and headers (Content-Type defaults to
      ``text/event-stream`` for 2xx, ``application/json`` otherwise).
    - ``reads``: body pieces; each is written and flushed separately (one HTTP chunk each), str
      encoded as UTF-8, bytes as is.
    - ``delay_before``: seconds to wait before sending the status line.
    - ``hang``: after the reads, keep the connection open without ending the body until the client
      closes it (to test read timeouts and cancellation).
    - ``before_read``: optional ``async fn(i)`` awaited before read ``i`` is sent (a gate: e.g. wait
      on an asyncio.Event set by the test); it runs on the server's event loop.
    - ``truncate``: end the connection without the final empty chunk (an incomplete HTTP body).
    """

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    reads: list[bytes | str] = field(default_factory=list)
    delay_before: float = 0
    hang: bool = False
    before_read: Callable[[int], Awaitable[None]] | None = None
    truncate: bool = False

    @classmethod
    def from_fixture(cls, fixture: dict[str, Any]) -> ScriptedResponse | list[ScriptedResponse]:
        """Build from a fixture or cassette dict: ``reads`` (list of str) or ``reads_b64`` (list of
        base64 str) give one 200 event-stream response; ``responses`` (list of ``{"status",
        "headers", "reads"|"reads_b64"}``) gives a list, one per request. Raises ValueError naming
        the fixture (its ``id``) when none of those fields is present or one has a wrong type."""
        items = cls.list_from_fixture(fixture)
        return items if "responses" in fixture else items[0]

    @classmethod
    def list_from_fixture(cls, fixture: dict[str, Any]) -> list[ScriptedResponse]:
        """Like :meth:`from_fixture` but always returns a list."""
        name = fixture.get("id", "(no id)")
        if "responses" in fixture:
            if not isinstance(fixture["responses"], list):
                raise ValueError(f"fixture {name}: 'responses' must be a list of {{status, headers, reads}}")
            return [cls._one(item, name) for item in fixture["responses"]]
        return [cls._one(fixture, name)]

    @classmethod
    def _one(cls, item: dict[str, Any], name: str) -> ScriptedResponse:
        if not isinstance(item, dict):
            raise ValueError(f"fixture {name}: each response must be an object")
        reads: list[bytes | str]
        if isinstance(item.get("reads"), list):
            reads = [str(r) for r in item["reads"]]
        elif isinstance(item.get("reads_b64"), list):
            try:
                reads = [base64.b64decode(r, validate=True) for r in item["reads_b64"]]
            except (ValueError, TypeError) as exc:
                raise ValueError(f"fixture {name}: 'reads_b64' holds invalid base64 ({exc})") from None
        else:
            raise ValueError(f"fixture {name}: needs a 'reads', 'reads_b64' or 'responses' list")
        headers = item.get("headers") or {}
        if not isinstance(headers, dict):
            raise ValueError(f"fixture {name}: 'headers' must be an object of name: value")
        return cls(
            status=int(item.get("status", 200)),
            headers={str(k): str(v) for k, v in headers.items()},
            reads=reads,
        )

    @classmethod
    def from_message(
        cls,
        content: str | None = None,
        *,
        reasoning_content: str | None = None,
        tool_calls: list[dict[str, str]] | None = None,
        finish_reason: str | None = None,
        usage: Usage | dict[str, int] | None = None,
        chunk_size: int = 8,
        done: bool = True,
    ) -> ScriptedResponse:
        """Synthesise a realistic OpenAI SSE stream (one event per read) for one assistant reply.

        Text is cut into ``chunk_size``-character deltas; each of ``tool_calls`` (``{"id", "name",
        "arguments"}``) opens with id+name and empty arguments, then streams its arguments. The
        finish chunk carries ``finish_reason`` (default "tool_calls" when there are calls, else
        "stop"); ``usage`` comes in a final chunk with empty choices; ``done`` appends ``[DONE]``."""

        def event(delta: dict[str, Any], reason: str | None = None) -> str:
            chunk = {
                "id": "chatcmpl-replay",
                "object": "chat.completion.chunk",
                "model": "replay-model",
                "choices": [{"index": 0, "delta": delta, "finish_reason": reason}],
            }
            return f"data: {json.dumps(chunk)}\n\n"

        def pieces(text: str) -> list[str]:
            size = max(1, chunk_size)
            return [text[i : i + size] for i in range(0, len(text), size)] or [""]

        reads: list[bytes | str] = [event({"role": "assistant", "content": ""})]
        for piece in pieces(reasoning_content) if reasoning_content else []:
            reads.append(event({"reasoning_content": piece}))
        for piece in pieces(content) if content else []:
            reads.append(event({"content": piece}))
        for index, call in enumerate(tool_calls or []):
            opening = {
                "index": index,
                "id": call["id"],
                "type": "function",
                "function": {"name": call["name"], "arguments": ""},
            }
            reads.append(event({"tool_calls": [opening]}))
            for piece in pieces(call.get("arguments", "")) if call.get("arguments") else []:
                reads.append(event({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
        reason = finish_reason or ("tool_calls" if tool_calls else "stop")
        reads.append(event({}, reason))
        if usage is not None:
            usage_dict: dict[str, Any] = usage.to_dict() if isinstance(usage, Usage) else dict(usage)
            if "cached_tokens" in usage_dict:  # sent where OpenAI puts it
                usage_dict["prompt_tokens_details"] = {"cached_tokens": usage_dict.pop("cached_tokens")}
            chunk = {
                "id": "chatcmpl-replay",
                "object": "chat.completion.chunk",
                "choices": [],
                "usage": usage_dict,
            }
            reads.append(f"data: {json.dumps(chunk)}\n\n")
        if done:
            reads.append("data: [DONE]\n\n")
        return cls(reads=reads)
