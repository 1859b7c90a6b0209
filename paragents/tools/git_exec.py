"""The one hardened way paragents runs ``git`` on a tree a session can write.

A session's commands may change files git reads (``.git/config``, ``.gitattributes``, a worktree's
``.git`` file...), and git runs programs named in its config: hooks, ``core.fsmonitor``, filters,
diff and merge drivers, pagers, editors, credential helpers, ssh and gpg programs. Every git process
paragents starts goes through :func:`run_git` / :func:`run_git_sync`, which:

1. read the config git would see (``git config --list --show-scope``: reading config runs nothing)
   and turn every key that names a program (:data:`PROGRAM_KEYS`, with any subsection: a filter,
   diff or merge driver of any name, ``credential.<url>.helper``, ``protocol.<name>.allow``...)
   into a harmless value (:mod:`paragents.tools.git_config`), passed as ``GIT_CONFIG_COUNT``/
   ``KEY``/``VALUE`` (the highest-priority config, inherited by every git process git starts
   itself); commands that run no driver (:data:`LIST_FREE`: ``rev-parse``, ``log``...) skip this;
2. add :data:`INTERNAL_CONFIG` (hooks off: ``core.hooksPath=/dev/null``; ``core.fsmonitor=false``;
   no transport but local paths and bundle files: ``protocol.allow=never``,
   ``protocol.file.allow=always``; no signing; no submodule recursion...) and the environment of
   :func:`git_env`: no system or global config file (``GIT_CONFIG_NOSYSTEM``,
   ``GIT_CONFIG_GLOBAL=/dev/null``; the user's identity, excludes file, line-ending settings and
   ``safe.directory`` entries are passed on explicitly), no system attributes, no pager, editor,
   askpass, proxy or ssh program, and only harmless variables of the user's environment (no
   paragents secret, no ``GIT_DIR``-style redirection);
3. run ``git --no-pager`` with ``--no-ext-diff --no-textconv`` for the diff family and
   ``--ignore-submodules=dirty`` for commands that would start a git process in each submodule
   (whose own config the first step did not read).

``user=True`` is for what the user asks paragents to do with their credentials (``git push`` for a
pull request): the user's global and system config stay (credential helpers, ``core.sshCommand``,
hooks path...), and so do ``SSH_AUTH_SOCK``, but a program key set by the repository's own config
(scopes ``local``/``worktree``) is replaced by the global value, or a harmless one; a repository
``credential.*.helper`` is refused (:class:`GitConfigRefused`).

Nothing here imports Textual; the sync variant blocks (call it in a thread).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from paragents.tools.env import command_env, has_credentials
from paragents.tools.git_config import (
    ConfigEntry,
    GitConfigRefused,
    internal_overrides,
    parse_config_list,
    user_overrides,
)

__all__ = ["GitConfigRefused", "GitRun", "git_env", "run_git", "run_git_sync", "user_program_env"]

GIT_ENV_NAMES = (
    "PATH", "HOME", "USER", "LOGNAME", "TZ", "TMPDIR", "XDG_CONFIG_HOME", "EMAIL",
    "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
)  # fmt: skip
"""The user's variables an internal git command gets (its identity, but no other ``GIT_*``)."""

FIXED_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_EDITOR": ":",
    "GIT_SEQUENCE_EDITOR": ":",
    "GIT_ASKPASS": "",
    "SSH_ASKPASS": "",
    "GIT_PROXY_COMMAND": "",
    "GIT_SSH_COMMAND": "false",
    "GIT_EXTERNAL_DIFF": "",
    "LC_ALL": "C",
}
"""The environment an internal git command runs with (see the module docstring)."""

DIFF_FAMILY = frozenset({"diff", "log", "show", "whatchanged", "format-patch", "diff-tree", "diff-index",
                         "diff-files", "range-diff", "stash"})  # fmt: skip
"""Subcommands that get ``--no-ext-diff --no-textconv`` (``stash`` only with ``show``)."""
SUBMODULE_SCANNERS = frozenset({"status", "diff", "diff-index", "diff-files"})
"""Subcommands that get ``--ignore-submodules=dirty`` (else they start git in every submodule)."""


@dataclass(frozen=True)
class GitRun:
    """A finished git process: exit code, stdout and stderr (bytes)."""

    code: int
    out: bytes
    err: bytes


def _base_env(base: Mapping[str, str] | None) -> dict[str, str]:
    source = os.environ if base is None else base
    return {k: v for k in GIT_ENV_NAMES if (v := source.get(k)) is not None and not has_credentials(v)}


def git_env(
    base: Mapping[str, str] | None = None, overrides: Sequence[tuple[str, str]] = ()
) -> dict[str, str]:
    """The environment of an internal git command: :data:`GIT_ENV_NAMES` of ``base`` (default
    ``os.environ``), :data:`FIXED_ENV`, and ``overrides`` as ``GIT_CONFIG_COUNT``/``KEY_n``/``VALUE_n``."""
    env = _base_env(base)
    env.update(FIXED_ENV)
    env.update(config_env(overrides))
    return env


def config_env(pairs: Sequence[tuple[str, str]]) -> dict[str, str]:
    """``pairs`` as git's ``GIT_CONFIG_COUNT`` / ``GIT_CONFIG_KEY_n`` / ``GIT_CONFIG_VALUE_n``."""
    env = {"GIT_CONFIG_COUNT": str(len(pairs))}
    for i, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env


def command_argv(args: Sequence[str]) -> list[str]:
    """``git --no-pager args...`` with the safety flags of :data:`DIFF_FAMILY` and
    :data:`SUBMODULE_SCANNERS` inserted after the subcommand."""
    args = list(args)
    if not args or args[0].startswith("-"):
        return ["git", "--no-pager", *args]
    sub, rest = args[0], args[1:]
    flags: list[str] = []
    if sub in DIFF_FAMILY and (sub != "stash" or rest[:1] == ["show"]):
        flags += ["--no-ext-diff", "--no-textconv"]
    if sub in SUBMODULE_SCANNERS and not any(a.startswith("--ignore-submodules") for a in rest):
        flags.append("--ignore-submodules=dirty")
    if sub == "stash" and flags:
        return ["git", "--no-pager", "stash", "show", *flags, *rest[1:]]
    return ["git", "--no-pager", sub, *flags, *rest]


LIST_FREE = frozenset({
    "rev-parse", "show-ref", "rev-list", "symbolic-ref", "check-ref-format", "for-each-ref", "merge-base",
    "ls-tree", "update-ref", "remote", "bundle", "diff-tree", "log", "cherry", "--version",
})  # fmt: skip
"""Subcommands that run no filter, diff or merge driver (with the flags :func:`command_argv`
adds), so they need no listing of the repository's config: they get :data:`INTERNAL_CONFIG` and the
user's ``safe.directory`` entries only. ``worktree list|prune`` and ``branch -d|-D`` too."""

_LIST_ARGS = ("git", "--no-pager", "config", "-z", "--list", "--show-scope", "--includes")
_OUTER_FILES = ("/etc/gitconfig", "~/.gitconfig", "$XDG_CONFIG_HOME/git/config", "~/.config/git/config")
_outer_cache: dict[tuple[object, ...], list[ConfigEntry]] = {}


def needs_listing(args: Sequence[str]) -> bool:
    """False for commands in :data:`LIST_FREE` (and ``worktree list|prune``, ``branch -d|-D``)."""
    if not args:
        return False
    sub = args[0]
    if sub == "worktree":
        return args[1:2] not in (["list"], ["prune"])
    if sub == "branch":
        return not any(a in ("-d", "-D", "--delete") for a in args[1:])
    if sub == "cat-file":
        return any(a in ("--textconv", "--filters") for a in args[1:])
    return sub not in LIST_FREE


def _list_env(base: Mapping[str, str] | None, extra: Mapping[str, str] | None) -> dict[str, str]:
    """The environment of the config listing: like :func:`git_env` but reading the global and
    system config (reading runs nothing) and keeping a caller's ``GIT_DIR``-style pins."""
    env = git_env(base)
    env.pop("GIT_CONFIG_COUNT")
    for name in ("GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL"):
        env.pop(name)
    env.update(
        {k: v for k, v in (extra or {}).items() if k in ("GIT_DIR", "GIT_COMMON_DIR", "GIT_WORK_TREE")}
    )
    return env


def _outer_key(env: Mapping[str, str]) -> tuple[object, ...]:
    key: list[object] = [env.get("HOME"), env.get("XDG_CONFIG_HOME")]
    for name in _OUTER_FILES:
        path = os.path.expanduser(name.replace("$XDG_CONFIG_HOME", env.get("XDG_CONFIG_HOME") or "~/.config"))
        try:
            st = os.stat(path)
            key.append((path, st.st_ino, st.st_size, st.st_mtime_ns))
        except OSError:
            key.append((path, None))
    return tuple(key)


def outer_entries(base: Mapping[str, str] | None) -> list[ConfigEntry]:
    """The user's global and system config (cached while those files are unchanged)."""
    env = _list_env(base, None)
    key = _outer_key(env)
    if key not in _outer_cache:
        entries: list[ConfigEntry] = []
        for scope in ("--system", "--global"):
            done = subprocess.run(
                [*_LIST_ARGS, scope], cwd="/", env=env, capture_output=True, stdin=subprocess.DEVNULL,
                timeout=10, check=False,
            )  # fmt: skip
            if done.returncode == 0:
                entries += parse_config_list(done.stdout)
        _outer_cache.clear()
        _outer_cache[key] = entries
    return _outer_cache[key]


def _final_env(
    entries: list[ConfigEntry],
    base: Mapping[str, str] | None,
    extra: Mapping[str, str] | None,
    user: bool,
    allow: Iterable[str],
) -> dict[str, str]:
    if user:
        env = command_env(base, allow=("SSH_AUTH_SOCK", "GIT_SSH_COMMAND", "GIT_SSH", *allow))
        env.update({"GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "GIT_EDITOR": ":", "LC_ALL": "C"})
        env.update(config_env(user_overrides(entries)))
    else:
        env = git_env(base, internal_overrides(entries))
    env.update(extra or {})
    return env


def _unread(listing: GitRun) -> GitRun:
    """The result when the config could not be read: the command is not run (git would read the
    same config), and the reason says so."""
    why = listing.err.decode("utf-8", "replace").strip() or f"exit {listing.code}"
    return GitRun(listing.code or 1, b"", f"cannot read the git config (not run): {why}".encode())


async def _exec(argv: list[str], cwd: Path, env: dict[str, str], stdin: bytes | None) -> GitRun:
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=str(cwd),
        env=env,
        stdin=asyncio.subprocess.DEVNULL if stdin is None else asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate(stdin)
    return GitRun(proc.returncode or 0, out, err)


def _exec_sync(argv: list[str], cwd: Path, env: dict[str, str], timeout: float | None) -> GitRun:
    done = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False
    )
    return GitRun(done.returncode, done.stdout, done.stderr)


async def _entries(
    args: Sequence[str], cwd: Path, base: Mapping[str, str] | None, env: Mapping[str, str] | None, user: bool
) -> list[ConfigEntry] | GitRun:
    if not user and not needs_listing(args):
        return await asyncio.to_thread(outer_entries, base)
    listing = await _exec(list(_LIST_ARGS), cwd, _list_env(base, env), None)
    return parse_config_list(listing.out) if listing.code == 0 else _unread(listing)


async def run_git(
    args: Sequence[str | Path],
    cwd: Path,
    *,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    user: bool = False,
    allow_env: Iterable[str] = (),
    base_env: Mapping[str, str] | None = None,
) -> GitRun:
    """Run ``git args...`` in ``cwd`` hardened (see the module docstring) and return its result.

    ``env``: variables set last (``GIT_INDEX_FILE``, an identity, ``GIT_DIR`` pins...). ``user``:
    a command the user asked for (keeps their global config, refuses a repository credential
    helper). ``allow_env``: more of the user's variables to pass with ``user`` (e.g. ``GH_*``).
    ``base_env``: the user's environment (default ``os.environ``). Raises OSError when git cannot
    start and GitConfigRefused (only with ``user``). When the config cannot be read nothing runs and
    the result says why."""
    text = [str(a) for a in args]
    entries = await _entries(text, cwd, base_env, env, user)
    if isinstance(entries, GitRun):
        return entries
    return await _exec(command_argv(text), cwd, _final_env(entries, base_env, env, user, allow_env), stdin)


async def user_program_env(
    cwd: Path,
    *,
    env: Mapping[str, str] | None = None,
    allow_env: Iterable[str] = (),
    base_env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment of a program the user asked for that runs git itself in ``cwd`` (``gh``):
    the user's allowed variables plus ``allow_env``, with the ``user=True`` config overrides, so
    the git it starts is hardened too. Raises GitConfigRefused like :func:`run_git`."""
    listing = await _exec(list(_LIST_ARGS), cwd, _list_env(base_env, env), None)
    entries = parse_config_list(listing.out) if listing.code == 0 else []
    return _final_env(entries, base_env, env, True, allow_env)


def run_git_sync(
    args: Sequence[str | Path],
    cwd: Path,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    base_env: Mapping[str, str] | None = None,
) -> GitRun:
    """:func:`run_git` for blocking callers (internal commands only). Raises OSError when git
    cannot start and subprocess.TimeoutExpired after ``timeout`` seconds."""
    text = [str(a) for a in args]
    if needs_listing(text):
        listing = _exec_sync(list(_LIST_ARGS), cwd, _list_env(base_env, env), timeout)
        if listing.code != 0:
            return _unread(listing)
        entries = parse_config_list(listing.out)
    else:
        entries = outer_entries(base_env)
    return _exec_sync(command_argv(text), cwd, _final_env(entries, base_env, env, False, ()), timeout)
