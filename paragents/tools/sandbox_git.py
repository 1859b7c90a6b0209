"""Which git files a sandboxed command may write: its own git state, never what host-side git runs.

paragents runs git on the host after commands (the loop guard's ``git status``, lane status,
prediction, merge...), hardened (paragents.tools.git_exec), and the sandbox keeps the files that
decide what host git does read-only as a second wall. :func:`git_state` looks at the git directory
of a writable root (the nearest ``.git`` at or above it) and returns what to bind:

- a plain repository (``.git`` is a directory): the git directory is writable (index, objects,
  refs, logs: ``git add``/``commit`` work) except ``config``, ``config.worktree``, ``hooks/``,
  ``info/`` (attributes, excludes, grafts), ``modules/`` (submodules' git dirs), ``worktrees/``
  (other worktrees' pointers) and, when they exist, the files that redirect or reshape what git
  reads (:data:`REDIRECTS`: ``objects/info/alternates``, ``shallow``, legacy ``remotes/`` and
  ``branches/``), bound read-only; the ``.git`` directory is a mount point, so it cannot be renamed
  away and replaced by a fresh ``git init``. Such a file a command *creates* (a ``commondir``...)
  cannot be bound before it exists: paragents.tools.sandbox_watch quarantines it after the command;
- a linked worktree such as a lane (``.git`` is a file ``gitdir: <common>/worktrees/<id>``): the
  ``.git`` file is read-only; writable are the worktree's own directory (``index``, ``logs``)
  minus its ``HEAD`` (commits move the branch, never HEAD: no ``git checkout`` of another branch, no
  detached HEAD, so a lane cannot point paragents' host-side commit at ``main``), ``commondir``,
  ``gitdir`` and ``config.worktree`` files, and the directory of its branch's ref and reflog
  (``refs/heads/paragents/``) with every other branch there bound read-only. The common
  ``objects/`` is **not** writable: the command gets a private object store
  (paragents.tools.git_objects) bound over it, with the real one visible read-only as its
  alternate, so it can read all history and add objects but never replace one; paragents imports
  the new objects after the command through a verifying path. The rest of the common dir (config,
  hooks, info, packed-refs, other refs) stays read-only. A worktree whose files do not point at each
  other is given nothing writable;
- a ``.git`` file pointing at a full git directory (a submodule): like a plain repository.

:attr:`GitState.visible` lists what must stay readable when the user's home is hidden (the git
directory, the common directory, the work tree's top): bound read-only before anything else. A git
directory is never made writable when it holds, or lies in, a hidden path.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from paragents import treefiles
from paragents.tools.git_objects import SHARED, prepare_store
from paragents.tools.sandbox_hide import is_under

REDIRECTS = (
    "objects/info/alternates", "objects/info/http-alternates", "shallow", "remotes", "branches", "gitdir",
)  # fmt: skip
"""Files of a git directory that send git elsewhere or change the history it sees (other object
stores, cut history, legacy remote definitions)."""
PROTECTED = ("config", "config.worktree", "hooks", "info", "modules", "worktrees", "commondir", *REDIRECTS)
"""Entries of a writable git directory bound read-only (when they exist)."""
WORKTREE_PROTECTED = ("HEAD", "commondir", "gitdir", "config.worktree", "config", "info", "hooks", "objects")
"""Entries of a linked worktree's own git directory bound read-only (when they exist)."""
CREATED = ("hooks", "info")
"""Entries created (empty) when missing, so they can be bound read-only."""
_REF = re.compile(r"^refs/heads/[A-Za-z0-9._/-]+$")


@dataclass
class GitState:
    """Paths to bind: ``writable`` (read-write, after the root) then ``readonly`` (over themselves)."""

    writable: list[str] = field(default_factory=list)
    readonly: list[str] = field(default_factory=list)
    note: str | None = None
    visible: list[str] = field(default_factory=list)
    """Bound read-only first (the user's home may be hidden): git dir, common dir, work tree top."""
    objects: tuple[str, str, str] | None = None
    """(private store, the common ``objects/`` it is bound over, where the real one is seen
    read-only): a linked worktree's own object store."""


def _read(path: str) -> str:
    """The first 4096 bytes of a git pointer file as text; a regular file only (a command can make
    ``.git`` a FIFO in a folder it creates, which would block the host here: paragents.treefiles)."""
    return treefiles.read_head(path, 4096).decode("utf-8").strip()


def _is_gitdir(path: str) -> bool:
    return (
        os.path.isfile(os.path.join(path, "HEAD"))
        and os.path.isdir(os.path.join(path, "objects"))
        and os.path.isdir(os.path.join(path, "refs"))
    )


def find_dotgit(root: str) -> str | None:
    """The nearest ``.git`` at or above ``root`` (None when there is none)."""
    here = root
    while True:
        candidate = os.path.join(here, ".git")
        if os.path.lexists(candidate):
            return candidate
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _safe(path: str, hidden: Sequence[str]) -> bool:
    """A git directory may be made writable: not a hidden path, not inside one, holding none."""
    return not is_under(path, hidden) and not any(is_under(h, [path]) for h in hidden) and path != "/"


def _plain(gitdir: str, state: GitState, hidden: Sequence[str]) -> GitState:
    if not _is_gitdir(gitdir) or os.path.exists(os.path.join(gitdir, "commondir")):
        state.note = f"{gitdir} is not a plain git directory: it stays read-only"
        return state
    if not _safe(gitdir, hidden):
        state.note = f"{gitdir} holds or lies in a hidden path: it stays read-only"
        return state
    for name in CREATED:
        with contextlib.suppress(OSError):
            os.makedirs(os.path.join(gitdir, name), exist_ok=True)
    state.visible.append(gitdir)
    state.writable.append(gitdir)
    state.readonly += [p for n in PROTECTED if os.path.lexists(p := os.path.join(gitdir, n))]
    return state


def _ref_dirs(common: str, gitdir: str) -> tuple[list[str], list[str]]:
    """(writable dirs of the worktree branch's ref and reflog, other entries there to keep read-only)."""
    try:
        head = _read(os.path.join(gitdir, "HEAD"))
    except (OSError, UnicodeDecodeError):
        return [], []
    if not head.startswith("ref: "):
        return [], []  # detached: commits move HEAD only
    ref = head[5:].strip()
    if not _REF.match(ref) or ".." in ref or "//" in ref:
        return [], []
    sub, _, name = ref.rpartition("/")
    writable, readonly = [], []
    for top in (common, os.path.join(common, "logs")):
        folder = os.path.join(top, sub)
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError:
            return [], []
        if os.path.realpath(folder) != folder or os.path.islink(folder):
            return [], []
        writable.append(folder)
        with contextlib.suppress(OSError):
            readonly += [os.path.join(folder, e) for e in sorted(os.listdir(folder)) if e != name]
    return writable, readonly


def _worktree(dotgit: str, gitdir: str, state: GitState, hidden: Sequence[str]) -> GitState:
    try:
        common = os.path.realpath(os.path.join(gitdir, _read(os.path.join(gitdir, "commondir"))))
        back = os.path.realpath(os.path.join(gitdir, _read(os.path.join(gitdir, "gitdir"))))
    except (OSError, UnicodeDecodeError):
        state.note = f"{gitdir} lacks its commondir or gitdir file: the git state stays read-only"
        return state
    parent = os.path.dirname(gitdir)
    if (
        os.path.basename(parent) != "worktrees"
        or os.path.dirname(parent) != common
        or back != os.path.realpath(dotgit)
        or not _is_gitdir(common)
    ):
        state.note = f"{dotgit} and {gitdir} do not point at each other: the git state stays read-only"
        return state
    objects = os.path.join(common, "objects")
    if not _safe(common, hidden) or os.path.realpath(objects) != objects or not os.path.isdir(objects):
        state.note = f"{common} holds or lies in a hidden path: the git state stays read-only"
        return state
    store = prepare_store(gitdir, objects)
    if store is None:
        state.note = f"cannot make the private object store of {gitdir}: the git state stays read-only"
        return state
    state.visible += [common]
    state.writable.append(gitdir)
    state.objects = (str(store), objects, os.path.join(objects, SHARED))
    state.readonly += [p for n in WORKTREE_PROTECTED if os.path.lexists(p := os.path.join(gitdir, n))]
    dirs, others = _ref_dirs(common, gitdir)
    state.writable += dirs
    state.readonly += others
    return state


def git_state(root: str, hidden: Sequence[str] = ()) -> GitState:
    """What to bind for the git directory of the writable ``root`` (a real path); ``hidden``: the
    paths the sandbox hides (see the module docstring)."""
    state = GitState()
    dotgit = find_dotgit(root)
    if dotgit is None:
        return state
    if os.path.islink(dotgit):
        state.readonly.append(dotgit)
        state.note = f"{dotgit} is a symbolic link: the git state stays read-only"
        return state
    top = os.path.dirname(dotgit)
    if top != root:  # the root is a folder of the work tree: git reads the rest of it
        state.visible.append(top)
    if os.path.isdir(dotgit):
        return _plain(os.path.realpath(dotgit), state, hidden)
    state.readonly.append(dotgit)
    try:
        text = _read(dotgit)
    except (OSError, UnicodeDecodeError):
        return state
    if not text.startswith("gitdir: "):
        return state
    gitdir = os.path.realpath(os.path.join(os.path.dirname(dotgit), text[len("gitdir: ") :].strip()))
    if os.path.exists(os.path.join(gitdir, "commondir")):
        return _worktree(dotgit, gitdir, state, hidden)
    return _plain(gitdir, state, hidden)
