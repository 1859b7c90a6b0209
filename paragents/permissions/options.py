"""The options of well-known commands that name files or programs (attack report, escape 1).

A program a rule allows as "read-only" may still write a file through an option: ``git log
--output=F`` writes F with any content the format string gives it, ``sort -o F``, ``curl -o F``,
``tar -cf F``, ``wget -O F``. Others read a file through an option (``wc --files0-from=F``, ``tar -T
F``, ``grep -f F``, ``git commit -F F``, ``curl -d @F``) or run a program they name (``rg --pre=CMD``,
``git difftool -x CMD``, ``tar --to-command=CMD``). :func:`option_files` finds them all from a simple
command's words, in every spelling: ``--output=F``, ``--output F``, ``-oF``, ``-o F``, a short
option inside a cluster (``sort -ro F``), an unambiguous abbreviation (``--outp=F``: GNU getopt).

An option of a known command that is in none of its tables has an unknown meaning: when its value
looks like a path (it holds ``/`` or starts with ``~`` or ``.``) it is judged as a possible write of
that path (:attr:`OptionFiles.maybe_writes`), not ignored. Commands whose whole option list is known
(``complete``: the git diff family from ``git diff --git-completion-helper``, sort, wc ...) also treat
a path-like word right after an unknown long option as its possible value.

The knowledge comes from the commands' manuals (GNU coreutils, tar, grep, curl, wget, ripgrep, git).
Pure functions over words (quotes already removed); nothing here touches the filesystem.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from paragents.permissions.known_commands import command_name, git_globals_end, git_subcommand
from paragents.permissions.option_tables import (
    COMPRESSORS,
    CURL_DATA,
    DIFF,
    DIFF_FAMILY,
    GIT,
    GIT_RUN_SUBCOMMANDS,
    TABLES,
    Spec,
    spec,
)


@dataclass
class OptionFiles:
    """The files and programs a command's options name, as spelled (relative to the shell's cwd)."""

    reads: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    maybe_writes: list[str] = field(default_factory=list)
    """Values of options whose meaning is unknown that look like paths: judged as possible writes."""
    runs: list[str] = field(default_factory=list)
    """Programs or command lines an option runs (``rg --pre=sh``)."""
    unknown: str | None = None
    """Why the command also writes files only known when it runs (``curl -K FILE``), or None."""
    positionals: list[str] = field(default_factory=list)


def looks_like_path(value: str) -> bool:
    """True when an option's value looks like a path: it holds ``/`` or starts with ``~`` or ``.``."""
    return bool(value) and ("/" in value or value.startswith(("~", ".")))


def _category(name: str, table: Spec) -> str | None:
    """The category of option ``name`` (``--output``, ``-o``): writes/reads/runs/values/flags, or
    None when unknown. A long option may be abbreviated (GNU getopt, git's parse-options): an
    unambiguous prefix takes the category of what it abbreviates; an ambiguous one the most
    dangerous of them."""
    for kind in ("writes", "reads", "runs", "values", "flags", "optional"):
        if name in getattr(table, kind):
            return "flags" if kind == "optional" else kind
    if name.startswith("--no-") and ("--" + name[5:]) in (table.takes_value | table.flags | table.optional):
        return "flags"
    if name.startswith("--") and len(name) > 3:
        for kind in ("writes", "reads", "runs", "values", "flags", "optional"):
            if any(known.startswith(name) for known in getattr(table, kind) if known.startswith("--")):
                return "flags" if kind == "optional" else kind
    return None


def scan(words: tuple[str, ...], table: Spec, start: int = 1) -> OptionFiles:
    """Walk ``words[start:]`` with ``table``: sort each option's value into reads, writes, runs;
    collect the positional words (``--`` ends options)."""
    out = OptionFiles()
    i = start
    only_positional = False

    def put(kind: str | None, value: str, how: str) -> None:
        if kind in ("writes", "reads", "runs"):
            getattr(out, kind).append(value)
        elif kind is None and how != "flag" and looks_like_path(value):
            out.maybe_writes.append(value)

    while i < len(words):
        word = words[i]
        i += 1
        if only_positional or not word.startswith("-") or word == "-":
            out.positionals.append(word)
            continue
        if word == "--":
            only_positional = True
            continue
        if word.startswith("--") or (len(word) > 2 and word.split("=", 1)[0] in table.takes_value):
            name, eq, value = word.partition("=")
            kind = _category(name, table)
            if eq:
                put(kind, value, "value")
            elif kind in ("writes", "reads", "runs", "values") and i < len(words):
                put(kind, words[i], "value")
                i += 1
            elif kind is None and table.complete and i < len(words) and looks_like_path(words[i]):
                out.maybe_writes.append(words[i])  # an unknown option may take it as its value
            continue
        attached = next((o for o in table.takes_value if len(o) == 3 and o[1] != "-"
                         and word.startswith(o)), None)  # fmt: skip
        if attached is not None:  # -MFfile, -TTcmd spelled as one word
            put(_category(attached, table), word[len(attached) :], "value")
            continue
        for j in range(1, len(word)):  # a cluster of short options: -xzf FILE, -oFILE, -ro FILE
            name = "-" + word[j]
            kind = _category(name, table)
            rest = word[j + 1 :]
            if kind in ("writes", "reads", "runs", "values"):
                if rest:
                    put(kind, rest, "value")
                elif i < len(words):
                    put(kind, words[i], "value")
                    i += 1
                break
            if kind is None:
                put(None, rest, "value")  # an unknown letter: what follows may be its value
                break
    return out


def _url_name(url: str) -> str | None:
    """The file name ``curl -O`` / ``wget`` saves ``url`` as (the last part of its path)."""
    name = posixpath.basename(urlsplit(url).path) if "://" in url else None
    return name or None


def _curl(words: tuple[str, ...], out: OptionFiles) -> None:
    urls = [w for w in out.positionals if "://" in w]
    for i, word in enumerate(words[1:-1], start=1):
        nxt = words[i + 1]
        if word in CURL_DATA and nxt.startswith("@"):
            out.reads.append(nxt[1:])
        elif word in ("-F", "--form") and "=" in nxt and nxt.split("=", 1)[1][:1] in ("@", "<"):
            out.reads.append(nxt.split("=", 1)[1][1:].split(";", 1)[0])
        elif word in ("-b", "--cookie") and "=" not in nxt:
            out.reads.append(nxt)
        elif word in ("--url",):
            urls.append(nxt)
    for word in words[1:]:
        name, eq, value = word.partition("=")
        if eq and name in CURL_DATA and value.startswith("@"):
            out.reads.append(value[1:])
        if name in ("-K", "--config") or (word.startswith("-K") and not word.startswith("--")):
            out.unknown = "curl reads more options (files it writes too) from a config file"
    remote_name = any(
        w in ("-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name")
        or (w.startswith("-") and not w.startswith("--") and "O" in w.lstrip("-").split("o", 1)[0])
        for w in words[1:]
    )
    if remote_name:
        base = next((words[i + 1] for i, w in enumerate(words[:-1]) if w == "--output-dir"), "")
        if any(w == "--remote-header-name" or (w[:1] == "-" and w[1:2] != "-" and "J" in w) for w in words):
            out.unknown = "curl -J saves files under the name the server sends"
        for url in urls:
            saved = _url_name(url)
            if saved:
                out.writes.append(posixpath.join(base, saved) if base else saved)


def _wget(words: tuple[str, ...], out: OptionFiles) -> None:
    if any(w in ("-O", "--output-document") or w.startswith(("-O", "--output-document=")) for w in words):
        return
    if any(w in ("-r", "--recursive", "-m", "--mirror", "-p", "--page-requisites") for w in words):
        out.unknown = "wget saves the files a recursive download finds"
        return
    prefix = next((words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-P", "--directory-prefix")), "")
    for url in out.positionals:
        name = _url_name(url) or ("index.html" if "://" in url else None)
        if name:
            out.writes.append(posixpath.join(prefix, name) if prefix else name)


def _tar(words: tuple[str, ...]) -> OptionFiles:
    mode_word = words[1] if len(words) > 1 else ""
    if mode_word and not mode_word.startswith("-"):  # old style: tar cvzf out.tar ... (f takes a word)
        words = (words[0], "-" + mode_word, *words[2:])
    out = scan(words, TABLES["tar"])
    letters = "".join(w.lstrip("-") for w in words[1:2] if w.startswith("-") and not w.startswith("--"))
    long = set(words)
    creating = bool({"--create", "--append", "--update", "--concatenate", "--delete"} & long) or any(
        c in letters for c in "cruA"
    )
    extracting = bool({"--extract", "--get"} & long) or "x" in letters
    archive = _archive_of(words)
    if archive is not None and archive != "-":
        (out.writes if creating else out.reads).append(archive)
    if extracting and not any(w in ("-O", "--to-stdout", "--to-command") for w in words):
        out.unknown = "tar writes the files its archive names"
    return out


def _archive_of(words: tuple[str, ...]) -> str | None:
    """The archive ``tar -f FILE`` / ``--file=FILE`` names."""
    for i, word in enumerate(words[1:], start=1):
        if word.startswith("--file="):
            return word.split("=", 1)[1]
        if word == "--file" and i + 1 < len(words):
            return words[i + 1]
        if word.startswith("-") and not word.startswith("--") and "f" in word:
            rest = word[word.index("f") + 1 :]
            if rest:
                return rest
            return words[i + 1] if i + 1 < len(words) else None
    return None


def _positional_writes(name: str, words: tuple[str, ...], out: OptionFiles) -> None:
    """Files a command writes by position: ``zip ARCHIVE``, ``uniq IN OUT``, ``split IN PREFIX``,
    ``xxd IN OUT``, ``script FILE``, ``gzip FILE``, ``unzip`` (into ``-d DIR`` or ``.``)."""
    pos = out.positionals
    if name == "zip" and pos:
        out.writes.append(pos[0])
    elif name in ("uniq", "xxd") and len(pos) >= 2:
        out.writes.append(pos[1])
    elif name == "split":
        prefix = pos[1] if len(pos) >= 2 else "x"
        out.writes.extend([prefix, posixpath.dirname(prefix) or "."])
    elif name == "script":
        out.writes.append(pos[0] if pos else "typescript")
    elif name == "unzip" and not any(w in ("-l", "-t", "-p", "-v", "-Z", "-c") for w in words):
        out.unknown = "unzip writes the files its archive names"
    elif name in COMPRESSORS and not any(
        w in ("-c", "--stdout", "--to-stdout", "-t", "--test", "-l", "--list") for w in words
    ):
        out.writes.extend(pos)
    elif name == "yq" and any(w in ("-i", "--inplace") for w in words):
        out.writes.extend(p for p in pos[1:])


def _git(words: tuple[str, ...]) -> OptionFiles:
    sub, args = git_subcommand(words)
    head = words[1 : git_globals_end(words)]
    base = next((head[i + 1] for i, w in enumerate(head[:-1]) if w == "-C"), "")
    if sub in DIFF_FAMILY or (sub == "stash" and args[:1] == ("show",)):
        out = scan((sub, *args), DIFF)
    elif sub in GIT:
        out = scan((sub, *args), GIT[sub])
    else:
        return OptionFiles()
    pos = out.positionals
    if (sub, *pos[:1]) in (("bundle", "create"), ("worktree", "add")) and len(pos) >= 2:
        out.writes.append(pos[1])
    elif sub == "clone" and pos:
        dest = pos[1] if len(pos) >= 2 else posixpath.basename(pos[0].rstrip("/")).removesuffix(".git")
        out.writes.append(dest or ".")
    elif sub == "init":
        out.writes.append(pos[0] if pos else ".")
    elif sub == "format-patch" and not any(w in ("--stdout",) for w in args):
        if not any(w in ("-o", "--output-directory") or w.startswith("--output-directory=") for w in args):
            out.writes.append(".")
    elif sub == "apply" and not any(w in ("--check", "--stat", "--numstat", "--summary", "--cached")
                                    for w in args):  # fmt: skip
        out.reads.extend(pos)
        out.unknown = "git apply writes the files its patch names"
    elif sub in GIT_RUN_SUBCOMMANDS and GIT_RUN_SUBCOMMANDS[sub] in pos:
        rest = pos[pos.index(GIT_RUN_SUBCOMMANDS[sub]) + 1 :]
        out.runs.append(" ".join(rest) or GIT_RUN_SUBCOMMANDS[sub])
    if base:
        for kind in ("reads", "writes", "maybe_writes"):
            setattr(out, kind, [_under(base, p) for p in getattr(out, kind)])
    return out


def _under(base: str, path: str) -> str:
    return path if path.startswith(("/", "~")) else posixpath.join(base, path)


_SPECIAL: dict[str, Callable[[tuple[str, ...], OptionFiles], None]] = {"curl": _curl, "wget": _wget}


def known(words: tuple[str, ...]) -> bool:
    """True when :func:`option_files` knows the options of the command ``words`` runs."""
    name = command_name(words)
    return name in TABLES or name in COMPRESSORS or name == "git"


def option_files(words: tuple[str, ...]) -> OptionFiles:
    """The files ``words`` (one simple command, or a wrapper's own words) reads, writes or may write
    through its options (and, for a few commands, its positional words); empty for a command whose
    options are not known."""
    name = command_name(words)
    if name == "git":
        return _git(words)
    if name == "tar":
        return _tar(words)
    if name in COMPRESSORS:
        out = scan(words, spec(v="-S --suffix -b --blocksize -T --threads"))
        _positional_writes(name, words, out)
        return out
    table = TABLES.get(name)
    if table is None:
        return OptionFiles()
    if table is TABLES["awk"]:
        out = scan(words, table)
        if not any(w in ("-f", "--file") or w.startswith("--file=") for w in words):
            out.positionals = out.positionals[1:]  # the program
        return out
    out = scan(words, table)
    special = _SPECIAL.get(name)
    if special is not None:
        special(words, out)
    _positional_writes(name, words, out)
    return out
