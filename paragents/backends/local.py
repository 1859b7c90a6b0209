"""The ``local`` backend: today's lanes behind the :class:`~paragents.backends.base.ExecutionBackend`
contract. The lane is its git worktree on this machine (made by :mod:`paragents.lanes.create`);
commands run as ``run_command`` runs them (bubblewrap from :mod:`paragents.tools.sandbox` with the
worktree as the writable root, the process-group handling and environment of
:mod:`paragents.tools.shell`); a snapshot is :func:`paragents.lanes.predict.snapshot_tree` committed
on the lane's HEAD and kept at ``refs/paragents/remote/<name>/snapshot``. Nothing is copied: the
worktree shares the repository's objects."""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from paragents import treefiles
from paragents.backends.base import (
    BackendError,
    BackendKind,
    DirEntry,
    ExecResult,
    FileProblem,
    Health,
    LaneGone,
    LaneSpec,
    OutputSink,
    Snapshot,
    TreeEntry,
    Usage,
)
from paragents.backends.paths import lane_relative
from paragents.backends.scripts import SKIP_DIRS
from paragents.lanes.errors import LaneError
from paragents.lanes.git import IDENTITY, git
from paragents.lanes.predict import SNAPSHOT_DATE, snapshot_tree
from paragents.tools.sandbox import Prepared, SandboxConfig, check, prepare
from paragents.tools.shell import (
    CANCEL_GRACE,
    POST_EXIT_DRAIN,
    TERM_GRACE,
    OutputCapture,
    command_env,
    kill_group,
    settle,
)


class LocalBackend:
    """A lane in a worktree of this machine (see the module docstring)."""

    kind: BackendKind = "local"

    def __init__(self, spec: LaneSpec, sandbox: SandboxConfig | None = None) -> None:
        if spec.worktree is None:
            raise BackendError(f"lane {spec.name} has no worktree: the local backend runs in one")
        self.spec = spec
        self.root = spec.worktree
        self.sandbox = sandbox
        self._scratch = tempfile.TemporaryDirectory(prefix="paragents-local-snap-")

    @property
    def where(self) -> str:
        return "local"

    def _path(self, path: str) -> Path:
        """The real path of the lane-relative ``path``; BackendError when a symlink leads out."""
        root = self.root.resolve()
        target = (root / lane_relative(path)).resolve()
        if not target.is_relative_to(root):
            raise BackendError(f"{path!r} leads outside lane {self.spec.name} (through a symbolic link)")
        return target

    # --- life cycle -------------------------------------------------------------------------------

    async def create(self) -> None:
        if not (self.root / ".git").exists():
            raise LaneGone(f"lane {self.spec.name}'s worktree {self.root} does not exist")

    async def recover(self) -> str | None:
        await self.create()
        return None

    async def destroy(self, *, force: bool = False) -> Snapshot | None:
        """Snapshot, then ``git worktree remove --force`` (the branch and the store row stay: removing
        those is the lanes' gc, under its never-lose-work rules)."""
        if not self.root.exists():
            return None
        snap = await self.snapshot()
        result = await git("worktree", "remove", "--force", self.root, cwd=self.spec.repo, check=False)
        if not result.ok:
            raise BackendError(f"cannot remove lane {self.spec.name}'s worktree: {result.err}")
        return snap

    async def health(self) -> Health:
        if (self.root / ".git").exists():
            return Health("running", f"worktree {self.root}")
        return Health("missing", f"worktree {self.root} does not exist")

    async def close(self) -> None:
        self._scratch.cleanup()

    # --- commands ---------------------------------------------------------------------------------

    async def exec(
        self,
        command: str,
        *,
        cwd: str = ".",
        env: Mapping[str, str] | None = None,
        timeout: float = 120.0,
        on_output: OutputSink | None = None,
        max_output: int = 30000,
    ) -> ExecResult:
        """``bash -c command`` in the worktree, confined as ``run_command`` is (see the module)."""
        where = self._path(cwd)
        if not where.is_dir():
            return ExecResult(125, f"cwd '{cwd}' is not an existing directory in the lane", missing_cwd=True)
        argv = ["bash", "-c", command]
        boxed: Prepared | None = None
        if self.sandbox is not None:
            status = check(self.sandbox)
            if status.state == "refused":
                return ExecResult(126, status.message)
            if status.active and status.bwrap:
                boxed = prepare(status.bwrap, replace(self.sandbox, root=self.root), where, argv)
                argv = boxed.argv
        try:
            result = await self._exec(argv, where, env, timeout, on_output, max_output)
        finally:
            notices = await settle(boxed)  # what the command left behind (paragents.tools.sandbox_watch)
        if not notices:
            return result
        text = "\n".join(f"[{n}]" for n in notices)
        if on_output is not None:
            on_output(f"\n{text}\n".encode())
        return replace(result, output=f"{result.output.rstrip()}\n{text}")

    async def _exec(
        self,
        argv: list[str],
        where: Path,
        env: Mapping[str, str] | None,
        timeout: float,
        on_output: OutputSink | None,
        max_output: int,
    ) -> ExecResult:
        """Start ``argv`` (see :meth:`exec`)."""
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                cwd=where,
                env=command_env() | dict(self.spec.env) | dict(env or {}),
                start_new_session=True,
            )
        except OSError as exc:
            return ExecResult(126, f"cannot start the command: {exc.strerror or exc}")
        assert proc.stdout is not None
        capture = OutputCapture(max_output)
        started = time.monotonic()
        timed_out = False

        async def pump() -> None:
            assert proc.stdout is not None
            while chunk := await proc.stdout.read(65536):
                capture.feed(chunk)
                if on_output is not None:
                    on_output(chunk)

        reader = asyncio.create_task(pump())
        try:
            try:
                await asyncio.wait_for(proc.wait(), timeout)
            except TimeoutError:
                timed_out = True
                await kill_group(proc, TERM_GRACE)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(reader), POST_EXIT_DRAIN)
        except BaseException:
            await kill_group(proc, CANCEL_GRACE)
            raise
        finally:
            reader.cancel()
        code = proc.returncode if proc.returncode is not None else -1
        return ExecResult(
            code,
            capture.text(max_output),
            timed_out,
            round(time.monotonic() - started, 3),
            capture.total_bytes,
        )

    # --- files ------------------------------------------------------------------------------------

    async def read_file(self, path: str, *, limit: int = 10_000_000) -> bytes:
        target = self._path(path)
        if not target.exists():
            raise FileProblem(f"cannot read {path} in lane {self.spec.name}: it does not exist", "missing")
        if target.is_dir():
            raise FileProblem(f"cannot read {path} in lane {self.spec.name}: it is a directory", "directory")
        try:  # a FIFO a command left would block this read (and the event loop) forever: treefiles
            with os.fdopen(treefiles.open_regular(target), "rb") as fh:
                data = fh.read(limit + 1)
        except treefiles.NotRegularFile as exc:
            raise FileProblem(
                f"cannot read {path} in lane {self.spec.name}: {exc.strerror}", "other"
            ) from exc
        except OSError as exc:
            raise BackendError(f"cannot read {path} in lane {self.spec.name}: {exc.strerror}") from exc
        if len(data) > limit:
            raise BackendError(f"{path} in lane {self.spec.name} is larger than {limit} bytes")
        return data

    async def write_file(self, path: str, data: bytes) -> None:
        target = self._path(path)
        if target == self.root.resolve():
            raise BackendError("cannot write the lane's root directory as a file")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            temp = target.with_name(f"{target.name}.paragents-{os.getpid()}")
            temp.write_bytes(data)
            os.replace(temp, target)
        except OSError as exc:
            raise BackendError(f"cannot write {path} in lane {self.spec.name}: {exc.strerror}") from exc

    async def list_dir(self, path: str = ".") -> list[DirEntry]:
        target = self._path(path)
        try:
            entries = []
            with os.scandir(target) as it:
                for entry in it:
                    if entry.is_symlink():
                        kind = "l"
                    elif entry.is_dir():
                        kind = "d"
                    elif entry.is_file():
                        kind = "f"
                    else:
                        kind = "o"
                    entries.append(DirEntry(entry.name, kind))  # type: ignore[arg-type]
        except OSError as exc:
            raise BackendError(f"cannot list {path} in lane {self.spec.name}: {exc.strerror}") from exc
        return sorted(entries, key=lambda e: e.name)

    async def list_tree(
        self, path: str = ".", *, depth: int = 0, limit: int = 200_000, skip: bool = True
    ) -> list[TreeEntry]:
        root = self._path(path)
        if not root.exists():
            raise FileProblem(f"{path} does not exist in lane {self.spec.name}", "missing")
        if not root.is_dir():
            raise FileProblem(f"{path} is not a directory in lane {self.spec.name}", "other")
        found: list[TreeEntry] = []
        for folder, dirs, files in os.walk(root):
            rel = Path(folder).relative_to(root)
            level = 0 if rel == Path(".") else len(rel.parts)
            skipped = SKIP_DIRS if skip else ()
            dirs[:] = sorted(d for d in dirs if d not in skipped or os.path.islink(os.path.join(folder, d)))
            for name in [*dirs, *sorted(files)]:
                full = Path(folder, name)
                st = full.lstat()
                link = os.readlink(full) if full.is_symlink() else ""
                kind = (
                    "l"
                    if link or full.is_symlink()
                    else ("d" if full.is_dir() else "f" if full.is_file() else "o")
                )
                target = ("d" if full.is_dir() else "f" if full.is_file() else "n") if kind == "l" else kind
                found.append(TreeEntry((rel / name).as_posix(), kind, st.st_mtime, st.st_size, target, link))  # type: ignore[arg-type]
                if len(found) >= limit:
                    return found
            if depth and level + 1 >= depth:
                dirs[:] = []
        return found

    async def read_files(self, path: str, names: list[str], *, limit: int) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        total = 0
        for name in names:
            try:
                target = self._path(f"{lane_relative(path)}/{lane_relative(name)}")
                if target.is_symlink() or not target.is_file():
                    continue
                data = treefiles.read_bytes(target, limit=limit)
            except (OSError, BackendError):
                continue
            if total + len(data) > limit:
                break
            found[name] = data
            total += len(data)
        return found

    async def adopt(self, ref: str, expect_tree: str) -> None:
        """Nothing to do: the lane is this machine's worktree."""

    async def usage(self) -> Usage:
        return Usage()

    # --- git --------------------------------------------------------------------------------------

    async def snapshot(self, *, known: list[str] | None = None) -> Snapshot:
        """The worktree's files as a commit on its HEAD, at ``spec.snapshot_ref`` (with a reflog)."""
        try:
            tree = await snapshot_tree(self.root, Path(self._scratch.name))
            head = (await git("rev-parse", "HEAD", cwd=self.root)).out.strip()
            env = {**IDENTITY, "GIT_AUTHOR_DATE": SNAPSHOT_DATE, "GIT_COMMITTER_DATE": SNAPSHOT_DATE}
            made = await git(
                "commit-tree", tree, "-p", head, "-m", "paragents snapshot", cwd=self.root, env=env
            )
            commit = made.out.strip()
            old = await git(
                "rev-parse", "--verify", "-q", self.spec.snapshot_ref, cwd=self.spec.repo, check=False
            )
            changed = old.out.strip() != commit
            if changed:
                await git(
                    "update-ref", "--create-reflog", "-m", "paragents snapshot",
                    self.spec.snapshot_ref, commit, cwd=self.spec.repo,
                )  # fmt: skip
        except LaneError as exc:
            raise BackendError(f"cannot snapshot lane {self.spec.name}: {exc}") from exc
        return Snapshot(commit, head, tree, self.spec.snapshot_ref, changed=changed)
