"""Asks another process waits on, in this TUI's inbox (f2): rows of the store's ``approvals`` table
of this project that no panel here shows (a ``paragents run --wait-approvals`` in another terminal,
another TUI). Each becomes an inbox item with the same bar as a local ask; its answer goes to the row
through ``runtime.answer_approval`` (first answer wins; a refusal is shown as a toast). The list is
re-read when the inbox opens and every :data:`REFRESH` seconds while it is open."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paragents import events as ev
from paragents.models import CallPreview, ToolCall
from paragents.serve.shown import arguments_of, command_of
from paragents.tools.shell import RunCommand
from paragents.ui.inbox.screen import InboxItem

if TYPE_CHECKING:
    from paragents.sessions import SessionsAPI
    from paragents.store.records.approvals import ApprovalRecord

REFRESH = 2.0
"""Seconds between re-reads of the rows while the inbox is open."""


def _row_answer(result: ev.PermissionAnswer | str) -> tuple[str, str | None, list[str] | None]:
    """``(answer, note, rules)`` a bar's answer writes to the row: an approval's kind with the note of
    reject_with_note or the rules of allow_always; a conflict's choice as it is."""
    if not isinstance(result, ev.PermissionAnswer):
        return str(result), None, None
    note = (result.note or "") if result.kind == "reject_with_note" else None
    return result.kind, note, list(result.rules) or None


def command_preview(row: ApprovalRecord, command: str) -> CallPreview:
    """A command row's preview: the command whole (the row keeps the call whole) and the directory it
    runs in, worked out as the asking process did (:meth:`RunCommand.preview` over the session's
    working directory and the call's ``cwd``), so a usable directory is named and a bad ``cwd`` says
    why the command will fail."""
    if not row.session_workdir:  # the session's row names none (never for a real session)
        return CallPreview("command", command, problem="the session's working directory is not recorded")
    try:
        shown = RunCommand().preview(
            arguments_of(str(row.call.get("arguments") or "")), Path(row.session_workdir)
        )
    except (TypeError, ValueError, KeyError, OSError):  # arguments the schema would refuse (a bad timeout)
        return CallPreview("command", command, problem="the call's arguments are not valid")
    return replace(shown, text=command, omitted=0)


def _reply_of(item: InboxItem) -> asyncio.Future[Any]:
    """The reply future of a remote item (always a PermissionRequested: made by :meth:`RemoteAsks._item`)."""
    assert isinstance(item.event, ev.PermissionRequested)
    return item.event.reply


class RemoteAsks:
    """The inbox items of asks other processes wait on (see the module docstring)."""

    def __init__(self, runtime: SessionsAPI, notify: Callable[[str], None]) -> None:
        self.runtime = runtime
        self.notify = notify
        self._items: dict[str, InboxItem] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def items(self) -> list[InboxItem]:
        """The items still unanswered here."""
        return [i for i in self._items.values() if not _reply_of(i).done()]

    async def refresh(self, local: Iterable[str]) -> bool:
        """Re-read the pending rows (leaving out the ``local`` ids: asks of this process's panels);
        return True when the items changed."""
        shown = set(local)
        rows = await self.runtime.pending_approvals()
        me = os.getpid()
        live = {r.id: r for r in rows if r.id not in shown and r.pid != me and not r.waiter_gone()}
        changed = False
        for key in [k for k in self._items if k not in live]:
            reply = _reply_of(self._items.pop(key))
            if not reply.done():
                reply.cancel()
            changed = True
        for key, row in live.items():
            if key not in self._items:
                self._items[key] = self._item(row)
                changed = True
        return changed

    def _item(self, row: ApprovalRecord) -> InboxItem:
        loop = asyncio.get_running_loop()
        call = ToolCall(str(row.call.get("id") or row.id), row.tool, str(row.call.get("arguments") or "{}"))
        who = f"{row.session_name} (pid {row.pid})"
        event: ev.PermissionRequested | ev.ConflictDetected
        if row.kind == "approval":
            reply: asyncio.Future[Any] = loop.create_future()
            command = command_of(row.tool, call.arguments)  # the row keeps the call whole
            preview = (
                command_preview(row, command)
                if command is not None
                else CallPreview(
                    "note", text=row.preview, detail="as the asking process kept it (may be cut)"
                )
            )
            event = ev.PermissionRequested(
                row.session_id, row.id, call, row.summary, row.reason, row.rules, reply, preview
            )
        else:
            reply = loop.create_future()
            kind: ev.ConflictKind = "stale_read" if "reread" in row.choices else "reservation"
            event = ev.ConflictDetected(
                row.session_id, row.id, call, row.summary, kind, row.reason, "", "", row.created_at,
                row.preview or None, row.choices, reply,  # type: ignore[arg-type]
            )  # fmt: skip
        reply.add_done_callback(lambda done: self._answered(row, done))
        return InboxItem(row.id, row.session_id, who, row.kind, row.summary, row.created_at, event)

    def _answered(self, row: ApprovalRecord, done: asyncio.Future[Any]) -> None:
        if done.cancelled():
            return
        task = asyncio.get_running_loop().create_task(self._write(row, *_row_answer(done.result())))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _write(
        self, row: ApprovalRecord, answer: str, note: str | None, rules: list[str] | None
    ) -> None:
        by = f"tui (pid {os.getpid()})"
        try:
            result = await self.runtime.answer_approval(row.id, answer, by, note, rules)
        except Exception as exc:  # a store that cannot be written: say so, the row stays pending
            self.notify(f"the answer to {row.summary} was not saved: {exc}")
            return
        if not result.accepted:
            self.notify(result.message)
