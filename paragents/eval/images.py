"""A Harbor task's ``environment/Dockerfile`` built on the Docker engine of ``eval run --on container``
(docs/eval.md, "Trials in containers"), through the Engine API (aiodocker's client, ``POST /build``).

- **Only from local images.** No image registry is reachable from the machines paragents' eval runs
  on, so a build starts only when every base image its ``FROM`` lines name is on the engine already
  (:meth:`EngineImages.missing`); else the task runs in a local lane and its notes say why.
- **No network** for the build's ``RUN`` steps unless the task's ``[environment]`` allows it
  (``network_mode = "public"``, or the older ``allow_internet = true``).
- **Cached by content**: the tag is a hash of the build context (the Dockerfile and every file of
  ``environment/``, their paths and modes) and the build's network, so an unchanged task is built once
  (``paragents-eval:<hash>``) and a replay runs in the same image.
- The built image's working directory is **read back** (:meth:`EngineImages.working_files`): its files
  are the task's base commit, so the lane starts with exactly what the image holds there, ``RUN``
  outputs included.

Nothing here imports Textual; aiodocker loads only for a container run."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import io
import json
import posixpath
import tarfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paragents.eval.errors import EvalError

if TYPE_CHECKING:
    import aiodocker

    from paragents.backend_settings import ContainerSettings

IMAGE_REPO = "paragents-eval"
"""Repository of the images built for tasks (``paragents-eval:<content hash>``)."""
LABEL = "dev.paragents.eval"
"""Label of the images built here and of the short-lived containers that read them back."""
MAX_CONTEXT_BYTES = 256 * 1024 * 1024
"""A larger build context is refused (the task runs in a local lane, with a note)."""
MAX_WORKDIR_BYTES = 64 * 1024 * 1024
"""At most this much of an image's working directory is read back."""
MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_FILES = 2000


class BuildFailed(Exception):
    """The engine could not build a task's image (the message names the step's error)."""


def base_images(dockerfile: bytes) -> list[str]:
    """The images the ``FROM`` lines of ``dockerfile`` start from (``ARG`` defaults substituted; build
    stages named by ``AS`` and ``scratch`` left out), in order."""
    from dockerfile_parse import DockerfileParser

    parser = DockerfileParser(fileobj=io.BytesIO(dockerfile))
    froms = [item for item in parser.structure if str(item["instruction"]).upper() == "FROM"]
    stages: set[str] = set()
    found: list[str] = []
    for item, image in zip(froms, parser.parent_images, strict=False):
        words = [w for w in str(item["value"]).split() if not w.startswith("--")]
        if image.lower() not in stages and image != "scratch" and image not in found:
            found.append(image)
        if len(words) == 3 and words[1].lower() == "as":
            stages.add(words[2].lower())
    return found


def context_tar(folder: Path) -> tuple[bytes, str]:
    """The build context ``folder`` as a tar (files, directories and symbolic links as they are, owner
    root, fixed times) and the hash of its content. EvalError when it is larger than
    :data:`MAX_CONTEXT_BYTES`."""
    digest = hashlib.sha256()
    buf = io.BytesIO()
    total = 0
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path in sorted(folder.rglob("*")):
            rel = path.relative_to(folder).as_posix()
            info = tarfile.TarInfo(rel)
            info.uid = info.gid = 0
            info.mtime = 0
            st = path.lstat()
            info.mode = st.st_mode & 0o7777
            if path.is_symlink():
                info.type = tarfile.SYMTYPE
                info.linkname = str(Path(path).readlink())
                data = None
                digest.update(f"l {rel} {info.linkname}\n".encode())
            elif path.is_dir():
                info.type = tarfile.DIRTYPE
                data = None
                digest.update(f"d {rel} {info.mode:o}\n".encode())
            elif path.is_file():
                body = path.read_bytes()
                total += len(body)
                if total > MAX_CONTEXT_BYTES:
                    raise EvalError(f"{folder}: the build context is larger than {MAX_CONTEXT_BYTES} bytes")
                info.size = len(body)
                data = io.BytesIO(body)
                digest.update(f"f {rel} {info.mode:o} {len(body)}\n".encode() + body)
            else:
                continue
            tar.addfile(info, data)
    return buf.getvalue(), digest.hexdigest()


class EngineImages:
    """The Docker engine of a container run, as the eval's image work needs it (see the module
    docstring). ``async with EngineImages(settings) as engine: ...``; every engine error becomes an
    EvalError (exit 2) naming the engine and what to do."""

    def __init__(self, settings: ContainerSettings) -> None:
        self.settings = settings
        self._client: aiodocker.Docker | None = None

    @property
    def engine(self) -> str:
        return self.settings.host or "the default Docker engine"

    async def __aenter__(self) -> EngineImages:
        import aiodocker
        import aiohttp

        timeout = aiohttp.ClientTimeout(total=None, connect=self.settings.connect_timeout)
        try:
            self._client = aiodocker.Docker(url=self.settings.host, timeout=timeout)
        except (ValueError, OSError, AssertionError) as exc:
            why = str(exc) or "no engine found (set lanes.container.host or DOCKER_HOST)"
            raise EvalError(f"--on container: cannot use the Docker engine {self.engine}: {why}") from None
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._client is not None:
            with contextlib.suppress(Exception):
                await self._client.close()
        self._client = None

    @property
    def docker(self) -> aiodocker.Docker:
        assert self._client is not None, "use EngineImages in `async with`"
        return self._client

    @contextlib.asynccontextmanager
    async def _engine(self, what: str) -> AsyncIterator[None]:
        # deferred: aiodocker loads only when a run talks to the Docker engine
        from aiodocker.exceptions import DockerError

        from paragents.backends.container import UNREACHABLE_ERRORS  # deferred: aiodocker, as above

        try:
            yield
        except DockerError as exc:
            if exc.status == 900:
                raise self._unreachable(what, exc.message) from None
            raise EvalError(
                f"--on container: the Docker engine ({self.engine}) refused {what}: {exc.message}"
            ) from None
        except UNREACHABLE_ERRORS as exc:
            raise self._unreachable(what, str(exc) or type(exc).__name__) from None

    def _unreachable(self, what: str, why: str) -> EvalError:
        return EvalError(
            f"--on container: the Docker engine ({self.engine}) did not answer ({what}: {why}); start it, "
            "set lanes.container.host, or run with --on local"
        )

    async def has(self, image: str) -> bool:
        """True when ``image`` is on the engine."""
        from aiodocker.exceptions import DockerError

        async with self._engine(f"looking up the image {image}"):
            try:
                await self.docker.images.inspect(image)
                return True
            except DockerError as exc:
                if exc.status != 404:
                    raise
                return False

    async def missing(self, images: list[str]) -> list[str]:
        """Those of ``images`` the engine does not have."""
        return [image for image in images if not await self.has(image)]

    async def build(self, context: bytes, digest: str, *, network: bool, timeout: float, source: str) -> str:
        """Build ``context`` (its ``Dockerfile``) unless its tag exists; return the tag. ``network``:
        the ``RUN`` steps get the engine's default network (else none). BuildFailed with the engine's
        last error; EvalError when the engine does not answer."""
        key = hashlib.sha256(f"{digest}\nnetwork={network}\n".encode()).hexdigest()[:16]
        tag = f"{IMAGE_REPO}:{key}"
        if await self.has(tag):
            return tag
        params = {
            "t": tag,
            "rm": "1",
            "forcerm": "1",
            "networkmode": "default" if network else "none",
            "labels": json.dumps({LABEL: "image"}),
        }
        errors: list[str] = []
        try:
            async with (
                asyncio.timeout(timeout),
                self._engine(f"building {source}"),
                self.docker._query(
                    "build",
                    method="POST",
                    params=params,
                    data=context,
                    headers={"Content-Type": "application/x-tar"},
                ) as response,
            ):
                async for line in response.content:
                    try:
                        item = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(item, dict) and item.get("error"):
                        errors.append(str(item["error"]).strip())
        except TimeoutError:
            raise BuildFailed(
                f"the build did not finish within {timeout:g} s ([environment] build_timeout_sec)"
            ) from None
        if errors:
            raise BuildFailed(errors[-1][:500])
        if not await self.has(tag):
            raise BuildFailed("the engine reported no error but made no image")
        return tag

    async def working_files(
        self, image: str, workdir: str
    ) -> tuple[dict[str, bytes], dict[str, int], list[str]]:
        """The regular files below ``workdir`` in ``image`` (relative paths, bytes and modes) and notes
        on what was left out (symbolic links, ``.git`` folders, files past the limits). Read through a
        container that is created, never started, and removed."""
        from aiodocker.exceptions import DockerError

        config: dict[str, Any] = {
            "Image": image,
            "Cmd": ["true"],
            "Entrypoint": [],
            "NetworkDisabled": True,
            "Labels": {LABEL: "read"},
            "HostConfig": {"NetworkMode": "none"},
        }
        async with self._engine(f"reading {workdir} of {image}"):
            container = await self.docker.containers.create(config)
            try:
                try:
                    from paragents.backends.container import read_archive  # deferred: aiodocker, as above

                    data = await read_archive(self.docker, container.id, workdir, MAX_WORKDIR_BYTES)
                except DockerError as exc:
                    if exc.status == 404:
                        return {}, {}, [f"{workdir} is not in the image: the lane starts empty"]
                    raise
            finally:
                with contextlib.suppress(Exception):
                    await container.delete(force=True, v=True)
        if data is None:
            raise EvalError(
                f"{workdir} of {image} is larger than {MAX_WORKDIR_BYTES} bytes: run it with --on local"
            )
        return files_of_archive(data, posixpath.basename(workdir.rstrip("/")) or ".")

    async def sweep(self, label: str, value: str) -> int:
        """Remove every container whose label ``label`` is ``value`` (what a stopped run left); return
        how many."""
        filters = json.dumps({"label": [f"{label}={value}"]})
        async with self._engine("listing containers"):
            found = await self.docker.containers.list(all=True, filters=filters)
            for container in found:
                with contextlib.suppress(Exception):
                    await container.delete(force=True, v=True)
        return len(found)


def files_of_archive(data: bytes, top: str) -> tuple[dict[str, bytes], dict[str, int], list[str]]:
    """The regular files of the engine's tar ``data`` of a directory named ``top`` (paths relative to
    it), their modes, and notes on what was left out."""
    files: dict[str, bytes] = {}
    modes: dict[str, int] = {}
    skipped: dict[str, list[str]] = {"link": [], "git": [], "large": []}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
        for member in tar:
            name = posixpath.normpath(member.name)
            if name == top or name == ".":
                continue
            rel = name[len(top) + 1 :] if top != "." and name.startswith(top + "/") else name
            parts = rel.split("/")
            if rel.startswith("/") or ".." in parts:
                continue
            if ".git" in parts:
                if parts[-1] == ".git":
                    skipped["git"].append(rel)
                continue
            if member.issym() or member.islnk():
                skipped["link"].append(rel)
                continue
            if not member.isfile():
                continue
            if member.size > MAX_FILE_BYTES or len(files) >= MAX_FILES:
                skipped["large"].append(rel)
                continue
            handle = tar.extractfile(member)
            if handle is None:
                continue
            files[rel] = handle.read()
            modes[rel] = member.mode & 0o777
    notes = []
    if skipped["link"]:
        notes.append(
            f"{len(skipped['link'])} symbolic link(s) of the image's working directory not in the lane: "
            + _few(skipped["link"])
        )
    if skipped["git"]:
        notes.append(
            f"the image's git folder(s) {_few(skipped['git'])} are not in the lane (a lane is its own "
            "repository)"
        )
    if skipped["large"]:
        notes.append(
            f"{len(skipped['large'])} file(s) too large or too many, not in the lane: "
            + _few(skipped["large"])
        )
    return files, modes, notes


def _few(names: list[str]) -> str:
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
