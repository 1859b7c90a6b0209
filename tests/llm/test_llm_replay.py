"""ReplayServer / ThreadedReplayServer / ScriptedResponse helpers."""

from __future__ import annotations

import asyncio
import base64
import json

import httpx
import pytest

from paragents.llm import ChatClient
from paragents.llm.replay import ReplayServer, ScriptedResponse, ThreadedReplayServer
from paragents.models import Usage
from tests.patience import HANG_GUARD_S


def test_from_fixture_forms() -> None:
    single = ScriptedResponse.from_fixture({"id": "x", "reads": ["a", "b"]})
    assert isinstance(single, ScriptedResponse) and single.reads == ["a", "b"] and single.status == 200
    raw = ScriptedResponse.from_fixture({"id": "y", "reads_b64": [base64.b64encode(b"\xc3").decode()]})
    assert isinstance(raw, ScriptedResponse) and raw.reads == [b"\xc3"]
    many = ScriptedResponse.from_fixture(
        {
            "id": "z",
            "responses": [{"status": 429, "headers": {"Retry-After": "1"}, "reads": []}, {"reads": ["ok"]}],
        }
    )
    assert isinstance(many, list)
    assert [(r.status, r.headers) for r in many] == [(429, {"Retry-After": "1"}), (200, {})]
    with pytest.raises(ValueError, match="fixture bad: needs a 'reads'"):
        ScriptedResponse.from_fixture({"id": "bad"})


async def test_from_message_round_trips_through_the_client() -> None:
    calls = [{"id": "c1", "name": "write_file", "arguments": '{"path": "a.txt", "content": "hello world"}'}]
    response = ScriptedResponse.from_message(
        "Some text here",
        reasoning_content="hmm, let me think",
        tool_calls=calls,
        usage=Usage(10, 20, 30),
        chunk_size=5,
    )
    assert len(response.reads) > 10  # really cut into many reads
    async with ReplayServer() as server:
        server.add(response)
        client = ChatClient(server.base_url, None, max_retries=0)
        reply = await client.stream_chat(model="m", messages=[], tools=None)
        await client.aclose()
    assert reply.content == "Some text here" and reply.reasoning == "hmm, let me think"
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("c1", "write_file", calls[0]["arguments"])
    ]
    assert reply.finish_reason == "tool_calls" and reply.usage == Usage(10, 20, 30)


async def test_each_read_is_a_separate_network_read() -> None:
    gate = asyncio.Event()

    async def before(i: int) -> None:
        if i == 1:
            await gate.wait()

    async with ReplayServer() as server:
        server.add(
            ScriptedResponse(
                headers={"Content-Type": "text/plain"}, reads=["first", "second"], before_read=before
            )
        )
        async with (
            httpx.AsyncClient() as http,
            http.stream("POST", server.base_url + "/chat/completions") as resp,
        ):
            pieces = resp.aiter_bytes()
            assert await pieces.__anext__() == b"first"  # arrives while read 2 is still held back
            gate.set()
            assert [p async for p in pieces] == [b"second"]


async def test_models_route_and_unknown_route() -> None:
    async with ReplayServer(models=["m1"]) as server, httpx.AsyncClient() as http:
        models = (await http.get(server.base_url + "/models")).json()
        assert models["data"] == [{"id": "m1", "object": "model"}]
        missing = await http.get(server.base_url + "/nothing")
        assert missing.status_code == 404 and "no route" in missing.json()["error"]["message"]
        requests = await asyncio.wait_for(server.wait_for_requests(2), 5)
        assert [r.path for r in requests] == ["/v1/models", "/v1/nothing"]


async def test_empty_default_queue_answers_500() -> None:
    async with ReplayServer() as server, httpx.AsyncClient() as http:
        resp = await http.post(server.base_url + "/chat/completions", json={"x": 1})
        assert resp.status_code == 500
        assert resp.json()["error"]["message"] == "replay: no scripted response left for session (default)"
        assert server.requests[0].body_json == {"x": 1}


def test_threaded_server_serves_sync_callers() -> None:
    with ThreadedReplayServer(models=["a"]) as server:
        server.add(ScriptedResponse.from_message("from thread", chunk_size=100), session="s9")
        body = {"model": "m", "messages": [], "stream": True}
        with httpx.Client() as http:
            resp = http.post(
                server.base_url + "/chat/completions", json=body, headers={"X-Paragents-Session": "s9"}
            )
            assert resp.status_code == 200 and "from thread" in resp.text
            assert http.get(server.base_url + "/models").json()["data"][0]["id"] == "a"
        requests = server.wait_for_requests(2, timeout=HANG_GUARD_S)
        assert requests[0].session == "s9" and requests[0].body_json == body
        assert json.loads(resp.text.split("data: ", 2)[1].split("\n")[0])["object"] == "chat.completion.chunk"
    assert server.base_url  # stop() is idempotent
    server.stop()
