"""What well-known shell commands do with their words: wrappers to look through and files they touch.

Pure functions over a simple command's words (quotes already removed). The knowledge comes from the
GNU coreutils / util-linux / bash manuals; only the options that take a separate value matter here, so
that the wrapped command or the file arguments can be found. Nothing here touches the filesystem.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

# Wrapper name -> (options that take a separate value, number of positional words before the command).
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "nohup": (frozenset(), 0),
    "env": (frozenset({"-u", "--unset", "-C", "--chdir"}), 0),
    "command": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "exec": (frozenset({"-a"}), 0),
    "time": (frozenset({"-f", "--format", "-o", "--output"}), 0),
    "stdbuf": (frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}), 0),
    "xargs": (
        frozenset(
            {"-I", "-n", "-P", "-L", "-d", "-E", "-s", "-a", "--max-args", "--max-procs", "--delimiter"}
        ),
        0,
    ),
    "sudo": (frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "--user", "--group"}), 0),
    "coproc": (frozenset(), 0),
    "doas": (frozenset({"-u", "-C"}), 0),
    "watch": (frozenset({"-n", "--interval", "-q", "--equexit"}), 0),
    "setsid": (frozenset(), 0),
    "ionice": (frozenset({"-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u"}), 0),
    "flock": (frozenset({"-w", "--wait", "--timeout", "-E", "--conflict-exit-code"}), 1),
    "chrt": (frozenset(), 1),
    "taskset": (frozenset(), 1),
}

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
"""Shells whose ``-c STRING`` argument is parsed as a nested command."""

_DANGEROUS_EXACT = frozenset(
    {"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PATH", "NODE_OPTIONS", "PYTHONPATH", "PYTHONSTARTUP",
     "BASH_ENV", "ENV", "IFS", "PERL5OPT", "RUBYOPT", "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS"}
)  # fmt: skip

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def command_name(words: tuple[str, ...]) -> str:
    """Return the name of the program ``words`` runs, without its directory (``/bin/rm`` -> ``rm``)."""
    return posixpath.basename(words[0]) if words else ""


def is_assignment(word: str) -> bool:
    """Return True when ``word`` has the shape ``NAME=value`` (as ``env`` and the shell read it)."""
    return bool(_ASSIGNMENT.match(word))


def dangerous_variable(name: str) -> bool:
    """Return True when setting environment variable ``name`` can change which code runs.

    Covers the dynamic loader (``LD_*``), ``PATH``, git (``GIT_*``), interpreters' start-up hooks and
    shell start-up variables (``BASH_ENV``, ``ENV``, ``IFS``)."""
    return name in _DANGEROUS_EXACT or name.startswith(("GIT_", "LD_", "DYLD_"))


@dataclass(frozen=True)
class Unwrapped:
    """One wrapper looked through.

    ``start`` is the index in the words where the wrapped command begins; ``assignments`` are the
    ``env NAME=value`` words; ``split_string`` is True for ``env -S STRING`` (``start`` then points at
    STRING, which must be parsed like ``sh -c STRING``)."""

    wrapper: str
    assignments: tuple[str, ...]
    start: int
    split_string: bool = False
    join_rest: bool = False
    """With ``split_string``: the string is all words from ``start`` joined by spaces (``watch``)."""


def unwrap(words: tuple[str, ...]) -> Unwrapped | None:
    """Look through one wrapper (``timeout 5 cmd`` -> start of ``cmd``); None when ``words[0]`` is none.

    The wrapper may be spelled with a directory (``/usr/bin/env``)."""
    name = command_name(words)
    if name not in _WRAPPERS or (name == "command" and any(w in ("-v", "-V") for w in words[1:2])):
        return None  # ``command -v NAME`` only looks NAME up
    value_opts, positionals = _WRAPPERS[name]
    i = 1
    while i < len(words):
        word = words[i]
        if word == "--":
            i += 1
            break
        if name == "env" and word in ("-S", "--split-string") and i + 1 < len(words):
            return Unwrapped(name, (), i + 1, split_string=True)
        if name == "nice" and re.fullmatch(r"-\d+", word):
            i += 1
            continue
        if not word.startswith("-") or word == "-":
            break
        i += 2 if word in value_opts else 1
    assignments: list[str] = []
    if name == "env":
        while i < len(words) and is_assignment(words[i]):
            assignments.append(words[i])
            i += 1
    i += positionals
    if name == "flock" and i < len(words) and words[i] in ("-c", "--command") and i + 1 < len(words):
        return Unwrapped(name, (), i + 1, split_string=True)
    if name == "watch" and "-x" not in words[1:i] and "--exec" not in words[1:i] and i < len(words):
        return Unwrapped(name, (), i, split_string=True, join_rest=True)  # watch runs ``sh -c ARGS``
    return Unwrapped(name, tuple(assignments), min(i, len(words)))


def shell_string(words: tuple[str, ...]) -> tuple[bool, int | None]:
    """For ``bash -c STR`` / ``eval ARGS``: return (is such a command, index of the string word or None).

    For ``eval`` the index is 1 (all following words are joined). For a shell, the word after the option
    cluster holding ``c`` (``-c``, ``-ec``, ``-xc`` ...). ``(False, None)`` for anything else; ``(True,
    None)`` when the string is missing."""
    name = command_name(words)
    if name == "eval":
        return True, 1 if len(words) > 1 else None
    if name in SHELLS:
        for i, word in enumerate(words[1:], start=1):
            if word.startswith("-") and not word.startswith("--") and "c" in word[1:]:
                index = i + 2 if i + 1 < len(words) and words[i + 1] == "--" else i + 1
                return True, index if index < len(words) else None
            if not word.startswith(("-", "+")):
                return False, None
    return False, None


def find_exec(words: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Return the commands ``find ... -exec CMD ... ;`` (also -execdir/-ok/-okdir) would run."""
    if command_name(words) != "find":
        return []
    found: list[tuple[str, ...]] = []
    i = 1
    while i < len(words):
        if words[i] in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(words) and words[j] not in (";", "+"):
                j += 1
            found.append(tuple(words[i + 1 : j]))
            i = j
        i += 1
    return found


def _split_options(words: tuple[str, ...], value_opts: frozenset[str]) -> tuple[list[str], dict[str, str]]:
    """Split ``words[1:]`` into positionals and {option: value} (``--`` ends options)."""
    positionals: list[str] = []
    opts: dict[str, str] = {}
    i = 1
    only_positional = False
    while i < len(words):
        word = words[i]
        if only_positional or not word.startswith("-") or word == "-":
            positionals.append(word)
        elif word == "--":
            only_positional = True
        elif "=" in word and word.startswith("--"):
            key, _, value = word.partition("=")
            opts[key] = value
        elif word in value_opts and i + 1 < len(words):
            opts[word] = words[i + 1]
            i += 1
        else:
            opts[word] = ""
        i += 1
    return positionals, opts


@dataclass(frozen=True)
class FileArgs:
    """The files a command reads and writes, as spelled (relative to the shell's cwd)."""

    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()


_READERS = {
    "cat": frozenset(),
    "less": frozenset(),
    "more": frozenset(),
    "wc": frozenset(),
    "head": frozenset({"-n", "-c", "--lines", "--bytes"}),
    "tail": frozenset({"-n", "-c", "--lines", "--bytes", "-s", "--pid"}),
}
_GREP_VALUES = frozenset({"-e", "-f", "-m", "-A", "-B", "-C", "--regexp", "--file", "--max-count"})
_SED_VALUES = frozenset({"-e", "-f", "-l", "--expression", "--file"})
_CP_VALUES = frozenset({"-t", "--target-directory", "-S", "--suffix"})
_WRITER_VALUES = {
    "rm": frozenset(),
    "touch": frozenset({"-r", "-d", "-t", "--reference", "--date"}),
    "mkdir": frozenset({"-m", "--mode"}),
    "truncate": frozenset({"-s", "-r", "--size", "--reference"}),
    "tee": frozenset(),
}


def file_args(words: tuple[str, ...]) -> FileArgs:
    """Return the files ``words`` (one unwrapped simple command) reads and writes.

    Readers: cat, head, tail, grep, sed, less, more, wc (and the sources of cp). Writers: output of
    tee, cp/mv destination (mv sources too: they disappear), rm, touch, mkdir, sed -i, truncate,
    chmod/chown (after the mode/owner), ln (the link), dd ``of=``. ``-`` (stdin/stdout) is skipped."""
    name = command_name(words)

    def keep(items: list[str]) -> tuple[str, ...]:
        return tuple(w for w in items if w != "-")

    if name in _READERS:
        pos, _ = _split_options(words, _READERS[name])
        return FileArgs(reads=keep(pos))
    if name == "grep":
        pos, opts = _split_options(words, _GREP_VALUES)
        has_pattern = any(k in opts for k in ("-e", "-f", "--regexp", "--file"))
        return FileArgs(reads=keep(pos if has_pattern else pos[1:]))
    if name == "sed":
        pos, opts = _split_options(words, _SED_VALUES)
        files = keep(pos if any(k in opts for k in ("-e", "-f", "--expression", "--file")) else pos[1:])
        in_place = any(k == "--in-place" or (k.startswith("-i") and not k.startswith("--")) for k in opts)
        return FileArgs(writes=files) if in_place else FileArgs(reads=files)
    if name in ("cp", "mv"):
        pos, opts = _split_options(words, _CP_VALUES)
        target = opts.get("-t") or opts.get("--target-directory")
        sources, dest = (pos, [target]) if target else (pos[:-1], pos[-1:])
        if name == "mv":
            return FileArgs(writes=keep(sources + dest))
        return FileArgs(reads=keep(sources), writes=keep(dest))
    if name in _WRITER_VALUES:
        pos, _ = _split_options(words, _WRITER_VALUES[name])
        return FileArgs(writes=keep(pos))
    if name in ("chmod", "chown", "chgrp"):
        pos, opts = _split_options(words, frozenset())
        return FileArgs(writes=keep(pos if "--reference" in opts else pos[1:]))
    if name == "ln":
        pos, opts = _split_options(words, frozenset({"-t", "--target-directory", "-S", "--suffix"}))
        target = opts.get("-t") or opts.get("--target-directory")
        if target:
            return FileArgs(writes=(target,))
        if len(pos) == 1:
            return FileArgs(writes=(pos[0].rstrip("/").rsplit("/", 1)[-1],))
        return FileArgs(writes=keep(pos[-1:]))
    if name == "dd":
        reads = tuple(w[3:] for w in words[1:] if w.startswith("if="))
        writes = tuple(w[3:] for w in words[1:] if w.startswith("of="))
        return FileArgs(reads=reads, writes=writes)
    return FileArgs()


_SUBCOMMAND_TOOLS = frozenset(
    {"git", "npm", "pnpm", "yarn", "cargo", "uv", "docker", "kubectl", "go", "pip", "pip3", "poetry",
     "make", "gh", "dotnet", "mvn", "gradle", "helm", "terraform", "bun", "deno", "brew", "apt", "conda"}
)  # fmt: skip
_RUNNERS = frozenset({"npm", "pnpm", "yarn", "uv", "poetry", "bun"})


def rule_prefix(words: tuple[str, ...]) -> tuple[str, ...]:
    """Return the leading words an "always allow" rule should keep (``git push`` for ``git push -f x``).

    One word in general; two for tools with subcommands (git, npm, cargo, uv, docker, kubectl ...);
    three for ``npm run NAME`` style runners. Stops before the first option word."""
    keep = 1
    if words and words[0] in _SUBCOMMAND_TOOLS:
        keep = 2
        if words[0] in _RUNNERS and len(words) > 1 and words[1] in ("run", "exec", "x"):
            keep = 3
    out: list[str] = [words[0]] if words else []
    for word in words[1:keep]:
        if word.startswith("-"):
            break
        out.append(word)
    return tuple(out)
