"""run_command under bubblewrap: confinement, hidden paths, network, exit codes and timeouts, and the
"auto"/"required" modes without bwrap. Uses the real bwrap; its tests are skipped when it is absent."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from paragents.config import ConfigError, RuntimeConfig, load_config
from paragents.permissions import Policy
from paragents.tools import ToolContext
from paragents.tools.sandbox import SandboxConfig, bwrap_argv, check, hidden_paths, userns_flags
from paragents.tools.sandbox_git import git_state
from paragents.tools.sandbox_hide import host_sockets, secret_paths
from paragents.ui.core.commands import CommandError, SlashCommand, parse_command
from tests.tools.conftest import Call
from tests.trusting import trusted

BWRAP_WORKS = shutil.which("bwrap") is not None and check(SandboxConfig()).active
needs_bwrap = pytest.mark.skipif(
    not BWRAP_WORKS and not os.environ.get("PARAGENTS_CI"),  # CI installs bwrap: there they must run
    reason="bwrap (Debian package bubblewrap) is not installed or cannot create a sandbox here",
)
MISSING = "/nonexistent/bin/bwrap"
GIT_ID = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@e",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@e",
}


def sandboxed(ctx: ToolContext, **settings: object) -> ToolContext:
    """``ctx`` with a sandbox of ``settings`` (mode "required" unless given)."""
    settings.setdefault("mode", "required")
    ctx.sandbox = SandboxConfig(**settings)  # type: ignore[arg-type]
    return ctx


@pytest.fixture
def outside() -> Iterator[Path]:
    """A writable directory outside the workdir and outside /tmp (which the sandbox replaces)."""
    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="paragents-test-") as name:
        yield Path(name)


@needs_bwrap
async def test_command_cannot_write_outside_the_workdir_but_can_inside(
    call: Call, ctx: ToolContext, outside: Path
) -> None:
    marker = f"/tmp/paragents-sandbox-{os.getpid()}"
    cmd = f"echo in > inside.txt; echo out > {outside}/f.txt; echo tmp > {marker}; cat {marker}"
    result = await call("run_command", {"command": cmd}, sandboxed(ctx))
    assert result.meta["sandboxed"] is True
    assert (ctx.workdir / "inside.txt").read_text() == "in\n"
    assert not (outside / "f.txt").exists()
    assert "Read-only file system" in result.content
    assert "tmp" in result.content and not os.path.exists(marker)  # /tmp is private to the command


@needs_bwrap
async def test_a_cwd_subdirectory_keeps_the_whole_workdir_writable(call: Call, ctx: ToolContext) -> None:
    (ctx.workdir / "sub").mkdir()
    result = await call("run_command", {"command": "echo x > ../top.txt", "cwd": "sub"}, sandboxed(ctx))
    assert not result.is_error, result.content
    assert (ctx.workdir / "top.txt").read_text() == "x\n"


@needs_bwrap
async def test_writable_paths_can_be_written(call: Call, ctx: ToolContext, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    result = await call(
        "run_command", {"command": f"echo x > {cache}/f"}, sandboxed(ctx, writable=(str(cache),))
    )
    assert not result.is_error, result.content
    assert (cache / "f").read_text() == "x\n"


@needs_bwrap
async def test_paths_of_read_deny_rules_are_hidden(
    call: Call, ctx: ToolContext, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = outside  # not under /tmp, which the sandbox replaces anyway
    monkeypatch.setenv("HOME", str(home))
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY")
    (ctx.workdir / ".env").write_text("API_TOKEN=hunter2")
    (ctx.workdir / "sub").mkdir()
    (ctx.workdir / "sub" / ".env").write_text("NESTED=hunter3")
    (ctx.workdir / "visible.txt").write_text("plain")
    (ctx.workdir / "permissions.json").write_text(
        json.dumps({"permissions": {"deny": ["Read(~/.ssh/**)", "Read(.env)"]}})
    )
    rules = Policy.load(ctx.workdir).read_deny_patterns(ctx.workdir)
    cmd = "ls -A ~/.ssh; cat ~/.ssh/id_ed25519 .env sub/.env visible.txt"
    result = await call("run_command", {"command": cmd}, sandboxed(ctx, hidden_rules=rules))
    assert "plain" in result.content
    for secret in ("PRIVATE KEY", "hunter2", "hunter3", "id_ed25519\n"):
        assert secret not in result.content
    assert (ctx.workdir / ".env").read_text() == "API_TOKEN=hunter2"  # hidden, not changed


def test_hidden_paths_expand_globs_below_their_directory(tmp_path: Path) -> None:
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "a.pem").write_text("x")
    (tmp_path / "keys" / "a.txt").write_text("x")
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "one").write_text("x")
    root = str(tmp_path)
    found = hidden_paths([(root, "*.pem"), (root, "/secrets/**"), (root, "/missing")], tmp_path)
    assert sorted(found) == [tmp_path / "keys" / "a.pem", tmp_path / "secrets"]


async def _loopback_server() -> tuple[asyncio.Server, int, list[bytes]]:
    got: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        got.append(await reader.readline())
        writer.write(b"pong\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1], got


@needs_bwrap
async def test_network_none_cannot_reach_a_host_loopback_server_and_all_can(
    call: Call, ctx: ToolContext
) -> None:
    server, port, got = await _loopback_server()
    cmd = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo ping >&3 && head -1 <&3"
    async with server:
        closed = await call("run_command", {"command": cmd}, sandboxed(ctx, network="none"))
        assert closed.is_error and "pong" not in closed.content and got == []
        opened = await call("run_command", {"command": cmd}, sandboxed(ctx, network="all"))
        assert not opened.is_error, opened.content
        assert "pong" in opened.content and got == [b"ping\n"]


@needs_bwrap
async def test_exit_code_and_output_are_kept(call: Call, ctx: ToolContext) -> None:
    result = await call("run_command", {"command": "echo out; echo err >&2; exit 7"}, sandboxed(ctx))
    assert result.meta["exit_code"] == 7 and result.is_error
    assert "out\nerr\n" in result.content and "exit code 7" in result.content


def _running(tag: str) -> list[int]:
    """Host pids whose command line contains ``tag``."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if tag.encode() in cmdline and ") Z " not in stat:
                pids.append(int(entry))
    return pids


@needs_bwrap
async def test_timeout_kills_the_whole_process_tree(call: Call, ctx: ToolContext) -> None:
    tag = f"{os.getpid() % 1000}.{time.monotonic_ns() % 100000}"
    cmd = f"(trap '' TERM; exec sleep 1{tag}) & (exec sleep 2{tag}) & sleep 3{tag}"
    result = await call("run_command", {"command": cmd, "timeout": 0.5}, sandboxed(ctx))
    assert result.meta["timed_out"] is True and result.meta["sandboxed"] is True
    deadline = time.monotonic() + 5
    while _running(tag) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)  # polling a condition with a deadline, not a fixed wait
    assert _running(tag) == []


async def test_required_without_bwrap_refuses_and_says_how_to_install(call: Call, ctx: ToolContext) -> None:
    result = await call("run_command", {"command": "touch ran"}, sandboxed(ctx, bwrap=MISSING))
    assert result.is_error and result.meta["sandboxed"] is False
    assert "apt-get install bubblewrap" in result.content and "not run" in result.content
    assert not (ctx.workdir / "ran").exists()


async def test_auto_without_bwrap_or_off_linux_runs_unconfined(
    call: Call, ctx: ToolContext, tmp_path: Path
) -> None:
    result = await call(
        "run_command",
        {"command": f"touch ran {tmp_path}/outside"},
        sandboxed(ctx, mode="auto", bwrap=MISSING),
    )
    assert not result.is_error and result.meta["sandboxed"] is False
    assert (tmp_path / "outside").exists()
    status = check(SandboxConfig(mode="auto"), platform="darwin")
    assert status.state == "unconfined" and "darwin" in status.message
    assert check(SandboxConfig(mode="required"), platform="darwin").state == "refused"
    assert check(SandboxConfig(mode="off")).state == "off"


def test_argv_binds_the_root_a_caller_passes_and_drops_capabilities(tmp_path: Path) -> None:
    lane = tmp_path / "lane"
    lane.mkdir()
    argv = bwrap_argv("bwrap", SandboxConfig(root=lane, network="all"), lane / ".", ["bash", "-c", "x"])
    assert argv[argv.index("--bind") + 1] == str(lane)
    assert "--unshare-net" not in argv and argv[argv.index("--cap-drop") + 1] == "ALL"
    assert argv[-4:] == ["--", "bash", "-c", "x"]


def test_argv_never_hides_a_directory_holding_the_writable_root(outside: Path) -> None:
    lane = outside / "lane"
    lane.mkdir()
    (lane / "x").write_text("secret")
    rules = ((str(outside.parent), "/" + outside.name), (str(outside), "/lane/**"), (str(outside), "/lane/x"))
    argv = bwrap_argv("bwrap", SandboxConfig(root=lane, hidden_rules=rules), lane, ["true"])
    tmpfs = [argv[i + 1] for i, a in enumerate(argv) if a == "--tmpfs"]
    assert str(outside) not in argv and str(lane) not in tmpfs
    assert argv[argv.index(str(lane / "x")) - 2] == "--ro-bind"


def test_config_takes_a_mode_string_or_an_object_with_auto_allow(tmp_path: Path) -> None:
    (tmp_path / "runtime_config.json").write_text(json.dumps({"sandbox": "off"}))
    assert load_config(trusted(tmp_path)).config.sandbox.mode == "off"
    data = {"sandbox": {"mode": "required", "network": "all", "writable": ["~/.cache"], "autoAllow": True}}
    (tmp_path / "runtime_config.json").write_text(json.dumps(data))
    sandbox = load_config(trusted(tmp_path)).config.sandbox
    assert (sandbox.mode, sandbox.network, sandbox.writable, sandbox.auto_allow) == (
        "required", "all", ("~/.cache",), True,
    )  # fmt: skip
    assert RuntimeConfig().sandbox.mode == "auto" and RuntimeConfig().sandbox.auto_allow is False
    (tmp_path / "runtime_config.json").write_text(json.dumps({"sandbox": {"network": "loopback"}}))
    with pytest.raises(ConfigError, match=r"sandbox\.network"):
        load_config(tmp_path)
    (tmp_path / "runtime_config.json").write_text(json.dumps({"sandbox": {"netwrok": "all"}}))
    with pytest.raises(
        ConfigError,
        match="known keys: auto_allow, bwrap, env_allow, hidden, home_visible, mode, network, writable",
    ):
        load_config(tmp_path)


def test_sandbox_command_parses_an_optional_mode() -> None:
    assert parse_command("/sandbox") == SlashCommand("sandbox", None)
    assert parse_command("/sandbox required") == SlashCommand("sandbox", "required")
    error = parse_command("/sandbox sometimes")
    assert isinstance(error, CommandError) and "off, auto, required" in error.message


def _pairs(argv: list[str], flag: str) -> list[str]:
    """The first argument of every ``flag`` in ``argv``."""
    return [argv[i + 1] for i, a in enumerate(argv) if a == flag]


def test_argv_hides_paragents_dirs_and_credentials_but_binds_a_lane_back(
    outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, config, state = outside / "home", outside / "config", outside / "state"
    for path in (home / ".ssh", home / ".aws", config, state / "lanes" / "abc" / "api"):
        path.mkdir(parents=True)
    (home / ".netrc").write_text("machine x password y")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PARAGENTS_CONFIG_DIR", str(config))
    monkeypatch.setenv("PARAGENTS_STATE_DIR", str(state))
    lane = state / "lanes" / "abc" / "api"
    argv = bwrap_argv("bwrap", SandboxConfig(root=lane, hidden=("~/.aws",), session="s1"), lane, ["true"])
    tmpfs, binds = _pairs(argv, "--tmpfs"), _pairs(argv, "--bind")
    assert {str(home), str(config), str(state)} <= set(tmpfs)  # the whole home, hidden by default
    assert str(home / ".ssh") not in argv  # below the hidden home: nothing to hide one by one
    assert argv.index(str(state)) < argv.index(str(lane))  # hidden first, then the lane bound back
    assert str(lane) in binds and str(state / "sandbox" / "s1") in binds
    assert argv[argv.index(str(config)) - 3 : argv.index(str(config))] == ["--perms", "0555", "--tmpfs"]
    shown = SandboxConfig(root=lane, hidden=("~/.aws",), session="s1", home_visible=("~",))
    argv = bwrap_argv("bwrap", shown, lane, ["true"])  # the whole home shown: credentials one by one
    tmpfs = _pairs(argv, "--tmpfs")
    assert {str(home / ".ssh"), str(home / ".aws"), str(config), str(state)} <= set(tmpfs)
    assert str(home) not in tmpfs
    assert _pairs(argv, "--ro-bind")[-1] == str(home / ".netrc") or str(home / ".netrc") in argv


def test_argv_gives_commands_private_caches(outside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PARAGENTS_STATE_DIR", str(outside / "state"))
    root = outside / "work"
    root.mkdir()
    argv = bwrap_argv("bwrap", SandboxConfig(root=root, session="s1"), root, ["true"])
    env = {argv[i + 1]: argv[i + 2] for i, a in enumerate(argv) if a == "--setenv"}
    private = str(outside / "state" / "sandbox" / "s1")
    assert env["UV_CACHE_DIR"] == private + "/uv" and env["npm_config_cache"] == private + "/npm"
    assert env["XDG_CACHE_HOME"].startswith(private) and env["TMPDIR"] == "/tmp"
    assert (outside / "state" / "sandbox" / "s1" / "uv").is_dir()
    assert (outside / "state" / "sandbox" / "s1").stat().st_mode & 0o777 == 0o700


@needs_bwrap
def test_nested_user_namespaces_are_disabled_where_bwrap_can() -> None:
    assert userns_flags(shutil.which("bwrap") or "bwrap") == ("--unshare-user", "--disable-userns")


def test_git_state_of_a_plain_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git" / "objects").mkdir(parents=True)
    (repo / ".git" / "refs").mkdir()
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / ".git" / "config").write_text("")
    state = git_state(str(repo))
    git = str(repo / ".git")
    assert state.writable == [git]
    assert set(state.readonly) == {f"{git}/config", f"{git}/hooks", f"{git}/info"}  # made when missing
    assert git_state(str(repo), hidden=[str(tmp_path)]).writable == []  # never inside a hidden path


def test_git_state_of_a_linked_worktree(tmp_path: Path) -> None:
    repo, lane = tmp_path / "repo", tmp_path / "lane"
    repo.mkdir()
    for args in (
        ["init", "-q", "-b", "main"],
        ["commit", "-q", "--allow-empty", "-m", "i"],
        ["branch", "paragents/other"],
        ["worktree", "add", "-q", "-b", "paragents/api", str(lane)],
    ):
        subprocess.run(["git", *args], cwd=repo, check=True, env={**os.environ, **GIT_ID})  # fmt: skip
    git = str(repo / ".git")
    state = git_state(str(lane))
    assert state.writable == [
        f"{git}/worktrees/lane",
        f"{git}/refs/heads/paragents",
        f"{git}/logs/refs/heads/paragents",
    ]
    assert state.objects is not None and state.objects[1:] == (
        f"{git}/objects",
        f"{git}/objects/.paragents-common",
    )
    assert (
        Path(state.objects[0]) / "info" / "alternates"
    ).read_text() == f"{git}/objects/.paragents-common\n"
    lane_git = f"{git}/worktrees/lane"
    assert {str(lane / ".git"), f"{lane_git}/commondir", f"{lane_git}/gitdir", f"{lane_git}/HEAD"} <= set(
        state.readonly
    )  # HEAD too: a lane cannot point itself at another branch
    assert state.visible == [git]
    assert f"{git}/refs/heads/paragents/other" in state.readonly  # other branches stay read-only
    assert f"{git}/config" not in state.writable
    (lane / ".git").write_text(f"gitdir: {tmp_path}\n")  # pointing elsewhere: nothing writable
    assert git_state(str(lane)).writable == []


@needs_bwrap
def test_a_sibling_branch_deleted_before_bwrap_starts_is_no_error(tmp_path: Path) -> None:
    """The read-only binds of sibling lanes' branches are listed when the command line is built; one
    deleted before bwrap starts (another lane removed meanwhile) must not fail the command."""
    repo, lane = tmp_path / "repo", tmp_path / "lane"
    repo.mkdir()
    for args in (
        ["init", "-q", "-b", "main"],
        ["commit", "-q", "--allow-empty", "-m", "i"],
        ["branch", "paragents/other"],
        ["worktree", "add", "-q", "-b", "paragents/api", str(lane)],
    ):
        subprocess.run(["git", *args], cwd=repo, check=True, env={**os.environ, **GIT_ID})  # fmt: skip
    argv = bwrap_argv("bwrap", SandboxConfig(mode="required"), lane, ["git", "status", "--short"])
    assert str(repo / ".git/refs/heads/paragents/other") in argv
    subprocess.run(["git", "branch", "-D", "-q", "paragents/other"], cwd=repo, check=True)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr


def test_host_sockets_come_from_the_table_except_under_skipped_dirs(tmp_path: Path) -> None:
    import socket

    sock_path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock_path))
    table = tmp_path / "unix"
    table.write_text(
        "Num RefCount Protocol Flags Type St Inode Path\n"
        f"0: 00000002 00000000 00010000 0001 01 1 {sock_path}\n"
        "0: 00000002 00000000 00010000 0001 01 2 @abstract\n"
        f"0: 00000002 00000000 00010000 0001 01 3 {tmp_path}/gone.sock\n"
    )
    try:
        assert host_sockets((), table=str(table)) == [str(sock_path)]
        assert host_sockets((str(tmp_path),), table=str(table)) == []
    finally:
        server.close()


def test_secret_paths_are_the_existing_ones(outside: Path) -> None:
    (outside / ".ssh").mkdir()
    (outside / ".git-credentials").write_text("x")
    found = secret_paths(("~/extra",), env={"HOME": str(outside)})
    assert str(outside / ".ssh") in found and str(outside / ".git-credentials") in found
    assert str(outside / "extra") not in found and str(outside / ".aws") not in found  # missing: skipped
