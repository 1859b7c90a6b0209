"""Escape suite (issue 25, the class of test_instructions_symlink_escape.py): a sandboxed command
makes a FIFO in the project (``mkfifo pipe``), then the model asks the file tools to read it. The
host opened it for reading and blocked forever (no writer ever comes): the session's turn never
ended and a worker thread was lost. Now the tools read regular files only (paragents.treefiles) and
say so. Evidence: the turn ends and each tool's result names the FIFO."""

from __future__ import annotations

import pytest

from paragents.events import PermissionAnswer
from tests.security.hostile import Hostile, hostile, needs_bwrap

__all__ = ["hostile"]


@needs_bwrap
@pytest.mark.parametrize(
    "call",
    [
        ("read_file", {"path": "pipe"}),
        ("edit_file", {"path": "pipe", "old_string": "a", "new_string": "b"}),
        ("write_file", {"path": "pipe", "content": "b"}),
    ],
)
async def test_a_fifo_left_by_a_command_never_hangs_a_file_tool(
    hostile: Hostile, call: tuple[str, dict[str, str]]
) -> None:
    hostile.sink.answer = lambda _req: PermissionAnswer("allow_once")
    rt = await hostile.runtime(sandbox="required")
    try:
        sid = await hostile.attack(rt, [("run_command", {"command": "mkfifo pipe"}), call])
    finally:
        await rt.shutdown()
    outputs = hostile.sink.outputs(sid)
    assert len(outputs) == 2, outputs
    assert "FIFO" in outputs[1], outputs


@needs_bwrap
@pytest.mark.parametrize("where", [".", "sub"])
async def test_a_fifo_named_git_never_hangs_the_next_command(hostile: Hostile, where: str) -> None:
    """``mkfifo .git`` (in the project, or in a folder the next command runs in): preparing the next
    command's sandbox read ``.git`` on the host, as a worktree pointer, and blocked forever."""
    hostile.sink.answer = lambda _req: PermissionAnswer("allow_once")
    rt = await hostile.runtime(sandbox="required")
    make = f"mkdir -p {where} && mkfifo {where}/.git && echo made"
    try:
        sid = await hostile.attack(
            rt, [("run_command", {"command": make}), ("run_command", {"command": "echo next", "cwd": where})]
        )
    finally:
        await rt.shutdown()
    outputs = hostile.sink.outputs(sid)
    assert len(outputs) == 2, outputs
    assert "made" in outputs[0], outputs
