"""The loop guard: notices a model that repeats itself and asks for a pause (:class:`LoopGuard`).

Two signs, both counted within one turn and checked before the next model request:

- ``identical_calls`` tool calls in a row with the same tool and the same arguments (compared as
  JSON with sorted keys, so ``{"a":1,"b":2}`` equals ``{"b": 2, "a": 1}``). Default 3: reading a file
  twice in a row happens (e.g. after a failed edit), a third identical call with nothing between
  has no new information to get; any other call between resets the count.
- ``idle_requests`` requests in a row that changed no file and whose every tool result (tool,
  arguments and output) was already seen in this turn. A file counts as changed by a successful
  write_file/edit_file, or by a run_command after which the working tree's fingerprint
  (``agent/tree_state.py``: git status plus mtimes, or mtimes of the files) differs from before
  it. Default 6: normal work brings something new (a new file read, a new command output, a write)
  at almost every step, and a test run that is repeated after an edit is not idle because the
  edit changed a file.

A value of 0 turns that guard off. Nothing here imports Textual.
"""

from __future__ import annotations

import hashlib
import json

from paragents.agent.budget import Breach
from paragents.models import ToolCall


def call_key(call: ToolCall) -> str:
    """Return the tool name and normalised arguments of ``call`` (the raw text when not JSON)."""
    try:
        args = json.dumps(json.loads(call.arguments or "{}"), sort_keys=True, separators=(",", ":"))
    except (ValueError, TypeError):
        args = call.arguments.strip()
    return f"{call.name}\0{args}"


class LoopGuard:
    """Counts repeated calls and idle requests of the running turn (see module docstring)."""

    def __init__(self, identical_calls: int, idle_requests: int) -> None:
        self.identical_calls = identical_calls
        self.idle_requests = idle_requests
        self.reset(new_turn=True)

    def reset(self, *, new_turn: bool = False) -> None:
        """Start counting again (after the user let the session go on, or at a new turn)."""
        self._last_key: str | None = None
        self._same = 0
        self._idle = 0
        if new_turn:
            self._seen: set[str] = set()
        self.tripped: Breach | None = None

    def record(self, results: list[tuple[ToolCall, str]], wrote: bool) -> Breach | None:
        """Count one request's tool calls and their results (``wrote``: a file was changed); return
        the breach when a guard trips (also kept as ``tripped`` until :meth:`reset`)."""
        new_result = False
        for call, content in results:
            key = call_key(call)
            self._same = self._same + 1 if key == self._last_key else 1
            self._last_key = key
            digest = hashlib.sha256(f"{key}\0{content}".encode()).hexdigest()
            if digest not in self._seen:
                self._seen.add(digest)
                new_result = True
            if self.identical_calls and self._same >= self.identical_calls and self.tripped is None:
                n = self._same
                self.tripped = Breach(
                    "loop",
                    "identical_calls",
                    str(n),
                    str(self.identical_calls),
                    f"loop guard: {n} identical {call.name} calls in a row (same arguments)",
                )
        self._idle = 0 if (new_result or wrote) else self._idle + 1
        if self.idle_requests and self._idle >= self.idle_requests and self.tripped is None:
            self.tripped = Breach(
                "loop",
                "idle_requests",
                str(self._idle),
                str(self.idle_requests),
                f"loop guard: {self._idle} requests in a row brought no new tool result and changed no file",
            )
        return self.tripped
