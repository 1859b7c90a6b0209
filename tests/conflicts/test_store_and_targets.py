"""Reservations across processes (a dead holder is released at start), path overlap and call targets."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from paragents.config import SharedResource
from paragents.conflicts import call_targets, make_diff, matching_resources, paths_overlap
from tests.conflicts.conftest import ConflictEnv


async def test_reservation_of_a_killed_process_is_released_at_start_with_a_note(cenv: ConflictEnv) -> None:
    rt = await cenv.runtime()
    view = await cenv.session(rt, "a")
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()  # reaped: its pid now names no process
    target = str(cenv.project / "app.py")
    await rt.store.add_reservation(view.id, target, "write", reason="write_file app.py", pid=proc.pid)
    live = await rt.store.add_reservation(view.id, "/elsewhere/kept", "write", pid=None)
    await rt.shutdown()

    rt2 = await cenv.runtime()
    notes = [n for n in rt2.notes if "reservation" in n]
    assert len(notes) == 1 and str(proc.pid) in notes[0] and target in notes[0]
    assert [r.id for r in await rt2.store.list_reservations()] == [live]
    await rt2.shutdown()


async def test_a_live_foreign_holder_is_seen_and_waited_for_by_polling(cenv: ConflictEnv) -> None:
    """A reservation owned by another live process (this test's parent pid) blocks; releasing it in the
    store lets the waiting call run (re-checked at the poll interval)."""
    import os

    from paragents import events as ev
    from tests.conflicts.conftest import reply, tool

    rt = await cenv.runtime()
    other = await cenv.session(rt, "other")
    b = await cenv.session(rt, "b")
    rt.conflicts.poll_interval = 0.02
    target = cenv.project / "n.txt"
    await rt.store.add_reservation(other.id, str(target), "write", reason="edit_file n.txt", pid=os.getppid())
    cenv.server.add(
        [reply(tool_calls=[tool("write_file", {"path": "n.txt", "content": "B"})]), reply("ok")], session="b"
    )
    rt.submit(b.id, "go")
    await cenv.sink.wait_for(lambda: bool(cenv.sink.of(ev.ConflictDetected, b.id)))
    assert not target.exists()
    await rt.store.release_reservations(session_id=other.id)  # "the other process" ends its turn
    await rt.wait_idle(b.id)
    assert target.read_text() == "B"
    assert [e.by for e in cenv.sink.of(ev.ConflictResolved, b.id)] == ["auto"]
    await rt.shutdown()


@pytest.mark.parametrize(
    ("a", "b", "overlap"),
    [
        ("/p/a.txt", "/p/a.txt", True),
        ("/p/src", "/p/src/x.py", True),
        ("/p/src/x.py", "/p/src", True),
        ("/p/src", "/p/srcx/y.py", False),
        ("/p/a.txt", "/p/b.txt", False),
        ("/p/*.txt", "/p/sub/a.txt", True),
        ("/p/src/*.py", "/p/docs/a.md", False),
        ("resource:port:8000", "resource:port:8000", True),
        ("resource:port:8000", "/p/resource:port:8000", False),
    ],
)
def test_paths_overlap(a: str, b: str, overlap: bool) -> None:
    assert paths_overlap(a, b) is overlap
    assert paths_overlap(b, a) is overlap


def test_call_targets_of_tools_and_commands(tmp_path: Path) -> None:
    real = tmp_path.resolve()
    assert call_targets("edit_file", {"path": "a.py"}, tmp_path).paths == (str(real / "a.py"),)
    assert call_targets("read_file", {"path": "a.py"}, tmp_path).empty
    cmd = call_targets("run_command", {"command": "cp a b && echo x > out/log.txt"}, tmp_path)
    # b may be a directory: cp then writes b/a (issue 26 item 7)
    assert (
        set(cmd.paths) == {str(real / "b"), str(real / "b/a"), str(real / "out/log.txt")} and not cmd.unknown
    )
    assert call_targets("run_command", {"command": "ls -la"}, tmp_path).empty
    assert call_targets("run_command", {"command": "find . | xargs rm"}, tmp_path).unknown


def test_resources_match_bash_patterns() -> None:
    res = [SharedResource(name="port:8000", commands=("npm run dev*", "Bash(python -m http.server *)"))]
    assert matching_resources("cd web && npm run dev -- --port 8000", res) == ("port:8000",)
    assert matching_resources("python -m http.server 8000", res) == ("port:8000",)
    assert matching_resources("npm test", res) == ()


def test_stale_diff_is_unified_and_bounded() -> None:
    diff = make_diff("a\nb\n", "a\nB\n", "f.txt")
    assert diff.startswith("--- a/f.txt\n+++ b/f.txt\n") and "-b\n" in diff and "+B\n" in diff
    assert "deleted" in make_diff("a\n", None, "f.txt")
    big = make_diff("x\n" * 10, "y\n" * 20000, "f.txt")
    assert big.endswith("characters]\n") and len(big) < 9000


async def test_a_stale_read_names_the_session_that_wrote_the_file_and_the_others_that_read_it(
    tmp_path: Path,
) -> None:
    import hashlib

    from paragents.conflicts.reads import ReadTracker

    f = tmp_path / "config.py"

    def put(text: str) -> str:
        f.write_text(text)
        return hashlib.sha256(text.encode()).hexdigest()

    tracker = ReadTracker()
    tracker.saw("web", f, put("a\n"), "read")
    tracker.saw("docs", f, put("a\n"), "read")
    tracker.saw("api", f, put("b\n"), "write")
    stale = await tracker.stale("web", str(f))
    assert stale is not None
    write = tracker.changed_by("web", stale)
    assert write is not None and write.session_id == "api" and write.at >= stale.seen.at
    assert tracker.others("web", str(f)) == ["docs", "api"]
    tracker.saw("web", f, put("c\n"), "read")  # web read it after api's write; the user edits it now
    put("d\n")
    later = await tracker.stale("web", str(f))
    assert later is not None and tracker.changed_by("web", later) is None  # not by a session here
    tracker.forget("api")
    assert tracker.others("web", str(f)) == ["docs"]
