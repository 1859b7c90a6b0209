"""The answer types of the permission layer: modes, decisions, and rows of the rules table.

Vocabulary follows Claude Code (permission modes ``default``, ``acceptEdits``, ``plan``, ``dontAsk``,
``bypassPermissions``; rule kinds ``allow``/``ask``/``deny``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Literal

DecisionKind = Literal["allow", "ask", "deny"]
RuleKind = Literal["allow", "ask", "deny"]

STRICTNESS: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}
"""Order used to combine parts of one call: the strictest part decides."""


class PermissionMode(StrEnum):
    """How calls that no rule decides are treated (Claude Code's ``defaultMode`` values)."""

    DEFAULT = "default"
    """Reads inside the working directories run; edits and commands ask."""
    ACCEPT_EDITS = "acceptEdits"
    """Like default, but edits inside the working directories run without asking."""
    PLAN = "plan"
    """Only reads: edits and commands are denied."""
    DONT_ASK = "dontAsk"
    """Whatever would ask is denied."""
    BYPASS = "bypassPermissions"
    """Everything runs except deny rules, protected paths and commands that cannot be analysed
    (syntax errors, non-literal ``eval``, write targets only known at run time), which still ask."""


def parse_mode(value: PermissionMode | str) -> PermissionMode:
    """Return the PermissionMode named ``value``; raise ValueError listing the valid names."""
    try:
        return PermissionMode(value)
    except ValueError:
        names = ", ".join(m.value for m in PermissionMode)
        raise ValueError(f"unknown permission mode {value!r}; use one of: {names}") from None


@dataclass(frozen=True)
class SubDecision:
    """The decision for one part of a call: a simple command, or a file it reads or writes.

    ``command`` is the simple command's text, or ``"Edit /abs/path"`` / ``"Read /abs/path"``."""

    command: str
    decision: DecisionKind
    reason: str
    rule: str | None = None


@dataclass(frozen=True)
class Decision:
    """The answer for one tool call.

    ``reason`` is a sentence for people (which rule from which file, or which default). ``rule`` and
    ``scope`` name the deciding rule and where it came from (``managed``, ``cli``, ``local``,
    ``claude-local``, ``project``, ``claude-project``, ``user``, ``claude-user``, ``session``) or
    ``default``/``mode``/``protected``/``sandbox``; ``source`` is its file. ``subcommands`` has one
    entry per simple command (Bash) and per file touched. ``suggested_rules`` are the rules an
    "always allow" answer should store (each matches this call). ``write_targets`` are the absolute
    paths the call may write; ``targets_unknown`` is True when some cannot be known before it runs."""

    decision: DecisionKind
    reason: str
    rule: str | None = None
    scope: str | None = None
    subcommands: tuple[SubDecision, ...] = ()
    suggested_rules: tuple[str, ...] = ()
    write_targets: tuple[str, ...] = ()
    targets_unknown: bool = False
    source: str | None = None
    """The file the deciding rule came from (None for defaults, modes and command-line rules)."""


@dataclass(frozen=True)
class RuleRow:
    """One effective rule for ``/permissions``: kind, rule text, scope name and the file it came from."""

    kind: RuleKind
    rule: str
    scope: str
    source_path: Path | None
