"""Endpoint faults at the session level: the real Runtime (agents, store, scheduler, client) against a
loopback ReplayServer. Each fault hits one session ("victim") while another session ("bystander")
is mid-stream in the same Runtime; the victim must end in a visible, correct state (failed turn with
a readable error, SessionState.FAILED, partial text kept and marked incomplete) and the bystander
must finish normally. Then the victim runs another turn, and the request it sends is checked."""

from __future__ import annotations

import asyncio
import json
import re
import socket
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest

from paragents import events as ev
from paragents.agent import Agent
from paragents.llm import ChatClient
from paragents.llm.replay import ReplayServer, ScriptedResponse
from paragents.models import SessionState
from paragents.sessions import Runtime
from tests.faults.tally import record
from tests.faults.validity import request_problems

WARM = "warm-up answer, stored before the fault"
AFTER = "answer after the fault"
BYSTANDER = "the bystander's reply streams on while the other session fails"
PARTIAL_TEXT = "partial words that arrive before the break"


# -- helpers -----------------------------------------------------------------------------------------
HANG_GUARD = 120.0
"""Seconds before a wait counts as a hang. Not a speed limit: the '10 MB reply' case needs a few
seconds of CPU, which a machine loaded as ``pytest --load 2`` beside other work stretches past 20 s."""


@dataclass
class Sink:
    """Records every event; ``wait_for`` waits (no sleeps) until a predicate over events holds."""

    events: list[ev.Event] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def __call__(self, event: ev.Event) -> None:
        self.events.append(event)
        self.changed.set()

    def of(self, kind: type, sid: str) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind) and e.session_id == sid]

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = HANG_GUARD) -> None:
        async def loop() -> None:
            while not predicate():
                self.changed.clear()
                await self.changed.wait()

        await asyncio.wait_for(loop(), timeout)


def json_error(status: int, message: str, headers: dict[str, str] | None = None) -> ScriptedResponse:
    body = json.dumps({"error": {"message": message, "type": "invalid_request_error"}})
    return ScriptedResponse(
        status=status, headers={"Content-Type": "application/json", **(headers or {})}, reads=[body]
    )


def partial_reads(
    extra: list[str | bytes], *, truncate: bool = False, hang: bool = False
) -> ScriptedResponse:
    """A reply whose text pieces all arrive, followed by ``extra`` reads instead of the finish."""
    full = ScriptedResponse.from_message(PARTIAL_TEXT, chunk_size=6, done=False)
    text_reads = full.reads[:-1]  # drop the finish_reason chunk
    return ScriptedResponse(reads=[*text_reads, *extra], truncate=truncate, hang=hang)


def http_date(delta: timedelta) -> str:
    return format_datetime(datetime.now(UTC) + delta, usegmt=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
async def plain_http() -> AsyncIterator[int]:
    """A plain-HTTP server (like nginx on port 80) that answers anything with 400; yields its port."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(64)
        writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    yield int(server.sockets[0].getsockname()[1])
    server.close()
    await server.wait_closed()


@pytest.fixture
async def replay() -> AsyncIterator[ReplayServer]:
    async with ReplayServer(models=["m"]) as server:
        yield server


@dataclass
class Fault:
    """One injected fault. ``responses`` are queued for the victim; ``url`` (given the replay base URL
    and the plain-HTTP port) points the victim at another endpoint with its own client built with
    ``client_kw``; ``kind``/``words`` are the expected error kind and words of the message;
    ``partial`` is True when text arrived before the fault; ``retries`` the StreamRetry count;
    ``status`` the turn's end ("failed", or "completed" when a retry saved it)."""

    name: str
    responses: list[ScriptedResponse] = field(default_factory=list)
    kind: str | None = None
    words: tuple[str, ...] = ()
    partial: bool = False
    url: Callable[[str, int], str] | None = None
    client_kw: dict[str, Any] = field(default_factory=dict)
    overrides: dict[str, Any] = field(default_factory=dict)
    retries: int = 0
    status: str = "failed"
    reply: str | None = None


BIG = "0123456789abcdef" * (10 * 1024 * 1024 // 16)  # 10 MB of text

FAULTS = [
    Fault(
        "connection refused",
        url=lambda base, _: f"http://127.0.0.1:{free_port()}/v1",
        kind="connection",
        words=("could not connect", "base_url"),
    ),
    Fault(
        "dns failure",
        url=lambda base, _: "http://paragents-fault.invalid/v1",
        kind="connection",
        words=("paragents-fault.invalid", "base_url"),
    ),
    Fault(
        "tls error (plain-http server)",
        url=lambda base, port: f"https://127.0.0.1:{port}/v1",
        kind="connection",
        words=("SSL", "http/https"),
    ),
    Fault(
        "tls error (replay port, no answer)",
        url=lambda base, _: base.replace("http://", "https://"),
        client_kw={"connect_timeout": 0.3},
        kind="timeout",
        words=("could not connect", "0.3 s"),
    ),
    Fault(
        "timeout before first byte",
        [ScriptedResponse(delay_before=60)],
        url=lambda base, _: base,
        client_kw={"read_timeout": 0.3},
        kind="timeout",
        words=("waited 0.3 s for a response", "read_timeout"),
    ),
    Fault(
        "timeout between chunks",
        [partial_reads([], hang=True)],
        url=lambda base, _: base,
        client_kw={"read_timeout": 0.3},
        kind="timeout",
        words=("more data",),
        partial=True,
    ),
    Fault("401", [json_error(401, "invalid api key")], kind="auth", words=("401", "/setup")),
    Fault("403", [json_error(403, "no access to model m")], kind="forbidden", words=("403", "permissions")),
    Fault("404", [json_error(404, "model m not found")], kind="not_found", words=("404", "'m'", "/v1")),
    Fault(
        "413",
        [json_error(413, "request entity too large")],
        kind="context_length",
        words=("413", "compact", "new session"),
    ),
    Fault(
        "429 retry-after 0 s",
        [json_error(429, "slow down", {"Retry-After": "0"}), ScriptedResponse.from_message(AFTER)],
        overrides={"max_retries": 2},
        retries=1,
        status="completed",
        reply=AFTER,
    ),
    Fault(
        "429 retry-after http-date",
        [
            json_error(429, "slow down", {"Retry-After": http_date(-timedelta(1))}),
            ScriptedResponse.from_message(AFTER),
        ],
        overrides={"max_retries": 2},
        retries=1,
        status="completed",
        reply=AFTER,
    ),
    Fault(
        "429 no retry-after",
        [json_error(429, "slow"), json_error(429, "slow"), ScriptedResponse.from_message(AFTER)],
        overrides={"max_retries": 3},
        retries=2,
        status="completed",
        reply=AFTER,
    ),
    Fault(
        "429 retries exhausted",
        [json_error(429, "slow")] * 3,
        overrides={"max_retries": 2},
        retries=2,
        kind="rate_limit",
        words=("429", "gave up after 2 retries"),
    ),
    Fault(
        "429 retry-after over cap (s)",
        [json_error(429, "slow", {"Retry-After": "600"})],
        overrides={"max_retries": 2},
        kind="rate_limit",
        words=("600 s", "longer than max_retry_wait"),
    ),
    Fault(
        "429 retry-after over cap (date)",
        [json_error(429, "slow", {"Retry-After": http_date(timedelta(hours=1))})],
        overrides={"max_retries": 2},
        kind="rate_limit",
        words=("longer than max_retry_wait",),
    ),
    Fault("500", [json_error(500, "boom")], kind="server", words=("500", "try again later")),
    Fault("502", [json_error(502, "bad gateway")], kind="server", words=("502",)),
    Fault("503", [json_error(503, "overloaded")], kind="server", words=("503",)),
    Fault(
        "503 then ok",
        [json_error(503, "overloaded"), ScriptedResponse.from_message(AFTER)],
        overrides={"max_retries": 1},
        retries=1,
        status="completed",
        reply=AFTER,
    ),
    Fault(
        "error object mid-stream",
        [partial_reads(['data: {"error": {"message": "model crashed", "code": "internal"}}\n\n'])],
        kind="protocol",
        words=("middle of the stream", "model crashed"),
        partial=True,
    ),
    Fault(
        "close mid-stream (cut chunk)",
        [partial_reads([], truncate=True)],
        kind="protocol",
        words=("partial reply was kept",),
        partial=True,
    ),
    Fault(
        "close mid-stream (no [DONE])",
        [partial_reads([])],
        kind="protocol",
        words=("stream ended before the reply finished",),
        partial=True,
    ),
    Fault(
        "non-JSON data line",
        [partial_reads(["data: <b>oops</b> not json\n\n"])],
        kind="protocol",
        words=("not JSON", "oops"),
        partial=True,
    ),
    Fault(
        "HTML page with 200",
        [
            ScriptedResponse(
                headers={"Content-Type": "text/html"},
                reads=["<html><body><h1>Welcome to nginx</h1></body></html>"],
            )
        ],
        kind="protocol",
        words=("HTML page", "Welcome to nginx", "/v1"),
    ),
    Fault("0-byte reply", [ScriptedResponse(reads=[])], kind="protocol", words=("empty body", "0 bytes")),
    Fault(
        "10 MB reply",
        [ScriptedResponse.from_message(BIG, chunk_size=256 * 1024)],
        status="completed",
        reply=BIG,
        # A window big enough for the 10 MB history: the next request is sent, not refused locally
        # (tests/agent/test_agent.py covers the local refusal of requests far over the window).
        overrides={"default_context_window": 20_000_000},
    ),
]


async def stored_complete(rt: Runtime, sid: str) -> list[tuple[int, str]]:
    return [
        (m.id, json.dumps(m.message, sort_keys=True)) for m in await rt.store.messages.load(sid) if m.complete
    ]


# -- the test ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
async def test_fault_fails_one_session_visibly_while_another_completes(
    fault: Fault, replay: ReplayServer, plain_http: int, tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    overrides = {"base_url": replay.base_url, "model": "m", "max_retries": 0, **fault.overrides}
    rt = await Runtime.create(project, cli_overrides=overrides, db_path=tmp_path / "db.sqlite")
    sink = Sink()
    rt.set_sink(sink)
    rt.client.retry_base_delay = 0.01
    recovered = False
    lost = 0
    try:
        victim = await rt.new_session("victim")
        by = await rt.new_session("bystander")
        agent = rt.agents[victim.id]
        assert isinstance(agent, Agent)  # paragents' own: its chat client is swapped below

        # a finished turn first, so there is history that must survive the fault
        replay.add(ScriptedResponse.from_message(WARM), session="victim")
        rt.submit(victim.id, "warm up")
        await asyncio.wait_for(rt.wait_idle(victim.id), HANG_GUARD)
        before = await stored_complete(rt, victim.id)
        assert len(before) == 2

        # the bystander starts streaming and stays mid-stream until the victim's turn has ended
        gate = asyncio.Event()

        async def hold(i: int) -> None:
            if i == 3:
                await gate.wait()

        by_reply = ScriptedResponse.from_message(BYSTANDER, chunk_size=5)
        by_reply.before_read = hold
        replay.add(by_reply, session="bystander")
        rt.submit(by.id, "hello")
        await sink.wait_for(lambda: bool(sink.of(ev.TextDelta, by.id)))

        if fault.url is not None:
            agent.client = ChatClient(
                fault.url(replay.base_url, plain_http), None, max_retries=0, **fault.client_kw
            )
        replay.add(fault.responses, session="victim")
        rt.submit(victim.id, "go")
        await sink.wait_for(lambda: len(sink.of(ev.TurnFinished, victim.id)) == 2)
        assert rt.scheduler.is_running(by.id), "the bystander must still be mid-turn when the victim ends"
        gate.set()
        await asyncio.wait_for(rt.wait_idle(), HANG_GUARD)

        # the bystander finished normally
        (by_end,) = sink.of(ev.TurnFinished, by.id)
        assert by_end.status == "completed"
        assert by.messages[-1] == {"role": "assistant", "content": BYSTANDER}

        # the victim ended in the documented visible state
        end = sink.of(ev.TurnFinished, victim.id)[-1]
        assert end.status == fault.status, end.error
        retries = sink.of(ev.StreamRetry, victim.id)
        assert len(retries) == fault.retries
        notices = [n.text for n in sink.of(ev.Notice, victim.id)]
        for retry in retries:
            assert retry.reason.startswith(("rate limited", "server error"))
        assert sum(
            bool(re.search(r"(rate limited|server error).*retrying in \d+ s", n)) for n in notices
        ) == (fault.retries)
        if fault.status == "failed":
            assert victim.state is SessionState.FAILED
            assert end.error_kind == fault.kind
            assert end.error and "\n" not in end.error and "Traceback" not in end.error
            for word in fault.words:
                assert word in end.error, f"{word!r} not in {end.error!r}"
            # The panel shows the error from TurnFinished ("Turn failed [kind]: ..."); no second copy.
            assert not any(n == end.error for n in notices), "the error is shown twice"
            stored = await rt.store.messages.load(victim.id)
            kept = [m for m in stored if not m.complete]
            if fault.partial:
                assert [m.message["content"] for m in kept] == [PARTIAL_TEXT]
                shown = "".join(d.text for d in sink.of(ev.TextDelta, victim.id))
                assert shown.endswith(PARTIAL_TEXT), "the partial text was streamed to the client"
            else:
                assert kept == []
        else:
            assert victim.state is SessionState.IDLE
            assert victim.messages[-1]["content"] == fault.reply

        # the next turn of the victim sends a valid history containing everything stored before
        agent.client = rt.client
        replay.add(ScriptedResponse.from_message(AFTER), session="victim")
        n = len(replay.requests)
        rt.submit(victim.id, "again")
        await asyncio.wait_for(rt.wait_idle(victim.id), HANG_GUARD)
        assert sink.of(ev.TurnFinished, victim.id)[-1].status == "completed"
        body = next(r for r in replay.requests[n:] if r.session == "victim").body_json
        finished = {WARM, AFTER} | ({fault.reply} if fault.reply else set())
        assert request_problems(body, finished) == []
        sent = [json.dumps(m, sort_keys=True) for m in body["messages"]]
        assert [m for _, m in before] == sent[1:3]
        after = dict(await stored_complete(rt, victim.id))
        lost = sum(1 for mid, text in before if after.get(mid) != text)
        assert lost == 0
        recovered = True
    finally:
        record(f"endpoint: {fault.name}", recovered=recovered, lost=lost)
        await rt.shutdown()


async def test_cancel_stops_a_retry_wait_at_once(replay: ReplayServer, tmp_path: Path) -> None:
    """A 429 asking for 600 s (under the cap set to 900 s) starts a visible retry wait; a cancel ends
    the turn as cancelled right away (the wait_for bound, :data:`HANG_GUARD`, is far below the 600 s
    the wait would take, and lets a loaded machine be slow)."""
    project = tmp_path / "proj"
    project.mkdir()
    overrides = {"base_url": replay.base_url, "model": "m", "max_retries": 3, "max_retry_wait": 900}
    rt = await Runtime.create(project, cli_overrides=overrides, db_path=tmp_path / "db.sqlite")
    sink = Sink()
    rt.set_sink(sink)
    recovered = False
    try:
        view = await rt.new_session("victim")
        replay.add(json_error(429, "slow down", {"Retry-After": "600"}), session="victim")
        rt.submit(view.id, "go")
        await sink.wait_for(lambda: bool(sink.of(ev.StreamRetry, view.id)))
        (retry,) = sink.of(ev.StreamRetry, view.id)
        assert retry.delay == 600 and retry.reason.startswith("rate limited")
        assert any("retrying in 600 s" in n.text for n in sink.of(ev.Notice, view.id))
        assert rt.cancel(view.id)
        await sink.wait_for(lambda: bool(sink.of(ev.TurnFinished, view.id)))
        (end,) = sink.of(ev.TurnFinished, view.id)
        assert end.status == "cancelled"
        await asyncio.wait_for(rt.wait_idle(view.id), HANG_GUARD)
        assert view.state is SessionState.IDLE
        assert len(replay.requests) == 1, "no request was retried after the cancel"
        recovered = True
    finally:
        record("endpoint: cancel during retry wait", recovered=recovered)
        await rt.shutdown()
