"""A restored transcript shows each tool call as the live one did: how a call was shown while it ran
(its ``ToolCallStarted`` / ``PermissionRequested`` summary, written by the tool or the external agent,
and whether it ran in the sandbox) is kept in the store (``tool_rows``) and given back with the
session's messages. Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import bisect
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from paragents import events as ev
from paragents.models import Message

if TYPE_CHECKING:
    from paragents.store import Store

log = logging.getLogger(__name__)

DISPLAY_KEY = "tool_rows"
"""Key of a display message (never sent to a provider) holding ``{call id: (summary, sandboxed)}``."""


class ToolRowKeeper:
    """Sees every core event (an observer) and writes each ``ToolCallStarted`` row, in order."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._pending: list[tuple[str, str, str, bool | None]] = []
        self._task: asyncio.Task[None] | None = None

    def observe(self, event: ev.Event) -> None:
        """Keep the row of a call that asks or starts (or whose summary changed)."""
        if isinstance(event, ev.ToolCallStarted | ev.PermissionRequested):
            self._pending.append((event.session_id, event.call.id, event.summary, event.sandboxed))
            if self._task is None or self._task.done():
                self._task = asyncio.get_running_loop().create_task(self._flush())

    async def _flush(self) -> None:
        from paragents.store import StoreError

        while self._pending:
            sid, call_id, summary, sandboxed = self._pending.pop(0)
            try:
                await self.store.add_tool_row(sid, call_id, summary, sandboxed)
            except StoreError as exc:  # only a restored row's wording is at stake
                log.warning("tool row of %s not kept: %s", sid, exc)

    async def flushed(self) -> None:
        """Wait until every row seen so far is written."""
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)


def with_tool_rows(
    shown: Sequence[Message], ids: Sequence[int], rows: Sequence[tuple[str, int, str, bool | None]]
) -> list[Message]:
    """The display messages ``shown`` (store ids ``ids``) with, on each assistant message announcing
    calls, ``DISPLAY_KEY``: ``{call id: (summary, sandboxed)}`` from ``rows`` (``store.tool_rows``). A
    row belongs to the newest announcement of its call id at or before its ``after_message`` (servers
    that reuse ids across requests); the last row of a call wins."""
    occurrences: dict[str, list[tuple[int, int]]] = {}  # call id -> [(message id, index in shown)]
    for index, (message, mid) in enumerate(zip(shown, ids, strict=True)):
        if message.get("role") == "assistant":
            for call in message.get("tool_calls") or []:
                if isinstance(call, dict) and call.get("id") is not None:
                    occurrences.setdefault(str(call["id"]), []).append((mid, index))
    found: dict[int, dict[str, tuple[str, bool | None]]] = {}
    for call_id, after, summary, sandboxed in rows:
        seen = occurrences.get(call_id)
        if not seen:
            continue
        at = bisect.bisect_right([mid for mid, _ in seen], after) - 1
        if at >= 0:
            found.setdefault(seen[at][1], {})[call_id] = (summary, sandboxed)
    out: list[Message] = []
    for index, message in enumerate(shown):
        extra: Any = found.get(index)
        out.append({**message, DISPLAY_KEY: extra} if extra else message)
    return out
