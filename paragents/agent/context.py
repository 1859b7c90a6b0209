"""A session's context: project instructions (AGENTS.md) and the system prompt.

Project instructions come from ``AGENTS.md`` files (the https://agents.md convention; ``CLAUDE.md``
when a folder has no ``AGENTS.md``), from the project root down to the session's workdir, outermost
first, so that the most specific instructions come last.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path

from paragents import treefiles

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")
MAX_INSTRUCTION_CHARS = 20_000


@dataclass(frozen=True, slots=True)
class InstructionFile:
    """One loaded instruction file: its path and text (capped at MAX_INSTRUCTION_CHARS characters)."""

    path: Path
    text: str


def _chain(project_dir: Path, workdir: Path) -> list[Path]:
    project_dir = project_dir.resolve()
    workdir = workdir.resolve()
    try:
        rel = workdir.relative_to(project_dir)
    except ValueError:
        return [workdir]
    dirs = [project_dir]
    current = project_dir
    for part in rel.parts:
        current = current / part
        dirs.append(current)
    return dirs


def load_instructions(project_dir: Path, workdir: Path) -> list[InstructionFile]:
    """Return the instruction files that apply to ``workdir``, outermost first.

    In each folder from ``project_dir`` down to ``workdir``, ``AGENTS.md`` is used, else ``CLAUDE.md``.
    Unreadable files are skipped (a missing file is normal), and so is anything but a regular file:
    a session's command can write the project, and a symbolic link named ``AGENTS.md`` pointing at
    ``.env`` or paragents' own ``serve.json`` would otherwise be read here, on the host, into the
    system prompt (the sandbox hides those files from the command itself)."""
    found: list[InstructionFile] = []
    for folder in _chain(project_dir, workdir):
        for name in INSTRUCTION_FILES:
            path = folder / name
            text = _read_regular(path)
            if text is None:
                continue
            if len(text) > MAX_INSTRUCTION_CHARS:
                text = text[:MAX_INSTRUCTION_CHARS] + "\n[truncated]"
            found.append(InstructionFile(path=path, text=text))
            break
    return found


def _read_regular(path: Path) -> str | None:
    """The text of ``path`` when it is a regular file (never through a symbolic link, never a FIFO or
    device: paragents.treefiles), at most MAX_INSTRUCTION_CHARS * 4 bytes read; None otherwise."""
    try:
        fd = treefiles.open_regular(path)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        try:
            data = f.read(MAX_INSTRUCTION_CHARS * 4 + 1)
        except OSError:
            return None
    return data.decode("utf-8", errors="replace")


def build_system_prompt(
    *,
    workdir: Path,
    instructions: list[InstructionFile],
    notes: list[str] | None = None,
    project_notes: list[str] | None = None,
    today: dt.date | None = None,
    decisions: list[str] | None = None,
) -> str:
    """Return the system prompt text: role, workdir, today's date, project instructions, then the
    session's ``notes`` and the ``project_notes`` (lines already formatted, see :func:`note_line`)."""
    today = today or dt.date.today()
    parts = [
        "You are a coding agent working in a terminal for the user, inside the project folder below. "
        "Use the tools to read, search, edit files and run commands; prefer small, verifiable steps. "
        "Paths are relative to the working directory. Some tool calls need the user's approval; "
        "when a call is denied, respect the reason and adapt. Reply in concise Markdown.",
        f"Working directory: {workdir}",
        f"Today's date: {today.isoformat()}",
    ]
    for inst in instructions:
        parts.append(f"Project instructions from {inst.path}:\n{inst.text.strip()}")
    if notes:
        parts.append(
            "Session notes (kept across compaction and restarts):\n" + "\n".join(f"- {n}" for n in notes)
        )
    if project_notes:
        parts.append(
            "Project notes (a decision log shared by every session of this project):\n"
            + "\n".join(f"- {n}" for n in project_notes)
        )
    if decisions:
        parts.append(
            "Project decisions (recorded with /decide; every session of this project follows them):\n"
            + "\n".join(f"- {d}" for d in decisions)
        )
    return "\n\n".join(parts)
