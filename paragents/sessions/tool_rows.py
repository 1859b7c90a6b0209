"""A restored transcript shows each tool call as the live one did: how a call was shown while it ran
(its ``ToolCallStarted`` / ``PermissionRequested`` summary, written by the tool or the external agent,
and whether it ran in the sandbox) is kept in the store (``tool_rows``) and given back with the
session's messages. Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import bisect
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from paragents import events as ev
from paragents.models import Message
from paragents.store.records import StoreError

if TYPE_CHECKING:
    from paragents.store.tool_rows import KeptRow, ToolRowsRepo

log = logging.getLogger(__name__)

DISPLAY_KEY = "tool_rows"
"""Key of a display message (never sent to a provider) holding ``{call id: (summary, sandboxed)}``."""


class ToolRowKeeper:
    """Sees every core event (an observer) and writes each ``ToolCallStarted`` row, in order."""

    def __init__(self, rows: ToolRowsRepo, stored_later: Callable[[str], bool] = lambda sid: False) -> None:
        self.rows = rows
        self.stored_later = stored_later
        """Whether a session's messages are stored after its calls ran (an external agent's turn is
        stored when it ends): its rows then belong to the next announcement of their call id."""
        self._pending: list[tuple[str, str, str, bool | None, bool]] = []
        self._task: asyncio.Task[None] | None = None

    def observe(self, event: ev.Event) -> None:
        """Keep the row of a call that asks or starts (or whose summary changed)."""
        if isinstance(event, ev.ToolCallStarted | ev.PermissionRequested):
            sid = event.session_id
            self._pending.append((sid, event.call.id, event.summary, event.sandboxed, self.stored_later(sid)))
            if self._task is None or self._task.done():
                self._task = asyncio.get_running_loop().create_task(self._flush())

    async def _flush(self) -> None:
        while self._pending:
            sid, call_id, summary, sandboxed, later = self._pending.pop(0)
            try:
                await self.rows.add(sid, call_id, summary, sandboxed, later)
            except StoreError as exc:  # only a restored row's wording is at stake
                log.warning("tool row of %s not kept: %s", sid, exc)

    async def flushed(self) -> None:
        """Wait until every row seen so far is written."""
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)


def with_tool_rows(shown: Sequence[Message], ids: Sequence[int], rows: Sequence[KeptRow]) -> list[Message]:
    """The display messages ``shown`` (store ids ``ids``) with, on each assistant message announcing
    calls, ``DISPLAY_KEY``: ``{call id: (summary, sandboxed)}`` from ``rows`` (``store.tool_rows``). A
    row belongs to the newest announcement of its call id at or before its ``after_message`` (servers
    that reuse ids across requests), a ``later`` row (an external agent's) to the oldest one after it;
    the last row of a call wins."""
    occurrences: dict[str, list[tuple[int, int]]] = {}  # call id -> [(message id, index in shown)]
    for index, (message, mid) in enumerate(zip(shown, ids, strict=True)):
        if message.get("role") == "assistant":
            for call in message.get("tool_calls") or []:
                if isinstance(call, dict) and call.get("id") is not None:
                    occurrences.setdefault(str(call["id"]), []).append((mid, index))
    found: dict[int, dict[str, tuple[str, bool | None]]] = {}
    for call_id, after, summary, sandboxed, later in rows:
        seen = occurrences.get(call_id)
        if not seen:
            continue
        at = bisect.bisect_right([mid for mid, _ in seen], after) - (0 if later else 1)
        if 0 <= at < len(seen):
            found.setdefault(seen[at][1], {})[call_id] = (summary, sandboxed)
    out: list[Message] = []
    for index, message in enumerate(shown):
        extra: Any = found.get(index)
        out.append({**message, DISPLAY_KEY: extra} if extra else message)
    return out
