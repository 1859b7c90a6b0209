"""Headless ``paragents fanout`` (issue 27 item 11): a candidate whose ask was refused because there
is no terminal is reported as denied, by whom ("no terminal"), in the evidence, the printed
comparison and the exit reason; the tool result the model got (and the store keeps) says that
nobody answered, never "denied by the user"."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from paragents.cli import main
from paragents.config import save_user_config
from paragents.llm.replay import ThreadedReplayServer
from tests.fanout.conftest import PROMPT, SLUG, call, reply


@pytest.fixture
def threaded() -> Iterator[ThreadedReplayServer]:
    with ThreadedReplayServer(models=["m"]) as server:
        yield server


def test_a_refused_ask_is_reported_as_denied_by_no_terminal(
    threaded: ThreadedReplayServer, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    threaded.add(
        [call("write_file", path="app.py", content="x = 1\n"), reply("gave up")], session=f"{SLUG}-1"
    )
    save_user_config({"models": {"m": {}}, "max_retries": 0, "sandbox": "off"})
    argv = ["fanout", "--dir", str(repo), "--endpoint", threaded.base_url, "--model", "m", "--n", "1"]
    code = main([*argv, "--output", "json", PROMPT])
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert code == 5
    [cand] = data["candidates"]
    assert cand["state"] == "denied", cand
    [denial] = cand["evidence"]["denied"]
    assert denial["by"] == "no terminal" and denial["call"].startswith("write_file")
    assert "denied: fix-the-add-function-1 (1 call(s) denied by no terminal)" in captured.err
    assert "--allow RULE" in captured.err
    # what the model was told (and the session's stored tool result): nobody answered
    second = [r for r in threaded.requests if r.session == f"{SLUG}-1"][1]
    told = next(m for m in second.body_json["messages"] if m["role"] == "tool")["content"]
    assert told.startswith("denied: no terminal to ask") and "by the user" not in told
    assert main(["runs", "show", data["group"]["id"], "--dir", str(repo)]) == 0
    assert "denied by no terminal: write_file" in capsys.readouterr().out
