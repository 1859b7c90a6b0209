"""What a sandboxed command left behind that git or paragents would later read as configuration.

The sandbox binds every existing file that decides what git or paragents runs read-only
(paragents.tools.sandbox_git, paragents.protected), but a file that does not exist yet cannot be
bound: a command can *create* ``.git/commondir`` (and git then reads another directory's config,
``core.fsmonitor`` included, for the user's own ``git status``), ``.git/objects/info/alternates``,
``.claude/settings.local.json`` or a project ``runtime_config.json``. git itself needs ``.git`` to
stay a writable directory (lock files), so instead, after every sandboxed command (its PID namespace
and ``--die-with-parent`` guarantee that none of its processes outlives it), :meth:`Watch.settle`
compares the places below with what :func:`watch` saw before the command, moves what was created
or changed into a paragents-owned folder outside the repository (``<state>/quarantine/<time>-...``)
and returns one notice per finding for the command's result (the session and the user read it):

- the git directory of a plain repository: :data:`GIT_CREATED` (created) and a rebase or sequencer
  todo list holding ``exec`` lines (a later ``git rebase --continue`` by the user would run them);
- a linked worktree's own git directory (a lane): :data:`WORKTREE_CREATED`; new entries next to its
  branch's ref (only that folder is writable; another lane's name there is not the lane's to make);
  its branch turned into a symbolic ref (put back); and its private object store is imported
  (paragents.tools.git_objects): objects whose content does not match their name are refused, and a
  branch whose new commits cannot be completed from honest objects is put back where it was;
- a repository a command created at the root (``git init``): its hooks other than ``*.sample`` and
  a config naming a program (:data:`paragents.tools.git_config.PROGRAM_KEYS`) or an include;
- every writable root: the posture files of :mod:`paragents.protected` that did not exist before.

Nothing here imports Textual."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

from paragents import treefiles, trust
from paragents.protected import PROTECTED_DIRS, PROTECTED_FILES
from paragents.tools.git_config import neutral_value
from paragents.tools.git_exec import run_git
from paragents.tools.git_objects import Imported, import_store, quarantine_dir
from paragents.tools.ref_lock import holding, worktree_branches
from paragents.tools.sandbox_git import REDIRECTS, GitState, find_dotgit

log = logging.getLogger(__name__)

GIT_CREATED = (
    "commondir", "config.worktree", "config", "hooks", "info", "modules", "worktrees",
    "objects/info/commit-graph", "objects/info/commit-graphs", "objects/pack/multi-pack-index", *REDIRECTS,
)  # fmt: skip
"""Entries of a plain repository's git directory quarantined when a command creates them: they
redirect git (another common dir, other object stores), configure it, or are caches git trusts for
history and object lookup (commit-graph, multi-pack-index: rebuilt by git when missing)."""
WORKTREE_CREATED = ("commondir", "gitdir", "config.worktree", "config", "info", "hooks", "objects", "modules")
"""Entries of a linked worktree's own git directory quarantined when a command creates them."""
LINK_WALK_LIMIT = 5000
"""Most entries of ``logs/`` and ``refs/`` looked at for symbolic links after a command."""
TODO_FILES = ("rebase-merge/git-rebase-todo", "sequencer/todo")
"""Todo lists a later ``--continue`` executes (``exec`` lines run a shell command)."""
WHY = {
    "commondir": "sends git to another directory's config, refs and objects",
    "gitdir": "points git at another directory",
    "objects/info/alternates": "makes git read objects from another store",
    "objects/info/http-alternates": "makes git read objects from another store",
    "shallow": "cuts the history git sees",
}


def _sig(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def read_ref(common: str, ref: str) -> str | None:
    """The value of ``ref`` in the git directory ``common`` as stored (an object id, or ``ref: X``
    for a symbolic ref), read from its file or ``packed-refs`` without running git; None if absent."""
    try:
        head = treefiles.read_head(os.path.join(common, ref), 4096)  # never a FIFO (a writable ref dir)
        return head.decode("utf-8", "replace").strip() or None
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError, treefiles.NotRegularFile):
        pass
    except OSError:
        return None
    with (
        contextlib.suppress(OSError),
        os.fdopen(treefiles.open_regular(Path(common, "packed-refs")), "rb") as fb,
    ):
        for raw in fb:
            line = raw.decode("utf-8", "replace")
            oid, _, name = line.strip().partition(" ")
            if name == ref:
                return oid
    return None


def _written_by_paragents(path: str, roots: list[str]) -> bool:
    """True when every file at ``path`` (a posture file or folder) holds exactly a posture paragents
    recorded as its own write (an "always" answer given while the command ran)."""
    base = next((r for r in roots if path.startswith(r.rstrip("/") + "/")), None)
    if base is None or os.path.islink(path):
        return False
    files = [path] if not os.path.isdir(path) else [
        os.path.join(top, name) for top, _dirs, names in os.walk(path) for name in names]  # fmt: skip
    for file in files:
        rel = os.path.relpath(file, base)
        item = trust.file_posture(Path(base), rel)
        if item is None or not trust.is_trusted(Path(base), item):
            return False
    return bool(files)


def _truncate(path: str, size: int) -> None:
    """Cut the regular file ``path`` back to ``size`` bytes (never through a symbolic link)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and st.st_size > size:
            os.ftruncate(fd, size)
    finally:
        os.close(fd)


def _size(path: str) -> int:
    try:
        st = os.lstat(path)
    except OSError:
        return 0
    return st.st_size if stat.S_ISREG(st.st_mode) else 0


def _listing(folder: str) -> frozenset[str]:
    try:
        return frozenset(os.listdir(folder))
    except OSError:
        return frozenset()


@dataclass
class Watch:
    """What one sandboxed command could leave behind, as seen before it ran (see the module)."""

    roots: list[str]
    gitdir: str | None = None
    common: str | None = None
    top: str | None = None
    fresh_repo: str | None = None
    """The root's ``.git`` path when none existed before the command."""
    seen: dict[str, tuple[int, int, int] | None] = field(default_factory=dict)
    posture: dict[str, bool] = field(default_factory=dict)
    ref: str | None = None
    tip: str | None = None
    ref_folders: dict[str, frozenset[str]] = field(default_factory=dict)
    reflogs: dict[str, int] = field(default_factory=dict)
    """Sizes of the branch's and HEAD's reflogs before the command (put back to them with the branch)."""
    store: str | None = None
    notices: list[str] = field(default_factory=list)
    _moved: list[tuple[str, str]] = field(default_factory=list)
    _into: Path | None = None

    # --- after the command ---------------------------------------------------------------------

    def _quarantine(self, path: str, why: str) -> None:
        """Move ``path`` out of the repository into this command's quarantine folder."""
        if self._into is None:
            self._into = quarantine_dir("left-behind")
        dest = self._into / path.lstrip("/")
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(path, dest)
        except OSError as exc:
            log.warning("could not quarantine %s: %s", path, exc)
            self.notices.append(f"{path} {why}, and paragents could not move it away ({exc}): remove it")
            return
        self._moved.append((path, why))

    def _created(self, base: str, names: tuple[str, ...]) -> None:
        for name in names:
            path = os.path.join(base, name)
            if self.seen.get(path) is None and os.path.lexists(path):
                self._quarantine(path, WHY.get(name, "is read by git as configuration"))

    def _todos(self, base: str) -> None:
        for name in TODO_FILES:
            path = os.path.join(base, name)
            now = _sig(path)
            if now is None or now == self.seen.get(path):
                continue
            with contextlib.suppress(OSError):
                lines = treefiles.read_head(path, 1 << 20).decode("utf-8", "replace").splitlines()
                if any(line.split(None, 1)[:1] in (["exec"], ["x"]) for line in lines):
                    self._quarantine(os.path.dirname(path), "holds `exec` lines a later --continue would run")

    def _posture(self) -> None:
        for path, existed in self.posture.items():
            if not existed and os.path.lexists(path) and not _written_by_paragents(path, self.roots):
                self._quarantine(path, "changes paragents' posture and did not exist before the command")

    async def _fresh_repo(self, dotgit: str) -> None:
        """A repository the command made at the root: its hooks and a config naming programs."""
        if not os.path.isdir(dotgit) or os.path.islink(dotgit):
            return
        self.seen = {k: v for k, v in self.seen.items() if not k.startswith(dotgit + "/")}
        self._created(dotgit, ("commondir", "objects/info/alternates", "objects/info/http-alternates"))
        hooks = os.path.join(dotgit, "hooks")
        with contextlib.suppress(OSError):
            for name in sorted(os.listdir(hooks)):
                if not name.endswith(".sample"):
                    self._quarantine(os.path.join(hooks, name), "is a git hook a command installed")
        config = os.path.join(dotgit, "config")
        if os.path.isfile(config) and not os.path.islink(config):
            done = await run_git(["config", "--file", config, "--list", "-z"], Path("/"))
            keys = [e.split("\n", 1)[0] for e in done.out.decode("utf-8", "replace").split("\0") if e]
            if done.code != 0 or any(
                neutral_value(k) is not None or k.lower().startswith("include") for k in keys
            ):
                self._quarantine(config, "names a program git would run (or includes another file)")

    def _links(self, base: str, below: tuple[str, ...]) -> None:
        """Symbolic links git never makes: in ``base`` itself and below its folders ``below`` (a
        ``logs/HEAD`` made a link would make the next reflog line, the user's git's or paragents',
        land in the file it names)."""
        budget = LINK_WALK_LIMIT
        why = "is a symbolic link in a git directory (git makes none)"
        with contextlib.suppress(OSError):
            for entry in list(os.scandir(base)):
                if entry.is_symlink():
                    self._quarantine(entry.path, why)
        for sub in below:
            for top, dirs, files in os.walk(os.path.join(base, sub)):
                for name in [*dirs, *files]:
                    budget -= 1
                    if os.path.islink(os.path.join(top, name)):
                        self._quarantine(os.path.join(top, name), why)
                if budget <= 0:
                    return

    async def _worktree(self) -> None:
        assert self.gitdir is not None and self.common is not None
        self._created(self.gitdir, WORKTREE_CREATED)
        self._todos(self.gitdir)
        self._links(self.gitdir, ("logs", "refs"))
        await self._new_refs()
        if self.ref is None:
            return
        now = read_ref(self.common, self.ref)
        if os.path.islink(os.path.join(self.common, self.ref)):
            now = "ref: (a symbolic link)"
        if now is not None and now.startswith("ref:"):
            await self._put_back(f"{self.ref} was turned into a symbolic ref ({now})")
            return
        if now is None and self.tip:
            await self._put_back(f"{self.ref} was deleted")
            return
        imported = Imported()
        if self.store is not None:
            imported = await import_store(Path(self.store), self.common, "objects")
            if imported.mismatched:
                self.notices.append(
                    f"{len(imported.mismatched)} object(s) this command wrote do not match their names "
                    f"(e.g. {imported.mismatched[0][:12]}): refused, kept in {imported.quarantine}"
                )
            if imported.error:
                self.notices.append(f"git refused objects this command wrote: {imported.error}")
        if now == self.tip and not imported.refused:
            return
        if now is not None and not await self._complete(now):
            await self._put_back(f"{self.ref}'s new commits ({now[:12]}) miss objects git accepted")
        elif imported.refused:
            await self._reset_index(now)

    async def _new_refs(self) -> None:
        """Move away new entries next to the lane's branch ref, but for the branches paragents made
        meanwhile for another lane (a worktree's ``HEAD`` names them: paragents.tools.ref_lock)."""
        assert self.common is not None
        logs = os.path.join(self.common, "logs")
        async with holding(self.common, shared=True):
            ours = worktree_branches(self.common)
            for folder, before in self.ref_folders.items():
                prefix = os.path.relpath(folder, logs if folder.startswith(logs + "/") else self.common)
                for name in sorted(_listing(folder) - before):
                    path = os.path.join(folder, name)
                    if f"{prefix}/{name}" in ours and os.path.isfile(path) and not os.path.islink(path):
                        continue
                    self._quarantine(path, "is a ref a command made beside its lane's branch")
                self._links(folder, ())

    async def _git(self, *args: str, worktree: bool = False) -> bool:
        assert self.common is not None
        env = {"GIT_DIR": self.common}
        if worktree and self.gitdir and self.top:
            env = {"GIT_DIR": self.gitdir, "GIT_COMMON_DIR": self.common, "GIT_WORK_TREE": self.top}
        done = await run_git(list(args), Path(self.common), env=env)
        return done.code == 0

    async def _complete(self, tip: str) -> bool:
        """Every object reachable from ``tip`` is in the repository (beyond what other refs and the
        branch's tip before the command already reach)."""
        assert self.ref is not None
        args = ["rev-list", "--objects", "--quiet", tip, "--not", f"--exclude={self.ref}", "--all"]
        if self.tip and not self.tip.startswith("ref:"):
            args.append(self.tip)
        return await self._git(*args)

    async def _put_back(self, why: str) -> None:
        assert self.ref is not None
        if self.tip and not self.tip.startswith("ref:"):
            ok = await self._git("update-ref", "--no-deref", "-m", "paragents: put back", self.ref, self.tip)
            where = f"put back at {self.tip[:12]}" if ok else "could not be put back: look at it"
        else:
            ok = await self._git("update-ref", "-d", "--no-deref", self.ref)
            where = "removed (it did not exist before)" if ok else "could not be removed: look at it"
        self.notices.append(f"{why}: the branch was {where}")
        for path, size in self.reflogs.items():
            _truncate(path, size)
        await self._reset_index(self.tip if ok else None)

    async def _reset_index(self, tip: str | None) -> None:
        if tip and not tip.startswith("ref:") and await self._git("read-tree", tip, worktree=True):
            self.notices.append("the worktree's index was reset to its branch (it named refused objects)")

    async def settle(self) -> list[str]:
        """Quarantine what the command left behind (see the module); return the notices."""
        try:
            if self.fresh_repo is not None and os.path.lexists(self.fresh_repo):
                await self._fresh_repo(self.fresh_repo)
            elif self.gitdir is not None and self.common is not None and self.gitdir != self.common:
                await self._worktree()
            elif self.gitdir is not None:
                self._created(self.gitdir, GIT_CREATED)
                self._todos(self.gitdir)
                self._links(self.gitdir, ("logs", "refs"))
            self._posture()
        except OSError as exc:  # never lose the command's own result over this
            log.warning("after-command check failed: %s", exc)
            self.notices.append(f"paragents could not check what the command left in the repository: {exc}")
        if self._moved:
            shown = "; ".join(f"{path} ({why})" for path, why in self._moved)
            self.notices.insert(
                0, f"paragents moved what this command left behind: {shown}; kept in {self._into}"
            )
        for notice in self.notices:
            log.warning("sandboxed command: %s", notice)
        return self.notices


def watch(roots: list[str], git: GitState, root: str) -> Watch:
    """What to look at after a sandboxed command whose writable roots are ``roots`` (its root
    ``root`` first) and whose git state is ``git``; taken just before the command starts."""
    made = Watch(roots=roots)
    dotgit = find_dotgit(root)
    if dotgit is None:
        made.fresh_repo = os.path.join(root, ".git")
    for base in roots:
        for rel in (*PROTECTED_FILES, *PROTECTED_DIRS):
            if not rel.startswith(".git/"):
                made.posture[os.path.join(base, rel)] = os.path.lexists(os.path.join(base, rel))
    if git.objects is not None:  # a linked worktree (see sandbox_git)
        made.store, made.common = git.objects[0], os.path.dirname(git.objects[1])
        made.gitdir = next(
            (w for w in git.writable if os.path.dirname(os.path.dirname(w)) == made.common), None
        )
        made.top = os.path.dirname(dotgit) if dotgit else None
        if made.gitdir is None:
            return made
        for name in (*WORKTREE_CREATED, *TODO_FILES):
            path = os.path.join(made.gitdir, name)
            made.seen[path] = _sig(path)
        head = read_ref(made.gitdir, "HEAD") or ""
        if head.startswith("ref: refs/"):
            made.ref = head[5:].strip()
            made.tip = read_ref(made.common, made.ref)
            for log in (
                os.path.join(made.common, "logs", made.ref),
                os.path.join(made.gitdir, "logs", "HEAD"),
            ):
                made.reflogs[log] = _size(log)
        for folder in git.writable:
            if folder != made.gitdir:
                made.ref_folders[folder] = _listing(folder)
        return made
    if git.writable and os.path.isdir(git.writable[0]):  # a plain repository's git directory
        made.gitdir = made.common = git.writable[0]
        for name in (*GIT_CREATED, *TODO_FILES):
            path = os.path.join(made.gitdir, name)
            made.seen[path] = _sig(path)
    return made
