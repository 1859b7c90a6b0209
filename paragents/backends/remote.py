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
import secrets
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from paragents.backends import scripts
from paragents.backends.base import (
    BackendError,
    BackendKind,
    DirEntry,
    ExecResult,
    Health,
    LaneSpec,
    OutputSink,
    Snapshot,
)
from paragents.backends.bundle import base_bundle, fetch_snapshot, known_commits
from paragents.backends.paths import lane_relative
from paragents.tools.shell import CANCEL_GRACE, FORCED_ENV, POST_EXIT_DRAIN, TERM_GRACE, OutputCapture

Chunk = Callable[[int, bytes], None]
"""Called with (1 stdout | 2 stderr, bytes) as a remote process writes."""
MAX_ERROR_TEXT = 2000


class RemoteBackend(abc.ABC):
    """An :class:`~paragents.backends.base.ExecutionBackend` whose lane is a remote git repository in
    ``/workspace``; subclasses provide the transport (:meth:`_run`) and the place's life cycle."""

    kind: BackendKind

    def __init__(self, spec: LaneSpec, *, max_snapshot_bytes: int) -> None:
        self.spec = spec
        self.max_snapshot_bytes = max_snapshot_bytes

    # --- what subclasses provide -------------------------------------------------------------------

    @abc.abstractmethod
    async def _run(self, argv: Sequence[str], *, on_chunk: Chunk, stdin: bytes | None = None,
                   env: Mapping[str, str] | None = None) -> int:  # fmt: skip
        """Run ``argv`` in the lane (as its user, stdin ``stdin`` or none); feed output to
        ``on_chunk``; return the exit code. Raises BackendUnreachable / LaneGone."""

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
            return ExecResult(125, f"cwd '{cwd}' is not an existing directory in the lane")
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

    async def snapshot(self) -> Snapshot:
        """See :meth:`~paragents.backends.base.ExecutionBackend.snapshot`."""
        known = await known_commits(self.spec)
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
        return await fetch_snapshot(self.spec, bytes(out), max_bytes=self.max_snapshot_bytes)
