"""ChatClient against a loopback ReplayServer that misbehaves: statuses, retries, broken streams."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import pytest

from paragents.llm import ChatClient, LLMError
from paragents.llm.replay import ReplayServer, ScriptedResponse
from paragents.llm.stream import StreamDelta, StreamTextDelta
from paragents.llm.transport import parse_retry_after
from tests.patience import HANG_GUARD_S

KEY = "sk-live-SECRETKEY-abcdef123456"
MSGS = [{"role": "user", "content": "hi"}]


@pytest.fixture
async def server() -> AsyncIterator[ReplayServer]:
    async with ReplayServer(models=["alpha", "beta"]) as srv:
        yield srv


def make_client(server: ReplayServer, **kw: Any) -> ChatClient:
    kw.setdefault("max_retries", 3)
    kw.setdefault("retry_base_delay", 0.001)
    kw.setdefault("max_retry_wait", 5)
    return ChatClient(server.base_url, KEY, **kw)


def json_error(status: int, message: str, headers: dict[str, str] | None = None) -> ScriptedResponse:
    body = json.dumps({"error": {"message": message, "type": "invalid_request_error"}})
    return ScriptedResponse(
        status=status, headers={"Content-Type": "application/json", **(headers or {})}, reads=[body]
    )


def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    return (
        "data: " + json.dumps({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n"
    )


async def run(client: ChatClient, **kw: Any) -> Any:
    try:
        return await client.stream_chat(model="gpt-test", messages=MSGS, tools=None, **kw)
    finally:
        await client.aclose()


async def fails(client: ChatClient, **kw: Any) -> LLMError:
    with pytest.raises(LLMError) as info:
        await run(client, **kw)
    assert KEY not in info.value.message and KEY not in str(info.value) and KEY not in repr(info.value)
    return info.value


@pytest.mark.parametrize(
    ("status", "body", "kind", "words"),
    [
        (401, f"Incorrect API key provided: {KEY}", "auth", ["401", "api key was rejected", "/setup"]),
        (403, "not allowed", "forbidden", ["403", "not allowed"]),
        (404, "The model `gpt-test` does not exist", "not_found", ["404", "gpt-test", "/v1"]),
        (413, "payload too large", "context_length", ["413", "context window"]),
        (422, "unprocessable", "bad_request", ["422", "unprocessable"]),
    ],
)
async def test_http_errors_have_kind_and_advice(
    server: ReplayServer, status: int, body: str, kind: str, words: list[str]
) -> None:
    server.add(json_error(status, body))
    err = await fails(make_client(server))
    assert err.kind == kind
    assert err.status == status
    for word in words:
        assert word.lower() in err.message.lower()
    assert server.base_url.split("//")[1] in err.message  # says which server
    assert len(server.requests) == 1  # not retried


async def test_400_about_context_is_context_length_and_not_retried(server: ReplayServer) -> None:
    server.add(json_error(400, "This model's maximum context length is 8192 tokens"))
    err = await fails(make_client(server))
    assert err.kind == "context_length"
    assert "8192" in err.message
    assert len(server.requests) == 1


async def test_include_usage_refused_then_retried_without_and_remembered(server: ReplayServer) -> None:
    server.add(json_error(400, "Unrecognized request argument supplied: stream_options"))
    server.add(ScriptedResponse.from_message("ok"))
    server.add(ScriptedResponse.from_message("again"))
    client = make_client(server)
    reply = await client.stream_chat(model="m", messages=MSGS, tools=None)
    assert reply.content == "ok"
    second = await client.stream_chat(model="m", messages=MSGS, tools=None)
    await client.aclose()
    assert second.content == "again"
    bodies = [r.body_json for r in server.requests]
    assert bodies[0]["stream_options"] == {"include_usage": True}
    assert "stream_options" not in bodies[1]
    assert "stream_options" not in bodies[2]
    assert client.include_usage is False


async def test_other_400_retried_once_without_stream_options_then_reported(server: ReplayServer) -> None:
    server.add(json_error(400, "bad temperature"))
    server.add(json_error(400, "bad temperature"))
    err = await fails(make_client(server))
    assert err.kind == "bad_request"
    assert "bad temperature" in err.message
    assert len(server.requests) == 2
    assert "stream_options" not in server.requests[1].body_json


async def test_429_retry_after_seconds_is_honoured(server: ReplayServer) -> None:
    server.add(json_error(429, "slow down", {"Retry-After": "0.01"}))
    server.add(ScriptedResponse.from_message("done"))
    retries: list[tuple[str, float, int]] = []
    reply = await run(make_client(server), on_retry=lambda *a: retries.append(a))
    assert reply.content == "done"
    assert retries == [("rate limited (429)", 0.01, 1)]
    assert len(server.requests) == 2


async def test_429_retry_after_http_date_is_parsed(server: ReplayServer) -> None:
    past = format_datetime(datetime.now(UTC) - timedelta(seconds=5), usegmt=True)
    server.add(json_error(429, "slow down", {"Retry-After": past}))
    server.add(ScriptedResponse.from_message("done"))
    retries: list[tuple[str, float, int]] = []
    reply = await run(make_client(server, retry_base_delay=0.5), on_retry=lambda *a: retries.append(a))
    assert reply.content == "done"
    assert retries == [("rate limited (429)", 0.0, 1)]  # a date in the past: no wait (backoff would be ≥0.5)


def test_parse_retry_after_forms() -> None:
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    later = format_datetime(now + timedelta(seconds=30), usegmt=True)
    assert parse_retry_after(httpx.Headers({"Retry-After": later}), now=now.timestamp()) == 30.0
    assert parse_retry_after(httpx.Headers({"Retry-After": "7"})) == 7.0
    assert parse_retry_after(httpx.Headers({"retry-after-ms": "250"})) == 0.25
    assert parse_retry_after(httpx.Headers({"Retry-After": "soon"})) is None
    assert parse_retry_after(httpx.Headers({})) is None


async def test_retry_after_over_the_cap_is_raised_not_slept(server: ReplayServer) -> None:
    server.add(json_error(429, "quota", {"Retry-After": "120"}))
    retries: list[Any] = []
    err = await fails(make_client(server, max_retry_wait=1), on_retry=lambda *a: retries.append(a))
    assert err.kind == "rate_limit"
    assert err.retry_after == 120
    assert "120 s" in err.message and "max_retry_wait" in err.message
    assert retries == []
    assert len(server.requests) == 1


async def test_500_then_success(server: ReplayServer) -> None:
    server.add(json_error(500, "boom"))
    server.add(ScriptedResponse.from_message("fine"))
    retries: list[tuple[str, float, int]] = []
    reply = await run(make_client(server), on_retry=lambda *a: retries.append(a))
    assert reply.content == "fine"
    assert [(r[0], r[2]) for r in retries] == [("server error (500)", 1)]
    assert 0 < retries[0][1] <= 5


async def test_retries_give_up_after_max_retries(server: ReplayServer) -> None:
    for _ in range(3):
        server.add(json_error(503, "overloaded"))
    retries: list[Any] = []
    err = await fails(make_client(server, max_retries=2), on_retry=lambda *a: retries.append(a))
    assert err.kind == "server" and err.status == 503
    assert "gave up after 2 retries" in err.message
    assert [r[2] for r in retries] == [1, 2]
    assert len(server.requests) == 3


async def test_connection_refused_is_retried_then_reported() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    retries: list[Any] = []
    client = ChatClient(f"http://127.0.0.1:{port}/v1", KEY, max_retries=1, retry_base_delay=0.001)
    with pytest.raises(LLMError) as info:
        await run(client, on_retry=lambda *a: retries.append(a))
    assert info.value.kind == "connection"
    assert f"127.0.0.1:{port}" in info.value.message and "running" in info.value.message
    assert [(r[0], r[2]) for r in retries] == [("connection failed", 1)]


async def test_read_timeout_between_chunks_keeps_partial(server: ReplayServer) -> None:
    server.add(ScriptedResponse(reads=[chunk({"content": "Hel"})], hang=True))
    err = await fails(make_client(server, read_timeout=0.2))
    assert err.kind == "timeout"
    assert "read_timeout" in err.message
    assert err.partial is not None and err.partial.content == "Hel"
    assert len(server.requests) == 1  # a timeout mid-stream is not retried


async def test_error_object_mid_stream(server: ReplayServer) -> None:
    error = {"error": {"message": "upstream model crashed", "code": 502}}
    server.add(ScriptedResponse(reads=[chunk({"content": "Par"}), f"data: {json.dumps(error)}\n\n"]))
    err = await fails(make_client(server))
    assert err.kind == "server"
    assert "upstream model crashed" in err.message
    assert err.partial is not None and err.partial.content == "Par"
    assert len(server.requests) == 1


@pytest.mark.parametrize("truncate", [False, True], ids=["clean-close", "cut-chunked-body"])
async def test_close_mid_stream_without_done_keeps_partial(server: ReplayServer, truncate: bool) -> None:
    server.add(
        ScriptedResponse(reads=[chunk({"content": "Hel"}), chunk({"content": "lo"})], truncate=truncate)
    )
    err = await fails(make_client(server))
    assert err.kind == "protocol"
    assert "before the reply finished" in err.message
    assert err.partial is not None and err.partial.content == "Hello"
    assert err.partial.complete is False


async def test_non_json_data_line_is_quoted(server: ReplayServer) -> None:
    server.add(ScriptedResponse(reads=[chunk({"content": "x"}), "data: : OPENROUTER PROCESSING\n\n"]))
    err = await fails(make_client(server))
    assert err.kind == "protocol"
    assert "data: : OPENROUTER PROCESSING" in err.message
    assert err.partial is not None and err.partial.content == "x"


async def test_html_page_with_200(server: ReplayServer) -> None:
    page = "<!doctype html><html><head><title>Sign in</title></head><body>login</body></html>"
    server.add(ScriptedResponse(headers={"Content-Type": "text/html; charset=utf-8"}, reads=[page]))
    err = await fails(make_client(server))
    assert err.kind == "protocol"
    assert "HTML page" in err.message and "Sign in" in err.message and "/v1" in err.message


async def test_zero_byte_body(server: ReplayServer) -> None:
    server.add(ScriptedResponse(reads=[]))
    err = await fails(make_client(server))
    assert err.kind == "protocol"
    assert "empty body (0 bytes)" in err.message


async def test_server_ignoring_stream_true_sends_json_completion(server: ReplayServer) -> None:
    body = {
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
                    ],
                },
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
    }
    server.add(ScriptedResponse(headers={"Content-Type": "application/json"}, reads=[json.dumps(body)]))
    reply = await run(make_client(server))
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [("c1", "ls", "{}")]
    assert reply.finish_reason == "tool_calls" and reply.usage is not None and reply.usage.total_tokens == 7


async def test_cancellation_mid_stream_closes_the_connection(server: ReplayServer) -> None:
    server.add(ScriptedResponse(reads=[chunk({"content": "A"})], hang=True))
    got_a = asyncio.Event()
    client = make_client(server)

    def on_delta(delta: StreamDelta) -> None:
        if isinstance(delta, StreamTextDelta):
            got_a.set()

    task = asyncio.create_task(client.stream_chat(model="m", messages=MSGS, tools=None, on_delta=on_delta))
    await asyncio.wait_for(got_a.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    closed = await asyncio.wait_for(server.wait_for_client_close(0), 5)
    assert closed.client_closed
    await client.aclose()


async def test_cancellation_during_a_retry_wait(server: ReplayServer) -> None:
    server.add(json_error(429, "wait", {"Retry-After": "30"}))
    waiting = asyncio.Event()
    client = make_client(server, max_retry_wait=60)
    task = asyncio.create_task(
        client.stream_chat(model="m", messages=MSGS, tools=None, on_retry=lambda *a: waiting.set())
    )
    await asyncio.wait_for(waiting.wait(), HANG_GUARD_S)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 25)  # well before the 30 s Retry-After: the wait was cancelled
    await client.aclose()
    assert len(server.requests) == 1


async def test_two_megabyte_reply_streams(server: ReplayServer) -> None:
    text = ("0123456789abcdef" * 64 + "\n") * 2048  # ~2 MB
    server.add(
        ScriptedResponse.from_message(
            text, chunk_size=16384, usage={"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}
        )
    )
    pieces: list[str] = []
    reply = await run(make_client(server), on_delta=lambda d: pieces.append(getattr(d, "text", "")))
    assert len(text) > 2_000_000
    assert reply.content == text
    assert "".join(pieces) == text
    assert reply.usage is not None and reply.usage.total_tokens == 3


async def test_request_shape_tools_and_session_header(server: ReplayServer) -> None:
    tools = [{"type": "function", "function": {"name": "ls", "parameters": {"type": "object"}}}]
    server.add(ScriptedResponse.from_message("for s1"), session="s1")
    server.add(ScriptedResponse.from_message("default"))
    client = make_client(server, extra_headers={"X-Team": "blue"})
    first = await client.stream_chat(model="m", messages=MSGS, tools=tools, session_label="s1")
    second = await client.stream_chat(model="m", messages=MSGS, tools=None)
    await client.aclose()
    assert (first.content, second.content) == ("for s1", "default")
    req = server.requests[0]
    assert req.path == "/v1/chat/completions" and req.method == "POST"
    assert req.session == "s1" and req.headers["x-team"] == "blue"
    assert req.body_json["tools"] == tools and req.body_json["tool_choice"] == "auto"
    assert req.body_json["stream"] is True and req.body_json["messages"] == MSGS
    assert "tools" not in server.requests[1].body_json and server.requests[1].session is None


async def test_empty_queue_fails_loudly(server: ReplayServer) -> None:
    server.add(ScriptedResponse.from_message("one"), session="s1")
    client = make_client(server, max_retries=0)
    await client.stream_chat(model="m", messages=MSGS, tools=None, session_label="s1")
    err = await fails(client, session_label="s1")
    assert err.kind == "server"
    assert "replay: no scripted response left for session s1" in err.message


async def test_recorder_never_sees_the_key(server: ReplayServer) -> None:
    server.add(json_error(401, f"bad key {KEY}", {"Set-Cookie": "sid=1"}))
    records: list[dict[str, Any]] = []
    err = await fails(make_client(server, recorder=records.append))
    assert err.kind == "auth"
    assert len(records) == 1 and records[0]["status"] == 401
    dumped = json.dumps(records)
    assert KEY not in dumped
    assert "set-cookie" not in {k.lower() for k in records[0]["headers"]}
    assert records[0]["request"]["model"] == "gpt-test"


async def test_list_models_and_check_connection(server: ReplayServer) -> None:
    client = make_client(server)
    assert await client.list_models() == ["alpha", "beta"]
    ok, text = await client.check_connection("beta")
    assert ok and "'beta' is available" in text
    ok, text = await client.check_connection("gamma")
    assert not ok and "gamma" in text and "alpha, beta" in text
    server.add_models_response(json_error(401, "no"))
    ok, text = await client.check_connection("beta")
    await client.aclose()
    assert not ok and "401" in text and "api key" in text.lower() and KEY not in text
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"


async def test_check_connection_when_nothing_listens() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = ChatClient(f"http://127.0.0.1:{port}/v1", None)
    ok, text = await client.check_connection("m")
    await client.aclose()
    assert not ok and "could not connect" in text
