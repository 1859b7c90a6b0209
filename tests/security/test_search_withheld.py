"""Issue 25 item 5: ``grep``, ``glob`` and ``list_dir`` return only what a ``read_file`` of each path
would: Read deny rules hide files below the searched path in every mode (bypassPermissions too), ask
rules and paths resolving outside the working directories are withheld, and the result says how many
were. Each search runs through the real engine (scripted hostile model); the transcript and the
stored history are then checked for the secrets."""

from __future__ import annotations

from pathlib import Path

import pytest

from paragents.events import PermissionAnswer
from paragents.sessions.runtime import Runtime
from tests.security.hostile import Hostile, hostile

__all__ = ["hostile"]

SECRET = "sk-live-TOPSECRET42"


def plant(project: Path) -> None:
    (project / ".env").write_text(f"API_KEY={SECRET}\n")
    (project / "secrets").mkdir()
    (project / "secrets" / "token").write_text(f"{SECRET}\n")
    (project / "app.py").write_text("print('hello')\n")


async def leaked(hostile: Hostile, rt: Runtime, sid: str) -> bool:
    """True when the secret reached the model: a tool result or the stored history (the runtime is
    shut down here, so an assertion on the answer leaves nothing running)."""
    history = await rt.store.messages.load_history(sid)
    await rt.shutdown()
    stored = " ".join(str(m.get("content")) for m in history)
    return SECRET in stored or any(SECRET in out for out in hostile.sink.outputs(sid))


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions", "plan"])
async def test_grep_of_the_project_does_not_return_denied_files(hostile: Hostile, mode: str) -> None:
    """`grep {"pattern": ".", "path": "."}` returned .env lines under Read(./.env) without asking."""
    plant(hostile.project)
    rt = await hostile.runtime({"deny": ["Read(./.env)", "Read(./secrets/**)"]}, sandbox="off")
    sid = await hostile.attack(rt, [("grep", {"pattern": ".", "path": "."})], mode=mode)
    assert not await leaked(hostile, rt, sid)
    [out] = hostile.sink.outputs(sid)
    assert "app.py:1: print('hello')" in out
    assert "[2 results withheld by Read deny rules]" in out


async def test_grep_of_a_denied_directory_outside_in_bypass_mode_returns_nothing(
    hostile: Hostile, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In bypass mode `grep ~/.ssh` read the keys despite Read(~/.ssh/**)."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRET}\n")
    monkeypatch.setenv("HOME", str(home))
    hostile.sink.answer = lambda _req: PermissionAnswer("allow_once")  # ~/.ssh is a credential place: it asks
    rt = await hostile.runtime({"deny": ["Read(~/.ssh/**)"]}, sandbox="off")
    sid = await hostile.attack(
        rt,
        [("grep", {"pattern": "KEY|sk-", "path": "~/.ssh"}), ("glob", {"pattern": "**/*", "path": "~/.ssh"})],
        mode="bypassPermissions",
    )
    assert not await leaked(hostile, rt, sid)
    grep_out, glob_out = hostile.sink.outputs(sid)
    assert "id_ed25519" not in grep_out and "1 result withheld by Read deny rules" in grep_out
    assert "id_ed25519" not in glob_out and "1 result withheld by Read deny rules" in glob_out


async def test_glob_and_list_dir_withhold_denied_names(hostile: Hostile) -> None:
    plant(hostile.project)
    rt = await hostile.runtime({"deny": ["Read(./.env)", "Read(./secrets/**)"]}, sandbox="off")
    sid = await hostile.attack(
        rt,
        [
            ("glob", {"pattern": "**/*"}),
            ("list_dir", {"path": "secrets"}),
            ("list_dir", {"path": "."}),
        ],
    )
    await rt.shutdown()
    glob_out, secrets_out, top_out = hostile.sink.outputs(sid)
    assert ".env" not in glob_out and "secrets/token" not in glob_out and "app.py" in glob_out
    assert "[2 results withheld by Read deny rules]" in glob_out
    assert "token" not in secrets_out and "1 result withheld by Read deny rules" in secrets_out
    assert ".env" not in top_out.split("[")[0] and "app.py" in top_out


async def test_ask_rules_and_symlinks_out_of_the_project_are_withheld(hostile: Hostile) -> None:
    """A file under an ask rule, and a symlink inside the project leading outside it, are not shown by
    a search that needed no ask (reading them would ask)."""
    (hostile.project / "app.py").write_text("print('hello')\n")
    outside = hostile.project.parent / "outside"
    outside.mkdir()
    (outside / "loot.txt").write_text(f"{SECRET}\n")
    (hostile.project / "leak.txt").symlink_to(outside / "loot.txt")
    (hostile.project / "private").mkdir()
    (hostile.project / "private" / "notes.txt").write_text(f"{SECRET}\n")
    rt = await hostile.runtime({"ask": ["Read(./private/**)"]}, sandbox="off")
    sid = await hostile.attack(
        rt, [("glob", {"pattern": "**/*.txt"}), ("list_dir", {}), ("grep", {"pattern": "sk-live"})]
    )
    assert not await leaked(hostile, rt, sid)
    glob_out, list_out, grep_out = hostile.sink.outputs(sid)
    assert "leak.txt" not in glob_out and "private/notes.txt" not in glob_out
    assert "2 results withheld because reading them asks" in glob_out
    assert "leak.txt" not in list_out and "withheld because reading them asks" in list_out
    assert "withheld because reading them asks" in grep_out
    assert hostile.asked(sid) == []
