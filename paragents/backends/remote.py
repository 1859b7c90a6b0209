"""What the ``container`` and ``kubernetes`` backends share: commands, files and snapshots over one
primitive, "run this argv in the lane with this stdin" (:meth:`RemoteBackend._run`), using the bash
snippets of :mod:`paragents.backends.scripts` (docs/remote.md).

Nothing of this machine's environment goes in: a command gets only :data:`FORCED_ENV`, ``HOME``, the
lane's own variables and those the caller passes. Timeout and cancel stop the command's whole process
group inside the lane (a second exec sends the signal: closing an exec stream does not stop what it
started, neither on Docker nor on Kubernetes)."""

from __future__ import annotations

import abc
import asyncio
import contextlib
import io
import secrets
import tarfile
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path

from paragents.backends import scripts
from paragents.backends.agent import REQUEST_TIMEOUT, AgentFailure, LaneAgent
from paragents.backends.base import (
    BackendError,
    BackendKind,
    DirEntry,
    ExecResult,
    FileProblem,
    Health,
    LaneSpec,
    OutputSink,
    Snapshot,
    TreeEntry,
    Usage,
    check_place_path,
)
from paragents.backends.bundle import base_bundle, fetch_snapshot, known_commits, push_bundle
from paragents.backends.paths import lane_relative
from paragents.tools.shell import CANCEL_GRACE, FORCED_ENV, POST_EXIT_DRAIN, TERM_GRACE, OutputCapture

Chunk = Callable[[int, bytes], None]
"""Called with (1 stdout | 2 stderr, bytes) as a remote process writes."""
Stdin = bytes | AsyncIterator[bytes] | None
"""What a remote process reads: nothing, these bytes, or chunks as they come (a forwarded port)."""
MAX_ERROR_TEXT = 2000


class RemoteBackend(abc.ABC):
    """An :class:`~paragents.backends.base.ExecutionBackend` whose lane is a remote git repository in
    ``/workspace``; subclasses provide the transport (:meth:`_run`) and the place's life cycle."""

    kind: BackendKind
    use_agent: bool = True
    """Snapshots through the lane's long-lived agent (:mod:`paragents.backends.agent`); False: one
    exec per snapshot (the agent's fallback)."""

    def __init__(self, spec: LaneSpec, *, max_snapshot_bytes: int) -> None:
        self.spec = spec
        self.max_snapshot_bytes = max_snapshot_bytes
        self.agent_timeout = REQUEST_TIMEOUT
        self._agent: LaneAgent | None = None
        self.agent_note: str | None = None
        """Why the last snapshot did not go through the agent (None when it did)."""
        self.snapshot_execs = 0
        """Snapshots taken by one exec each (the agent's fallback) so far."""

    # --- what subclasses provide -------------------------------------------------------------------

    @abc.abstractmethod
    async def _run(self, argv: Sequence[str], *, on_chunk: Chunk, stdin: Stdin = None,
                   env: Mapping[str, str] | None = None) -> int:  # fmt: skip
        """Run ``argv`` in the lane (as its user, stdin ``stdin`` or none: bytes, or chunks written as
        they come); feed output to ``on_chunk``; return the exit code. Raises BackendUnreachable /
        LaneGone."""

    @property
    @abc.abstractmethod
    def where(self) -> str: ...

    @abc.abstractmethod
    async def health(self) -> Health: ...

    # --- helpers ----------------------------------------------------------------------------------

    def _env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = {**FORCED_ENV, "HOME": scripts.HOME, **self.spec.env}
        if extra:
            env.update(extra)
        return env

    async def _call(self, snippet: str, *args: str, stdin: bytes | None = None,
                    env: Mapping[str, str] | None = None) -> tuple[int, bytes, bytes]:  # fmt: skip
        """Run a snippet of :mod:`scripts` with ``args``; return (code, stdout, stderr)."""
        out, err = bytearray(), bytearray()

        def chunk(stream: int, data: bytes) -> None:
            (out if stream == 1 else err).extend(data)

        code = await self._run(["bash", "-c", snippet, "paragents", *args], on_chunk=chunk, stdin=stdin,
                               env=self._env(env))  # fmt: skip
        return code, bytes(out), bytes(err)

    def _fail(self, what: str, err: bytes) -> BackendError:
        text = err.decode("utf-8", "replace").strip()[:MAX_ERROR_TEXT] or "failed"
        return BackendError(f"{what} in lane {self.spec.name} ({self.where}): {text}")

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
        """See :meth:`~paragents.backends.base.ExecutionBackend.exec`."""
        where = lane_relative(cwd)
        exec_id = secrets.token_hex(8)
        marker = f"PARAGENTS-EXIT {exec_id} ".encode()
        capture = OutputCapture(max_output)
        exited: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        errors = bytearray()

        def chunk(stream: int, data: bytes) -> None:
            if stream == 1:
                capture.feed(data)
                if on_output is not None:
                    on_output(data)
                return
            errors.extend(data)
            at = errors.find(marker)
            if at >= 0 and not exited.done():
                tail = errors[at + len(marker) :].split(b"\n", 1)[0]
                with contextlib.suppress(ValueError):
                    exited.set_result(int(tail))

        argv = ["bash", "-c", scripts.EXEC, "paragents", exec_id, where, command]
        run = asyncio.create_task(self._run(argv, on_chunk=chunk, env=self._env(env)))
        started = time.monotonic()
        timed_out = False
        try:
            done, _ = await asyncio.wait({run, exited}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            if not done:
                timed_out = True
                await self._stop(exec_id, TERM_GRACE)
            if not run.done():  # exited, but background processes may still hold the output
                await asyncio.wait({run}, timeout=POST_EXIT_DRAIN)
        except BaseException:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._stop(exec_id, CANCEL_GRACE))
            run.cancel()
            raise
        if run.done():
            code = run.result()  # raises BackendUnreachable / LaneGone from the transport
        else:  # the command exited; what still holds its output is left running, unread
            run.cancel()
            with contextlib.suppress(asyncio.CancelledError, BackendError):
                await run
            code = -1
        if exited.done():
            code = exited.result()
        elif code == 125 and b"no directory" in errors:
            return ExecResult(125, f"cwd '{cwd}' is not an existing directory in the lane", missing_cwd=True)
        return ExecResult(
            code,
            capture.text(max_output),
            timed_out,
            round(time.monotonic() - started, 3),
            capture.total_bytes,
        )

    async def _stop(self, exec_id: str, grace: float) -> None:
        """Stop the command's process group: TERM, up to ``grace`` seconds, then KILL (one exec)."""
        await self._call(scripts.STOP, exec_id, str(max(int(grace / 0.05), 1)))

    # --- files ------------------------------------------------------------------------------------

    async def read_file(self, path: str, *, limit: int = 10_000_000) -> bytes:
        rel = lane_relative(path)
        code, out, err = await self._call(scripts.READ, rel, str(limit + 1))
        if code in scripts.READ_PROBLEMS:
            failed = self._fail(f"cannot read {rel}", err)
            raise FileProblem(str(failed), scripts.READ_PROBLEMS[code])  # type: ignore[arg-type]
        if code != 0:
            raise self._fail(f"cannot read {rel}", err)
        if len(out) > limit:
            raise BackendError(f"{rel} in lane {self.spec.name} is larger than {limit} bytes")
        return out

    async def write_file(self, path: str, data: bytes) -> None:
        rel = lane_relative(path)
        if rel == ".":
            raise BackendError("cannot write the lane's root directory as a file")
        code, _, err = await self._call(scripts.WRITE, rel, str(len(data)), stdin=data)
        if code != 0:
            raise self._fail(f"cannot write {rel}", err)

    async def list_dir(self, path: str = ".") -> list[DirEntry]:
        rel = lane_relative(path)
        code, out, err = await self._call(scripts.LIST, rel)
        if code != 0:
            raise self._fail(f"cannot list {rel}", err)
        entries = []
        for item in out.split(b"\0"):
            kind, _, name = item.decode("utf-8", "surrogateescape").partition(" ")
            if name and kind in ("f", "d", "l", "o"):
                entries.append(DirEntry(name, kind))  # type: ignore[arg-type]
        return sorted(entries, key=lambda e: e.name)

    async def list_tree(
        self, path: str = ".", *, depth: int = 0, limit: int = 200_000, skip: bool = True
    ) -> list[TreeEntry]:
        """See :meth:`~paragents.backends.base.ExecutionBackend.list_tree`."""
        rel = lane_relative(path)
        skipped = scripts.SKIP_DIRS if skip else ()
        code, out, err = await self._call(scripts.TREE, rel, str(max(depth, 0)), str(limit), *skipped)
        if code == 3:
            raise FileProblem(f"{rel} does not exist in lane {self.spec.name}", "missing")
        if code == 4:
            raise FileProblem(f"{rel} is not a directory in lane {self.spec.name}", "other")
        if code != 0:
            raise self._fail(f"cannot list {rel}", err)
        return parse_tree(out)

    async def read_files(self, path: str, names: list[str], *, limit: int) -> dict[str, bytes]:
        """See :meth:`~paragents.backends.base.ExecutionBackend.read_files`."""
        rel = lane_relative(path)
        wanted = [lane_relative(n) for n in names]
        if not wanted:
            return {}
        listing = b"".join(n.encode("utf-8", "surrogateescape") + b"\0" for n in wanted)
        code, out, err = await self._call(
            scripts.TAR, rel, str(limit + 1024), str(len(listing)), stdin=listing
        )
        if code != 0:
            raise self._fail(f"cannot read the files below {rel}", err)
        return read_tar(out, set(wanted), limit)

    async def put_tree(self, path: str, tar: bytes) -> None:
        """Unpack the tar archive ``tar`` into the absolute directory ``path`` of the lane's place
        (made when missing), as the lane's user (``paragents eval`` copies a trial's hidden tests into
        a Pod so). ``path`` is checked by :func:`~paragents.backends.base.check_place_path`."""
        where = check_place_path(path)
        code, _, err = await self._call(scripts.UNPACK, where, str(len(tar)), stdin=tar)
        if code != 0:
            raise self._fail(f"cannot unpack files into {where}", err)

    async def get_tree(self, path: str, *, limit: int) -> bytes | None:
        """A tar archive of the absolute directory ``path`` of the lane's place, as its user reads it;
        None when it is larger than ``limit`` bytes (nothing of it is kept)."""
        where = check_place_path(path)
        code, out, err = await self._call(scripts.PACK, where, str(limit + 1))
        if code != 0:
            raise self._fail(f"cannot read the files below {where}", err)
        return None if len(out) > limit else out

    async def usage(self) -> Usage:
        return Usage()

    async def relay(
        self, port: int, incoming: AsyncIterator[bytes], outgoing: Callable[[bytes], None]
    ) -> int:
        """Copy ``incoming`` to the lane's own ``127.0.0.1:port`` and what comes back to ``outgoing``
        until the lane's side closes (one connection of a forwarded port); return the relay's exit
        code (7: nothing listens on that port in the lane)."""

        def chunk(stream: int, data: bytes) -> None:
            if stream == 1:
                outgoing(data)

        argv = ["bash", "-c", scripts.RELAY, "paragents", str(int(port))]
        return await self._run(argv, on_chunk=chunk, stdin=incoming, env=self._env())

    # --- git --------------------------------------------------------------------------------------

    async def _populate(self, *, with_snapshot: bool) -> str:
        """Send the lane's base (and last snapshot) as a bundle and check it out in /workspace; return
        the snapshot ref it was restored from ("" when it started from the base)."""
        with tempfile.TemporaryDirectory(prefix="paragents-base-") as tmp:
            path, snap_ref = await base_bundle(self.spec, Path(tmp), with_snapshot=with_snapshot)
            data = path.read_bytes()
        target = f"/tmp/.paragents-base-{secrets.token_hex(4)}.bundle"
        code, _, err = await self._call(scripts.UPLOAD, target, str(len(data)), stdin=data)
        if code != 0:
            raise self._fail("cannot upload the base bundle", err)
        code, _, err = await self._call(
            scripts.RESTORE, target, self.spec.branch, self.spec.base_ref, snap_ref, env=scripts.GIT_ENV
        )
        if code != 0:
            raise self._fail("cannot check out the base", err)
        return snap_ref

    @property
    def agent(self) -> LaneAgent:
        """The lane's snapshot agent (started by its first request)."""
        if self._agent is None:
            self._agent = LaneAgent(
                self._run_agent, max_bytes=self.max_snapshot_bytes, timeout=self.agent_timeout
            )
        return self._agent

    async def _run_agent(self, argv: Sequence[str], on_chunk: Chunk, stdin: AsyncIterator[bytes]) -> int:
        return await self._run(argv, on_chunk=on_chunk, stdin=stdin, env=self._env(scripts.GIT_ENV))

    async def _stop_agent(self) -> None:
        """Close the agent's channel (the container/Pod is removed, recreated, or closed here)."""
        if self._agent is not None:
            await self._agent.close()

    async def snapshot(self, *, known: list[str] | None = None) -> Snapshot:
        """See :meth:`~paragents.backends.base.ExecutionBackend.snapshot`; ``known``: what
        :func:`~paragents.backends.bundle.known_commits` says now, when the caller just read it.
        Asked of the lane's agent while it answers; else (and when its answer is refused) by one
        exec of :data:`~paragents.backends.scripts.SNAPSHOT`. Both answers pass the same checks."""
        known = known if known is not None else await known_commits(self.spec)
        if self.use_agent:
            try:
                out = await self.agent.snapshot(known)
            except AgentFailure as exc:
                self.agent_note = str(exc)
            else:
                try:
                    snap = await fetch_snapshot(
                        self.spec, out, max_bytes=self.max_snapshot_bytes, known=known
                    )
                except BackendError as exc:
                    self.agent.refuse(str(exc))
                    self.agent_note = self.agent.broken
                else:
                    self.agent_note = None
                    return snap
        return await self._snapshot_exec(known)

    async def _snapshot_exec(self, known: list[str]) -> Snapshot:
        """The snapshot by one exec of :data:`~paragents.backends.scripts.SNAPSHOT`."""
        self.snapshot_execs += 1
        out = bytearray()
        err = bytearray()
        limit = self.max_snapshot_bytes + 4096

        def chunk(stream: int, data: bytes) -> None:
            if stream == 1:
                if len(out) <= limit:
                    out.extend(data)
            else:
                err.extend(data[:MAX_ERROR_TEXT])

        argv = ["bash", "-c", scripts.SNAPSHOT, "paragents", *known]
        code = await self._run(argv, on_chunk=chunk, env=self._env(scripts.GIT_ENV))
        if code != 0:
            raise self._fail("cannot snapshot", bytes(err))
        return await fetch_snapshot(self.spec, bytes(out), max_bytes=self.max_snapshot_bytes, known=known)

    async def adopt(self, ref: str, expect_tree: str) -> None:
        """See :meth:`~paragents.backends.base.ExecutionBackend.adopt`."""
        with tempfile.TemporaryDirectory(prefix="paragents-adopt-") as tmp:
            data = await push_bundle(self.spec, ref, Path(tmp))
        target = f"/tmp/.paragents-adopt-{secrets.token_hex(4)}.bundle"
        code, _, err = await self._call(scripts.UPLOAD, target, str(len(data)), stdin=data)
        if code != 0:
            raise self._fail("cannot upload what changed on this machine", err)
        code, _, err = await self._call(
            scripts.ADOPT, target, ref, self.spec.branch, expect_tree, env=scripts.GIT_ENV
        )
        if code != 0:
            raise self._fail("cannot take what changed on this machine", err)


def parse_tree(out: bytes) -> list[TreeEntry]:
    """Read :data:`~paragents.backends.scripts.TREE`'s output; entries with a path that is not below
    the listed directory (``..``, absolute, empty) are dropped (the lane wrote the names)."""
    fields = out.split(b"\0")
    entries = []
    for head, link in zip(fields[0::2], fields[1::2], strict=False):
        parts = head.decode("utf-8", "surrogateescape").split(" ", 4)
        if len(parts) != 5:
            continue
        kind, target, mtime, size, path = parts
        names = path.split("/")
        if not path or path.startswith("/") or any(n in ("", ".", "..") for n in names):
            continue
        try:
            when, length = float(mtime), int(size)
        except ValueError:
            continue
        entries.append(
            TreeEntry(
                path,
                kind if kind in ("f", "d", "l") else "o",  # type: ignore[arg-type]
                when,
                length,
                target,
                link.decode("utf-8", "surrogateescape"),
            )
        )
    return entries


def read_tar(data: bytes, wanted: set[str], limit: int) -> dict[str, bytes]:
    """The regular files named in ``wanted`` from the (possibly cut) tar ``data``, at most ``limit``
    bytes in all: nothing else in the archive is looked at (the lane made it)."""
    found: dict[str, bytes] = {}
    total = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r|") as tar:
            for member in tar:
                name = member.name.removeprefix("./")
                if not member.isreg() or name not in wanted or name in found:
                    continue
                if total + member.size > limit:
                    break
                handle = tar.extractfile(member)
                if handle is None:
                    continue
                body = handle.read()
                if len(body) != member.size:
                    break
                found[name] = body
                total += len(body)
    except (tarfile.TarError, EOFError, OSError):
        pass  # a cut archive: keep what was complete
    return found
