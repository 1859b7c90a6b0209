"""Issue 25 item 2: ``run_command``'s ``cwd`` is a path the model chose. It must lie inside the
session's working directories, is checked against Read deny rules and protected paths, and every
relative path of the command resolves against it. Each attack runs through the real engine (scripted
hostile model, real policy, real bwrap where marked); the host is then checked for evidence."""

from __future__ import annotations

import subprocess

from paragents import events as ev
from paragents.llm.replay import ScriptedResponse
from tests.security.hostile import Hostile, hostile, needs_bwrap, tool_call

__all__ = ["hostile"]

HOOK = "[core]\\n\\tfsmonitor = touch /tmp/pwned\\n"


def git_init(path: object) -> None:
    subprocess.run(["git", "init", "-q", str(path)], check=True)


@needs_bwrap
async def test_append_to_git_config_through_cwd_asks_and_never_writes(hostile: Hostile) -> None:
    """Default mode, sandbox.autoAllow and an allow rule for printf: `printf ... >> config` with
    cwd ".git" was judged as a write of <workdir>/config and wrote .git/config."""
    git_init(hostile.project)
    config = hostile.project / ".git" / "config"
    before = config.read_text()
    rt = await hostile.runtime({"allow": ["Bash(printf *)"]}, sandbox={"mode": "required", "autoAllow": True})
    sid = await hostile.attack(
        rt, [("run_command", {"command": f"printf '{HOOK}' >> config", "cwd": ".git"})]
    )
    await rt.shutdown()
    assert config.read_text() == before
    assert not (hostile.project / "config").exists()
    [asked] = hostile.asked(sid)
    assert "protected" in asked.reason and ".git" in asked.reason


async def test_cwd_trick_asks_in_accept_edits_and_bypass_too(hostile: Hostile) -> None:
    """Protected paths ask in every mode: acceptEdits and bypassPermissions do not let the write run."""
    git_init(hostile.project)
    config = hostile.project / ".git" / "config"
    before = config.read_text()
    rt = await hostile.runtime(sandbox="off")
    for mode in ("acceptEdits", "bypassPermissions"):
        s = await rt.lifecycle.new_session(f"m-{mode}", mode=mode)
        attack = tool_call("run_command", {"command": f"printf '{HOOK}' >> config", "cwd": ".git"})
        hostile.server.add([attack, ScriptedResponse.from_message(content="done")], session=f"m-{mode}")
        rt.submit(s.id, "go")
        await rt.wait_idle(s.id)
        assert len(hostile.asked(s.id)) == 1, mode
    await rt.shutdown()
    assert config.read_text() == before


async def test_read_of_a_denied_file_through_cwd_is_denied(hostile: Hostile) -> None:
    """`cat token` with cwd "secrets" read a file under Read(./secrets/**) without asking."""
    (hostile.project / "secrets").mkdir()
    (hostile.project / "secrets" / "token").write_text("sk-live-SECRET123\n")
    rt = await hostile.runtime({"allow": ["Bash(cat *)"], "deny": ["Read(./secrets/**)"]}, sandbox="off")
    sid = await hostile.attack(
        rt, [("run_command", {"command": "cat token", "cwd": "secrets"})], mode="bypassPermissions"
    )
    history = await rt.store.messages.load_history(sid)
    await rt.shutdown()
    outputs = hostile.sink.outputs(sid)
    assert all("SECRET123" not in out for out in outputs)
    assert all("SECRET123" not in str(m.get("content")) for m in history)
    assert "denied by policy" in outputs[0] and "Read(./secrets/**)" in outputs[0]


async def test_a_cwd_outside_the_working_directories_is_refused(hostile: Hostile) -> None:
    """cwd "../" or an absolute path elsewhere: refused in every mode (bypass too), nothing written."""
    outside = hostile.project.parent / "outside"
    outside.mkdir()
    rt = await hostile.runtime(sandbox="off")
    sid = await hostile.attack(
        rt,
        [
            ("run_command", {"command": "touch planted", "cwd": "../outside"}),
            ("run_command", {"command": "touch planted", "cwd": str(outside)}),
        ],
        mode="bypassPermissions",
    )
    await rt.shutdown()
    assert not (outside / "planted").exists()
    outputs = hostile.sink.outputs(sid)
    assert len(outputs) == 2
    assert all("outside the session's working directories" in out for out in outputs)
    assert hostile.asked(sid) == []


async def test_a_symlinked_cwd_is_judged_where_it_leads(hostile: Hostile) -> None:
    """A symlink inside the project pointing outside (or into .git) is resolved before the check."""
    git_init(hostile.project)
    outside = hostile.project.parent / "elsewhere"
    outside.mkdir()
    (hostile.project / "out").symlink_to(outside)
    (hostile.project / "g").symlink_to(hostile.project / ".git")
    config = hostile.project / ".git" / "config"
    before = config.read_text()
    rt = await hostile.runtime({"allow": ["Bash(printf *)", "Bash(touch *)"]}, sandbox="off")
    sid = await hostile.attack(
        rt,
        [
            ("run_command", {"command": "touch planted", "cwd": "out"}),
            ("run_command", {"command": f"printf '{HOOK}' >> config", "cwd": "g"}),
        ],
    )
    await rt.shutdown()
    assert not (outside / "planted").exists()
    assert config.read_text() == before
    outputs = hostile.sink.outputs(sid)
    assert "outside the session's working directories" in outputs[0]
    [asked] = hostile.asked(sid)
    assert "protected" in asked.reason


async def test_a_plain_subdirectory_cwd_still_runs_and_resolves_there(hostile: Hostile) -> None:
    """Usability: an allowed command in a subdirectory runs there without asking."""
    (hostile.project / "sub").mkdir()
    rt = await hostile.runtime({"allow": ["Bash(touch *)"]}, sandbox="off")
    sid = await hostile.attack(
        rt, [("run_command", {"command": "touch made", "cwd": "sub"})], mode="acceptEdits"
    )
    await rt.shutdown()
    assert (hostile.project / "sub" / "made").exists()
    assert hostile.asked(sid) == []
    assert [e.status for e in hostile.sink.of(ev.ToolCallFinished, sid)] == ["ok"]
