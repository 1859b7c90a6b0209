"""run_command with real subprocesses: exit codes, output handling, environment, timeout and
cancellation killing the whole process group."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from paragents.tools import ToolContext, ToolResult, default_registry
from paragents.tools import shell as shell_mod
from paragents.tools.sandbox import SandboxConfig

Call = Callable[..., Awaitable[ToolResult]]


def process_gone(pid: int) -> bool:
    """True when ``pid`` no longer runs (missing, or a zombie waiting for a reaper)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")


async def wait_for(condition: Callable[[], bool], within: float = 5.0) -> None:
    """Poll ``condition`` until true, failing after ``within`` seconds."""
    async with asyncio.timeout(within):
        while not condition():
            await asyncio.sleep(0.01)


def read_pid(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except FileNotFoundError:
        return None
    return int(text) if text.isdigit() else None


async def test_exit_codes_and_combined_output(call: Call) -> None:
    ok = await call("run_command", {"command": "echo out; echo err >&2"})
    assert not ok.is_error
    assert ok.content == "out\nerr\nexit code 0"
    assert ok.meta["exit_code"] == 0 and ok.meta["timed_out"] is False
    failed = await call("run_command", {"command": "echo nope; exit 3"})
    assert failed.is_error
    assert failed.content == "nope\nexit code 3"
    assert failed.meta["exit_code"] == 3
    quiet = await call("run_command", {"command": "true"})
    assert quiet.content == "(no output)\nexit code 0"


async def test_runs_in_workdir_or_cwd_subdir(ctx: ToolContext, call: Call) -> None:
    (ctx.workdir / "sub").mkdir()
    here = await call("run_command", {"command": "pwd"})
    assert here.content.splitlines()[0] == str(ctx.workdir.resolve())
    sub = await call("run_command", {"command": "pwd", "cwd": "sub"})
    assert sub.content.splitlines()[0] == str((ctx.workdir / "sub").resolve())
    escape = await call("run_command", {"command": "pwd", "cwd": "../"})
    assert escape.is_error and "inside the working directory" in escape.content
    missing = await call("run_command", {"command": "pwd", "cwd": "nope"})
    assert missing.is_error and "not an existing directory" in missing.content


async def test_stdin_is_empty(call: Call) -> None:
    result = await call("run_command", {"command": "cat; echo done", "timeout": 10})
    assert result.content == "done\nexit code 0"


async def test_output_decoded_with_replacement_and_ansi_stripped(call: Call) -> None:
    command = r"printf '\033[1;31mred\033[0m \033]0;title\007bad\377 caf\303\251\n'"
    result = await call("run_command", {"command": command})
    assert result.content == "red bad\ufffd café\nexit code 0"


async def test_output_capped_keeping_head_and_tail(ctx: ToolContext, call: Call) -> None:
    small = ToolContext(workdir=ctx.workdir, max_output_chars=1000)
    result = await call("run_command", {"command": "seq 1 100000"}, small)
    full = "".join(f"{i}\n" for i in range(1, 100001))
    body, exit_line = result.content.rsplit("\n", 1)
    assert exit_line == "exit code 0"
    assert len(result.content) <= 1000
    head, rest = body.split("[... ", 1)
    count, tail = rest.split(" chars omitted ...]\n", 1)
    assert full.startswith(head) and head.startswith("1\n2\n3\n")
    assert (full.rstrip("\n")).endswith(tail) and tail.endswith("99999\n100000")
    assert int(count) == len(full) - len(head) - len(tail) - 1  # the final newline is trimmed
    assert result.meta["output_bytes"] == len(full)


async def test_api_keys_and_tokens_not_visible(call: Call, monkeypatch: pytest.MonkeyPatch) -> None:
    secrets = {
        "OPENAI_API_KEY": "sk-openai-secret-1",
        "PARAGENTS_API_KEY": "sk-paragents-secret-2",
        "ANTHROPIC_API_KEY": "sk-other-secret-3",
        "GITHUB_TOKEN": "ghp-secret-4",
        "DATABASE_URL": "postgres://app:hunter2@db/app",
        "GH_PAT": "ghp-pat-5",
        "PGPASSWORD": "pg-secret-6",
        "STRIPE_SECRET_KEY": "sk_live_7",
        "SMTP_PASSWORD": "smtp-secret-8",
        "SENTRY_DSN": "https://key9@sentry.example/1",
        "HTTPS_PROXY": "http://user:proxy-secret-10@proxy:3128",
        "PARAGENTS_VISIBLE": "plain-value",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PAGER", "less")
    monkeypatch.setenv("LC_TIME", "C.UTF-8")
    result = await call("run_command", {"command": "env"})
    for value in secrets.values():
        assert value not in result.content  # an allow-list: an unknown variable is not passed either
    lines = result.content.splitlines()
    assert "LC_TIME=C.UTF-8" in lines and any(line.startswith("PATH=") for line in lines)
    assert "PAGER=cat" in lines and "GIT_PAGER=cat" in lines and "TERM=dumb" in lines


async def test_env_allow_passes_the_variables_the_user_names(
    ctx: ToolContext, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MYAPP_MODE", "dev")
    monkeypatch.setenv("MYAPP_TOKEN", "named-on-purpose")
    monkeypatch.setenv("OTHER", "not-named")
    ctx.sandbox = SandboxConfig(mode="off", env_allow=("MYAPP_*",))
    lines = (await call("run_command", {"command": "env"}, ctx)).content.splitlines()
    assert "MYAPP_MODE=dev" in lines and "MYAPP_TOKEN=named-on-purpose" in lines
    assert not any(line.startswith("OTHER=") for line in lines)


def test_command_env_is_an_allow_list() -> None:
    env = shell_mod.command_env(
        {"A_TOKEN": "1", "x_api_key": "2", "OPENAI_API_KEY": "3", "HOME": "/h", "LANG": "C", "KEEP": "4"}
    )
    assert env["HOME"] == "/h" and env["LANG"] == "C"
    assert not {"A_TOKEN", "x_api_key", "OPENAI_API_KEY", "KEEP"} & set(env)
    assert shell_mod.command_env({"KEEP": "4"}, allow=("KEEP",))["KEEP"] == "4"


async def test_timeout_kills_whole_process_group(ctx: ToolContext, call: Call) -> None:
    result = await call("run_command", {"command": "sleep 30 & echo $!; wait", "timeout": 0.5})
    assert result.is_error
    assert result.meta["timed_out"] is True
    assert "[timed out after 0.5s" in result.content
    assert result.content.endswith("exit code -15 (killed by SIGTERM)")
    grandchild = int(result.content.splitlines()[0])
    await wait_for(lambda: process_gone(grandchild))


async def test_timeout_sigkills_children_that_ignore_sigterm(
    ctx: ToolContext, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shell_mod, "TERM_GRACE", 0.2)
    command = "trap '' TERM; sleep 30 & echo $!; wait"
    result = await call("run_command", {"command": command, "timeout": 0.3})
    assert result.meta["timed_out"] is True
    assert "killed by SIGKILL" in result.content
    grandchild = int(result.content.splitlines()[0])
    await wait_for(lambda: process_gone(grandchild))


async def test_cancellation_kills_group_and_reraises(ctx: ToolContext) -> None:
    tool = default_registry().get("run_command")
    assert tool is not None
    command = "echo $$ > leader.pid; sleep 30 & echo $! > child.pid; wait"
    task = asyncio.create_task(tool.run(tool.validate({"command": command}), ctx))
    await wait_for(lambda: read_pid(ctx.workdir / "child.pid") is not None)
    leader = read_pid(ctx.workdir / "leader.pid")
    child = read_pid(ctx.workdir / "child.pid")
    assert leader is not None and child is not None
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_for(lambda: process_gone(child) and process_gone(leader), within=2.0)


async def test_background_process_holding_output_does_not_block(
    ctx: ToolContext, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shell_mod, "POST_EXIT_DRAIN", 0.1)
    result = await call("run_command", {"command": "sleep 30 & echo $!"})
    background = int(result.content.splitlines()[0])
    try:
        assert not result.is_error
        assert "background processes still hold the output" in result.content
        assert result.content.endswith("exit code 0")
    finally:
        os.kill(background, signal.SIGKILL)
    await wait_for(lambda: process_gone(background))
