"""``paragents fanout`` exit codes and outputs, and ``paragents runs list|show``, with scripted
candidates on a loopback replay server (no model)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from paragents.cli import main
from paragents.config import save_user_config
from paragents.events import PermissionAnswer
from paragents.fanout.compare import compare
from paragents.fanout.group import start_best_of
from paragents.fanout.headless import outcome_of
from paragents.fanout.host import FanoutHost
from paragents.fanout.request import FanoutRequest
from paragents.llm.replay import ThreadedReplayServer
from paragents.sessions.factory import opened
from tests.fanout.conftest import BROKEN, PROMPT, SLUG, VERIFY, call, make_runtime, reply, script_candidates
from tests.lanes.conftest import commit_all, sh

AGREE = {"ranking": [f"{SLUG}-2", f"{SLUG}-1"], "reasons": {f"{SLUG}-1": "a", f"{SLUG}-2": "b"}, "risks": []}


@pytest.fixture
def threaded() -> Iterator[ThreadedReplayServer]:
    with ThreadedReplayServer(models=["m", "m2"]) as server:
        yield server


def fanout(server: ThreadedReplayServer, repo: Path, *extra: str, prompt: str = PROMPT) -> int:
    save_user_config({"models": {"m": {}, "m2": {}}, "max_retries": 0, "sandbox": "off"})
    argv = ["fanout", "--dir", str(repo), "--endpoint", server.base_url, "--model", "m"]
    argv += ["--allow", "Edit(./app.py)", "--allow", "Write(./app.py)", *extra, prompt]
    return main(argv)


def test_output_patch_prints_the_best_passing_patch_and_merges_nothing(
    threaded: ThreadedReplayServer, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script_candidates(threaded)  # type: ignore[arg-type]
    code = fanout(threaded, repo, "--n", "3", "--verify", VERIFY, "--output", "patch")
    out = capsys.readouterr().out
    assert code == 0
    assert "-    return a - b\n+    return a + b\n" in out and "total" not in out  # candidate 3's patch
    assert sh(repo, "log", "--oneline").count("\n") == 0  # main still has its one commit
    assert (repo / "app.py").read_text().endswith("a - b\n")


def test_json_output_and_runs_show_read_the_evidence_back(
    threaded: ThreadedReplayServer, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    threaded.add([call("write_file", path="app.py", content=BROKEN), reply("done")], session=f"{SLUG}-1")
    threaded.add([reply("nothing to do")], session=f"{SLUG}-2")
    assert fanout(threaded, repo, "--n", "2", "--output", "json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["chosen"] == f"{SLUG}-1" and data["order"] == [f"{SLUG}-1", f"{SLUG}-2"]
    gid = data["group"]["id"]
    assert main(["runs", "list", "--dir", str(repo)]) == 0
    assert gid in capsys.readouterr().out
    assert main(["runs", "show", gid[:6], "--dir", str(repo), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["group"]["prompt"] == PROMPT and "a * b" in shown["patches"][f"{SLUG}-1"]
    assert main(["runs", "show", "nope"]) == 2  # no such group: a usage error


def test_a_worker_that_fails_exits_4(threaded: ThreadedReplayServer, repo: Path) -> None:
    threaded.add([call("write_file", path="app.py", content=BROKEN), reply("done")], session=f"{SLUG}-1")
    # nothing scripted for candidate 2: the endpoint answers 500, its turn fails
    assert fanout(threaded, repo, "--n", "2") == 4


def test_no_patch_exits_5(threaded: ThreadedReplayServer, repo: Path) -> None:
    for i in (1, 2):
        threaded.add(reply("I changed nothing"), session=f"{SLUG}-{i}")
    assert fanout(threaded, repo, "--n", "2") == 5


def test_a_judge_that_answers_prose_twice_exits_3_and_valid_json_is_kept(
    threaded: ThreadedReplayServer, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for i in (1, 2):
        threaded.add(
            [call("write_file", path="app.py", content=BROKEN), reply("done")], session=f"{SLUG}-{i}"
        )
    threaded.add([reply("Candidate 1 is best."), reply("I think 2.")], session=f"{SLUG}-judge")
    assert fanout(threaded, repo, "--n", "2", "--judge", "--output", "json") == 3
    data = json.loads(capsys.readouterr().out)
    assert data["judge_error"].startswith("judge failed (2 attempt(s)): answer: Invalid JSON")
    assert data["chosen"] is not None  # the evidence is still given


def test_the_judge_is_retried_once_with_the_schema_error(
    threaded: ThreadedReplayServer, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for i in (1, 2):
        threaded.add(
            [call("write_file", path="app.py", content=BROKEN), reply("done")], session=f"{SLUG}-{i}"
        )
    threaded.add(
        [reply("Candidate 2."), reply("```json\n" + json.dumps(AGREE) + "\n```")], session=f"{SLUG}-judge"
    )
    assert fanout(threaded, repo, "--n", "2", "--judge", "--output", "json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["chosen"] == f"{SLUG}-2"  # the judge's first (both pass: no verify)
    ranks = {c["session"]: c["judge_rank"] for c in data["candidates"]}
    assert ranks == {f"{SLUG}-1": 2, f"{SLUG}-2": 1}
    judge_requests = [r for r in threaded.requests if r.session == f"{SLUG}-judge"]
    assert len(judge_requests) == 2 and "not valid" in json.dumps(judge_requests[1].body_json)


def test_bad_input_exits_2(threaded: ThreadedReplayServer, repo: Path, tmp_path: Path) -> None:
    assert fanout(threaded, repo, "--n", "9") == 2
    assert fanout(threaded, repo, "--models", "m,nope") == 2
    plain = tmp_path / "plain"
    plain.mkdir()
    assert fanout(threaded, plain, "--n", "2") == 2


async def test_a_patch_that_no_longer_applies_exits_6(
    threaded: ThreadedReplayServer, repo: Path, tmp_path: Path
) -> None:
    threaded.add([call("write_file", path="app.py", content=BROKEN), reply("done")], session=f"{SLUG}-1")
    rt, sink = await make_runtime(threaded, repo, tmp_path / "db.sqlite")  # type: ignore[arg-type]
    sink.answers.append(PermissionAnswer("allow_once"))
    try:
        group = await start_best_of(FanoutHost.of(opened(rt)), FanoutRequest(1, PROMPT), open_panel=False)
        await group.done.wait()
        (repo / "app.py").write_text("def add(a, b):\n    return b + a\n")  # main moves meanwhile
        commit_all(repo, "other fix")
        outcome = await outcome_of(FanoutHost.of(opened(rt)), group)
        assert outcome.code == 6 and "app.py" in outcome.reason
        assert (await compare(rt.store.fanout, group.id)).best() is not None
    finally:
        await rt.shutdown()
    await asyncio.sleep(0)


def test_mode_applies_to_every_sibling(
    threaded: ThreadedReplayServer, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`paragents fanout --mode acceptEdits` without an Edit rule: the siblings' writes run (the mode
    was dropped, so every write was refused headless and the run ended with no patch, exit 5)."""
    save_user_config({"models": {"m": {}}, "max_retries": 0, "sandbox": "off"})
    threaded.add([call("write_file", path="app.py", content=BROKEN), reply("done")], session=f"{SLUG}-1")
    argv = ["fanout", "--dir", str(repo), "--endpoint", threaded.base_url, "--model", "m", "--n", "1"]
    assert main([*argv, "--mode", "acceptEdits", "--output", "json", PROMPT]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["chosen"] == f"{SLUG}-1"
