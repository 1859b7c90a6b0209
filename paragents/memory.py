"""Project instructions, memory notes and the system prompt of a session.

Project instructions come from ``AGENTS.md`` files (the https://agents.md convention; ``CLAUDE.md``
when a folder has no ``AGENTS.md``), from the project root down to the session's workdir, outermost
first, so that the most specific instructions come last.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from paragents.runtime import Runtime, SessionView
    from paragents.store import NoteRecord, Store

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
    Unreadable files are skipped (a missing file is normal)."""
    found: list[InstructionFile] = []
    for folder in _chain(project_dir, workdir):
        for name in INSTRUCTION_FILES:
            path = folder / name
            if path.is_file():
                try:
                    text = path.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                if len(text) > MAX_INSTRUCTION_CHARS:
                    text = text[:MAX_INSTRUCTION_CHARS] + "\n[truncated]"
                found.append(InstructionFile(path=path, text=text))
                break
    return found


def build_system_prompt(
    *,
    workdir: Path,
    instructions: list[InstructionFile],
    notes: list[str] | None = None,
    project_notes: list[str] | None = None,
    today: dt.date | None = None,
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
    return "\n\n".join(parts)


def note_line(note: NoteRecord) -> str:
    """Return one note as shown to the model and in /memory: ``text (author, YYYY-MM-DD HH:MM)``."""
    when = dt.datetime.fromtimestamp(note.created_at).strftime("%Y-%m-%d %H:%M")
    return f"{note.text} ({note.author}, {when})"


class NoteBook:
    """The memory notes of one project, cached per session for the (synchronous) system prompt.

    Session notes belong to one session; project notes (``session_id`` None in the store) are shared
    by every session of the project. Takes the store and the project directory."""

    def __init__(self, store: Store, project_dir: Path) -> None:
        self.store = store
        self.project_dir = project_dir
        self._cache: dict[str, list[NoteRecord]] = {}

    async def refresh(self, session_id: str) -> list[NoteRecord]:
        """Re-read the notes that apply to ``session_id`` (its own and the project's); return them."""
        notes = await self.store.list_notes(self.project_dir, session_id)
        self._cache[session_id] = notes
        return notes

    def session_notes(self, session_id: str) -> list[NoteRecord]:
        """Return the cached notes of ``session_id`` only (oldest first)."""
        return [n for n in self._cache.get(session_id, []) if n.session_id == session_id]

    def project_notes(self, session_id: str) -> list[NoteRecord]:
        """Return the cached project-wide notes as seen by ``session_id`` (oldest first)."""
        return [n for n in self._cache.get(session_id, []) if n.session_id is None]

    async def add(self, session_id: str, text: str, *, project: bool, author: str) -> NoteRecord:
        """Store a note (project-wide when ``project``), refresh the cache, return the new note.

        Raises ValueError for empty text (the store's refusal, reworded)."""
        text = text.strip()
        if not text:
            raise ValueError("a note needs some text: /remember [--project] TEXT")
        note_id = await self.store.add_note(
            self.project_dir, text, session_id=None if project else session_id, author=author
        )
        notes = await self.refresh(session_id)
        return next(n for n in notes if n.id == note_id)


@dataclass(frozen=True, slots=True)
class MemoryReport:
    """What a session's agent has in memory, for /memory: the instruction files loaded (with their
    paths), the session's notes, the project's notes, and the compaction in force (a readable line,
    or None)."""

    instructions: list[InstructionFile]
    session_notes: list[NoteRecord]
    project_notes: list[NoteRecord]
    compaction: str | None

    def rows(self) -> list[tuple[str, str, str]]:
        """Return ``(kind, where / who, text)`` rows for a table."""
        rows: list[tuple[str, str, str]] = []
        for inst in self.instructions:
            first = inst.text.strip().splitlines()[0] if inst.text.strip() else "(empty)"
            rows.append(("instructions", str(inst.path), f"{len(inst.text)} chars: {first}"))
        for kind, notes in (("session note", self.session_notes), ("project note", self.project_notes)):
            for note in notes:
                when = dt.datetime.fromtimestamp(note.created_at).strftime("%Y-%m-%d %H:%M")
                rows.append((kind, f"{note.author}, {when}", note.text))
        if self.compaction:
            rows.append(("compaction", "store", self.compaction))
        if not rows:
            rows.append(("(nothing)", "", "no AGENTS.md/CLAUDE.md found, no notes, no compaction"))
        return rows


async def fork_session(runtime: Runtime, view: SessionView, name: str | None = None) -> SessionView:
    """Create a new session (same model, mode and workdir as ``view``) holding a copy of ``view``'s
    provider-ready history, its compaction in force and its session notes; return the new view.

    Tool calls still running in the source are answered "interrupted" in the copy (the store's
    repair), so the copy is valid at once. Raises SessionError (from ``new_session``) for a bad or
    taken name."""
    from paragents import events as ev
    from paragents.compaction import load_compaction

    agent = runtime.agents[view.id]
    taken = {r.name for r in await runtime.store.list_sessions(runtime.project_dir)}
    if name is None:
        base, n = f"{view.name[:34]}-fork", 2
        name = base
        while name in taken:
            name, n = f"{base}{n}", n + 1
    new = await runtime.new_session(name, model=view.model, workdir=view.workdir, mode=view.mode)
    history = list(agent.history)
    ids = [await runtime.store.append_message(new.id, message) for message in history]
    state = agent.compaction
    if state is not None and 0 < state.covered <= len(ids):
        await runtime.store.add_compaction(new.id, ids[state.covered - 1], state.summary)
    for note in runtime.notebook.session_notes(view.id):
        await runtime.store.add_note(runtime.project_dir, note.text, session_id=new.id, author=note.author)
    copy = runtime.agents[new.id]
    copy.history = await runtime.store.load_history(new.id)
    copy.compaction = await load_compaction(runtime.store, new.id, copy.history)
    await copy.mark_current()
    new.messages = [dict(m) for m in copy.history]
    new.context_tokens = view.context_tokens
    await runtime.notebook.refresh(new.id)
    runtime.emit(ev.Notice(new.id, f"forked from {view.name}: {len(history)} messages copied"))
    return new
