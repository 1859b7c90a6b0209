"""The fan-out judge's requests are paid for: each answered request (a valid answer or not) is a
usage row counted in the group's spend and the project's today (and so by their budgets)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from paragents.events import PermissionAnswer
from paragents.fanout.group import start_best_of
from paragents.fanout.host import FanoutHost
from paragents.fanout.request import FanoutRequest
from paragents.llm.replay import ReplayServer
from paragents.sessions.factory import opened
from tests.fanout.conftest import BROKEN, PROMPT, SLUG, call, make_runtime, reply

PRICE = {"input_price_per_mtok": 1.0, "output_price_per_mtok": 1.0}
BILL = {"prompt_tokens": 900_000, "completion_tokens": 100_000, "total_tokens": 1_000_000}
ANSWER = {"ranking": [f"{SLUG}-1"], "reasons": {f"{SLUG}-1": "only one"}, "risks": []}


async def test_each_judge_request_counts_in_the_group_and_today(
    server: ReplayServer, repo: Path, tmp_path: Path
) -> None:
    server.add([call("write_file", path="app.py", content=BROKEN), reply("done")], session=f"{SLUG}-1")
    server.add(
        [reply("Candidate 1.", usage=BILL), reply(json.dumps(ANSWER), usage=BILL)], session=f"{SLUG}-judge"
    )
    rt, sink = await make_runtime(server, repo, tmp_path / "db.sqlite", models={"m": PRICE})
    sink.answers.append(PermissionAnswer("allow_once"))
    try:
        host = FanoutHost.of(opened(rt))
        group = await start_best_of(host, FanoutRequest(1, PROMPT, judge=True), open_panel=False)
        await group.done.wait()
        assert group.judge_error is None
        sid = group.siblings[0].session_id
        judged = [r for r in await rt.store.turns.list_usage(sid) if r["turn_id"] is None]
        assert [(r["prompt_tokens"], r["cost_usd"]) for r in judged] == [(900_000, 1.0), (900_000, 1.0)]
        spent = await rt.budgets.meter(sid).spent("group")
        assert spent.usd is not None and spent.usd >= 2.0
        today, _ = await rt.budgets.today(time.time())
        assert today.usd is not None and today.usd >= 2.0
    finally:
        await rt.shutdown()
    await asyncio.sleep(0)
