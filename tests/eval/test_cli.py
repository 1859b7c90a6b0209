"""``paragents eval`` on the command line: a run against a scripted endpoint with the live table's
plain form, its report, the gate's exit code on it; the errors that stop before anything runs (exit 2,
one line); ``eval validate``'s exit codes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from paragents.cli import main
from paragents.eval.errors import EXIT_CONFIG, EXIT_FAILURE, EXIT_GATE
from paragents.eval.loader import load_tasks
from paragents.llm.replay import ThreadedReplayServer
from tests.eval.conftest import needs_bwrap
from tests.eval.solver import SOLVER_MODEL, queue
from tests.trusting import trusted, trusted_config


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--on", "moon"], "--on moon: unknown backend"),
        (["--targets", "gpt"], "'gpt' is not model:NAME, model:NAME@URL or agent:NAME"),
        (["--targets", "agent:nobody"], "agent:nobody is not a known agent"),
        (["--answer", "script"], "--answer script needs a FILE"),
        (["--fanout", "0"], "--fanout must be at least 1"),
        (["--max-budget", "lots"], "--max-budget:"),
        (["--tasks", "nowhere"], "--tasks: nowhere does not exist"),
    ],
)
def test_bad_input_stops_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    base = {"--tasks": "sample", "--targets": "model:m", "--out": str(tmp_path / "out")}
    for flag, value in zip(args[::2], args[1::2], strict=True):
        base[flag] = value
    argv = ["eval", "run", *[x for kv in base.items() for x in kv]]
    assert main(argv) == EXIT_CONFIG
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_on_container_without_an_engine_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sock = tmp_path / "no-engine.sock"
    (tmp_path / "runtime_config.json").write_text(
        json.dumps({"lanes": {"container": {"host": f"unix://{sock}", "connect_timeout": 2}}})
    )
    out = tmp_path / "out"
    argv = [
        "eval",
        "run",
        "--tasks",
        "sample",
        "--targets",
        "model:m",
        "--out",
        str(out),
        "--on",
        "container",
    ]
    trusted(tmp_path)
    assert main([*argv, "--dir", str(tmp_path)]) == EXIT_CONFIG
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"the Docker engine (unix://{sock}) did not answer" in err
    assert "run with --on local" in err and not out.exists()


@needs_bwrap
def test_a_run_from_the_command_line_reports_and_gates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prices = {"input_price_per_mtok": 1.0, "output_price_per_mtok": 4.0}  # need trust: the user's own
    trusted_config(tmp_path, {"models": {SOLVER_MODEL: prices}})
    tasks = ["fix-median", "fix-report-total"]
    with ThreadedReplayServer(models=[SOLVER_MODEL]) as server:
        queue(server, 1, 1, tasks)
        out = tmp_path / "run"
        code = main(
            ["eval", "run", "--tasks", "sample", *[x for t in tasks for x in ("--task", t)],
             "--targets", f"model:{SOLVER_MODEL}", "--endpoint", server.base_url, "--dir", str(tmp_path),
             "--answer", "allow-safe", "--out", str(out)]
        )  # fmt: skip
    assert code == 0
    captured = capsys.readouterr()
    assert "[2/2]" in captured.err  # the live table's plain form without a terminal
    assert "| model:scripted | 1/2 (50%) |" in captured.out
    assert (out / "report.md").is_file() and (out / "report.html").is_file()
    manifest = json.loads((out / "results.json").read_text())["manifest"]
    settings = manifest["targets"][0]["settings"]
    assert (settings["input_price_per_mtok"], settings["output_price_per_mtok"]) == (1.0, 4.0)
    assert main(["eval", "gate", str(out), "--min-resolved", "0.75"]) == EXIT_GATE
    assert "resolved 50.0% (1/2) is below --min-resolved 75.0%" in capsys.readouterr().err
    assert main(["eval", "gate", str(out), "--min-resolved", "0.5", "--max-cost-per-solve", "0.01"]) == 0
    # a second run into the same directory is refused, nothing overwritten
    assert (
        main(["eval", "run", "--tasks", "sample", "--targets", "model:x", "--out", str(out)]) == EXIT_CONFIG
    )
    assert "already holds a run" in capsys.readouterr().err


@needs_bwrap
def test_validate_exits_1_for_a_task_that_measures_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(["eval", "validate", "--tasks", "sample", "--task", "fix-median", "--task", "hello-file"]) == 0
    )
    assert "ok   fix-median" in capsys.readouterr().out
    broken = tmp_path / "broken"
    shutil.copytree(load_tasks("sample").get("fix-median").source, broken)
    (broken / "tests" / "test_stats.py").write_text("def test_nothing():\n    pass\n")
    assert main(["eval", "validate", "--tasks", str(broken)]) == EXIT_FAILURE
    assert (
        "FAIL broken: the hidden tests pass on the base: the task measures nothing" in capsys.readouterr().out
    )


def test_the_eval_exit_codes_are_the_documented_ones() -> None:
    from paragents.cli import exit_codes
    from paragents.eval import errors

    assert (errors.EXIT_GATE, errors.EXIT_REPLAY) == (exit_codes.EXIT_GATE, exit_codes.EXIT_REPLAY) == (8, 9)
    codes = {c for c in vars(exit_codes).values() if isinstance(c, int)}
    assert len(codes) == len([k for k in vars(exit_codes) if k.startswith("EXIT_")])  # no number used twice


def test_an_agents_key_in_the_config_never_reaches_the_manifest(tmp_path: Path) -> None:
    from paragents.config import load_config
    from paragents.eval.targets import agents_config, shaping_config

    (tmp_path / "runtime_config.json").write_text(
        json.dumps(
            {"agents": {"x": {"command": "x-acp", "env": {"X_KEY": "sk-secret-123456", "Y": "${Y_KEY}"}}}}
        )
    )
    config = load_config(trusted(tmp_path)).config
    assert shaping_config(config)["agents"]["x"]["env"] == {"X_KEY": "<redacted>", "Y": "${Y_KEY}"}
    assert agents_config(config)["x"]["env"]["X_KEY"] == "sk-secret-123456"  # what launches the agent
