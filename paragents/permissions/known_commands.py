"""What well-known shell commands do with their words: wrappers to look through and files they touch.

Pure functions over a simple command's words (quotes already removed). The knowledge comes from the
GNU coreutils / util-linux / bash manuals; only the options that take a separate value matter here, so
that the wrapped command or the file arguments can be found. Nothing here touches the filesystem.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from paragents.permissions import env_names

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
    "busybox": (frozenset(), 0),
    "toybox": (frozenset(), 0),
    "chroot": (frozenset({"--userspec", "--groups"}), 1),
    "unshare": (frozenset({"--setuid", "--setgid", "-S", "-G", "--wd", "--root", "-R", "-w"}), 0),
    "nsenter": (
        frozenset({"-t", "--target", "-S", "--setuid", "-G", "--setgid", "--wd", "-w", "-r", "--root"}),
        0,
    ),
    "pkexec": (frozenset({"--user"}), 0),
    "systemd-run": (
        frozenset({"-p", "--property", "-u", "--unit", "--uid", "--gid", "-E", "--setenv", "--slice"}),
        0,
    ),
    "firejail": (frozenset(), 0),
    "strace": (
        frozenset({"-e", "-o", "--output", "-p", "-s", "-u", "-E", "-P", "-a", "-b", "-I", "-O", "-S", "-X"}),
        0,
    ),
    "ltrace": (
        frozenset({"-e", "-o", "--output", "-p", "-s", "-u", "-a", "-n", "-A", "-D", "-F", "-l", "-L", "-x"}),
        0,
    ),
    "script": (
        frozenset(
            {
                "-E",
                "--echo",
                "-o",
                "--output-limit",
                "-m",
                "--logging-format",
                "-T",
                "--log-timing",
                "-I",
                "--log-in",
                "-O",
                "--log-out",
                "-B",
                "--log-io",
            }
        ),
        0,
    ),
    "su": (
        frozenset({"-g", "--group", "-G", "--supp-group", "-s", "--shell", "-w", "--whitelist-environment"}),
        0,
    ),
    "runuser": (frozenset({"-g", "--group", "-G", "--supp-group", "-s", "--shell", "-u", "--user", "-w"}), 0),
}

SHELLS = frozenset(
    {"bash", "sh", "zsh", "dash", "ksh", "mksh", "pdksh", "oksh", "ash", "yash", "posh", "rbash", "hush",
     "fish", "csh", "tcsh", "osh", "ysh", "elvish", "nu", "xonsh"}
)  # fmt: skip
"""Shells: their ``-c STRING`` argument (or the program they read from stdin) is parsed as a nested
command (in bash's grammar: a program that does not parse as bash cannot be checked, so it asks)."""

STDIN_FILES = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
"""Script operands that name the shell's own stdin (``echo 'rm x' | bash /dev/stdin``)."""

_STRING_OPTIONS = {
    "script": ("-c", "--command"),
    "su": ("-c", "--command", "--session-command"),
    "runuser": ("-c", "--command", "--session-command"),
}
"""Wrappers that run a shell command line given as an option's value (``script -c 'make'``)."""
_SHELL_VALUE_OPTIONS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
"""Shell options that take a separate value (``bash -o errexit -c ...``); bash's ``-C`` takes none."""
_INIT_OPTIONS = frozenset({"-C", "--init-command"})
"""fish's options whose value is a command it runs first (``fish -C 'rm x'``)."""

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

    Covers the dynamic loader (``LD_*``), ``PATH``, ``HOME``, git (``GIT_*``), ``XDG_*``, interpreters'
    start-up hooks, build tools' options and shell start-up variables (``BASH_ENV``, ``ENV``, ``IFS``):
    :func:`paragents.permissions.env_names.changes_what_runs`."""
    if env_names.harmless(name):
        return False
    return name in _DANGEROUS_EXACT or env_names.changes_what_runs(name)


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
    string: str | None = None
    """With ``split_string``: the string itself when it is not a word of its own (``env -S'rm x'``,
    ``env --split-string=...``); the words from ``start`` are then appended to it."""


def _string_option(name: str, word: str, words: tuple[str, ...], i: int) -> Unwrapped | None:
    """``env -S STR``/``-SSTR``/``--split-string=STR`` and ``script``/``su``/``runuser -c STR``: the
    wrapped command line, or None when ``word`` is no such option."""
    flags = ("-S", "--split-string") if name == "env" else _STRING_OPTIONS.get(name, ())
    for flag in flags:
        if word == flag and i + 1 < len(words):
            if name == "env":
                return Unwrapped(name, (), i + 1, split_string=True, join_rest=True)
            return Unwrapped(name, (), i + 1, split_string=True)
        if flag.startswith("--") and word.startswith(flag + "="):
            return Unwrapped(name, (), i + 1, split_string=True, string=word[len(flag) + 1 :])
        if not flag.startswith("--") and word.startswith(flag) and len(word) > len(flag):
            return Unwrapped(name, (), i + 1, split_string=True, string=word[len(flag) :])
    return None


def unwrap(words: tuple[str, ...]) -> Unwrapped | None:
    """Look through one wrapper (``timeout 5 cmd`` -> start of ``cmd``); None when ``words[0]`` is none.

    The wrapper may be spelled with a directory (``/usr/bin/env``)."""
    name = command_name(words)
    if name not in _WRAPPERS or (name == "command" and any(w in ("-v", "-V") for w in words[1:2])):
        return None  # ``command -v NAME`` only looks NAME up
    value_opts, positionals = _WRAPPERS[name]
    user_mode = name == "runuser" and any(w in ("-u", "--user") or w.startswith("--user=") for w in words)
    if name in ("su", "runuser") and not user_mode:  # options may follow the user: su root -c CMD
        for i, word in enumerate(words[1:], start=1):
            found = _string_option(name, word, words, i)
            if found is not None:
                return found
        return Unwrapped(name, (), len(words))  # no command: a shell reading the terminal
    i = 1
    while i < len(words):
        word = words[i]
        if word == "--":
            i += 1
            break
        found = _string_option(name, word, words, i) if name in ("env", *_STRING_OPTIONS) else None
        if found is not None:
            return found
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


@dataclass(frozen=True)
class ShellProgram:
    """Where a shell (``bash``, ``sh``, ``fish`` ...) takes its program from.

    ``source`` is ``"string"`` (``-c STRING``: ``index`` is the string's word, None when missing),
    ``"stdin"`` (no script operand, or ``-s``: it reads stdin) or ``"file"`` (a script file)."""

    source: str
    index: int | None = None
    inline: str | None = None
    """The string of ``--command=STR`` (``index`` is then that word's)."""
    inits: tuple[tuple[int, str], ...] = ()
    """fish's ``-C``/``--init-command`` commands: (index of the word holding it, the command)."""


def shell_program(words: tuple[str, ...]) -> ShellProgram | None:
    """For a shell command: where its program comes from; None when ``words`` runs no shell.

    Options that take a value (``-o errexit``, ``-O extglob``, ``--rcfile F``) are skipped, so
    ``bash -o errexit -c STR`` is seen like ``bash -c STR``."""
    if command_name(words) not in SHELLS:
        return None
    fish = command_name(words) == "fish"
    inits: list[tuple[int, str]] = []
    stdin = False
    i = 1
    while i < len(words):
        word = words[i]
        if word in ("--", "-"):  # bash: "An argument of - is equivalent to --"
            i += 1
            break
        if fish and (word in _INIT_OPTIONS or word.startswith("--init-command=")):
            if "=" in word:
                inits.append((i, word.split("=", 1)[1]))
            elif i + 1 < len(words):
                inits.append((i + 1, words[i + 1]))
            i += 1 if "=" in word else 2
            continue
        if word in ("--command", "-Command") or word.startswith("--command="):
            if "=" in word:
                return ShellProgram("string", i, word.split("=", 1)[1], tuple(inits))
            return ShellProgram("string", i + 1 if i + 1 < len(words) else None, inits=tuple(inits))
        if word in _SHELL_VALUE_OPTIONS:
            i += 2
            continue
        if word.startswith(("-", "+")) and len(word) > 1 and not word.startswith("--"):
            letters = word[1:]
            if "c" in letters and word.startswith("-"):
                index = i + 1 + sum(1 for ch in letters if ch in "oO")  # -oc errexit STR
                if index < len(words) and words[index] == "--":
                    index += 1
                return ShellProgram("string", index if index < len(words) else None, inits=tuple(inits))
            stdin = stdin or "s" in letters
            i += 1 + sum(1 for ch in letters if ch in "oO")
            continue
        if word.startswith("--"):
            i += 1
            continue
        break
    if stdin or i >= len(words) or words[i] in STDIN_FILES:
        return ShellProgram("stdin", inits=tuple(inits))
    return ShellProgram("file", i, inits=tuple(inits))


def shell_string(words: tuple[str, ...]) -> tuple[bool, int | None]:
    """For ``bash -c STR`` / ``eval ARGS``: return (is such a command, index of the string word or None).

    For ``eval`` the index is 1 (all following words are joined). For a shell, the word after the option
    cluster holding ``c`` (``-c``, ``-ec``, ``-xc`` ...). ``(False, None)`` for anything else; ``(True,
    None)`` when the string is missing."""
    name = command_name(words)
    if name == "eval":
        return True, 1 if len(words) > 1 else None
    program = shell_program(words)
    if program is not None and program.source == "string":
        return True, program.index
    return False, None


_GIT_VALUE_GLOBALS = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--exec-path",
     "--list-cmds", "--attr-source"}
)  # fmt: skip
"""git's global options that take a value (``git -C DIR push``); the others are flags."""


def git_subcommand(words: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """For ``git [global options] SUB ARGS``: return (SUB, ARGS); ("", ()) when there is none.

    Global options before the subcommand (``-C .``, ``--git-dir=.git``, ``-c k=v``, ``--no-pager``
    ...) are skipped."""
    i = git_globals_end(words)
    return (words[i], words[i + 1 :]) if i < len(words) else ("", ())


def git_globals_end(words: tuple[str, ...]) -> int:
    """Index of git's subcommand in ``words`` (after its global options)."""
    i = 1
    while i < len(words):
        word = words[i]
        if word in _GIT_VALUE_GLOBALS:
            i += 2
        elif word.startswith("-"):
            i += 1
        else:
            break
    return i


def git_config_changes(words: tuple[str, ...]) -> bool:
    """True when ``git ... -c k=v`` / ``--config-env`` / ``--exec-path=`` sets configuration or
    programs for this run (``core.pager``, ``alias.*``, ``core.sshCommand`` can run any program)."""
    end = git_globals_end(words)
    head = words[1:end]
    return any(w in ("-c", "--config-env") or w.startswith(("--config-env=", "--exec-path")) for w in head)


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
