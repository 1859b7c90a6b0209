"""The Policy: rules merged from every scope, and ``decide()``, the one function every tool call passes.

Scopes, highest precedence first: managed (``paths.managed_settings_path()``), command line
(``--allow/--ask/--deny``), project local (``<project>/.paragents/permissions.local.json``, where
"always" answers go), Claude Code's ``.claude/settings.local.json`` (``claude-local``), project
(``<project>/permissions.json``), Claude Code's ``.claude/settings.json`` (``claude-project``), user
(``paths.user_permissions_path()``), Claude Code's ``~/.claude/settings.json`` (``claude-user``), then
rules allowed for the current session. Deny rules from every scope are checked before any ask
rule, and ask before allow, so a project file can never loosen a user or managed deny.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from paragents import paths, treefiles, trust
from paragents.permissions import host_paths, mcp_paths, resolve
from paragents.permissions.cwd import check_cwd
from paragents.permissions.decision import Decision, PermissionMode, RuleKind, RuleRow, parse_mode
from paragents.permissions.evaluate import Checker, Part, finish
from paragents.permissions.rules import FAMILY_ALIASES, SUBJECT_KEYS, path_anchor
from paragents.permissions.settings import (
    RULE_KINDS,
    LoadedFile,
    PolicyError,
    ScopedRule,
    load_file,
    parse_rules,
)

INTERNAL_TOOLS = {
    "read_file": "Read",
    "list_dir": "Read",
    "glob": "Read",
    "grep": "Read",
    "write_file": "Edit",
    "edit_file": "Edit",
    "run_command": "Bash",
    "message_session": "MessageSession",  # wt/fanteam: rules MessageSession / MessageSession(name)
}
"""The agent's tool names -> the rule family that governs them."""

KNOWN_TOOLS = frozenset(
    {*INTERNAL_TOOLS, *INTERNAL_TOOLS.values(), *FAMILY_ALIASES, *SUBJECT_KEYS, "NotebookRead", "TodoWrite"}
)
"""Tool names the policy knows besides ``mcp__server__tool``: the agent's tools, the rule families
and Claude Code's tools (``WebFetch``, ``WebSearch``, ``Write``, ``Glob`` ...)."""

LOCAL_FILE = Path(".paragents") / "permissions.local.json"
PROJECT_FILE = Path("permissions.json")
CLAUDE_PROJECT_FILE = Path(".claude") / "settings.json"
CLAUDE_LOCAL_FILE = Path(".claude") / "settings.local.json"

SCOPE_ORDER = ("managed", "cli", "local", "claude-local", "project", "claude-project", "user", "claude-user")
"""Scopes, highest precedence first: Claude Code's own files sit right below paragents' file of the
same level (Claude Code's order is managed > command line > local > project > user)."""
CLAUDE_SCOPES_OFF = {
    "managed": ("claude-local", "claude-project", "claude-user"),
    "user": ("claude-local", "claude-project", "claude-user"),
    "local": ("claude-local", "claude-project"),
    "project": ("claude-project",),
}
"""Which Claude Code files ``"claudeSettings": false`` in each paragents file turns off: a file may
only turn off the ones of its own level or a less trusted one (a project file can never drop the
user's own deny rules)."""


def claude_user_settings_path() -> Path:
    """Claude Code's user settings: ``$CLAUDE_CONFIG_DIR/settings.json``, else ``~/.claude/settings.json``."""
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(base).expanduser() / "settings.json" if base else Path.home() / ".claude" / "settings.json"


def tool_family(tool: str) -> str:
    """Return ``Bash``/``Read``/``Edit`` for a family, an internal tool name or a Claude Code file tool
    (``Write``, ``Glob`` ...); other names unchanged."""
    return INTERNAL_TOOLS.get(tool) or FAMILY_ALIASES.get(tool, tool)


_PATH_KEYS = ("path", "file_path", "notebook_path")
_DIRECTORY_TOOLS = frozenset({"list_dir", "glob", "grep", "Glob", "Grep", "LS"})
"""Tools whose path argument defaults to the working directory when absent."""


class Policy:
    """Merged permission rules for one project. Build with :meth:`load`; ask with :meth:`decide`."""

    def __init__(
        self,
        project_dir: Path,
        files: list[LoadedFile],
        cli_rules: Sequence[ScopedRule] = (),
        *,
        settings_files: list[Path] | None = None,
        cli_texts: dict[str, list[str]] | None = None,
    ) -> None:
        """Build from already-loaded files (precedence order) and CLI rules; prefer :meth:`load`."""
        self.project_dir = Path(os.path.abspath(project_dir))
        self.files = files
        self._cli_rules = tuple(cli_rules)
        self._settings_files = settings_files
        self._cli_texts = cli_texts
        ordered = [*self._cli_rules]
        for loaded in files:
            ordered.extend(loaded.rules)
        scope_rank = {scope: rank for rank, scope in enumerate(SCOPE_ORDER)}
        ordered.sort(key=lambda r: scope_rank.get(r.scope, 9))
        self._rules: dict[RuleKind, list[ScopedRule]] = {
            k: [r for r in ordered if r.kind == k] for k in RULE_KINDS
        }
        home = os.path.expanduser("~")
        self.additional_dirs = [
            Path(resolve.absolute(text, self.project_dir, home))
            for loaded in files
            for text in loaded.data.permissions.additionalDirectories
        ]
        self.notes: list[str] = [note for loaded in files for note in loaded.notes]
        """What loading the files left out or changed, and rules that probably do not mean what
        they say (``Edit(/etc/**)``), one line each: shown at start (``run --json`` ``notes``)."""
        self.notes.extend(_root_anchor_notes(self.project_dir, files))

    # ---- loading -----------------------------------------------------------------------------
    @classmethod
    def load(
        cls,
        project_dir: Path,
        *,
        cli_rules: dict[str, list[str]] | None = None,
        settings_files: list[Path] | None = None,
    ) -> Policy:
        """Load every scope for ``project_dir``; ``settings_files`` (when given) replace user and project.

        ``cli_rules`` maps ``allow``/``ask``/``deny`` to rule strings. Raises PolicyError naming the file
        and field for any unreadable file, bad JSON, unknown key, malformed rule or failing example."""
        project_dir = Path(os.path.abspath(project_dir))
        scoped_cli: list[ScopedRule] = []
        for kind, texts in (cli_rules or {}).items():
            if kind not in RULE_KINDS:
                raise PolicyError(f"command line: unknown rule kind {kind!r}; use allow, ask or deny")
            scoped_cli.extend(parse_rules(list(texts), kind, "cli", None, f"command line --{kind}"))
        sources: list[tuple[Path, str]] = [(paths.managed_settings_path(), "managed")]
        sources.append((project_dir / LOCAL_FILE, "local"))
        if settings_files is not None:
            for path in settings_files:
                if not path.is_file():
                    raise PolicyError(f"{path}: settings file not found (check the --settings path)")
                sources.append((Path(os.path.abspath(path)), "project"))
        else:
            sources.append((project_dir / PROJECT_FILE, "project"))
            sources.append((paths.user_permissions_path(), "user"))
        files = [
            loaded
            for path, scope in sources
            if (loaded := load_file(path, scope, _tree(project_dir, path, scope))) is not None
        ]
        if settings_files is None:
            files.extend(_claude_files(project_dir, files))
        rank = {scope: i for i, scope in enumerate(SCOPE_ORDER)}
        files.sort(key=lambda loaded: rank.get(loaded.scope, 9))
        for loaded in files:
            _check_examples(project_dir, loaded)
        return cls(project_dir, files, scoped_cli, settings_files=settings_files, cli_texts=cli_rules)

    def reload(self) -> Policy:
        """Return a freshly loaded Policy with the same sources (raises PolicyError like :meth:`load`)."""
        return Policy.load(self.project_dir, cli_rules=self._cli_texts, settings_files=self._settings_files)

    # ---- queries -----------------------------------------------------------------------------
    @property
    def default_mode(self) -> PermissionMode:
        """The ``defaultMode`` of the highest-precedence file that sets one (else ``default``)."""
        for loaded in self.files:
            if loaded.data.permissions.defaultMode is not None:
                return self._allowed_mode(loaded.data.permissions.defaultMode)
        return PermissionMode.DEFAULT

    @property
    def bypass_disabled(self) -> bool:
        """True when some file sets ``disableBypassPermissionsMode: "disable"``."""
        return any(f.data.permissions.disableBypassPermissionsMode == "disable" for f in self.files)

    def _allowed_mode(self, mode: PermissionMode) -> PermissionMode:
        if mode is PermissionMode.BYPASS and self.bypass_disabled:
            return PermissionMode.DEFAULT
        return mode

    def rules_table(self) -> list[RuleRow]:
        """Return every effective rule (deny, then ask, then allow; precedence order) with its source."""
        return [
            RuleRow(kind, scoped.rule.text, scoped.scope, scoped.source)
            for kind in RULE_KINDS
            for scoped in self._rules[kind]
        ]

    def decide(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        cwd: Path,
        mode: PermissionMode | str = PermissionMode.DEFAULT,
        session_rules: Sequence[str] = (),
        extra_dirs: Sequence[Path] = (),
        sandboxed: bool = False,
        read_only: bool = False,
        schema: Mapping[str, Any] | None = None,
        masked: Callable[[], Sequence[str]] | None = None,
    ) -> Decision:
        """Decide one tool call: allow, ask or deny, with a reason naming the rule and its file.

        ``tool`` is an agent tool (read_file, list_dir, glob, grep, write_file, edit_file,
        run_command), a family (Bash, Read, Edit) or an ``mcp__server__tool`` name. ``arguments`` holds
        ``path`` (Read/Edit; Read defaults to ".") or ``command`` (Bash) and its optional ``cwd``
        (checked by :func:`~paragents.permissions.cwd.check_cwd`: inside the working directories, not
        hidden; the command's relative paths resolve against it). ``cwd`` is the session's
        working directory; ``session_rules`` are allow rules granted for this session;
        ``extra_dirs`` are more working directories; ``sandboxed``: a Bash call that will run in the
        sandbox with ``sandbox.auto_allow`` on, so the parts that would ask only because they are
        commands run without asking (deny and ask rules still apply). Raises ValueError for an unknown
        ``mode`` or a malformed session rule; a bad call (no path, non-string command) is denied with a
        reason. ``read_only``: an MCP tool whose server declares it read-only (``readOnlyHint``, no
        ``destructiveHint``): with no rule it runs like a read (also in plan mode); ``schema``: the
        MCP tool's inputSchema. The paths an MCP call names (:mod:`mcp_paths`) are checked as Read
        targets and, unless the tool is read-only, as Edit targets: deny and ask rules, protected
        paths and paths outside the working directories (they ask) apply; inside them the tool's
        own rule decides. In plan mode an MCP tool that is not read-only asks. ``masked``: a Bash call
        that will run in the bubblewrap sandbox; it returns the paths Read deny rules hide there (a
        recursive read over them is not denied for their sake: the command cannot read them)."""
        permission_mode = self._allowed_mode(parse_mode(mode))
        rules = self._rules
        if session_rules:
            try:
                extra = parse_rules(list(session_rules), "allow", "session", None, "session rule")
            except PolicyError as err:
                raise ValueError(str(err)) from None
            rules = {**rules, "allow": [*rules["allow"], *extra]}
        home = os.path.normpath(os.path.expanduser("~"))
        cwd_text = os.path.abspath(cwd)
        checker = Checker(
            rules=rules,
            project_root=str(self.project_dir),
            cwd=cwd_text,
            home=home,
            dirs=resolve.working_dirs([cwd_text, *self.additional_dirs, *extra_dirs]),
            managed=os.path.abspath(paths.managed_settings_path()),
            integrity=host_paths.integrity_dirs(),
            masked=masked,
        )
        family = tool_family(tool)
        if family == "Bash":
            command = arguments.get("command")
            if not isinstance(command, str):
                part = Part(tool, "invalid", f"{tool} call has no 'command' string argument")
                return finish([part], family, permission_mode)
            where, checker.base = check_cwd(checker, arguments.get("cwd"))  # run_command's cwd
            if any(p.category in ("invalid", "deny_rule") for p in where):
                return finish(where, family, permission_mode)
            parts, writes, unknown = checker.check_command(command)
            return finish([*where, *parts], family, permission_mode, writes, unknown, sandboxed)
        if family in ("Read", "Edit"):
            # Claude Code's tools name the path file_path / notebook_path; ours name it path.
            raw = next(
                (arguments[k] for k in _PATH_KEYS if arguments.get(k) is not None),
                "." if tool in _DIRECTORY_TOOLS else None,
            )
            if not isinstance(raw, str) or not raw:
                part = Part(tool, "invalid", f"{tool} call has no 'path' (or 'file_path') string argument")
                return finish([part], family, permission_mode)
            target = resolve.absolute(raw, cwd_text, home)
            part = checker.check_path(family, target)
            writes = [os.path.normpath(target)] if family == "Edit" and "\x00" not in raw else []
            return finish([part], family, permission_mode, writes)
        if family == "MessageSession":  # checked per receiver: MessageSession(api)
            target = str(arguments.get("name", "")).replace(")", "")
            return finish([checker.check_tool(f"MessageSession({target})")], family, permission_mode)
        part = checker.check_tool(tool, arguments)
        if not tool.startswith("mcp__"):
            return finish([part], family, permission_mode)
        family = "Read" if read_only else "MCP"
        if read_only and part.category == "unmatched":
            why = f"{tool} is read-only (its server's readOnlyHint), so it runs like a read"
            part = Part(tool, "default_allow", why)
        parts = [part, *_mcp_path_parts(checker, tool, arguments, schema, read_only, home)]
        return finish(parts, family, permission_mode)

    def read_deny_patterns(self, cwd: Path) -> tuple[tuple[str, str], ...]:
        """Return ``(root, gitignore pattern)`` for every ``Read(...)`` deny rule, anchored for ``cwd``
        (the sandbox hides the paths they name; a bare ``Read`` deny names no path)."""
        home = os.path.normpath(os.path.expanduser("~"))
        return tuple(
            path_anchor(
                scoped.rule.specifier,
                project_root=str(self.project_dir),
                cwd=os.path.abspath(cwd),
                home=home,
                anywhere=True,
            )
            for scoped in self._rules["deny"]
            if scoped.rule.family == "Read" and scoped.rule.specifier
        )

    # ---- remembering -------------------------------------------------------------------------
    def check_always(self, rules: Sequence[str], kind: RuleKind = "allow") -> None:
        """Raise PolicyError when :meth:`remember_always` would refuse ``rules`` now: a malformed rule,
        or permission files changed outside paragents (not trusted). Writes nothing: the TUI's rule
        editor asks before it answers, so a rule that cannot be saved keeps the ask open."""
        parse_rules(list(rules), kind, "local", None, "remembered rule")
        path = self.project_dir / LOCAL_FILE
        try:  # never append the user's answer to rules someone else put there, nor reload them
            trust.require_trusted(self.project_dir, only=trust.PERMISSION_FILES)
        except trust.UntrustedError as exc:
            changed = ", ".join(item.rel for item in exc.items)
            raise PolicyError(f"{changed} changed outside paragents; {path} not saved: {exc}") from None

    def remember_always(self, rules: list[str], kind: RuleKind = "allow") -> Path:
        """Append ``rules`` (validated) to the project-local file's ``kind`` list and reload this Policy.

        Creates ``<project>/.paragents/`` with a ``.gitignore`` holding ``permissions.local.json``.
        Returns the file's path. Raises PolicyError for a malformed rule or an unreadable local file,
        OSError when the file cannot be written."""
        self.check_always(rules, kind)
        path = self.project_dir / LOCAL_FILE
        loaded = load_file(path, "local", self.project_dir)
        data: dict[str, Any] = json.loads(treefiles.read_text(path, root=self.project_dir)) if loaded else {}
        block = data.setdefault("permissions", {})
        existing: list[str] = block.setdefault(kind, [])
        existing.extend(rule for rule in rules if rule not in existing)
        paths.ensure_dir(path.parent)
        ignore = path.parent / ".gitignore"
        if not ignore.exists() and not ignore.is_symlink():  # a dangling link: not written through
            ignore.write_text("permissions.local.json\n", encoding="utf-8")
        tmp = path.with_suffix(".json.tmp")
        tmp.unlink(missing_ok=True)  # never write through a link a command left in the project
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(json.dumps(data, indent=2) + "\n")
        os.replace(tmp, path)
        trust.record_written(self.project_dir, str(LOCAL_FILE))  # the user's own answer
        fresh = self.reload()
        self.files, self._rules, self.additional_dirs = fresh.files, fresh._rules, fresh.additional_dirs
        return path


def _mcp_path_parts(
    checker: Checker,
    tool: str,
    arguments: Mapping[str, Any],
    schema: Mapping[str, Any] | None,
    read_only: bool,
    home: str,
) -> list[Part]:
    """The Read (and, for a tool that may write, Edit) checks of the paths an MCP call names."""

    def exists_outside(value: str) -> bool:
        target = os.path.normpath(resolve.absolute(value, checker.cwd, home))
        return not resolve.is_inside(target, checker.dirs) and os.path.lexists(target)

    found = mcp_paths.path_arguments(arguments, schema, exists_outside)
    if found is None:
        return [
            Part(tool, "opaque", f"{tool} names more than {mcp_paths.MAX_PATHS} paths, too many to check")
        ]
    parts: list[Part] = []
    families = ("Read",) if read_only else ("Read", "Edit")
    for raw in found:
        target = resolve.absolute(raw, checker.cwd, home)
        for family in families:
            part = checker.check_path(family, target)
            if part.category == "edit_inside":  # inside the working directories the tool's rule decides
                part = replace(part, category="default_allow")
            parts.append(part)
    return parts


def _tree(project_dir: Path, path: Path, scope: str) -> Path | None:
    """The project, when ``path`` is one of its own files (read only as a regular file, see
    paragents.treefiles): every scope but the managed and the user's (a --settings file is the
    user's choice of path, wherever it is)."""
    return (
        project_dir
        if scope in ("local", "claude-local", "claude-project")
        or (scope == "project" and path == project_dir / PROJECT_FILE)
        else None
    )


def _claude_files(project_dir: Path, files: list[LoadedFile]) -> list[LoadedFile]:
    """Claude Code's settings files as scopes of their own (``claude-local``, ``claude-project``,
    ``claude-user``), except those a paragents file turns off with ``"claudeSettings": false``."""
    off: set[str] = set()
    for loaded in files:
        if loaded.data.claudeSettings is False:
            off.update(CLAUDE_SCOPES_OFF.get(loaded.scope, ()))
    sources = (
        (project_dir / CLAUDE_LOCAL_FILE, "claude-local"),
        (project_dir / CLAUDE_PROJECT_FILE, "claude-project"),
        (claude_user_settings_path(), "claude-user"),
    )
    found = [
        load_file(path, scope, _tree(project_dir, path, scope)) for path, scope in sources if scope not in off
    ]
    return [loaded for loaded in found if loaded is not None]


def _root_anchor_notes(project_dir: Path, files: list[LoadedFile]) -> list[str]:
    """Claude Code reads ``Edit(/etc/**)`` as ``<project>/etc/**`` (kept): when the rule's first
    directory exists at the root of the disk and not in the project, say once what was meant."""
    notes: list[str] = []
    seen: set[str] = set()
    for loaded in files:
        for scoped in loaded.rules:
            spec = scoped.rule.specifier
            if scoped.rule.family not in ("Read", "Edit") or not spec or not spec.startswith("/"):
                continue
            first = spec[1:].split("/", 1)[0]
            if (
                spec.startswith("//")
                or not first
                or scoped.rule.text in seen
                or any(c in first for c in "*?[")
            ):
                continue
            if os.path.isdir(f"/{first}") and not os.path.exists(project_dir / first):
                seen.add(scoped.rule.text)
                notes.append(
                    f"{loaded.path}: {scoped.rule.text} means {project_dir}/{first}/... (a leading '/' is "
                    f"the project root); did you mean `{scoped.rule.tool}(/{spec})` for /{first}?"
                )
    return notes


def _check_examples(project_dir: Path, loaded: LoadedFile) -> None:
    """Decide each example of ``loaded`` against that file's rules alone; raise PolicyError on a miss."""
    if not loaded.data.examples:
        return
    alone = Policy(project_dir, [loaded])
    for index, example in enumerate(loaded.data.examples):
        got = alone.decide(example.tool, example.input, cwd=project_dir, mode=example.mode)
        if got.decision != example.expect:
            raise PolicyError(
                f"{loaded.path}: examples[{index}]: {example.tool} {json.dumps(example.input)} is "
                f"{got.decision}, expected {example.expect} ({got.reason})"
            )
