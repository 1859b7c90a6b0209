"""Every shared permission fixture, run through ``paragents permissions check`` (in-process and, for a
sample, as a real subprocess), with earlier ``before`` calls replayed and their answers applied."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from permission_fixtures import Case, case_insensitive_disk, fixture_files, materialise

from paragents.cli.permissions import main
from paragents.permissions import Policy

FILES = fixture_files()


def _check_args(case: Case, tool: str, given: dict[str, object]) -> list[str]:
    return [
        "check", "--tool", tool, "--input", json.dumps(case.tool_input(tool, given)),
        "--cwd", str(case.cwd), "--settings", str(case.settings_path),
        "--mode", case.data.get("mode", "default"), "--json",
    ]  # fmt: skip


def _run_in_process(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)


def _replay_before(case: Case, capsys: pytest.CaptureFixture[str]) -> None:
    for index, earlier in enumerate(case.data.get("before", [])):
        got = _run_in_process(_check_args(case, earlier["tool"], earlier["input"]), capsys)
        assert got["decision"] == earlier["expected"], f"before[{index}]: {got['reason']}"
        answer = earlier.get("answer")
        if answer in ("allow_always", "reject_always"):
            policy = Policy.load(case.cwd, settings_files=[case.settings_path])
            rules = [str(rule) for rule in got["suggested_rules"]]  # type: ignore[attr-defined]
            policy.remember_always(rules, "allow" if answer == "allow_always" else "deny")


def test_fixtures_exist() -> None:
    assert len(FILES) >= 20


def _run_case(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    case = materialise(path, tmp_path)
    if case.data.get("fs", {}).get("case_insensitive") and not case_insensitive_disk(tmp_path):
        pytest.skip("this fixture needs a case-insensitive filesystem")  # ok: only when one is needed
    monkeypatch.setenv("HOME", str(case.home))
    _replay_before(case, capsys)
    got = _run_in_process(_check_args(case, case.data["tool"], case.data["input"]), capsys)
    assert got["decision"] == case.data["expected"], f"{case.data['title']}: {got['reason']}"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_fixture_through_cli(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _run_case(path, tmp_path, monkeypatch, capsys)


@pytest.mark.parametrize(
    ("answer", "expected"), [("allow_always", "allow"), ("reject_always", "deny"), ("allow_once", "ask")]
)
def test_before_calls_are_replayed_with_their_answers(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    answer: str,
    expected: str,
) -> None:
    data = json.loads(FILES[0].read_text(encoding="utf-8"))
    data["before"] = [
        {"tool": "Bash", "input": {"command": "npm run test"}, "expected": "ask", "answer": answer}
    ]
    data["input"] = {"command": "npm run test -- --watch"}
    data["expected"] = expected
    synthetic = tmp_path / "synthetic.json"
    synthetic.write_text(json.dumps(data), encoding="utf-8")
    _run_case(synthetic, tmp_path / "case", monkeypatch, capsys)


SUBPROCESS_SAMPLE = [p for p in FILES if p.stem in ("B1-1", "B4-4", "B7-3", "B8-3", "B8-5")]


@pytest.mark.parametrize("path", SUBPROCESS_SAMPLE, ids=[p.stem for p in SUBPROCESS_SAMPLE])
def test_fixture_through_real_subprocess(path: Path, tmp_path: Path) -> None:
    case = materialise(path, tmp_path)
    env = {**os.environ, "HOME": str(case.home)}
    entry = ["-m", "paragents.cli", "permissions"]
    args = _check_args(case, case.data["tool"], case.data["input"])
    done = subprocess.run(
        [sys.executable, *entry, *args], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["decision"] == case.data["expected"]
