"""Every shared SSE fixture, served by the loopback ReplayServer and read by the real ChatClient."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from paragents.llm import ChatClient, LLMError
from paragents.llm.replay import ReplayServer, ScriptedResponse
from paragents.llm.stream import StreamDelta, StreamReasoningDelta, StreamTextDelta
from paragents.models import parse_arguments
from tests.conftest import shared_fixtures_dir
from tests.patience import HANG_GUARD_S

API_KEY = "sk-test-fixture-key-0123456789"
FIXTURES = sorted((shared_fixtures_dir() / "sse").glob("*.json"))


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def test_fixture_folder_is_not_empty() -> None:
    assert len(FIXTURES) >= 12


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
async def test_sse_fixture(path: Path) -> None:
    fixture = _load(path)
    expected = fixture["expected"]
    deltas: list[StreamDelta] = []
    records: list[dict[str, Any]] = []
    async with ReplayServer() as server:
        server.add_fixture(fixture)
        client = ChatClient(server.base_url, API_KEY, max_retries=0, recorder=records.append)
        try:
            reply = await client.stream_chat(
                model="m", messages=[{"role": "user", "content": "hi"}], tools=None, on_delta=deltas.append
            )
        except LLMError as exc:  # no current fixture expects a turn error; keep the check honest
            assert expected["error"] is not None, f"unexpected error: {exc.message}"
            assert expected["error"] in exc.message.lower()
            return
        finally:
            await client.aclose()
        requests = server.requests

    assert reply.complete
    assert reply.content == expected["content"]
    assert reply.reasoning == expected["reasoning"]
    got_calls = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in reply.tool_calls]
    assert got_calls == expected["tool_calls"]
    assert reply.finish_reason == expected["finish_reason"]
    assert (reply.usage.to_dict() if reply.usage else None) == expected["usage"]

    # what reached on_delta adds up to the same text, in order
    text = "".join(d.text for d in deltas if isinstance(d, StreamTextDelta))
    thought = "".join(d.text for d in deltas if isinstance(d, StreamReasoningDelta))
    assert text == (expected["content"] or "")
    assert thought == (expected["reasoning"] or "")

    # one streaming request, no non-streaming fallback
    assert len(requests) == 1
    assert requests[0].body_json["stream"] is True
    assert requests[0].headers["authorization"] == f"Bearer {API_KEY}"

    # argument text is never repaired: the fixture's error is what parse_arguments says
    errors = []
    for call in reply.tool_calls:
        try:
            parse_arguments(call.arguments)
        except ValueError as exc:
            errors.append(str(exc))
    if expected["error"] is None:
        assert errors == []
    else:
        assert errors, "expected the arguments to fail to parse"
        assert all(expected["error"] in e.lower() for e in errors)
        assert all("not valid JSON" in e for e in errors)
    assert expected["execute_tools"] == (bool(reply.tool_calls) and not errors)

    # the recording replays the same reads and never holds the key
    assert len(records) == 1
    assert API_KEY not in json.dumps(records)
    replayed = ScriptedResponse.list_from_fixture(records[0])[0].reads
    original = ScriptedResponse.list_from_fixture(fixture)[0].reads
    as_bytes = [r.encode() if isinstance(r, str) else r for r in original]
    assert b"".join(r.encode() if isinstance(r, str) else r for r in replayed) == b"".join(as_bytes)


async def test_a6_first_delta_reaches_caller_before_stream_ends() -> None:
    """A6-t1 note: the 'A' delta must reach the UI as soon as read 2 has arrived."""
    fixture = _load(shared_fixtures_dir() / "sse" / "A6-t1.json")
    response = ScriptedResponse.list_from_fixture(fixture)[0]
    a_seen = asyncio.Event()
    finished_before_a: list[bool] = []
    reply_done = asyncio.Event()

    async def gate(index: int) -> None:
        if index == 2:  # hold the last read back until the client has shown "A"
            await a_seen.wait()
            finished_before_a.append(reply_done.is_set())

    response.before_read = gate

    def on_delta(delta: StreamDelta) -> None:
        if isinstance(delta, StreamTextDelta) and delta.text == "A":
            a_seen.set()

    async with ReplayServer() as server:
        server.add(response)
        client = ChatClient(server.base_url, None, max_retries=0)
        try:
            reply = await asyncio.wait_for(
                client.stream_chat(model="m", messages=[], tools=None, on_delta=on_delta),
                timeout=HANG_GUARD_S,
            )
            reply_done.set()
        finally:
            await client.aclose()
    assert reply.content == "AB"
    assert finished_before_a == [False]


async def test_utf8_cut_inside_a_character_at_end_is_an_error() -> None:
    """A10-t1's uncovered case: a stream that ends in the middle of a multibyte sequence."""
    chunk = 'data: {"choices":[{"index":0,"delta":{"content":"h\u00e9"},"finish_reason":"stop"}]}\n\n'
    async with ReplayServer() as server:
        server.add(ScriptedResponse(reads=[chunk.encode(), "🌍".encode()[:2]]))
        client = ChatClient(server.base_url, None, max_retries=0)
        with pytest.raises(LLMError) as info:
            await client.stream_chat(model="m", messages=[], tools=None)
        await client.aclose()
    assert info.value.kind == "protocol"
    assert "utf-8" in info.value.message.lower()
    assert info.value.partial is not None and info.value.partial.content == "hé"
