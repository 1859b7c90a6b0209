"""Check one tool call against merged rules: cut it into parts and find each part's rule.

Order of checks for every part: deny rules, protected paths, ask rules, allow rules, then the
defaults (reads inside the working directories run; everything else asks). The parts are combined
and the mode applied by :func:`paragents.permissions.combine.finish` (re-exported here).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import bracex
from wcmatch import glob as wglob

from paragents.permissions import known_commands as known
from paragents.permissions import resolve, special
from paragents.permissions.combine import Category, Part, _exact_suggestion, finish
from paragents.permissions.decision import RuleKind
from paragents.permissions.host_paths import credential_reason, holds_integrity, integrity_reason
from paragents.permissions.parsed import ParsedCommand, SimpleCommand, Target
from paragents.permissions.rules import (
    bash_matches,
    escape_path,
    path_anchor,
    path_matches,
    spec_words,
    specifier_matches,
    tool_matches,
    url_host,
)
from paragents.permissions.settings import ScopedRule
from paragents.permissions.shell import parse_command
from paragents.permissions.targets import shell_bases

__all__ = ["Checker", "Part", "finish"]

MAX_TREE_ENTRIES = 5000
"""A recursive read's directory is searched for Read-denied paths up to this many entries; past
that the call asks (the tree is too big to check before it runs)."""
MAX_BRACE_SPELLINGS = 64
"""A brace argument (``.{env,x}``) is spelled out up to this many ways (past that it asks)."""
MAX_GLOB_MATCHES = 1000
"""A glob argument is expanded up to this many files (past that it asks, like a computed path)."""


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
    integrity: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    """paragents' own directories and the lanes' folders below them
    (:func:`~paragents.permissions.host_paths.integrity_dirs`): every path in the first and not in
    the second is denied to every tool in every mode."""
    masked: Callable[[], Sequence[str]] | None = None
    """A command that runs in the bubblewrap sandbox: the real paths Read deny rules hide there
    (called once, when a recursive read meets a denied path); None when nothing is hidden from it."""

    def _integrity(self, candidates: Sequence[str]) -> str | None:
        dirs, open_dirs = self.integrity
        if not dirs:
            return None
        return next((why for c in candidates if (why := integrity_reason(c, dirs, open_dirs))), None)

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
        own = self._integrity(candidates)
        if own:
            return Part(label, "integrity", f"{family} of {own}")
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
        if family == "Read":
            for home in dict.fromkeys((self.home, *resolve.resolutions(self.home, self.real_dirs))):
                why = next((w for c in candidates if (w := credential_reason(c, home))), None)
                if why:
                    return Part(label, "protected", f"{why}; reading it always asks, in every mode")
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
                found = self.check_mentioned(path, mention.origin, protect=True)
                if found is not None:
                    parts.append(found)
                    break
        if self._read_rules() or self.integrity[0]:
            parts.extend(self._check_arguments(parsed, base_strs, cd_unknown))
        if parsed.problem:  # last: a rule that surely matches explains a denial better than "could run"
            parts.append(self._opaque(command.strip()[:80], f"{parsed.problem}; it cannot be checked"))
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
            return self._opaque(label, f"`{label}`: {cmd.opaque}")
        if cmd.risky:
            return Part(label, "risky", f"`{label}` {cmd.risky}")
        if cmd.environment:
            return Part(label, "environment", f"`{label}` {cmd.environment}")
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

    def _opaque(self, label: str, reason: str) -> Part:
        """A command the parser cannot see into is treated as the most dangerous thing it could run:
        denied when some deny rule (Bash, Read or Edit) could match what it runs, else it asks."""
        rule = next((r for r in self.rules["deny"] if r.rule.family in ("Bash", "Read", "Edit")), None)
        if rule is None:
            return Part(label, "opaque", reason)
        could = f"{reason}; it could run what {rule.describe()} denies"
        return Part(label, "deny_rule", could, rule)

    def _exact_allow(self, forms: Sequence[str]) -> ScopedRule | None:
        """Return an allow rule naming one of ``forms`` exactly (or every command: ``Bash``, ``Bash(*)``)."""
        for scoped in self.rules["allow"]:
            spec = scoped.rule.specifier
            if scoped.rule.family == "Bash" and (
                spec is None or spec == "*" or spec in forms or spec_words(spec) in forms
            ):
                return scoped
        return None

    def _read_rules(self) -> list[ScopedRule]:
        """The Read deny and ask rules (arguments of every command are checked against them)."""
        return [r for kind in ("deny", "ask") for r in self.rules[kind] if r.rule.family == "Read"]

    def _check_arguments(self, parsed: ParsedCommand, bases: list[str], cd_unknown: bool) -> list[Part]:
        """Every argument of every command naming a path a Read deny (ask) rule covers is denied
        (asks), whatever the command; globs are listed; a computed argument asks; a directory read
        recursively is searched for such paths."""
        parts: list[Part] = []
        names = ", ".join(dict.fromkeys(r.rule.text for r in self._read_rules()))
        computed = next((t for t in parsed.arguments if t.path is None), None)
        if computed is not None and names:  # (also called for paragents' own files, with no Read rule)
            reason = (
                f"`{computed.origin}`: an argument is computed when it runs, so it could name a path "
                f"that {names} covers"
            )
            parts.append(Part(computed.origin, "opaque", reason))
        relative = [t for t in parsed.arguments if t.path is not None and not t.path.startswith(("/", "~"))]
        if cd_unknown and relative and names:  # ``cd "$DIR" && base64 .env``: relative to an unknown dir
            reason = (
                f"`{relative[0].origin}`: {relative[0].path!r} is relative to a directory only known when "
                f"it runs (cd), so it could name a path that {names} covers"
            )
            parts.append(Part(relative[0].origin, "opaque", reason))
        seen: set[str] = set()
        for target in parsed.arguments:
            if target.path is None or (cd_unknown and not target.path.startswith(("/", "~"))):
                continue
            for base in bases:
                spellings = self._spellings(target, base)
                if spellings is None:
                    reason = f"`{target.origin}`: the glob {target.path!r} names too many files to check"
                    parts.append(Part(target.origin, "opaque", reason))
                    break
                for path in spellings:
                    if path in seen:
                        continue
                    seen.add(path)
                    found = self.check_mentioned(path, f"`{target.origin}` names {path}", ("Read",))
                    if found is not None:
                        parts.append(found)
        for target in parsed.recursive:
            if target.path is None:
                continue
            for base in dict.fromkeys(bases):
                found = self.check_tree(
                    os.path.normpath(resolve.absolute(target.path, base, self.home)), target.origin
                )
                if found is not None:
                    parts.append(found)
        return parts

    def _spellings(self, target: Target, base: str) -> list[str] | None:
        """The absolute paths an argument names: itself, or what its glob/brace pattern expands to
        now (and each brace spelling as written); None when there are too many."""
        path = resolve.absolute(target.path or "", base, self.home)
        if not target.glob:
            return [path]
        try:  # ``{a,b}{c,d}...`` past 64 spellings: too many to check
            expanded = bracex.expand(target.path or "", limit=MAX_BRACE_SPELLINGS)
        except bracex.ExpansionLimitException:
            return None
        written = [resolve.absolute(p, base, self.home) for p in expanded]
        found = wglob.glob(path, flags=wglob.BRACE | wglob.NOUNIQUE, limit=MAX_GLOB_MATCHES)
        if len(found) >= MAX_GLOB_MATCHES:
            return None
        return list(dict.fromkeys([*written, *found]))

    def check_tree(self, directory: str, origin: str) -> Part | None:
        """For a recursive read of ``directory``: a part denying (asking for) it when some path below
        it is covered by a Read deny (ask) rule; None when none is. A denied path the sandbox hides
        (:attr:`masked`) does not deny it: the command cannot read it (a part saying so allows)."""
        dirs_own, open_dirs = self.integrity
        if holds_integrity(directory, dirs_own) or integrity_reason(directory, dirs_own, open_dirs):
            reason = f"`{origin}` reads every file under {directory}, which holds paragents' own files"
            return Part(origin, "deny_inside", reason, what="Read")
        if not self._read_rules():
            return None
        first_ask: Part | None = None
        hidden: Sequence[str] | None = None
        out_of_sight: Part | None = None
        count = 0
        for root, dirs, files in os.walk(directory):
            for name in (*dirs, *files):
                count += 1
                if count > MAX_TREE_ENTRIES:
                    reason = (
                        f"`{origin}` reads more than {MAX_TREE_ENTRIES} files, too many to check for "
                        "paths Read rules cover"
                    )
                    return Part(origin, "opaque", reason)
                candidate = os.path.join(root, name)
                rule = self._path_rule("deny", "Read", candidate)
                if rule and self.masked is not None:
                    hidden = self.masked() if hidden is None else hidden
                    if resolve.is_inside(os.path.realpath(candidate), list(hidden)):
                        if out_of_sight is None:
                            reason = (
                                f"`{origin}` reads every file under {directory}; Read of {candidate} is "
                                f"denied by {rule.describe()}, and the sandbox hides it from the command"
                            )
                            out_of_sight = Part(origin, "default_allow", reason, rule, what="Read")
                        continue
                if rule:
                    reason = (
                        f"`{origin}` reads every file under {directory}, and Read of {candidate} is denied "
                        f"by {rule.describe()}; name the files to read instead"
                    )
                    return Part(origin, "deny_inside", reason, rule)
                rule = self._path_rule("ask", "Read", candidate) if first_ask is None else None
                if rule:
                    reason = f"`{origin}` reads {candidate}, which asks because of {rule.describe()}"
                    first_ask = Part(origin, "ask_rule", reason, rule)
        return first_ask or out_of_sight

    def check_mentioned(
        self, path: str, origin: str, families: tuple[str, ...] = ("Read", "Edit"), *, protect: bool = False
    ) -> Part | None:
        """Check a path named in an interpreter one-liner's code (or any command's argument) against
        the deny and ask rules of ``families`` (the code may open it itself); with ``protect``, a
        protected path asks (the code may write it). None when nothing matches."""
        candidates = resolve.resolutions(path, self.real_dirs) if "\x00" not in path else []
        own = self._integrity(candidates)
        if own:
            return Part(origin, "integrity", f"{origin}: {own}")
        for kind in ("deny", "protected", "ask"):
            if kind == "protected":
                whys = [
                    resolve.protected_reason(c, self.home, self.managed, self.real_dirs) for c in candidates
                ]
                why = next((w for w in whys if w), None) if protect else None
                if why:
                    return Part(
                        origin, "protected", f"{origin}: protected path: {why}; it may change it, so it asks"
                    )
                continue
            for family in families:
                for candidate in candidates:
                    rule = self._path_rule(kind, family, candidate)  # type: ignore[arg-type]
                    if rule:
                        what = "is denied by" if kind == "deny" else "asks because of"
                        reason = f"{origin}: {family} of {candidate} {what} {rule.describe()}"
                        return Part(origin, "deny_rule" if kind == "deny" else "ask_rule", reason, rule)
        return None

    # ---- other tools -------------------------------------------------------------------------
    def check_tool(self, tool: str, arguments: Mapping[str, Any] | None = None) -> Part:
        """Check a tool outside the three families (``WebFetch``, ``mcp__server__tool`` ...) by rule
        name and specifier (``WebFetch(domain:github.com)`` matches the URL's host only)."""
        args = arguments or {}
        kinds: tuple[tuple[RuleKind, Category], ...] = (
            ("deny", "deny_rule"), ("ask", "ask_rule"), ("allow", "allow_rule"),
        )  # fmt: skip
        url = args.get("url") if tool == "WebFetch" else None
        label = f"{tool} {url}" if isinstance(url, str) else tool
        for kind, category in kinds:
            for scoped in self.rules[kind]:
                if tool_matches(scoped.rule, tool) and (
                    "(" in tool or specifier_matches(scoped.rule, tool, args)
                ):
                    return Part(label, category, f"{label} matches {scoped.describe()}", scoped)
        if tool == "WebFetch":
            host = url_host(url) if isinstance(url, str) else None
            suggestion = (f"WebFetch(domain:{host})",) if host else ()
            what = f"fetching {host}" if host else "a fetch without a URL host"
            return Part(label, "unmatched", f"no rule allows {what}", None, suggestion)
        return Part(tool, "unmatched", f"no rule allows the tool {tool}", None, (tool,))
