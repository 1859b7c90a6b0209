"""Parts of a checked call and how the permission mode turns them into one Decision.

Each part (a simple command, a file read or written, an MCP tool) gets a :class:`Part` with a
category saying why it got its answer before the mode is applied; :func:`finish` applies the mode
and combines the parts (the strictest part decides).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from paragents.permissions.decision import STRICTNESS, Decision, DecisionKind, PermissionMode, SubDecision
from paragents.permissions.settings import ScopedRule

Category = Literal[
    "deny_rule", "invalid", "integrity", "deny_inside", "protected", "opaque", "ask_rule", "risky",
    "environment", "unmatched", "edit_inside", "allow_rule", "default_allow",
]  # fmt: skip
"""Why a part got its answer. ``deny_inside``: a recursive read of a directory holding a path a Read
deny rule covers and the command's sandbox does not hide (denied; a hidden one is no such part:
:meth:`~paragents.permissions.evaluate.Checker.check_tree`), or paragents' own files (denied, except
to a sandboxed command with auto-allow: they are out of its sight). ``environment``: a command
given variables that may change what it runs (``HOME=. git status``): it asks like ``risky`` but the
sandbox's auto-allow never lets it through (a ``.gitconfig`` it points at runs programs on the host
through paragents' or the user's git later). ``integrity``: one of paragents' own files (its config
and state directories): denied in every mode."""


@dataclass(frozen=True)
class Part:
    """One checked part of a call before the mode is applied."""

    label: str
    category: Category
    reason: str
    rule: ScopedRule | None = None
    suggestions: tuple[str, ...] = ()
    what: Literal["command", "Read", "Edit"] = "command"
    """A simple command, or a file the call reads or writes."""


MAX_SUGGESTED_RULES = 5
"""At most this many rules are suggested for one call (Claude Code: "Up to 5 rules may be saved for a
single compound command")."""


def _exact_suggestion(form: str) -> tuple[str, ...]:
    """``Bash(<form>)`` naming exactly ``form``; none when ``form`` holds a ``*`` (the rule would be a
    pattern matching more than this command)."""
    return () if "*" in form else (f"Bash({form})",)


_ASKING = frozenset({"ask_rule", "risky", "environment", "unmatched", "edit_inside"})


def _auto_allowed(part: Part) -> bool:
    """True when ``part`` of a sandboxed command asks only because it is a command: a command no rule
    allows or a risky one, a read anywhere (Read deny rules hide their paths in the sandbox), a write
    inside the working directories. Ask rules, protected paths, commands that cannot be analysed and
    writes (deletions too) outside the working directories keep asking."""
    if part.what == "command":
        return part.category in ("unmatched", "risky")
    if part.what == "Read":
        return part.category == "unmatched"
    return part.category == "edit_inside"


def _with_mode(
    part: Part, family: str, mode: PermissionMode, sandboxed: bool = False
) -> tuple[DecisionKind, str, str | None]:
    """Return (decision, reason, scope) for ``part`` under ``mode`` (and the sandbox's auto-allow)."""
    scope = part.rule.scope if part.rule else "default"
    if part.category in ("deny_rule", "invalid", "integrity"):
        return "deny", part.reason, scope
    if part.category == "deny_inside":
        if sandboxed and family == "Bash" and part.rule is None:  # paragents' own files: out of sight
            return "allow", f"sandboxed: paragents' own files are out of its sight ({part.reason})", "sandbox"
        return "deny", part.reason, scope
    if mode is PermissionMode.PLAN and family == "MCP":
        return "ask", f"plan mode: the MCP tool is not read-only, so it asks ({part.reason})", "mode"
    if mode is PermissionMode.PLAN and family != "Read":
        return "deny", f"plan mode: only reads run, so this is not run ({part.reason})", "mode"
    if sandboxed and family == "Bash" and _auto_allowed(part):
        return "allow", f"sandboxed, so it runs without asking (sandbox.autoAllow; {part.reason})", "sandbox"
    if part.category in ("protected", "opaque"):
        if mode is PermissionMode.DONT_ASK:
            return "deny", f"dontAsk mode: this would ask, so it is denied ({part.reason})", "mode"
        return "ask", part.reason, "protected" if part.category == "protected" else "default"
    if part.category in _ASKING:
        if mode is PermissionMode.BYPASS:
            return "allow", f"bypassPermissions mode ({part.reason})", "mode"
        if mode is PermissionMode.ACCEPT_EDITS and part.category == "edit_inside":
            return (
                "allow",
                f"acceptEdits mode: edits inside the working directories run ({part.reason})",
                "mode",
            )
        if mode is PermissionMode.DONT_ASK:
            return "deny", f"dontAsk mode: this would ask, so it is denied ({part.reason})", "mode"
        return "ask", part.reason, scope
    return "allow", part.reason, scope


def _source(part: Part, scope: str | None) -> str | None:
    """The file of the rule that decided ``part`` (None: a default, the mode, the command line)."""
    if part.rule is None or part.rule.source is None or scope != part.rule.scope:
        return None
    return str(part.rule.source)


def finish(
    parts: list[Part],
    family: str,
    mode: PermissionMode,
    writes: Sequence[str] = (),
    unknown: bool = False,
    sandboxed: bool = False,
) -> Decision:
    """Apply ``mode`` to every part and combine them into one Decision (the strictest part decides);
    ``sandboxed``: the call is a command that will run in the sandbox with auto-allow on."""
    if not parts:
        parts = [Part("(nothing)", "default_allow", "the command runs nothing")]
    subs: list[SubDecision] = []
    scopes: list[str | None] = []
    for part in parts:
        decision, reason, scope = _with_mode(part, family, mode, sandboxed)
        subs.append(SubDecision(part.label, decision, reason, part.rule.rule.text if part.rule else None))
        scopes.append(scope)
    worst = max(STRICTNESS[s.decision] for s in subs)
    strictest = [i for i, s in enumerate(subs) if STRICTNESS[s.decision] == worst]
    # A protected path is the reason a person must see first: "no rule allows `printf x`" alone hides
    # that the command writes .git/config (it asks, and keeps asking after an allow rule).
    index = next((i for i in strictest if scopes[i] == "protected"), strictest[0])
    top = subs[index]
    reason = top.reason
    if len(subs) > 1 and top.decision == "allow":
        reason = f"all {len(subs)} parts are allowed; first: {top.reason}"
    suggestions: tuple[str, ...] = ()
    if top.decision == "ask" and all(
        s.decision != "ask" or p.category in ("unmatched", "edit_inside")
        for s, p in zip(subs, parts, strict=True)
    ):
        pending = [p.suggestions for s, p in zip(subs, parts, strict=True) if s.decision == "ask"]
        if all(pending):  # a part no rule may cover: "always allow" cannot make this call pass
            suggestions = tuple(dict.fromkeys(rule for group in pending for rule in group))
            suggestions = suggestions[:MAX_SUGGESTED_RULES]
    return Decision(
        decision=top.decision,
        reason=reason,
        rule=top.rule,
        scope=scopes[index],
        source=_source(parts[index], scopes[index]),
        subcommands=tuple(subs),
        suggested_rules=suggestions,
        write_targets=tuple(writes),
        targets_unknown=unknown,
    )
