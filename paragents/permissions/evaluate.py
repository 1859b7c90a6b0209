"""Check one tool call against merged rules: cut it into parts, find each part's rule, apply the mode.

Each part (a simple command, a file read or written, an MCP tool) gets a :class:`Part` with a
category saying why it got its answer before the mode is applied; :func:`finish` applies the mode
and combines the parts (the strictest part decides). Order of checks for every part: deny rules,
protected paths, ask rules, allow rules, then the defaults (reads inside the working directories
run; everything else asks). With ``sandboxed`` (a Bash call that will run in the sandbox with
``sandbox.auto_allow`` on) the parts that ask only by default run without asking (:func:`_auto_allowed`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Literal

from paragents.permissions import known_commands as known
from paragents.permissions import resolve, special
from paragents.permissions.decision import (
    STRICTNESS,
    Decision,
    DecisionKind,
    PermissionMode,
    RuleKind,
    SubDecision,
)
from paragents.permissions.rules import bash_matches, escape_path, path_anchor, path_matches, tool_matches
from paragents.permissions.settings import ScopedRule
from paragents.permissions.shell import (
    ParsedCommand,
    SimpleCommand,
    parse_command,
    shell_bases,
)

Category = Literal[
    "deny_rule", "invalid", "protected", "opaque", "ask_rule", "risky", "unmatched", "edit_inside",
    "allow_rule", "default_allow",
]  # fmt: skip


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


parse_cached = lru_cache(maxsize=512)(parse_command)
"""parse_command with a cache: the same command is often checked twice (preflight, then run)."""


@dataclass
class Checker:
    """Rules and context for checking the parts of one call.

    ``rules`` maps each kind to its rules in precedence order (managed first, session last)."""

    rules: dict[RuleKind, list[ScopedRule]]
    project_root: str
    cwd: str
    home: str
    dirs: list[str]
    managed: str
    """All paths are absolute and normalised strings (checks run on strings: they are hot)."""
    real_dirs: dict[str, str] = field(default_factory=dict)
    """Directory → realpath, filled while checking this call's paths (see resolve.resolutions)."""
    base: str | None = None
    """The directory a command runs in when it is not ``cwd`` (run_command's ``cwd`` argument,
    resolved and checked by :mod:`paragents.permissions.cwd`): its relative paths resolve there,
    while ``./`` rules stay anchored at ``cwd``."""

    # ---- rule lookup -------------------------------------------------------------------------
    def _path_rule(self, kind: RuleKind, family: str, candidate: str) -> ScopedRule | None:
        for scoped in self.rules[kind]:
            rule = scoped.rule
            if rule.family != family:
                continue
            if rule.specifier is None:
                return scoped
            root, pattern = path_anchor(
                rule.specifier, project_root=self.project_root, cwd=self.cwd, home=self.home,
                anywhere=kind != "allow",
            )  # fmt: skip
            if path_matches(root, pattern, candidate):
                return scoped
        return None

    def _bash_rule(self, kind: RuleKind, forms: Sequence[str]) -> ScopedRule | None:
        for scoped in self.rules[kind]:
            if scoped.rule.family == "Bash" and any(bash_matches(scoped.rule.specifier, f) for f in forms):
                return scoped
        return None

    # ---- files -------------------------------------------------------------------------------
    def check_path(self, family: str, path: str) -> Part:
        """Check a Read or Edit of absolute ``path`` (any spelling; it is resolved here)."""
        part = self._check_path(family, path)
        return replace(part, what="Edit") if family == "Edit" else replace(part, what="Read")

    def _check_path(self, family: str, path: str) -> Part:
        label = f"{family} {path}"
        if "\x00" in path:
            return Part(label, "invalid", f"the path {path!r} contains a NUL byte")
        candidates = resolve.resolutions(path, self.real_dirs)
        shown = " -> ".join(candidates)
        for candidate in candidates:
            rule = self._path_rule("deny", family, candidate)
            if rule:
                return Part(
                    label, "deny_rule", f"{family} of {candidate} is denied by {rule.describe()}", rule
                )
        if family == "Edit":
            for candidate in candidates:
                why = resolve.protected_reason(candidate, self.home, self.managed, self.real_dirs)
                if why:
                    return Part(label, "protected", f"protected path: {why}; changing it always asks")
        for candidate in candidates:
            rule = self._path_rule("ask", family, candidate)
            if rule:
                return Part(
                    label, "ask_rule", f"{family} of {candidate} asks because of {rule.describe()}", rule
                )
        allowed = [self._path_rule("allow", family, c) for c in candidates]
        first = allowed[0]
        if first is not None and all(allowed):
            return Part(label, "allow_rule", f"{family} of {shown} is allowed by {first.describe()}", first)
        inside = all(resolve.is_inside(c, self.dirs) for c in candidates)
        wanted = [self._path_suggestion(family, c) for c in candidates]
        suggestions = tuple(dict.fromkeys(w for w in wanted if w)) if all(wanted) else ()
        if family == "Read":
            if inside:
                return Part(label, "default_allow", f"reading {shown} inside the working directories")
            return Part(label, "unmatched", f"{shown} is outside the working directories", None, suggestions)
        where = "inside" if inside else "outside"
        reason = f"no rule allows editing {shown} ({where} the working directories)"
        return Part(label, "edit_inside" if inside else "unmatched", reason, None, suggestions)

    def _path_suggestion(self, family: str, path: str) -> str | None:
        """The rule naming exactly ``path``; None when that rule would cover far more than this call
        (``/``, the home directory, or a working directory or one of its parents)."""
        if path in ("/", self.home) or any(
            d == path or d.startswith(path.rstrip("/") + "/") for d in self.dirs
        ):
            return None
        cwd = self.cwd.rstrip("/")
        if path != self.cwd and path.startswith(cwd + "/"):  # inside cwd: the relative spelling
            return f"{family}(./{escape_path(path[len(cwd) + 1 :])})"
        return f"{family}(//{escape_path(path[1:])})"

    # ---- shell -------------------------------------------------------------------------------
    def check_command(self, command: str) -> tuple[list[Part], list[str], bool]:
        """Check a Bash command line; return (parts, absolute write targets, some targets unknown)."""
        parsed: ParsedCommand = parse_cached(command)
        parts: list[Part] = [self._simple(cmd) for cmd in parsed.commands]
        if parsed.problem:
            parts.append(Part(command.strip()[:80], "opaque", f"{parsed.problem}; it cannot be checked"))
        if parsed.background:
            parts.append(Part("&", "risky", "it starts a background job (&) that keeps running unobserved"))
        bases, cd_unknown = shell_bases(parsed, Path(self.base or self.cwd), Path(self.home))
        base_strs = [str(base) for base in bases]
        writes: list[str] = []
        unknown = parsed.problem is not None
        for family, targets in (("Read", parsed.reads), ("Edit", parsed.writes)):
            for target in targets:
                if target.path is None or (cd_unknown and not target.path.startswith(("/", "~"))):
                    unknown = unknown or family == "Edit"
                    what = "writes" if family == "Edit" else "reads"
                    reason = f"{target.origin!r} {what} a path that is only known when it runs"
                    parts.append(Part(target.origin, "opaque", reason))
                    continue
                # resolve_target's spellings, as strings (Path objects cost more than the checks here)
                spellings = dict.fromkeys(
                    resolve.absolute(target.path, base, self.home) for base in base_strs
                )
                for path in spellings:
                    parts.append(self.check_path(family, path))
                    normal = os.path.normpath(path)
                    if family == "Edit" and normal not in writes:
                        writes.append(normal)
        for mention in parsed.mentions:
            for path in dict.fromkeys(resolve.absolute(mention.path or "", b, self.home) for b in base_strs):
                found = self.check_mentioned(path, mention.origin)
                if found is not None:
                    parts.append(found)
                    break
        if any(special.destructive(cmd.effective) for cmd in parsed.commands) and (
            unknown or any(p.label.startswith("Edit ") and p.category != "edit_inside" for p in parts)
        ):  # never offer "always allow" for a destructive command reaching outside the workdir
            parts = [replace(p, suggestions=()) for p in parts]
        return parts, writes, unknown

    def _simple(self, cmd: SimpleCommand) -> Part:
        label = cmd.text
        full = " ".join((*cmd.assignments, *cmd.words))
        forms = [full, *(" ".join(layer) for layer in cmd.layers)]
        forms += [" ".join((os.path.basename(layer[0]), *layer[1:])) for layer in cmd.layers if layer]
        rule = self._bash_rule("deny", forms)
        if rule:
            return Part(label, "deny_rule", f"`{label}` is denied by {rule.describe()}", rule)
        rule = self._bash_rule("ask", forms)
        if rule:
            return Part(label, "ask_rule", f"`{label}` asks because of {rule.describe()}", rule)
        if cmd.opaque:
            return Part(label, "opaque", f"`{label}`: {cmd.opaque}")
        if cmd.risky:
            return Part(label, "risky", f"`{label}` {cmd.risky}")
        if cmd.parent_forms:
            rule = self._exact_allow(cmd.parent_forms)
            if rule:
                return Part(
                    label, "allow_rule", f"`{label}` is part of a command {rule.describe()} allows", rule
                )
        if cmd.transparent:
            return Part(label, "default_allow", f"`{label}` runs nested commands, each checked on its own")
        matched = " ".join(cmd.matched)
        allow_forms = list(dict.fromkeys([matched, " ".join((*cmd.assignments, *cmd.matched))]))
        if cmd.exact_only:
            rule = self._exact_allow((*allow_forms, label))
            if rule:
                return Part(label, "allow_rule", f"`{label}` is allowed by {rule.describe()}", rule)
            reason = f"`{label}`: {cmd.exact_only}, so only a rule for this exact command allows it"
            return Part(label, "unmatched", reason, None, _exact_suggestion(allow_forms[-1]))
        rule = self._bash_rule("allow", allow_forms)
        if rule:
            return Part(label, "allow_rule", f"`{label}` is allowed by {rule.describe()}", rule)
        if special.destructive(cmd.effective) or known.command_name(cmd.matched) == "xargs":
            suggestions = _exact_suggestion(allow_forms[-1])
        else:
            suggestions = (f"Bash({' '.join(known.rule_prefix(cmd.matched))} *)",)
        return Part(label, "unmatched", f"no rule allows `{matched}`", None, suggestions)

    def _exact_allow(self, forms: Sequence[str]) -> ScopedRule | None:
        """Return an allow rule naming one of ``forms`` exactly (or every command: ``Bash``, ``Bash(*)``)."""
        for scoped in self.rules["allow"]:
            spec = scoped.rule.specifier
            if scoped.rule.family == "Bash" and (spec is None or spec == "*" or spec in forms):
                return scoped
        return None

    def check_mentioned(self, path: str, origin: str) -> Part | None:
        """Check a path named in an interpreter one-liner's code against Read/Edit deny and ask rules
        (the code may open it itself); None when no such rule matches."""
        candidates = resolve.resolutions(path, self.real_dirs) if "\x00" not in path else []
        for kind, category in (("deny", "deny_rule"), ("ask", "ask_rule")):
            for family in ("Read", "Edit"):
                for candidate in candidates:
                    rule = self._path_rule(kind, family, candidate)  # type: ignore[arg-type]
                    if rule:
                        what = "is denied by" if kind == "deny" else "asks because of"
                        reason = f"{origin}: {family} of {candidate} {what} {rule.describe()}"
                        return Part(origin, category, reason, rule)  # type: ignore[arg-type]
        return None

    # ---- other tools -------------------------------------------------------------------------
    def check_tool(self, tool: str) -> Part:
        """Check a tool outside the three families (e.g. ``mcp__server__tool``) by rule name."""
        kinds: tuple[tuple[RuleKind, Category], ...] = (
            ("deny", "deny_rule"), ("ask", "ask_rule"), ("allow", "allow_rule"),
        )  # fmt: skip
        for kind, category in kinds:
            for scoped in self.rules[kind]:
                if tool_matches(scoped.rule, tool):
                    return Part(tool, category, f"{tool} matches {scoped.describe()}", scoped)
        return Part(tool, "unmatched", f"no rule allows the tool {tool}", None, (tool,))


MAX_SUGGESTED_RULES = 5
"""At most this many rules are suggested for one call (Claude Code: "Up to 5 rules may be saved for a
single compound command")."""


def _exact_suggestion(form: str) -> tuple[str, ...]:
    """``Bash(<form>)`` naming exactly ``form``; none when ``form`` holds a ``*`` (the rule would be a
    pattern matching more than this command)."""
    return () if "*" in form else (f"Bash({form})",)


_ASKING = frozenset({"ask_rule", "risky", "unmatched", "edit_inside"})


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
    if part.category in ("deny_rule", "invalid"):
        return "deny", part.reason, scope
    if mode is PermissionMode.PLAN and family != "Read":
        return "deny", f"plan mode: only reads run, so this is not run ({part.reason})", "mode"
    if sandboxed and family == "Bash" and _auto_allowed(part):
        return "allow", f"sandboxed, so it runs without asking (sandbox.autoAllow; {part.reason})", "sandbox"
    if part.category in ("protected", "opaque"):
        kind: DecisionKind = "deny" if mode is PermissionMode.DONT_ASK else "ask"
        return kind, part.reason, "protected" if part.category == "protected" else "default"
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
    index = next(i for i, s in enumerate(subs) if STRICTNESS[s.decision] == worst)
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
        subcommands=tuple(subs),
        suggested_rules=suggestions,
        write_targets=tuple(writes),
        targets_unknown=unknown,
    )
