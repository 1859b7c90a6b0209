"""Permission files: Claude Code's ``permissions`` block, validated by pydantic, plus checked examples.

File shape (a whole Claude Code ``settings.json`` pastes in unchanged: keys paragents does not use
are ignored with one note naming them, and ``defaultMode: "auto"`` becomes ``acceptEdits`` with a
note)::

    {"permissions": {"allow": [...], "ask": [...], "deny": [...], "defaultMode": "default",
                     "additionalDirectories": [...], "disableBypassPermissionsMode": "disable"},
     "examples": [{"tool": "Bash", "input": {"command": "git status"}, "expect": "allow"}]}

Every problem is raised as :class:`PolicyError` with one message naming the file, the field (e.g.
``permissions.allow[2]``) and what is wrong.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import json5
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from paragents import jsonfile
from paragents.permissions.decision import PermissionMode, RuleKind
from paragents.permissions.rules import Rule, parse_rule

RULE_KINDS: tuple[RuleKind, ...] = ("deny", "ask", "allow")
"""Rule kinds in the order they are checked: the first kind with a matching rule decides."""


class PolicyError(Exception):
    """A permission file or rule is invalid (``str(err)`` names the file, the field and the fix).

    The app refuses to run under a policy it could not read (fail closed)."""


class PermissionsBlock(BaseModel):
    """Claude Code's ``permissions`` object (other keys are dropped with a note by :func:`load_file`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    allow: list[str] = Field(default_factory=list, description="Rules whose calls run without asking.")
    ask: list[str] = Field(default_factory=list, description="Rules whose calls always ask.")
    deny: list[str] = Field(default_factory=list, description="Rules whose calls never run.")
    defaultMode: PermissionMode | None = Field(None, description="Permission mode sessions start in.")
    additionalDirectories: list[str] = Field(
        default_factory=list, description="More working directories (relative to the project, ~ allowed)."
    )
    disableBypassPermissionsMode: Literal["disable"] | None = Field(
        None, description="'disable' turns bypassPermissions mode into default mode."
    )


class Example(BaseModel):
    """A call with its expected decision, checked when the file is loaded."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str = Field(description="Tool or family name: Bash, Read, Edit, read_file, mcp__server__tool ...")
    input: dict[str, Any] = Field(description="The call's arguments, e.g. {'command': 'ls'}.")
    expect: Literal["allow", "ask", "deny"] = Field(description="The decision this file must give.")
    mode: PermissionMode = Field(PermissionMode.DEFAULT, description="Mode to check the example in.")


class PermissionsFile(BaseModel):
    """A whole permission file: paragents' own, or a Claude Code settings.json (only its
    ``permissions`` block is used; :func:`load_file` drops every other key with one note)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    schema_: str | None = Field(None, alias="$schema", description="Optional JSON-schema URL (ignored).")
    permissions: PermissionsBlock = Field(default_factory=lambda: PermissionsBlock.model_validate({}))
    examples: list[Example] = Field(default_factory=list)
    claudeSettings: bool | None = Field(
        None,
        description="false: do not read Claude Code's settings files (a user or managed file: all of "
        "them; the project-local file: the project's two; the project file: .claude/settings.json).",
    )


TOP_KEYS = ("$schema", "permissions", "examples", "claudeSettings")
BLOCK_KEYS = ("allow", "ask", "deny", "defaultMode", "additionalDirectories", "disableBypassPermissionsMode")
_GUARDED = ("permissions", "allow", "ask", "deny")
"""Keys whose misspelling must never drop rules silently: a near miss (``permisions``) is an error."""
AUTO_MODE_NOTE = (
    'defaultMode "auto" (Claude Code\'s classifier mode) is not available in paragents; sessions start '
    "in acceptEdits instead: edits inside the working directories run, commands and everything else "
    "still follow the rules and ask"
)


def _near_miss(key: str) -> str | None:
    """The guarded key ``key`` is probably a misspelling of, or None."""
    close = difflib.get_close_matches(key.lower(), _GUARDED, n=1, cutoff=0.75)
    return close[0] if close and close[0] != key else None


def _drop_unknown(raw: Any, path: Path) -> tuple[Any, list[str]]:
    """Drop the keys paragents does not use (top level and in ``permissions``) and map ``defaultMode:
    "auto"``; return the cleaned data and the notes saying what was ignored. A key that looks like
    a misspelt ``permissions``/``allow``/``ask``/``deny`` raises PolicyError (it would drop rules)."""
    if not isinstance(raw, dict):
        return raw, []
    notes: list[str] = []
    ignored: list[str] = []
    data: dict[str, Any] = {}
    for key, value in raw.items():
        if key in TOP_KEYS:
            data[key] = value
            continue
        near = _near_miss(key)
        if near:
            raise PolicyError(
                f"{path}: unknown key {key!r}; did you mean {near!r}? (its rules would be lost)"
            )
        ignored.append(key)
    block = data.get("permissions")
    if isinstance(block, dict):
        kept: dict[str, Any] = {}
        for key, value in block.items():
            if key in BLOCK_KEYS:
                kept[key] = value
                continue
            near = _near_miss(key)
            if near:
                lost = "(its rules would be lost)"
                raise PolicyError(f"{path}: permissions.{key}: unknown key; did you mean {near!r}? {lost}")
            ignored.append(f"permissions.{key}")
        if kept.get("defaultMode") == "auto":
            kept["defaultMode"] = PermissionMode.ACCEPT_EDITS.value
            notes.append(f"{path}: {AUTO_MODE_NOTE}")
        data["permissions"] = kept
    if ignored:
        notes.insert(0, f"{path}: ignored (not used by paragents' permission layer): {', '.join(ignored)}")
    return data, notes


@dataclass(frozen=True)
class ScopedRule:
    """A parsed rule with its kind and origin (scope name and file, None for CLI/session rules)."""

    rule: Rule
    kind: RuleKind
    scope: str
    source: Path | None

    def describe(self) -> str:
        """Return e.g. ``rule Bash(ls *) (allow, project: /p/permissions.json)``."""
        where = f"{self.scope}: {self.source}" if self.source else self.scope
        return f"rule {self.rule.text} ({self.kind}, {where})"


@dataclass(frozen=True)
class LoadedFile:
    """One loaded permission file with its scope and parsed rules."""

    path: Path
    scope: str
    data: PermissionsFile
    rules: tuple[ScopedRule, ...]
    notes: tuple[str, ...] = ()
    """What loading it left out or changed (ignored keys, ``defaultMode: "auto"``), one line each."""


def _loc(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def parse_rules(
    texts: list[str], kind: RuleKind, scope: str, source: Path | None, where: str
) -> tuple[ScopedRule, ...]:
    """Parse rule strings; raise PolicyError ``"<where>[i]: <what is wrong>"`` for the first bad one."""
    out: list[ScopedRule] = []
    for index, text in enumerate(texts):
        try:
            out.append(ScopedRule(parse_rule(text), kind, scope, source))
        except ValueError as err:
            raise PolicyError(f"{where}[{index}]: {err}") from None
    return tuple(out)


def load_file(path: Path, scope: str, tree: Path | None = None) -> LoadedFile | None:
    """Read and validate one permission file; None when it does not exist. ``tree``: the file is in
    that tree a session can write (the project): read only as a regular file (never through a
    symbolic link, a FIFO or a device: a link to another file would load that file's rules).

    Raises PolicyError for unreadable files, bad JSON, misspelt rule keys and malformed rules; in
    Claude Code's own files (scopes ``claude-*``) a malformed rule is skipped with a note instead
    (a file written for another program must not stop paragents)."""
    try:
        text = jsonfile.read_text(path, tree=tree)
    except jsonfile.JsonFileMissing:
        return None
    except jsonfile.JsonFileError as err:
        raise PolicyError(f"{err}; fix its permissions or remove it") from None
    try:
        raw = jsonfile.loads(text, str(path))
    except jsonfile.JsonFileError as err:
        if scope.startswith("claude-"):  # Claude Code's own files: trailing commas, comments (JSON5)
            try:
                raw = json5.loads(text)
            except ValueError:
                raw = None
            if isinstance(raw, dict):
                return _loaded(
                    path, scope, raw, [f"{path}: read as JSON5 (it is not strict JSON: {err.reason})"]
                )
        raise PolicyError(str(err)) from None
    return _loaded(path, scope, raw, [])


def _loaded(path: Path, scope: str, raw: Any, notes: list[str]) -> LoadedFile:
    """Validate the parsed contents of a permission file (see :func:`load_file`)."""
    raw, dropped = _drop_unknown(raw, path)
    notes = [*notes, *dropped]
    try:
        data = PermissionsFile.model_validate(raw)
    except ValidationError as err:
        first = err.errors()[0]
        raise PolicyError(f"{path}: {_loc(tuple(first['loc']))}: {first['msg']}") from None
    rules: list[ScopedRule] = []
    for kind in RULE_KINDS:
        texts = getattr(data.permissions, kind)
        where = f"{path}: permissions.{kind}"
        if not scope.startswith("claude-"):
            rules.extend(parse_rules(texts, kind, scope, path, where))
            continue
        for index, text in enumerate(texts):  # Claude Code's own file: it must not stop paragents
            try:
                rules.extend(parse_rules([text], kind, scope, path, where))
            except PolicyError as err:
                why = str(err).split(": ", 2)[-1]
                notes.append(f"{where}[{index}]: skipped (not a rule paragents can read): {why}")
    return LoadedFile(path=path, scope=scope, data=data, rules=tuple(rules), notes=tuple(notes))
