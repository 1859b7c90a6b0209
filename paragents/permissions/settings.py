"""Permission files: Claude Code's ``permissions`` block, validated by pydantic, plus checked examples.

File shape (a Claude Code ``settings.json`` ``permissions`` block pastes in unchanged)::

    {"permissions": {"allow": [...], "ask": [...], "deny": [...], "defaultMode": "default",
                     "additionalDirectories": [...], "disableBypassPermissionsMode": "disable"},
     "examples": [{"tool": "Bash", "input": {"command": "git status"}, "expect": "allow"}]}

Every problem is raised as :class:`PolicyError` with one message naming the file, the field (e.g.
``permissions.allow[2]``) and what is wrong.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from paragents.permissions.decision import PermissionMode, RuleKind
from paragents.permissions.rules import Rule, parse_rule

RULE_KINDS: tuple[RuleKind, ...] = ("deny", "ask", "allow")
"""Rule kinds in the order they are checked: the first kind with a matching rule decides."""


class PolicyError(Exception):
    """A permission file or rule is invalid (``str(err)`` names the file, the field and the fix).

    The app refuses to run under a policy it could not read (fail closed)."""


class PermissionsBlock(BaseModel):
    """Claude Code's ``permissions`` object; unknown keys are rejected."""

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


CLAUDE_SETTINGS_KEYS = frozenset(
    {
        "env",
        "hooks",
        "model",
        "apiKeyHelper",
        "cleanupPeriodDays",
        "includeCoAuthoredBy",
        "statusLine",
        "outputStyle",
        "enableAllProjectMcpServers",
        "enabledMcpjsonServers",
        "disabledMcpjsonServers",
        "forceLoginMethod",
        "forceLoginOrgUUID",
        "awsAuthRefresh",
        "awsCredentialExport",
        "spinnerTipsEnabled",
        "alwaysThinkingEnabled",
        "companyAnnouncements",
        "theme",
        "sandbox",
        "otelHeadersHelper",
        "disableAllHooks",
        "subagentStatusLine",
    }
)
"""Other top-level keys of a Claude Code settings.json: ignored, so a whole file can be pasted. Any
other unknown key is still an error (a misspelt "permisions" must never silently drop a deny)."""


class PermissionsFile(BaseModel):
    """A whole permission file (a Claude Code settings.json loads too: its other keys are ignored)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @model_validator(mode="before")
    @classmethod
    def _drop_claude_settings(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if k not in CLAUDE_SETTINGS_KEYS}
        return data

    schema_: str | None = Field(None, alias="$schema", description="Optional JSON-schema URL (ignored).")
    permissions: PermissionsBlock = Field(default_factory=lambda: PermissionsBlock.model_validate({}))
    examples: list[Example] = Field(default_factory=list)


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


def load_file(path: Path, scope: str) -> LoadedFile | None:
    """Read and validate one permission file; None when it does not exist.

    Raises PolicyError for unreadable files, bad JSON, unknown keys and malformed rules."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as err:
        raise PolicyError(f"{path}: cannot be read ({err}); fix its permissions or remove it") from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as err:
        raise PolicyError(
            f"{path}: not valid JSON (line {err.lineno}, column {err.colno}: {err.msg})"
        ) from None
    try:
        data = PermissionsFile.model_validate(raw)
    except ValidationError as err:
        first = err.errors()[0]
        raise PolicyError(f"{path}: {_loc(tuple(first['loc']))}: {first['msg']}") from None
    rules: list[ScopedRule] = []
    for kind in RULE_KINDS:
        texts = getattr(data.permissions, kind)
        rules.extend(parse_rules(texts, kind, scope, path, f"{path}: permissions.{kind}"))
    return LoadedFile(path=path, scope=scope, data=data, rules=tuple(rules))
