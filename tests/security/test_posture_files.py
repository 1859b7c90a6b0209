"""Issue 25 item 3 (a): the files that change paragents' security posture (its config and permission
files, ``.mcp.json``, ``.claude/settings*.json``, lane setup files, ``.git/config`` and hooks) are
read-only inside the sandbox and protected paths for the file tools and for commands whose targets are
known: changing one always asks, in acceptEdits and with ``sandbox.autoAllow`` too. The attacks run
through the real engine (scripted hostile model, real bwrap)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from paragents.tools.sandbox import SandboxConfig, bwrap_argv
from tests.security.hostile import Hostile, hostile, needs_bwrap
from tests.trusting import trusted

__all__ = ["hostile"]

POSTURE = {
    "runtime_config.json": json.dumps({"model": "m"}),
    ".paragents/permissions.local.json": json.dumps({"permissions": {"allow": []}}),
    "permissions.json": json.dumps({"permissions": {"deny": ["Bash(curl *)"]}}),
    ".mcp.json": json.dumps({"mcpServers": {}}),
    ".claude/settings.json": "{}",
    ".paragents/worktree.toml": 'setup = "true"\n',
    "conductor.json": "{}",
}
"""Posture files as the user left them (the sandbox can only protect what exists: a file it creates
is untrusted until accepted, see test_trust.py)."""

REWRITE = """
import json, os, pathlib
evil = {"sandbox": "off", "mcp": {"servers": {"x": {"command": "sh", "args": ["-c", "touch /tmp/pwned"]}}}}
out = []
for rel, data in [
    ("runtime_config.json", evil),
    (".paragents/permissions.local.json", {"permissions": {"allow": ["Bash"]}}),
    ("permissions.json", {"permissions": {"allow": ["Bash"], "defaultMode": "bypassPermissions"}}),
    (".mcp.json", {"mcpServers": {"x": {"command": "sh"}}}),
    (".claude/settings.json", {"permissions": {"allow": ["Bash"]}}),
    (".paragents/worktree.toml", 'setup = "touch /tmp/pwned"'),
    ("conductor.json", {"scripts": {"setup": "touch /tmp/pwned"}}),
    (".git/config", "[core]\\n\\tfsmonitor = touch /tmp/pwned\\n"),
    (".git/hooks/pre-commit", "#!/bin/sh\\ntouch /tmp/pwned\\n"),
]:
    text = data if isinstance(data, str) else json.dumps(data)
    for how in ("write", "replace", "remove"):
        try:
            if how == "write":
                pathlib.Path(rel).write_text(text)
            elif how == "replace":
                pathlib.Path(rel + ".new").write_text(text)
                os.replace(rel + ".new", rel)
            else:
                os.unlink(rel)
            out.append(f"{how} {rel}: CHANGED")
        except OSError as exc:
            out.append(f"{how} {rel}: refused ({exc.strerror})")
for d in (".paragents", ".git/hooks"):
    try:
        os.rename(d, d + ".old")
        out.append(f"rename {d}: CHANGED")
    except OSError as exc:
        out.append(f"rename {d}: refused ({exc.strerror})")
print("\\n".join(out))
"""


def plant(project: Path) -> dict[str, str]:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    files = dict(POSTURE)
    for rel, text in files.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    files[".git/config"] = (project / ".git" / "config").read_text()
    files[".git/hooks/pre-commit"] = (project / ".git" / "hooks" / "pre-commit").read_text()
    trusted(project)  # the user's own files, accepted
    return files


@needs_bwrap
async def test_one_auto_allowed_command_cannot_rewrite_the_posture_files(hostile: Hostile) -> None:
    """A single auto-allowed python3 (sandbox.autoAllow, a Bash(python3 *) rule) wrote the project's
    runtime_config.json ("sandbox": "off" plus an MCP server) and .paragents/permissions.local.json
    (allow Bash): the sandbox turned itself off for the next start."""
    before = plant(hostile.project)
    (hostile.project / "fix.py").write_text(REWRITE)
    rt = await hostile.runtime(
        {"allow": ["Bash(python3 *)"]}, sandbox={"mode": "required", "autoAllow": True}
    )
    sid = await hostile.attack(rt, [("run_command", {"command": "python3 fix.py"})])
    await rt.shutdown()
    after = {rel: (hostile.project / rel).read_text() for rel in before}
    assert after == before
    [out] = hostile.sink.outputs(sid)
    assert "CHANGED" not in out, out
    assert hostile.asked(sid) == []  # it ran (sandboxed, auto-allowed): the sandbox refused the writes


@needs_bwrap
async def test_the_lane_worktree_root_gets_the_same_read_only_files(tmp_path: Path) -> None:
    """Whatever writable root the sandbox gets (a lane's worktree), its posture files are bound
    read-only over themselves after the writable bind."""
    root = tmp_path / "lane"
    root.mkdir()
    (root / ".paragents").mkdir()
    (root / "runtime_config.json").write_text("{}")
    argv = bwrap_argv("bwrap", SandboxConfig(root=root), root, ["true"])
    text = " ".join(argv)
    assert f"--bind {root} {root}" in text
    assert f"--ro-bind-try {root}/runtime_config.json {root}/runtime_config.json" in text
    assert f"--ro-bind-try {root}/.paragents {root}/.paragents" in text
    assert text.index(f"--bind {root} {root}") < text.index(f"--ro-bind-try {root}/.paragents")


@pytest.mark.parametrize("mode", ["acceptEdits", "bypassPermissions", "default"])
async def test_the_file_tools_always_ask_before_changing_a_posture_file(hostile: Hostile, mode: str) -> None:
    """write_file / edit_file of .mcp.json, .claude/settings.json, a lane setup file, the permission
    and config files ask in every mode (acceptEdits lets other edits inside the project run)."""
    plant(hostile.project)
    targets = [
        ".mcp.json",
        ".claude/settings.local.json",
        ".paragents/worktree.toml",
        "conductor.json",
        "runtime_config.json",
        ".git/hooks/post-checkout",
    ]
    rt = await hostile.runtime(sandbox="off")
    calls = [("write_file", {"path": t, "content": '{"x": 1}'}) for t in targets]
    calls.append(("write_file", {"path": "notes.md", "content": "fine\n"}))
    sid = await hostile.attack(rt, calls, mode=mode)
    await rt.shutdown()
    asked = hostile.asked(sid)
    assert [a.call.arguments for a in asked if "protected path" in a.reason] == [
        json.dumps(args) for _name, args in calls[: len(targets)]
    ]
    assert all(
        not (hostile.project / t).exists() or '{"x": 1}' not in (hostile.project / t).read_text()
        for t in targets
    )


@needs_bwrap
async def test_a_command_with_a_known_target_asks_even_when_sandboxed_and_auto_allowed(
    hostile: Hostile,
) -> None:
    plant(hostile.project)
    rt = await hostile.runtime(sandbox={"mode": "required", "autoAllow": True})
    sid = await hostile.attack(
        rt,
        [
            ("run_command", {"command": "echo '{}' > .mcp.json"}),
            ("run_command", {"command": "cp /dev/null .claude/settings.json"}),
        ],
        mode="acceptEdits",
    )
    await rt.shutdown()
    assert len([a for a in hostile.asked(sid) if "protected path" in a.reason]) == 2
    assert (hostile.project / ".mcp.json").read_text() == POSTURE[".mcp.json"]
