"""What the shell parser finds in a command line: its simple commands, the files they touch, the
words that may name paths, and the code of interpreter one-liners (:class:`ParsedCommand`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Target:
    """A file a command touches: ``path`` as spelled (None when it cannot be known before running)."""

    path: str | None
    origin: str
    """Where it came from, for reasons: ``"> out.txt"``, ``"rm build"``."""
    glob: bool = False
    """``path`` is a glob or brace pattern (``.en*``): the files it names are listed when checked."""


@dataclass(frozen=True)
class SimpleCommand:
    """One simple command as it will run.

    ``words`` are the unquoted words after leading assignments; ``layers`` holds ``words`` and then
    each wrapped command found by looking through wrappers (the last one is what really runs)."""

    text: str
    words: tuple[str, ...]
    layers: tuple[tuple[str, ...], ...]
    assignments: tuple[str, ...] = ()
    opaque: str | None = None
    """Why what runs cannot be known (dynamic command name, non-literal ``eval``) or None."""
    risky: str | None = None
    """Why it must not run on an allow rule alone (e.g. a computed assignment) or None."""
    environment: str | None = None
    """Why the variables it is given may change what it runs (``HOME=. git status``: any name off
    :data:`paragents.permissions.env_names.HARMLESS`) or None; it then asks, and neither a rule nor
    the sandbox's auto-allow lets it through."""
    transparent: bool = False
    """True for ``eval``/``sh -c`` whose string was parsed: the nested commands are checked instead."""
    allow_index: int = -1
    """The layer allow rules are matched against: the first one after the stripped wrappers
    (timeout, time, nice, nohup, stdbuf, bare xargs ...); deny and ask rules match every layer."""
    exact_only: str | None = None
    """Why only an exact-match rule may allow it (exec wrappers, ``find -exec``/``-delete``) or None."""
    parent_forms: tuple[str, ...] = ()
    """For a command nested in an exact-only one (``watch 'make'``, ``find -exec``): the outer
    command's forms; an exact rule for the outer command also allows this one."""

    @property
    def effective(self) -> tuple[str, ...]:
        """The innermost layer: the command that really runs."""
        return self.layers[-1]

    @property
    def matched(self) -> tuple[str, ...]:
        """The layer allow rules are matched against (see ``allow_index``)."""
        return self.layers[self.allow_index]


@dataclass
class ParsedCommand:
    """Everything found in one command line."""

    commands: list[SimpleCommand] = field(default_factory=list)
    reads: list[Target] = field(default_factory=list)
    writes: list[Target] = field(default_factory=list)
    mentions: list[Target] = field(default_factory=list)
    """Path literals named in interpreter one-liners' code (``python -c "open('.env')"``)."""
    arguments: list[Target] = field(default_factory=list)
    """Every argument word of every command (and the value of ``--opt=value``/``of=value`` words):
    any of them naming a path a Read deny rule covers is a read of it, whatever the command. A
    target with no path is computed when it runs (``$(...)``, a variable set from one)."""
    recursive: list[Target] = field(default_factory=list)
    """Directories read recursively (``grep -r``, ``rg``, ``tar c``, ``cp -r`` ...)."""
    trees: list[Target] = field(default_factory=list)
    """Working trees a git command rewrites (``git switch``, ``reset --hard``, ``stash``): the
    conflict checker reserves the whole repository (see :func:`paragents.permissions.write_targets`)."""
    codes: list[str] = field(default_factory=list)
    """Code of interpreter one-liners and of programs fed to an interpreter's stdin."""
    variables: dict[str, list[str | None]] = field(default_factory=dict)
    """Values given to shell variables in the line (None: computed when it runs)."""
    pending: list[Target] = field(default_factory=list, repr=False)
    """Argument words that expand (``path`` holds the word as written), resolved into ``arguments``
    once the whole line is read (see :func:`_resolve_arguments`)."""
    cd_dirs: list[str | None] = field(default_factory=list)
    """Literal ``cd``/``pushd`` targets in order (None: not knowable); relative paths may use them."""
    background: bool = False
    problem: str | None = None
    """Why the line could not be analysed (syntax error, too long, nesting too deep) or None."""


_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
MAX_SPELLINGS = 16
"""At most this many spellings of one argument are checked (variables with several values)."""


def resolve_arguments(out: ParsedCommand) -> None:
    """Turn the expanding argument words into ``arguments``: variables given literal values in the
    line are substituted (every value, up to :data:`MAX_SPELLINGS` spellings), ``$HOME`` becomes
    ``~``; a word using a command substitution or a variable computed when it runs becomes a target
    with no path (it could name anything). Variables the line never sets come from paragents'
    environment, not from the model, and are left alone."""
    for target in out.pending:
        raw = (target.path or "").replace('"', "")
        if "$(" in raw or "`" in raw or "<(" in raw or "$((" in raw:
            out.arguments.append(Target(None, target.origin))
            continue
        spellings = [raw]
        computed = False
        for match in _VARIABLE.finditer(raw):
            name = match.group(1) or match.group(2)
            values = out.variables.get(name)
            if values is None:
                values = ["~"] if name == "HOME" else []
            if any(v is None for v in values):
                computed = True
                break
            if not values:
                spellings = []
                break
            spellings = [s.replace(match.group(0), str(v), 1) for s in spellings for v in values]
            spellings = spellings[:MAX_SPELLINGS]
        if computed or any("$" in s for s in spellings):
            out.arguments.append(Target(None, target.origin))
            continue
        for spelled in spellings:
            out.arguments.append(Target(spelled, target.origin, glob=bool(set("*?[{") & set(spelled))))
    out.pending.clear()
