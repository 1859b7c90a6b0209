"""Bash special cases from Claude Code's permissions documentation ("Tool-specific permission rules ›
Bash", https://code.claude.com/docs/en/permissions), as pure functions over a simple command's words.

- Which wrappers are stripped before allow rules are matched ("a fixed set of process wrappers"), and
  which run another command so that a prefix rule must never approve them ("exec wrappers").
- ``find`` actions that execute, delete or write files (a ``Bash(find *)`` rule doesn't cover them).
- Interpreter one-liners (``python -c``, ``node -e`` ...): the path literals their code names.
- Destructive commands, for which "always allow" never suggests a rule broader than the command.
"""

from __future__ import annotations

import re

from paragents.permissions.known_commands import SHELLS, command_name

STRIPPED_WRAPPERS = frozenset({"timeout", "time", "nice", "nohup", "stdbuf", "command", "builtin", "exec"})
"""Wrappers looked through before allow rules match: Claude Code's documented set (timeout, time, nice,
nohup, stdbuf) plus the shell builtins that only run the named command (command, builtin, exec)."""

EXEC_WRAPPERS = frozenset(
    {"watch", "setsid", "ionice", "flock", "sudo", "doas", "env", "coproc", "chrt", "taskset"}
)
"""Wrappers that run another command and are never approved by a prefix rule: Claude Code's
documented ones (watch, setsid, ionice, flock) plus sudo/doas (another user), env (another
environment), coproc (a background job), chrt/taskset (scheduling). Only an exact rule allows them."""


def wrapper_kind(words: tuple[str, ...]) -> str:
    """Classify the wrapper ``words[0]``: ``"stripped"`` (allow rules match the wrapped command),
    ``"exec"`` (only an exact rule allows it) or ``"matched"`` (matched as itself: ``xargs`` with
    flags, whose inner command's rules do not cover it)."""
    name = command_name(words)
    if name == "xargs":
        return "stripped" if len(words) > 1 and not words[1].startswith("-") else "matched"
    if name in STRIPPED_WRAPPERS:
        return "stripped"
    return "exec" if name in EXEC_WRAPPERS else "matched"


# ---- find ------------------------------------------------------------------------------------------
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_FIND_WRITE = frozenset({"-fprint", "-fprint0", "-fprintf", "-fls"})
_FIND_GLOBAL = frozenset({"-H", "-L", "-P"})


def find_actions(words: tuple[str, ...]) -> tuple[list[str], list[str], list[str]]:
    """For ``find``: return (actions that run or delete, files written by -fprint/-fls, start points
    that -delete removes from). Empty lists for any other command."""
    if command_name(words) != "find":
        return [], [], []
    actions: list[str] = []
    written: list[str] = []
    starts: list[str] = []
    i = 1
    while i < len(words) and (words[i] in _FIND_GLOBAL or words[i].startswith(("-D", "-O"))):
        i += 2 if words[i] == "-D" else 1
    while i < len(words) and not words[i].startswith(("-", "(", "!")):
        starts.append(words[i])
        i += 1
    skip_to_end = False
    for j, word in enumerate(words[i:], start=i):
        if skip_to_end:
            skip_to_end = word not in (";", "+")
            continue
        if word in _FIND_EXEC:
            actions.append(word)
            skip_to_end = True
        elif word == "-delete":
            actions.append(word)
        elif word in _FIND_WRITE:
            actions.append(word)
            if j + 1 < len(words):
                written.append(words[j + 1])
    deletes = (starts or ["."]) if "-delete" in actions else []
    return actions, written, deletes


# ---- interpreter one-liners ------------------------------------------------------------------------
_PYTHON = re.compile(r"^(python[0-9.]*|pypy[0-9.]*)$")
_CODE_FLAGS: dict[str, tuple[str, ...]] = {
    "node": ("-e", "--eval", "-p", "--print"),
    "nodejs": ("-e", "--eval", "-p", "--print"),
    "bun": ("-e", "--eval", "-p", "--print"),
    "perl": ("-e", "-E"),
    "ruby": ("-e",),
    "php": ("-r",),
    "lua": ("-e",),
    "luajit": ("-e",),
    "Rscript": ("-e",),
    "osascript": ("-e",),
}
_AWKS = frozenset({"awk", "gawk", "mawk", "nawk"})
_LITERAL = re.compile(r"""(['"`])((?:\\.|(?!\1)[^\\\n])*)\1""")


def interpreter_code(words: tuple[str, ...]) -> list[str]:
    """Return the code strings of an interpreter one-liner (``python -c CODE``, ``node -e CODE``,
    ``perl -le CODE``, ``deno eval CODE``, ``awk 'PROGRAM'`` ...); [] for anything else."""
    name = command_name(words)
    if name in SHELLS:
        return []
    if name == "deno":
        return [words[2]] if len(words) > 2 and words[1] == "eval" else []
    if name in _AWKS:
        for word in words[1:]:
            if word in ("-f", "--file") or word.startswith("-f"):
                return []
            if not word.startswith("-"):
                return [word]
        return []
    flags = ("-c",) if _PYTHON.match(name) else _CODE_FLAGS.get(name)
    if not flags:
        return []
    letters = {f[1] for f in flags if len(f) == 2}
    codes: list[str] = []
    for i, word in enumerate(words[1:-1], start=1):
        cluster = word.startswith("-") and not word.startswith("--") and word[1:].isalpha()
        if word in flags or (cluster and word[-1] in letters):
            codes.append(words[i + 1])
    return codes


_STDIN_CODE = {
    "node": ("-e", "--eval", "-p", "--print"),
    "nodejs": ("-e", "--eval", "-p", "--print"),
    "bun": ("-e", "--eval", "-p", "--print"),
    "deno": (),
    "perl": ("-e", "-E"),
    "ruby": ("-e",),
    "php": ("-r",),
    "lua": ("-e",),
    "Rscript": ("-e",),
    "osascript": ("-e",),
}


_INTERPRETER_VALUES = {
    "python": frozenset({"-X", "-W", "--check-hash-based-pycs"}),
    "node": frozenset(
        {"-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions",
         "--input-type", "--env-file", "--title"}
    ),
    "ruby": frozenset({"-I", "-r", "-C", "-E", "-F"}),
}  # fmt: skip
"""Interpreter options that take a separate value (``python3 -X dev`` still reads stdin)."""


def code_from_stdin(words: tuple[str, ...]) -> bool:
    """True when the interpreter ``words`` runs reads its program from stdin: no script and no code
    option (``python3``, ``python3 -``, ``python3 -X dev``, ``node``, ``perl -w``, ``ruby``)."""
    name = command_name(words)
    python = bool(_PYTHON.match(name))
    if not python and name not in _STDIN_CODE:
        return False
    if interpreter_code(words):
        return False
    takes_value = _INTERPRETER_VALUES.get("python" if python else name, frozenset())
    i = 1
    while i < len(words):
        word = words[i]
        if word == "--":
            return i + 1 >= len(words) or words[i + 1] == "-"
        if word == "-" or not word.startswith("-"):
            return word == "-"  # the script (or "-": stdin)
        if python and not word.startswith("--") and word[-1] in "cm":  # -m MODULE, -Im MODULE
            return False
        i += 2 if word in takes_value else 1
    return True


def code_paths(code: str) -> list[str]:
    """Return the string literals of ``code`` that could name a file (the paths a one-liner opens)."""
    found: list[str] = []
    for match in _LITERAL.finditer(code):
        text = match.group(2)
        bare = text.lstrip("+<>| ").rstrip("| ")  # perl's two-argument open: "<file", ">>file"
        for path in (text, bare):
            if path.strip() and len(path) <= 4096 and path not in found:
                found.append(path)
    return found


# ---- destructive commands --------------------------------------------------------------------------
_DESTRUCTIVE = frozenset({"rm", "rmdir", "unlink", "shred", "truncate", "dd", "wipefs", "srm"})


def destructive(words: tuple[str, ...]) -> bool:
    """Return True for commands whose purpose is to delete or overwrite files (rm, shred, dd, mkfs,
    ``find -delete``, ``git clean`` ...): "always allow" offers only the exact command for them."""
    name = command_name(words)
    if name in _DESTRUCTIVE or name.startswith("mkfs"):
        return True
    if name == "git" and "clean" in words[1:3]:
        return True
    return name == "find" and "-delete" in words


_OPTION_GLOB_COMMANDS = frozenset({"find", "sort", "sed", "git"})


def glob_may_become_option(words: tuple[str, ...], unquoted_globs: set[str]) -> str | None:
    """For find/sort/sed/git: return an unquoted glob word that could expand to an option (one that
    starts with a glob character, e.g. ``*`` matching a file named ``-delete``), else None.

    ``unquoted_globs`` holds the words that the shell expands (as written)."""
    if command_name(words) not in _OPTION_GLOB_COMMANDS:
        return None
    return next((w for w in words[1:] if w in unquoted_globs and w[:1] in ("*", "?", "[")), None)
