"""Cut a bash command line into the simple commands it runs and the files it redirects to.

Parsing uses tree-sitter-bash (the grammar of github.com/tree-sitter/tree-sitter-bash); there is no
regex splitting. Every simple command is found wherever it sits: lists (``&&``, ``||``, ``;``, ``&``,
newlines), pipelines (``|``, ``|&``), subshells, brace groups, ``$(...)``, backticks (also inside double
quotes), process substitution, loops, conditionals, case, function bodies, heredocs with unquoted
delimiters, ``eval``/``bash -c``/``watch``/``flock -c`` strings (parsed recursively when literal) and
``find -exec``. Wrappers (timeout, nice, nohup, env, command, builtin, exec, time, stdbuf, xargs, sudo,
watch, setsid, ionice, flock ...) are looked through; :mod:`special` says which of them allow rules
look past and which need an exact rule. Words are rebuilt with quotes removed, so
``git commit -m 'a b'`` has the words ``git, commit, -m, a b``.
"""

from __future__ import annotations

import codecs
import os
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import tree_sitter as ts
import tree_sitter_bash

from paragents.permissions import known_commands as known
from paragents.permissions import resolve, special

MAX_COMMAND_CHARS = 10_000
"""Commands longer than this are not analysed (and so never auto-allowed)."""
MAX_NESTING = 6
"""How deep ``eval``/``bash -c`` strings are parsed before giving up (then never auto-allowed)."""

_OUTPUT_OPS = frozenset({">", ">>", "&>", "&>>", ">|", "<>"})
_EXEMPT_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_LITERAL_CHILDREN = frozenset({"string_content"})
_GLOB_CHARS = frozenset("*?[{")


_LOCAL = threading.local()


@lru_cache(maxsize=1)
def _language() -> ts.Language:
    return ts.Language(tree_sitter_bash.language())


def _parser() -> ts.Parser:
    """Return this thread's tree-sitter bash parser (built once per thread: parsers are not thread-safe)."""
    parser: ts.Parser | None = getattr(_LOCAL, "parser", None)
    if parser is None:
        parser = _LOCAL.parser = ts.Parser(_language())
    return parser


@dataclass(frozen=True)
class Target:
    """A file a command touches: ``path`` as spelled (None when it cannot be known before running)."""

    path: str | None
    origin: str
    """Where it came from, for reasons: ``"> out.txt"``, ``"rm build"``."""


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
    """Why it must not run on an allow rule alone (e.g. ``LD_PRELOAD=...``) or None."""
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
    cd_dirs: list[str | None] = field(default_factory=list)
    """Literal ``cd``/``pushd`` targets in order (None: not knowable); relative paths may use them."""
    background: bool = False
    problem: str | None = None
    """Why the line could not be analysed (syntax error, too long, nesting too deep) or None."""


@dataclass(frozen=True)
class _Word:
    text: str
    known: bool


def _unescape_unquoted(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _unescape_double(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in '$`"\\\n':
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _text(node: ts.Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogateescape")


def _word(node: ts.Node) -> _Word:
    """Rebuild one word without quotes; ``known`` is False if it expands (``$x``, ``$(..)``, globs)."""
    kind = node.type
    raw = _text(node)
    if kind == "word":
        return _Word(_unescape_unquoted(raw), not (_GLOB_CHARS & set(raw)))
    if kind == "number":
        return _Word(raw, True)
    if kind == "raw_string":
        return _Word(raw[1:-1], True)
    if kind == "ansi_c_string":
        try:
            return _Word(codecs.decode(raw[2:-1], "unicode_escape"), True)
        except (UnicodeDecodeError, ValueError):
            return _Word(raw, False)
    if kind in ("string", "translated_string"):
        inner = raw[raw.index('"') + 1 : -1] if '"' in raw else raw
        known_ = all(child.type in _LITERAL_CHILDREN for child in node.named_children)
        return _Word(_unescape_double(inner) if known_ else raw, known_)
    if kind == "concatenation":
        parts = [_word(child) for child in node.children]
        if all(part.known for part in parts):
            return _Word("".join(part.text for part in parts), True)
        return _Word(raw, False)
    return _Word(raw, False)


class _Walker:
    """Collects simple commands, redirects and cd targets from one tree (and nested strings)."""

    def __init__(self, out: ParsedCommand, depth: int, parent_forms: tuple[str, ...] = ()) -> None:
        self.out = out
        self.depth = depth
        self.parent_forms = parent_forms

    def walk(self, node: ts.Node) -> None:
        kind = node.type
        if not node.is_named:
            if kind == "&":
                self.out.background = True
            return
        if kind in ("raw_string", "ansi_c_string", "comment", "heredoc_start", "heredoc_end"):
            return
        if kind in ("command", "declaration_command", "unset_command"):
            self._command(node)
            return
        if kind == "file_redirect":
            self._redirect(node)
            return
        if kind == "variable_assignment":
            self._standalone_assignment(node)
        for child in node.children:
            self.walk(child)

    def _standalone_assignment(self, node: ts.Node) -> None:
        name = _text(node).split("=", 1)[0].rstrip("+")
        if known.dangerous_variable(name):
            self.out.commands.append(
                SimpleCommand(
                    text=_text(node),
                    words=(),
                    layers=((),),
                    assignments=(_text(node),),
                    risky=f"sets {name}, which changes what later commands run",
                    transparent=True,
                )
            )

    def _redirect(self, node: ts.Node) -> None:
        op = ""
        for child in node.children:
            if not child.is_named:
                op = child.type
            elif child.type not in ("file_descriptor",):
                if child.type in ("process_substitution", "command_substitution"):
                    self.walk(child)
                    continue
                word = _word(child)
                for sub in child.children:
                    self.walk(sub)
                if op in (">&", "<&", ">&-", "<&-") and (child.type == "number" or word.text == "-"):
                    continue
                if word.known and word.text in _EXEMPT_TARGETS:
                    continue
                target = Target(word.text if word.known else None, f"{op} {_text(child)}")
                if op in _OUTPUT_OPS or op == ">&":
                    self.out.writes.append(target)
                if op in ("<", "<>"):
                    self.out.reads.append(target)

    def _command(self, node: ts.Node) -> None:
        assignments: list[tuple[str, bool]] = []
        words: list[_Word] = []
        if node.type != "command":
            words.append(_Word(_text(node.children[0]), True))
        for child in node.children:
            if child.type == "variable_assignment":
                value = child.child_by_field_name("value")
                dynamic = value is not None and not _word(value).known
                assignments.append((_text(child), dynamic))
                if node.type != "command":
                    words.append(_Word(_text(child), not dynamic))
            elif child.type == "command_name":
                words.append(_word(child.named_children[0]) if child.named_children else _Word("", True))
            elif child.is_named and not child.type.endswith("redirect"):
                words.append(_word(child))
        self._analyse(_text(node), words, assignments)
        for child in node.children:
            if child.type == "variable_assignment":
                for sub in child.children:
                    self.walk(sub)
            else:
                self.walk(child)

    def _analyse(self, text: str, words: list[_Word], assignments: list[tuple[str, bool]]) -> None:
        texts = tuple(w.text for w in words)
        unknown = {w.text for w in words if not w.known}
        risky: str | None = None
        for assignment, dynamic in assignments:
            name = assignment.split("=", 1)[0].rstrip("+")
            if dynamic:
                risky = f"the value of {name} is computed when it runs"
            elif known.dangerous_variable(name):
                risky = f"sets {name}, which changes what runs"
        opaque: str | None = None
        if words and not words[0].known:
            opaque = f"the command name {words[0].text!r} is only known when it runs"
        layers: list[tuple[str, ...]] = [texts]
        current = texts
        transparent = False
        through_xargs = False
        stripping = True  # still inside the stripped wrappers (allow rules match past them)
        allow_index = 0
        exact_only: str | None = None
        while current and opaque is None:
            step = known.unwrap(current)
            if step is not None:
                kind = special.wrapper_kind(current)
                stripping = stripping and kind == "stripped"
                runs = step.split_string or step.start < len(current)
                if kind == "exec" and runs and exact_only is None:  # at any depth (``xargs -0 sudo x``)
                    exact_only = f"{step.wrapper} runs another command"
                through_xargs = through_xargs or step.wrapper == "xargs"
                for assignment in step.assignments:
                    name = assignment.split("=", 1)[0]
                    if known.dangerous_variable(name) or assignment in unknown:
                        risky = f"sets {name}, which changes what runs"
                if step.split_string:
                    rest = current[step.start :] if step.join_rest else current[step.start : step.start + 1]
                    parent = self._forms(layers, allow_index, assignments, text) if exact_only else ()
                    dynamic = any(w in unknown for w in rest)
                    transparent = self._nested(" ".join(rest), dynamic, text, parent)
                    if not transparent and exact_only is None:
                        opaque = f"{step.wrapper} runs a string that is only known when it runs"
                    break
                current = current[step.start :]
                if current:
                    layers.append(current)
                    if stripping:
                        allow_index = len(layers) - 1
                    if current[0] in unknown:
                        opaque = f"the command name {current[0]!r} is only known when it runs"
                continue
            is_shell, index = known.shell_string(current)
            if is_shell:
                if index is None:
                    break
                if known.command_name(current) == "eval":
                    string, dynamic = " ".join(current[1:]), any(w in unknown for w in current[1:])
                else:
                    string, dynamic = current[index], current[index] in unknown
                transparent = self._nested(string, dynamic, text)
                if not transparent:
                    opaque = f"{current[0]} runs a string that is only known when it runs"
            break
        if exact_only and transparent:
            transparent = False  # the wrapper itself still needs its exact rule
        effective = layers[-1]
        actions, printed, deleted = special.find_actions(effective)
        if actions and exact_only is None:
            exact_only = f"find with {', '.join(dict.fromkeys(actions))} runs, deletes or writes files"
        glob = special.glob_may_become_option(effective, {w.text for w in words if not w.known})
        if glob is not None and risky is None:
            risky = f"its unquoted glob {glob!r} could expand to an option such as -delete"
        parent = self._forms(layers, allow_index, assignments, text) if exact_only else self.parent_forms
        outer, self.parent_forms = self.parent_forms, parent
        for nested in known.find_exec(effective):
            self._analyse(" ".join(nested), [_Word(w, w not in unknown) for w in nested], [])
        self.parent_forms = outer
        for path in (*printed, *deleted):
            self.out.writes.append(Target(None if path in unknown else path, f"find {path}"))
        for code in special.interpreter_code(effective):
            if code not in unknown:
                for path in special.code_paths(code):
                    self.out.mentions.append(Target(path, f"{effective[0]} code names {path!r}"))
        if effective and effective[0] in ("source", ".") and any(w in unknown for w in effective[1:]):
            opaque = "source runs a file whose name is only known when it runs"
        if effective and effective[0] in ("cd", "pushd"):
            arg = next((w for w in effective[1:] if not w.startswith("-")), "~")
            self.out.cd_dirs.append(None if arg in unknown else arg)
        files = known.file_args(tuple(w for w in effective if not w.startswith(("<(", ">("))))
        origin = " ".join(effective[:1])
        for path in files.reads:
            self.out.reads.append(Target(None if path in unknown else path, f"{origin} {path}"))
        for path in files.writes:
            unknowable = path in unknown or through_xargs or path == "{}"
            self.out.writes.append(Target(None if unknowable else path, f"{origin} {path}"))
        if through_xargs and "\x00" in known.file_args((*effective, "\x00")).writes:
            self.out.writes.append(Target(None, f"xargs {origin} (file names come from input)"))
        self.out.commands.append(
            SimpleCommand(
                text=text.strip(),
                words=texts,
                layers=tuple(layers),
                assignments=tuple(a for a, _ in assignments),
                opaque=opaque,
                risky=risky,
                transparent=transparent,
                allow_index=allow_index,
                exact_only=exact_only,
                parent_forms=self.parent_forms,
            )
        )

    @staticmethod
    def _forms(
        layers: list[tuple[str, ...]], index: int, assignments: list[tuple[str, bool]], text: str
    ) -> tuple[str, ...]:
        """The spellings an exact rule for this command may use: its allow layer (with and without
        assignments) and the command as written."""
        words = layers[index]
        spelled = (" ".join(words), " ".join((*(a for a, _ in assignments), *words)), text.strip())
        return tuple(dict.fromkeys(spelled))

    def _nested(self, string: str, dynamic: bool, text: str, parent: tuple[str, ...] = ()) -> bool:
        """Parse a literal ``eval``/``sh -c`` string into this result; return True when it was."""
        if dynamic:
            return False
        if self.depth >= MAX_NESTING:
            self.out.problem = f"nesting of eval/sh -c is deeper than {MAX_NESTING} in {text!r}"
            return False
        _parse_into(string, self.out, self.depth + 1, parent or self.parent_forms)
        return True


def _parse_into(command: str, out: ParsedCommand, depth: int, parent_forms: tuple[str, ...] = ()) -> None:
    if len(command) > MAX_COMMAND_CHARS:
        out.problem = f"the command is longer than {MAX_COMMAND_CHARS} characters"
        return
    tree = _parser().parse(command.encode("utf-8", "surrogateescape"))
    if tree.root_node.has_error:
        where = "a nested eval/sh -c string" if depth else "the command"
        out.problem = f"{where} could not be parsed as bash (syntax error or unsupported syntax)"
    _Walker(out, depth, parent_forms).walk(tree.root_node)


def parse_command(command: str) -> ParsedCommand:
    """Parse a bash command line; returns every simple command, redirect target and flag found.

    Never raises: a syntax error or an over-long line sets ``problem`` (what could be parsed is still
    returned, so deny rules can fire on it)."""
    out = ParsedCommand()
    if "\x00" in command:
        out.problem = "the command contains a NUL byte"
        return out
    _parse_into(command, out, 0)
    return out


def resolve_target(path: str, bases: list[Path], home: Path) -> list[Path]:
    """Return the absolute spellings of ``path`` (``~`` expanded) for each possible shell cwd in ``bases``.

    Paths are made absolute but not normalised (``..`` and symlinks are the policy's job)."""
    return list(dict.fromkeys(Path(resolve.absolute(path, base, home)) for base in bases))


def shell_bases(parsed: ParsedCommand, cwd: Path, home: Path) -> tuple[list[Path], bool]:
    """Return the directories relative paths may be resolved against (cwd and each ``cd`` target).

    The flag is True when some ``cd`` target cannot be known (so relative paths cannot be either)."""
    bases = [cwd]
    unknown = False
    for target in parsed.cd_dirs:
        if target is None or target == "-":
            unknown = True
            continue
        for base in list(bases):
            for resolved in resolve_target(target, [base], home):
                if resolved not in bases:
                    bases.append(resolved)
    return bases, unknown


def write_targets(command: str, cwd: Path) -> tuple[list[Path], bool]:
    """Return (absolute paths ``command`` may write, True if some targets cannot be known beforehand).

    Counts output redirects (``>``, ``>>``, ``&>``, ``>|``), ``tee`` and the files changed by cp/mv/rm/
    touch/mkdir/sed -i/truncate/chmod/ln. ``/dev/null`` and fd duplications are not targets. Paths
    are joined to ``cwd`` (and to literal ``cd`` targets) and ``~`` is expanded, not resolved."""
    parsed = parse_command(command)
    home = Path(os.path.expanduser("~"))
    bases, cd_unknown = shell_bases(parsed, cwd, home)
    paths: list[Path] = []
    unknown = parsed.problem is not None
    for target in parsed.writes:
        if target.path is None:
            unknown = True
            continue
        if cd_unknown and not target.path.startswith(("/", "~")):
            unknown = True
        for path in resolve_target(target.path, bases, home):
            normal = Path(os.path.normpath(path))
            if normal not in paths:
                paths.append(normal)
    return paths, unknown
