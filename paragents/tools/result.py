"""What a tool call returns (:class:`ToolResult`), on its own so that the execution facet
(:mod:`paragents.tools.execution`, which :mod:`paragents.tools.base` names) can name it too."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class ToolResult:
    """The outcome of one tool call.

    - ``content``: plain text sent back to the model as the ``role: tool`` message content.
    - ``is_error``: True when the call failed (bad path, non-zero exit, timeout...).
    - ``diff``: unified diff of a file change (edit tools), else None; for the UI.
    - ``written_paths``: resolved paths the call wrote.
    - ``meta``: tool-specific facts for the UI/store (e.g. ``exit_code``, ``timed_out``, ``lines``).
    """

    content: str
    is_error: bool = False
    diff: str | None = None
    written_paths: list[Path] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
