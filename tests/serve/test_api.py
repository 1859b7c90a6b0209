"""The HTTP API against a real server on 127.0.0.1:0: auth, limits, Origin, bad input, answering an
approval over HTTP (the scripted session continues), and every access in the audit table."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import time

import jwt
import pytest

from paragents.serve.auth import AuthConfig
from paragents.serve.bridge import RuntimeBridge
from paragents.serve.limits import Limits
from paragents.serve.server import ServeRefused, ServeThread
from tests.serve.conftest import JWT_SECRET, KEY, Served

H = {"Authorization": f"Bearer {KEY}"}


def token(**claims: object) -> str:
    base: dict[str, object] = {
        "sub": "phone",
        "iss": "paragents-tests",
        "aud": "paragents",
        "exp": int(time.time()) + 600,
    }
    base.update(claims)
    return jwt.encode(base, str(claims.pop("_secret", JWT_SECRET)), algorithm="HS256")


def error_of(response: object) -> str:
    body = response.json()  # type: ignore[attr-defined]
    assert set(body) == {"error"} and body["error"]["status"] == response.status_code  # type: ignore[attr-defined]
    return str(body["error"]["message"])


async def test_health_needs_no_auth_and_the_rest_does(served: Served) -> None:
    assert (await served.client.get("/health")).json() == {"ok": True}
    missing = await served.client.get("/sessions")
    assert missing.status_code == 401 and "authentication required" in error_of(missing)
    wrong = await served.client.get("/sessions", headers={"Authorization": "Bearer sk-wrong"})
    assert wrong.status_code == 401 and "wrong API key" in error_of(wrong)
    assert KEY not in wrong.text
    good = await served.client.get("/sessions", headers=H)
    assert good.status_code == 200 and good.json() == {"sessions": []}
    other_header = await served.client.get("/sessions", headers={"X-Paragents-Key": KEY})
    assert other_header.status_code == 200


async def test_jwt_good_bad_signature_wrong_audience_expired(served: Served) -> None:
    async def status(tok: str) -> tuple[int, str]:
        r = await served.client.get("/inbox", headers={"Authorization": f"Bearer {tok}"})
        return r.status_code, r.text

    assert (await status(token()))[0] == 200
    bad_sig = jwt.encode(
        {"sub": "x", "aud": "paragents", "iss": "paragents-tests", "exp": time.time() + 60},
        "other-secret-0123456789abcdef0123",
        algorithm="HS256",
    )
    assert (code := await status(bad_sig))[0] == 401 and "signature" in code[1]
    assert (code := await status(token(aud="someone-else")))[0] == 401 and "audience" in code[1]
    assert (code := await status(token(exp=int(time.time()) - 10)))[0] == 401 and "expired" in code[1]


@pytest.mark.parametrize("limits", [Limits(rate=5, per=60.0)])
async def test_rate_limit_answers_429_then_recovers(served: Served, limits: Limits) -> None:
    codes = [(await served.client.get("/inbox", headers=H)).status_code for _ in range(6)]
    assert codes == [200] * 5 + [429]
    served.clock.now += 61
    assert (await served.client.get("/inbox", headers=H)).status_code == 200


async def test_foreign_origin_and_foreign_host_are_refused(served: Served) -> None:
    foreign = await served.client.get("/inbox", headers={**H, "Origin": "https://evil.example"})
    assert foreign.status_code == 403 and "cross-origin" in error_of(foreign)
    same = await served.client.get("/inbox", headers={**H, "Origin": served.url})
    assert same.status_code == 200
    rebinding = await served.client.get("/inbox", headers={**H, "Host": "evil.example"})
    assert rebinding.status_code == 421


async def test_bad_bodies_unknown_and_closed_sessions(served: Served) -> None:
    view = await served.runtime.lifecycle.new_session("a")
    not_json = await served.client.post(
        f"/sessions/{view.id}/prompt", headers={**H, "Content-Type": "application/json"}, content=b"{nope"
    )
    assert not_json.status_code == 400 and "not valid JSON" in error_of(not_json)
    wrong_type = await served.client.post(f"/sessions/{view.id}/prompt", headers=H, content=b"text=hi")
    assert wrong_type.status_code == 415
    unknown = await served.client.post("/sessions/nope/prompt", headers=H, json={"text": "hi"})
    assert unknown.status_code == 404 and "no session" in error_of(unknown)
    await served.runtime.lifecycle.close_session(view.id)
    closed = await served.client.post(f"/sessions/{view.id}/prompt", headers=H, json={"text": "hi"})
    assert closed.status_code == 409 and "closed" in error_of(closed)
    assert (await served.client.get(f"/sessions/{view.id}", headers=H)).status_code == 409


async def test_cancel_answers_for_open_unknown_and_closed_sessions(served: Served) -> None:
    view = await served.runtime.lifecycle.new_session("a")
    idle = await served.client.post(f"/sessions/{view.id}/cancel", headers=H)
    assert idle.status_code == 200 and idle.json() == {"cancelled": False}
    assert (await served.client.post("/sessions/nope/cancel", headers=H)).status_code == 404
    await served.runtime.lifecycle.close_session(view.id)
    assert (await served.client.post(f"/sessions/{view.id}/cancel", headers=H)).status_code == 409


async def test_a_100_mb_body_is_refused_before_it_is_read(served: Served) -> None:
    host, port = "127.0.0.1", served.server.port

    def send() -> bytes:
        with socket.create_connection((host, port), timeout=10) as sock:
            sock.sendall(
                f"POST /sessions/x/prompt HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {KEY}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {100 * 1024 * 1024}\r\n\r\n".encode()
                + b"{" * 65536
            )
            return sock.recv(65536)

    answer = await asyncio.to_thread(send)
    assert answer.startswith(b"HTTP/1.1 413") and b'"request body too large"' in answer


async def test_answer_over_http_unblocks_the_write_and_a_second_answer_is_refused(served: Served) -> None:
    sid, rid = await served.pending_write()
    inbox = (await served.client.get("/inbox", headers=H)).json()["items"]
    assert [(i["id"], i["kind"], i["tool"]) for i in inbox] == [(rid, "approval", "write_file")]
    assert inbox[0]["preview"]["kind"] == "content" and not inbox[0]["destructive"]
    first = await served.client.post(f"/inbox/{rid}/answer", headers=H, json={"answer": "allow_once"})
    assert first.status_code == 200 and first.json()["session_id"] == sid
    await served.runtime.wait_idle(sid)
    assert (served.project / "x.txt").read_text() == "from the phone\n"
    view = served.runtime.sessions[sid]
    assert view.last_result is not None and view.last_result.status == "completed"
    second = await served.client.post(f"/inbox/{rid}/answer", headers=H, json={"answer": "reject_once"})
    assert second.status_code == 409 and "already answered: allow_once" in error_of(second)
    unknown = await served.client.post("/inbox/nope/answer", headers=H, json={"answer": "allow_once"})
    assert unknown.status_code == 404
    page = (await served.client.get(f"/sessions/{sid}?limit=2", headers=H)).json()
    assert page["transcript"]["total"] >= 3 and len(page["transcript"]["messages"]) == 2
    assert page["transcript"]["messages"][-1]["text"] == "written"


async def test_deny_with_note_over_http_reaches_the_model(served: Served) -> None:
    sid, rid = await served.pending_write()
    empty = await served.client.post(f"/inbox/{rid}/answer", headers=H, json={"answer": "reject_with_note"})
    assert empty.status_code == 400
    r = await served.client.post(
        f"/inbox/{rid}/answer", headers=H, json={"answer": "reject_with_note", "note": "not there"}
    )
    assert r.status_code == 200
    await served.runtime.wait_idle(sid)
    assert not (served.project / "x.txt").exists()
    assert "not there" in served.replay.requests[-1].body_json["messages"][-1]["content"]


async def test_events_stream_session_changes(served: Served) -> None:
    seen: list[str] = []
    async with served.client.stream("GET", "/events", headers=H) as stream:
        lines = stream.aiter_lines()
        assert await anext(lines) == ": connected"
        view = await served.runtime.lifecycle.new_session("a")
        served.replay.add(__import__("tests.serve.conftest", fromlist=["reply"]).reply("hi"), session="a")
        served.runtime.submit(view.id, "hello")
        async with asyncio.timeout(20):
            async for line in lines:
                if line.startswith("event: "):
                    seen.append(line[7:])
                if "TurnFinished" in seen:
                    break
    assert "SessionStateChanged" in seen and "TextDelta" not in seen


async def test_every_access_is_audited_without_secrets(served: Served) -> None:
    await served.client.get("/sessions", headers=H)
    await served.client.get("/sessions", headers={"Authorization": "Bearer sk-wrong-secret"})
    rows = await served.runtime.store.api_access.recent()
    assert [(r["path"], r["status"], r["principal"]) for r in rows[:2]] == [
        ("/sessions", 401, ""),
        ("/sessions", 200, "key"),
    ]
    assert rows[0]["note"] == "wrong API key or token"
    assert not any("sk-" in str(v) for r in rows for v in r.values())


async def test_openapi_lists_every_endpoint(served: Served) -> None:
    doc = (await served.client.get("/openapi.json")).json()
    assert {
        "/health",
        "/sessions",
        "/sessions/{sid}",
        "/sessions/{sid}/prompt",
        "/sessions/{sid}/cancel",
        "/inbox",
        "/inbox/{rid}/answer",
        "/events",
    } <= set(doc["paths"])


async def test_non_loopback_bind_refused_without_auth(served: Served) -> None:
    bridge = RuntimeBridge(served.runtime, served.runtime.store.api_access)
    try:
        with pytest.raises(ServeRefused, match="without authentication"):
            ServeThread(bridge, AuthConfig(browser_secret=b"c" * 32), "0.0.0.0", 0)
        ServeThread(bridge, AuthConfig(api_key=KEY), "0.0.0.0", 0)  # with a key it may
    finally:
        bridge.close()


async def test_a_port_out_of_range_is_refused_before_binding(served: Served) -> None:
    """`paragents serve --port 99999` printed a traceback and hung (OverflowError in the server thread)."""
    bridge = RuntimeBridge(served.runtime, served.runtime.store.api_access)
    try:
        with pytest.raises(ServeRefused, match="0-65535"):
            ServeThread(bridge, AuthConfig(api_key=KEY), "127.0.0.1", 99999)
    finally:
        bridge.close()


async def test_an_ask_another_process_waits_on_is_listed_and_answered_once_through_the_store(
    served: Served,
) -> None:
    """A pending row of another process (e.g. `paragents run --wait-approvals`) is in GET /inbox and
    POST /inbox/{id}/answer writes its answer to the store (first answer wins, a second is refused)."""
    view = await served.runtime.lifecycle.new_session("other")
    other = subprocess.Popen(["sleep", "300"])  # a live process that is neither this one nor a parent
    await served.runtime.store.approvals.add(
        "remote-ask-1",
        view.id,
        kind="approval",
        tool="run_command",
        summary="run_command rm -rf build",
        call={"id": "c1", "name": "run_command", "arguments": json.dumps({"command": "rm -rf build"})},
        pid=other.pid,
    )
    inbox = (await served.client.get("/inbox", headers=H)).json()
    [item] = [i for i in inbox["items"] if i["id"] == "remote-ask-1"]
    assert item["command"] == "rm -rf build" and item["destructive"] and item["session_name"] == "other"
    first = await served.client.post("/inbox/remote-ask-1/answer", headers=H, json={"answer": "reject_once"})
    assert first.status_code == 200
    row = await served.runtime.store.approvals.get("remote-ask-1")
    assert row is not None and row.state == "answered" and row.answer == "reject_once"
    second = await served.client.post("/inbox/remote-ask-1/answer", headers=H, json={"answer": "allow_once"})
    assert second.status_code == 409 and "reject_once" in error_of(second)
    other.kill()
    other.wait()


async def test_deeply_nested_json_is_a_400_not_a_500(served: Served) -> None:
    """Issue 28 item 7: 100 000 nested arrays made json.loads raise RecursionError (a 500)."""
    view = await served.runtime.lifecycle.new_session("a")
    for body in (
        b'{"text": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        b'{"text": ' + b"[" * 40 + b"]" * 40 + b"}",
    ):
        r = await served.client.post(
            f"/sessions/{view.id}/prompt", headers={**H, "Content-Type": "application/json"}, content=body
        )
        assert r.status_code == 400 and "nested too deeply" in error_of(r)
    assert not [row for row in await served.runtime.store.api_access.recent() if row["status"] == 500]


async def test_json_answers_are_never_cached_or_sniffed(served: Served) -> None:
    """Issue 28 item 7: every JSON answer (data and errors) says no-store and nosniff."""
    for path, headers in (
        ("/sessions", H),
        ("/inbox", H),
        ("/inbox", {}),
        ("/health", {}),
        ("/openapi.json", {}),
    ):
        r = await served.client.get(path, headers=headers)
        assert r.headers["content-type"].startswith("application/json"), path
        assert r.headers["cache-control"] == "no-store", path
        assert r.headers["x-content-type-options"] == "nosniff", path
