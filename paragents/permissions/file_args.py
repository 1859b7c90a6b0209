"""The files a well-known command reads and writes, from its words (quotes already removed).

Pure functions: ``file_args`` (cat/grep/sed read; cp/mv/install/rsync/tee/rm/ln/dd/patch/``git
config`` write ...), ``recursive_reads`` (``grep -r``, ``rg``, ``tar c`` read whole directories), and
the commands whose arguments are never read (``echo``, ``cd``) or whose file arguments are known
exactly. The knowledge comes from the GNU coreutils / util-linux / grep / rsync / patch manuals.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from paragents.permissions.known_commands import command_name, git_globals_end, git_subcommand


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
    unknown_writes: str | None = None
    """Why it also writes files only known when it runs (``patch`` without a file), or None."""


_READERS = {
    "cat": frozenset(),
    "less": frozenset(),
    "more": frozenset(),
    "wc": frozenset(),
    "head": frozenset({"-n", "-c", "--lines", "--bytes"}),
    "tail": frozenset({"-n", "-c", "--lines", "--bytes", "-s", "--pid"}),
    "source": frozenset(),
    ".": frozenset(),
}
_GREP_VALUES = frozenset(
    {"-e", "-f", "-m", "-A", "-B", "-C", "-d", "--regexp", "--file", "--max-count", "--directories"}
)
_SED_VALUES = frozenset({"-e", "-f", "-l", "--expression", "--file"})
_CP_VALUES = frozenset({"-t", "--target-directory", "-S", "--suffix"})
_INSTALL_VALUES = frozenset(
    {"-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group"}
)
_RSYNC_VALUES = frozenset(
    {"-e", "--rsh", "-f", "--filter", "--exclude", "--include", "--exclude-from", "--include-from",
     "--files-from", "--password-file", "--log-file", "--backup-dir", "--suffix", "-T", "--temp-dir",
     "--partial-dir", "--chmod", "--chown", "--port", "--address", "--timeout", "-M", "--remote-option"}
)  # fmt: skip
_PATCH_VALUES = frozenset(
    {"-p", "-d", "--directory", "-D", "-F", "-i", "--input", "-o", "--output", "-r", "--reject-file",
     "-V", "-B", "--prefix", "-Y", "-z", "--suffix", "-g"}
)  # fmt: skip
_WRITER_VALUES = {
    "rm": frozenset(),
    "touch": frozenset({"-r", "-d", "-t", "--reference", "--date"}),
    "mkdir": frozenset({"-m", "--mode"}),
    "truncate": frozenset({"-s", "-r", "--size", "--reference"}),
    "tee": frozenset(),
    "shred": frozenset({"-n", "--iterations", "-s", "--size", "--random-source"}),
}


def _into(dest: str, sources: list[str], directory: bool) -> list[str]:
    """The paths a copy/move of ``sources`` to ``dest`` writes: ``dest`` itself and, when it is (or may
    be) a directory, ``dest/<name of each source>`` (``mv x /etc/`` writes ``/etc/x``)."""
    out = [] if directory and dest.endswith("/") else [dest]
    if directory or len(sources) == 1:
        for src in sources:
            name = posixpath.basename(src.rstrip("/"))
            if name and name not in (".", ".."):
                out.append(posixpath.join(dest, name))
    return out


def _local(path: str) -> bool:
    """False for rsync/scp remote paths (``host:path``, ``user@host:path``)."""
    head = path.split("/", 1)[0]
    return ":" not in head


_TREE_WRITERS = frozenset(
    {
        "checkout",
        "switch",
        "restore",
        "clean",
        "stash",
        "merge",
        "rebase",
        "pull",
        "cherry-pick",
        "revert",
        "am",
    }
)
"""git subcommands that rewrite files of the working tree (``reset`` only with --hard/--merge/--keep)."""
_STASH_READS = frozenset({"list", "show", "create"})


def git_tree_write(words: tuple[str, ...]) -> str | None:
    """The working tree ``git ...`` rewrites (``-C DIR``/``--work-tree DIR`` as spelled, else ``.``;
    the conflict checker reserves the repository holding it), or None when it changes no files:
    checkout, switch, restore, clean, stash (not list/show), reset --hard/--merge/--keep, merge,
    rebase, pull, cherry-pick, revert, am."""
    sub, args = git_subcommand(words)
    if sub == "reset":
        writes = any(a in ("--hard", "--merge", "--keep") for a in args)
    elif sub == "stash":
        writes = not (args[:1] and args[0] in _STASH_READS)
    else:
        writes = sub in _TREE_WRITERS
    return git_work_tree(words) if writes else None


def git_work_tree(words: tuple[str, ...]) -> str:
    """The working tree of ``git [-C DIR | --work-tree DIR] ...`` as spelled (``.`` without one)."""
    head = words[1 : git_globals_end(words)]
    tree = "."
    for i, word in enumerate(head):
        if word in ("-C", "--work-tree") and i + 1 < len(head):
            tree = head[i + 1] if word == "--work-tree" or tree == "." else posixpath.join(tree, head[i + 1])
        elif word.startswith("--work-tree="):
            tree = word.split("=", 1)[1]
    return tree


def _git_pathspec_writes(words: tuple[str, ...]) -> tuple[str, ...]:
    """The files ``git checkout [TREEISH] -- PATHS`` / ``git restore PATHS`` overwrite (as spelled,
    relative to ``-C DIR``)."""
    sub, args = git_subcommand(words)
    if sub not in ("checkout", "restore"):
        return ()
    if "--" in args:
        paths = list(args[args.index("--") + 1 :])
    elif sub == "restore":
        paths, _ = _split_options(("restore", *args), frozenset({"-s", "--source"}))
    else:
        return ()
    if sub == "restore" and "--staged" in args and not ({"--worktree", "-W"} & set(args)):
        return ()
    head = words[1 : git_globals_end(words)]
    base = next((head[i + 1] for i, w in enumerate(head[:-1]) if w == "-C"), "")
    return tuple(posixpath.join(base, p) if base else p for p in paths)


def _git_config_writes(words: tuple[str, ...]) -> tuple[str, ...]:
    """The files ``git [-C DIR] config ...`` changes (none when it only reads)."""
    sub, args = git_subcommand(words)
    if sub != "config":
        return ()
    pos, opts = _split_options(
        ("config", *args), frozenset({"-f", "--file", "--blob", "--type", "--default"})
    )
    verbs = {"set", "unset", "rename-section", "remove-section", "edit", "replace-all"}
    writing = bool(
        {"--add", "--unset", "--unset-all", "--replace-all", "--rename-section", "--remove-section", "-e",
         "--edit"} & set(opts)
    ) or (pos[:1] and pos[0] in verbs) or (len(pos) >= 2 and not ({"--get", "--get-all", "--get-regexp",
         "-l", "--list", "--get-urlmatch", "--get-color", "--get-colorbool"} & set(opts)))  # fmt: skip
    if not writing:
        return ()
    head = words[1 : git_globals_end(words)]
    base = next((head[i + 1] for i, w in enumerate(head[:-1]) if w == "-C"), "")
    if "-f" in opts or "--file" in opts:
        return (opts.get("-f") or opts.get("--file") or "",)
    if "--global" in opts:
        return ("~/.gitconfig",)
    if "--system" in opts:
        return ("/etc/gitconfig",)
    name = ".git/config.worktree" if "--worktree" in opts else ".git/config"
    return (posixpath.join(base, name) if base else name,)


def file_args(words: tuple[str, ...]) -> FileArgs:
    """Return the files ``words`` (one unwrapped simple command) reads and writes.

    Readers: cat, head, tail, grep, sed, less, more, wc, source/``.`` (and the sources of cp, install,
    rsync). Writers: output of tee, cp/mv/install/rsync destination (and ``DEST/<source name>``: the
    destination may be a directory; mv sources too: they disappear), rm, shred, touch, mkdir, sed -i,
    truncate, chmod/chown (after the mode/owner), ln (the link and what it links to: a write through
    the link reaches it), dd ``of=``, ``patch`` (its file, ``-o``; without one the files named in the
    patch, only known when it runs), ``git config`` (the config file it sets). ``-`` (stdin/stdout)
    is skipped."""
    name = command_name(words)

    def keep(items: list[str]) -> tuple[str, ...]:
        return tuple(w for w in items if w != "-" and w)

    if name in _READERS:
        pos, _ = _split_options(words, _READERS[name])
        return FileArgs(reads=keep(pos[:1] if name in ("source", ".") else pos))
    if name == "grep":
        pos, opts = _split_options(words, _GREP_VALUES)
        has_pattern = any(k in opts for k in ("-e", "-f", "--regexp", "--file"))
        return FileArgs(reads=keep(pos if has_pattern else pos[1:]))
    if name == "sed":
        pos, opts = _split_options(words, _SED_VALUES)
        files = keep(pos if any(k in opts for k in ("-e", "-f", "--expression", "--file")) else pos[1:])
        in_place = any(k == "--in-place" or (k.startswith("-i") and not k.startswith("--")) for k in opts)
        return FileArgs(writes=files) if in_place else FileArgs(reads=files)
    if name in ("cp", "mv", "install"):
        pos, opts = _split_options(words, _INSTALL_VALUES if name == "install" else _CP_VALUES)
        target = opts.get("-t") or opts.get("--target-directory")
        if name == "install" and ("-d" in opts or "--directory" in opts):
            return FileArgs(writes=keep(pos))
        sources = pos if target else pos[:-1]
        dest = (
            _into(target, sources, True)
            if target
            else (_into(pos[-1], sources, len(sources) > 1) if pos else [])
        )
        if name == "mv":
            return FileArgs(writes=keep(sources + dest))
        return FileArgs(reads=keep(sources), writes=keep(dest))
    if name == "rsync":
        pos, opts = _split_options(words, _RSYNC_VALUES)
        sources = [p for p in pos[:-1] if _local(p)]
        dest = _into(pos[-1], sources, True) if pos and _local(pos[-1]) and len(pos) > 1 else []
        logs = [opts[k] for k in ("--log-file",) if opts.get(k)]
        deletes = any(k.startswith("--remove-source") for k in opts)
        return FileArgs(reads=keep(sources), writes=keep(dest + logs + (sources if deletes else [])))
    if name == "patch":
        pos, opts = _split_options(words, _PATCH_VALUES)
        out = opts.get("-o") or opts.get("--output")
        reads = [p for p in (opts.get("-i"), opts.get("--input"), *pos[1:2]) if p]
        if out:
            return FileArgs(reads=keep(reads + pos[:1]), writes=keep([out]))
        if pos:
            return FileArgs(reads=keep(reads), writes=keep(pos[:1]))
        return FileArgs(reads=keep(reads), unknown_writes="patch writes the files its patch names")
    if name in _WRITER_VALUES:
        pos, _ = _split_options(words, _WRITER_VALUES[name])
        return FileArgs(writes=keep(pos))
    if name in ("chmod", "chown", "chgrp"):
        pos, opts = _split_options(words, frozenset())
        return FileArgs(writes=keep(pos if "--reference" in opts else pos[1:]))
    if name == "ln":
        pos, opts = _split_options(words, _LN_VALUES)
        symbolic = any(k in ("--symbolic",) or (k.startswith("-") and not k.startswith("--") and "s" in k)
                       for k in opts)  # fmt: skip
        target = opts.get("-t") or opts.get("--target-directory")
        if target:
            links, pointed = _into(target, pos, True), pos
        elif len(pos) == 1:
            links, pointed = [pos[0].rstrip("/").rsplit("/", 1)[-1]], pos
        else:
            links, pointed = _into(pos[-1], pos[:-1], len(pos) > 2), pos[:-1]
        if symbolic:  # a relative symlink target is relative to the link's directory
            base = posixpath.dirname(links[0]) if links and len(pointed) == 1 else ""
            pointed = [
                p if p.startswith(("/", "~")) or not base else posixpath.join(base, p) for p in pointed
            ]
        return FileArgs(writes=keep(links + pointed))
    if name == "dd":
        return FileArgs(
            reads=tuple(w[3:] for w in words[1:] if w.startswith("if=")),
            writes=tuple(w[3:] for w in words[1:] if w.startswith("of=")),
        )
    if name == "git":
        return FileArgs(writes=_git_config_writes(words) + _git_pathspec_writes(words))
    return FileArgs()


NON_READERS = frozenset(
    {"echo", "printf", "cd", "pushd", "popd", "test", "[", "[[", "export", "local", "declare", "typeset",
     "readonly", "set", "unset", "true", "false", ":", "exit", "return", "shift", "sleep", "kill", "wait",
     "mkdir", "ls", "read", "type", "which", "command", "hash", "alias", "unalias"}
)  # fmt: skip
"""Commands that never read the contents of the files their arguments name (their arguments are
not checked against Read deny rules)."""

PRECISE_FILE_COMMANDS = frozenset(
    {"cat", "less", "more", "wc", "head", "tail", "source", ".", "grep", "sed", "cp", "mv", "install",
     "rsync", "patch", "rm", "touch", "mkdir", "truncate", "tee", "shred", "chmod", "chown", "chgrp",
     "ln", "dd"}
)  # fmt: skip
"""Commands whose file arguments :func:`file_args` knows exactly (a grep pattern is not a path):
only those are checked, not every argument."""

_LN_VALUES = frozenset({"-t", "--target-directory", "-S", "--suffix"})
_VALUE_OPTIONS: dict[str, frozenset[str]] = {
    **_READERS, **_WRITER_VALUES, "grep": _GREP_VALUES, "sed": _SED_VALUES, "cp": _CP_VALUES,
    "mv": _CP_VALUES, "install": _INSTALL_VALUES, "rsync": _RSYNC_VALUES, "patch": _PATCH_VALUES,
    "ln": _LN_VALUES,
}  # fmt: skip
_PATTERN_OPTIONS = frozenset({"-e", "--regexp", "--expression"})
"""Options whose value is a grep pattern or a sed script, not a path."""


def option_values(words: tuple[str, ...]) -> tuple[str, ...]:
    """The option values of a command of :data:`PRECISE_FILE_COMMANDS` (``grep -f FILE``, ``sed
    --file=FILE``, ``rsync --files-from FILE``, ``shred --random-source=FILE``, ``-fFILE``): they are
    checked against Read deny rules like every other command's arguments (patterns given with
    ``-e``/``--regexp``/``--expression`` are not paths)."""
    name = command_name(words)
    if name not in PRECISE_FILE_COMMANDS:
        return ()
    takes_value = _VALUE_OPTIONS.get(name, frozenset())
    out: list[str] = []
    for i, word in enumerate(words[1:], start=1):
        if word == "--":
            break
        if word.startswith("--") and "=" in word:
            key, _, value = word.partition("=")
        elif word in takes_value and i + 1 < len(words):
            key, value = word, words[i + 1]
        elif not word.startswith("--") and word[:2] in takes_value and len(word) > 2:
            key, value = word[:2], word[2:]
        else:
            continue
        if key not in _PATTERN_OPTIONS and value:
            out.append(value)
    return tuple(out)


_GREPS = frozenset({"grep", "egrep", "fgrep", "zgrep"})
_RECURSIVE_VALUES = {
    "cp": _CP_VALUES,
    "rsync": _RSYNC_VALUES,
    "scp": frozenset({"-i", "-F", "-P", "-o", "-c", "-l", "-S", "-J"}),
    "zip": frozenset({"-x", "-i", "-b", "-n", "-P", "-O", "-t", "-tt"}),
    "diff": frozenset(
        {"-x", "--exclude", "-X", "--exclude-from", "-I", "--ignore-matching-lines", "-S", "--starting-file",
         "-F", "--show-function-line", "-L", "--label"}
    ),
}  # fmt: skip
"""Options of the recursive copiers and diff that take a separate value (``cp -x`` does not)."""
_SEARCHERS = frozenset({"rg", "ag", "ack", "ack-grep", "ugrep", "pt", "sift"})
_SEARCH_VALUES = frozenset(
    {"-e", "-f", "-g", "--glob", "-t", "--type", "-T", "--type-not", "-m", "--max-count", "-A", "-B", "-C",
     "-j", "--threads", "-M", "--max-columns", "-r", "--replace", "-E", "--encoding", "--iglob",
     "--max-depth", "-d", "--ignore-file", "--pre", "--sort", "--sortr", "--context", "--regexp", "--file"}
)  # fmt: skip


def recursive_reads(words: tuple[str, ...]) -> tuple[str, ...]:
    """The directories ``words`` reads every file below: ``grep -r`` (default ``.``), ``rg``/``ag``/
    ``ack`` (default ``.``), ``git grep`` (``.``), ``tar c``, ``zip -r``, ``cp -r``/``-a``, ``rsync
    -r``/``-a``, ``scp -r``, ``diff -r``. Paths as spelled; () for anything else."""
    name = command_name(words)
    if name in _GREPS:
        pos, opts = _split_options(words, _GREP_VALUES)
        recursive = (
            any(
                k in ("--recursive", "--dereference-recursive", "--directories")
                or (k.startswith("-") and not k.startswith("--") and ("r" in k or "R" in k))
                for k in opts
            )
            or opts.get("-d") == "recurse"
        )
        if not recursive:
            return ()
        has_pattern = any(k in opts for k in ("-e", "-f", "--regexp", "--file"))
        files = pos if has_pattern else pos[1:]
        return tuple(files) or (".",)
    if name in _SEARCHERS:
        pos, opts = _split_options(words, _SEARCH_VALUES)
        has_pattern = any(k in opts for k in ("-e", "-f", "--regexp", "--file")) or "--files" in opts
        files = pos if has_pattern else pos[1:]
        return tuple(files) or (".",)
    if name == "git":
        sub, _ = git_subcommand(words)
        return (git_work_tree(words),) if sub == "grep" else ()
    if name in ("tar", "bsdtar"):
        return _tar_reads(words)
    flags = {"zip": "r", "cp": "rRa", "rsync": "ra", "scp": "r", "diff": "r"}.get(name)
    if flags is None:
        return ()
    pos, opts = _split_options(words, _RECURSIVE_VALUES[name])
    recursive = any(
        k in ("--recursive", "--archive")
        or (k.startswith("-") and not k.startswith("--") and any(f in k for f in flags))
        for k in opts
    )
    if not recursive:
        return ()
    if name == "zip":
        return tuple(pos[1:])
    if name in ("cp", "rsync", "scp"):
        into = "-t" in opts or "--target-directory" in opts  # cp -t DIR SRC...: every operand is read
        return tuple(p for p in (pos if into else pos[:-1]) if _local(p))
    return tuple(pos)


_TAR_VALUES = frozenset({"-f", "--file", "-C", "--directory", "-T", "--files-from", "--exclude", "-X"})


def _tar_reads(words: tuple[str, ...]) -> tuple[str, ...]:
    """What ``tar`` reads whole when it creates, appends to or updates an archive (``tar czf x src``,
    ``tar --exclude=.git -cf x .``, ``tar -rf x.tar d``): its file operands and ``-C`` directories."""
    mode = words[1] if len(words) > 1 else ""
    clusters = [w[1:] for w in words[1:] if w.startswith("-") and not w.startswith("--")]
    if not mode.startswith("-"):
        clusters.append(mode)  # the old style: tar czf ...
    long_modes = ("--create", "--append", "--update")
    if not (any(w in long_modes for w in words) or any(set("cru") & set(c) for c in clusters)):
        return ()
    pos, _ = _split_options(words, _TAR_VALUES)
    dirs = [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-C", "--directory")]
    dirs += [w.split("=", 1)[1] for w in words if w.startswith("--directory=")]
    return tuple(p for p in pos if p != mode) + tuple(dirs)
