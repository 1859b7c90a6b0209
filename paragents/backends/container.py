"""The ``container`` backend: one container per lane through the Docker Engine API (``aiodocker``;
Podman's Docker-compatible socket works too). docs/remote.md says why aiodocker and what a lane's
container may do.

The container is the sandbox: no network (``NetworkMode: none``) unless configured, CPU, memory and
process limits, every capability dropped, ``no-new-privileges``, a non-root user, no bind mounts at all
(the lane's files reach it as a git bundle and come back as snapshot bundles, also with a local
engine), and an environment made only of the lane's own variables: no TLS certificates, kubeconfig,
SSH keys, API keys or paragents secrets ever enter it."""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
import tarfile
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import aiodocker
import aiohttp
from aiodocker.exceptions import DockerError

from paragents.backend_settings import ContainerSettings
from paragents.backends import scripts
from paragents.backends.base import (
    BackendError,
    BackendKind,
    BackendUnreachable,
    FileProblem,
    Health,
    LaneGone,
    LaneSpec,
    Placement,
    Snapshot,
    Usage,
)
from paragents.backends.bundle import last_snapshot
from paragents.backends.remote import Chunk, RemoteBackend, Stdin
from paragents.lanes.repo import project_hash

LABEL = "dev.paragents.lane"
"""Label every lane container carries (its value: the lane's name); ``dev.paragents.repo`` holds the
repository's hash, so gc finds a project's containers with one filtered list."""
REPO_LABEL = "dev.paragents.repo"
_NAME_OK = re.compile(r"[^a-zA-Z0-9_.-]")
UNREACHABLE_ERRORS = (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, OSError, TimeoutError)


def container_name(spec: LaneSpec) -> str:
    """``paragents-<repo hash>-<lane>``: one name per lane and repository."""
    return f"paragents-{project_hash(spec.repo)}-{_NAME_OK.sub('-', spec.name)}"


def container_config(spec: LaneSpec, settings: ContainerSettings, image: str) -> dict[str, Any]:
    """The Engine API body that creates the lane's container (see the module docstring)."""
    env = {"HOME": scripts.HOME, **spec.env}
    return {
        "Image": image,
        "Entrypoint": ["sleep"],
        "Cmd": ["infinity"],
        "User": settings.user,
        "WorkingDir": scripts.WORKSPACE,
        "Env": [f"{k}={v}" for k, v in env.items()],
        "Labels": {LABEL: spec.name, REPO_LABEL: project_hash(spec.repo)},
        "NetworkDisabled": settings.network == "none",
        "HostConfig": {
            "NetworkMode": settings.network,
            "NanoCpus": int(settings.cpus * 1e9),
            "Memory": settings.memory_bytes,
            "MemorySwap": settings.memory_bytes,
            "PidsLimit": settings.pids_limit,
            "CapDrop": ["ALL"],
            "SecurityOpt": ["no-new-privileges"],
            "Privileged": False,
            "Init": True,
            "Binds": [],
            "Mounts": [],
            "RestartPolicy": {"Name": "no"},
        },
    }


def workspace_tar(user: str, placement: Placement | None = None) -> bytes:
    """A tar holding the empty ``workspace`` directory owned by ``user`` (uid:gid), extracted at ``/``
    by the engine: how the lane's user gets a writable /workspace in any image. With a ``placement``,
    also its aliases as symbolic links to /workspace (the engine replaces what the image has there)
    and its empty directories owned by that user."""
    uid, _, gid = user.partition(":")
    owner = int(uid) if uid.isdigit() else 1000
    group = int(gid) if gid.isdigit() else owner
    place = placement or Placement()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name in ("workspace", *(p.lstrip("/") for p in place.empty_dirs)):
            info = tarfile.TarInfo(name)
            info.type = tarfile.DIRTYPE
            info.mode = 0o755
            info.uid, info.gid = owner, group
            tar.addfile(info)
        for alias in place.aliases:
            link = tarfile.TarInfo(alias.lstrip("/"))
            link.type = tarfile.SYMTYPE
            link.linkname = scripts.WORKSPACE
            tar.addfile(link)
    return buf.getvalue()


class ContainerBackend(RemoteBackend):
    """One lane in one container (see the module docstring)."""

    kind: BackendKind = "container"

    def __init__(
        self,
        spec: LaneSpec,
        settings: ContainerSettings,
        image: str,
        *,
        client: aiodocker.Docker | None = None,
        placement: Placement | None = None,
    ) -> None:
        super().__init__(spec, max_snapshot_bytes=settings.max_snapshot_bytes)
        self.settings = settings
        self.image = image
        self.placement = placement or Placement()
        self.name = container_name(spec)
        self._client = client
        self._owns_client = client is None

    @property
    def where(self) -> str:
        return f"container {self.name} ({self.engine})"

    @property
    def engine(self) -> str:
        """The engine's address as configured (never with credentials: those live in files)."""
        return self.settings.host or "the default Docker engine"

    # --- the engine -------------------------------------------------------------------------------

    def docker(self) -> aiodocker.Docker:
        if self._client is None:
            timeout = aiohttp.ClientTimeout(
                total=None, connect=self.settings.connect_timeout, sock_connect=self.settings.connect_timeout
            )
            try:
                self._client = aiodocker.Docker(url=self.settings.host, timeout=timeout)
            except (ValueError, OSError, AssertionError) as exc:
                raise BackendError(f"cannot use the Docker engine {self.engine}: {exc}") from exc
        return self._client

    @contextlib.asynccontextmanager
    async def _engine(self, what: str, *, gone_ok: bool = False) -> AsyncIterator[None]:
        """Turn the client's errors into BackendUnreachable / LaneGone / BackendError naming ``what``."""
        try:
            yield
        except DockerError as exc:
            if exc.status == 900:
                raise self._unreachable(what, exc.message) from exc
            if exc.status == 404 or (exc.status == 409 and "not running" in exc.message):
                if gone_ok:
                    return
                raise LaneGone(
                    f"lane {self.spec.name}'s container {self.name} is gone or stopped ({what}): "
                    "recover it (it is recreated from the last fetched snapshot)"
                ) from exc
            raise BackendError(
                f"the Docker engine refused {what} for lane {self.spec.name}: {exc.message}"
            ) from exc
        except UNREACHABLE_ERRORS as exc:
            raise self._unreachable(what, str(exc) or type(exc).__name__) from exc

    def _unreachable(self, what: str, why: str) -> BackendUnreachable:
        return BackendUnreachable(
            f"lane {self.spec.name} is unreachable: the Docker engine ({self.engine}) did not answer "
            f"({what}: {why}); its fetched snapshots are kept, and it resumes when the engine answers"
        )

    async def _inspect(self) -> dict[str, Any] | None:
        """The container's inspect data, None when it does not exist."""
        async with self._engine("inspecting the container"):
            try:
                return await self.docker().containers.container(self.name).show()
            except DockerError as exc:
                if exc.status == 404:
                    return None
                raise

    # --- life cycle -------------------------------------------------------------------------------

    async def create(self) -> None:
        """Create and start the container, then check the lane out in it (from the last fetched
        snapshot when there is one). Existing: started if stopped. Failure removes what was made."""
        await self._stop_agent()
        info = await self._inspect()
        if info is not None:
            if not info["State"]["Running"]:
                async with self._engine("starting the container"):
                    await self.docker().containers.container(self.name).start()
            return
        await self._ensure_image()
        made = False
        try:
            async with self._engine("creating the container"):
                container = await self.docker().containers.create(
                    container_config(self.spec, self.settings, self.image), name=self.name
                )
                made = True
                await container.put_archive("/", workspace_tar(self.settings.user, self.placement))
                await container.start()
            await self._populate(with_snapshot=True)
        except BaseException:
            if made:
                with contextlib.suppress(Exception):
                    await self._remove()
            raise

    async def _ensure_image(self) -> None:
        async with self._engine(f"looking up the image {self.image}"):
            try:
                await self.docker().images.inspect(self.image)
                return
            except DockerError as exc:
                if exc.status != 404:
                    raise
            try:
                await self.docker().images.pull(self.image)
            except DockerError as exc:
                if exc.status == 900:
                    raise
                raise BackendError(
                    f"the image {self.image} is not on the Docker engine ({self.engine}) and could not be "
                    f"pulled: {exc.message}"
                ) from exc

    async def _remove(self) -> None:
        await self._stop_agent()
        async with self._engine("removing the container", gone_ok=True):
            await self.docker().containers.container(self.name).delete(force=True, v=True)

    async def health(self) -> Health:
        try:
            info = await asyncio.wait_for(self._inspect(), self.settings.connect_timeout)
        except (BackendError, TimeoutError) as exc:
            return Health("unreachable", str(exc) or "the Docker engine did not answer in time")
        if info is None:
            return Health("missing", f"container {self.name} does not exist")
        state = info["State"]
        if state.get("Running"):
            return Health("running", f"container {self.name} is running")
        return Health("stopped", f"container {self.name} is {state.get('Status', 'stopped')}")

    async def recover(self) -> str | None:
        health = await self.health()
        if health.state == "unreachable":
            raise BackendUnreachable(health.detail)
        if health.state == "running":
            return None
        if health.state == "stopped":
            await self._stop_agent()
            async with self._engine("starting the container"):
                await self.docker().containers.container(self.name).start()
            return f"lane {self.spec.name}'s container had stopped; it was started again with its files"
        snap = await last_snapshot(self.spec)
        await self.create()
        if snap:
            return (
                f"lane {self.spec.name}'s container was gone; recreated from its last fetched snapshot "
                f"{snap[:12]} (changes made after that snapshot was fetched are lost)"
            )
        return (
            f"lane {self.spec.name}'s container was gone; recreated from its base "
            f"{self.spec.base_commit[:12]} (no snapshot had been fetched)"
        )

    async def destroy(self, *, force: bool = False) -> Snapshot | None:
        snap: Snapshot | None = None
        try:
            snap = await self.snapshot()
        except LaneGone:
            return None
        except BackendError:
            if not force:
                raise
        await self._remove()
        return snap

    async def close(self) -> None:
        await self._stop_agent()
        if self._client is not None and self._owns_client:
            with contextlib.suppress(Exception):
                await self._client.close()
        self._client = None

    # --- the transport ----------------------------------------------------------------------------

    async def _run(
        self,
        argv: Sequence[str],
        *,
        on_chunk: Chunk,
        stdin: Stdin = None,
        env: Mapping[str, str] | None = None,
    ) -> int:
        async with self._engine("running a command"):
            container = self.docker().containers.container(self.name)
            exe = await container.exec(
                list(argv), stdin=stdin is not None, environment=dict(env or {}), workdir="/"
            )
            async with exe.start(detach=False) as stream:
                feeder: asyncio.Task[None] | None = None
                if isinstance(stdin, bytes):
                    await stream.write_in(stdin)
                elif stdin is not None:
                    feeder = asyncio.create_task(_feed(stream, stdin))
                try:
                    while (message := await stream.read_out()) is not None:
                        on_chunk(message.stream, message.data)
                finally:
                    if feeder is not None:
                        feeder.cancel()
                        with contextlib.suppress(BaseException):
                            await feeder
            info = await exe.inspect()
        code = info.get("ExitCode")
        if code is None:
            raise self._unreachable("running a command", "the command's exit code was lost")
        return int(code)

    async def put_archive(self, data: bytes) -> None:
        """Unpack the tar ``data`` at ``/`` of the container as the engine does it: owners and modes
        as the archive says (``paragents eval`` puts a trial's hidden tests in owned by root, so the
        lane's user cannot change them)."""
        async with self._engine("copying files into the container"):
            await self.docker().containers.container(self.name).put_archive("/", data)

    async def get_archive(self, path: str, *, limit: int) -> bytes | None:
        """The engine's tar of the absolute ``path`` in the container (its last component first in
        every name), read as it streams; None when it is larger than ``limit`` bytes; FileProblem
        when there is no such path."""
        async with self._engine(f"copying {path} out of the container"):
            try:
                return await read_archive(self.docker(), self.name, path, limit)
            except DockerError as exc:
                if exc.status != 404 or "no such container" in exc.message.lower():
                    raise
        raise FileProblem(f"{path} is not in lane {self.spec.name}'s container", "missing")

    async def usage(self) -> Usage:
        """CPU, memory and processes from the engine's stats (one sample: CPU over its last second)."""
        async with self._engine("reading the container's stats"):
            stats = await self.docker().containers.container(self.name).stats(stream=False)
        return usage_of(stats[0] if isinstance(stats, list) and stats else stats)


async def read_archive(docker: aiodocker.Docker, container: str, path: str, limit: int) -> bytes | None:
    """The engine's tar of ``path`` in ``container`` (``GET /containers/{id}/archive``), read as it
    streams; None when it is larger than ``limit`` bytes (aiodocker's ``get_archive`` reads any size
    into memory). DockerError from the engine (404: no such path)."""
    data = bytearray()
    async with docker._query(
        f"containers/{container}/archive", method="GET", params={"path": path}
    ) as response:
        async for chunk in response.content.iter_chunked(65536):
            data.extend(chunk)
            if len(data) > limit:
                return None
    return bytes(data)


async def _feed(stream: Any, chunks: AsyncIterator[bytes]) -> None:
    """Write ``chunks`` to an exec's stdin as they come (a forwarded port's connection)."""
    with contextlib.suppress(RuntimeError, ConnectionError, OSError):
        async for chunk in chunks:
            await stream.write_in(chunk)


def usage_of(stats: Any) -> Usage:
    """A :class:`Usage` from one Docker stats sample (``cpu_stats`` against ``precpu_stats``)."""
    if not isinstance(stats, dict):
        return Usage()
    cpu, pre = stats.get("cpu_stats") or {}, stats.get("precpu_stats") or {}
    percent = None
    try:
        used = cpu["cpu_usage"]["total_usage"] - pre["cpu_usage"]["total_usage"]
        system = cpu["system_cpu_usage"] - pre["system_cpu_usage"]
        cores = cpu.get("online_cpus") or len(cpu["cpu_usage"].get("percpu_usage") or []) or 1
        if system > 0:
            percent = used / system * cores * 100.0
    except (KeyError, TypeError):
        pass
    memory = stats.get("memory_stats") or {}
    mem = memory.get("usage")
    if isinstance(mem, int):
        mem -= int((memory.get("stats") or {}).get("inactive_file", 0) or 0)
    limit = memory.get("limit") if isinstance(memory.get("limit"), int) else 0
    pids = (stats.get("pids_stats") or {}).get("current")
    return Usage(
        percent, mem if isinstance(mem, int) else None, limit or 0, pids if isinstance(pids, int) else None
    )
