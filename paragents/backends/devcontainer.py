"""Which image a container or Kubernetes lane runs: ``lanes.image``, else the project's
``.devcontainer/devcontainer.json`` (``image``, or ``build``: a Dockerfile built by the engine).

The file is read from the lane's **base commit** (``git show``), never from a working tree a session
can write, and a build's context is ``git archive`` of that commit (committed files only: no
ignored ``.env``). devcontainer.json is JSON with comments and trailing commas (read with ``json5``)."""

from __future__ import annotations

import hashlib
import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import json5

from paragents.backends.base import BackendError
from paragents.lanes.git import git
from paragents.tools.git_exec import run_git

LOCATIONS = (".devcontainer/devcontainer.json", ".devcontainer.json")
"""Where the devcontainer spec may be, first found wins (as the Dev Containers spec says)."""


@dataclass(frozen=True)
class ImageSpec:
    """An image to use as it is (``image``) or to build (``dockerfile`` in ``context``, both paths
    relative to the repository; ``args`` build arguments; ``target`` a stage); ``source`` names where
    the choice came from, for messages."""

    source: str
    image: str | None = None
    dockerfile: str | None = None
    context: str = "."
    args: dict[str, str] = field(default_factory=dict)
    target: str | None = None

    def tag(self, base_commit: str) -> str:
        """The tag a build of this spec at ``base_commit`` gets (same inputs, same tag: reused)."""
        key = repr((self.dockerfile, self.context, sorted(self.args.items()), self.target, base_commit))
        return "paragents-devcontainer:" + hashlib.sha256(key.encode()).hexdigest()[:16]


async def read_devcontainer(repo: Path, commit: str) -> tuple[str, dict[str, Any]] | None:
    """The devcontainer.json of ``commit`` (its path and parsed content), or None when it has none.
    BackendError naming the file when it is not valid JSON with comments."""
    for location in LOCATIONS:
        result = await git("show", f"{commit}:{location}", cwd=repo, check=False)
        if not result.ok:
            continue
        try:
            data = json5.loads(result.out)
        except ValueError as exc:
            raise BackendError(f"{location} (at {commit[:12]}) is not valid JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise BackendError(f"{location} (at {commit[:12]}) must hold a JSON object")
        return location, data
    return None


def spec_from_devcontainer(location: str, data: dict[str, Any]) -> ImageSpec:
    """The :class:`ImageSpec` of a devcontainer.json (``image``, or ``build``/``dockerFile``);
    BackendError naming the field when neither is usable (docker compose setups are not supported)."""
    if isinstance(data.get("image"), str) and data["image"].strip():
        return ImageSpec(source=location, image=data["image"].strip())
    raw = data.get("build")
    build: dict[str, Any] = raw if isinstance(raw, dict) else {}
    dockerfile = build.get("dockerfile") or data.get("dockerFile")
    if isinstance(dockerfile, str) and dockerfile:
        here = posixpath.dirname(location)
        context = build.get("context", ".")
        args = build.get("args") or {}
        if not isinstance(context, str) or not isinstance(args, dict):
            raise BackendError(f"{location}: build.context must be a string and build.args an object")
        target = build.get("target")
        return ImageSpec(
            source=location,
            dockerfile=posixpath.normpath(posixpath.join(here, dockerfile)),
            context=posixpath.normpath(posixpath.join(here, context)),
            args={str(k): str(v) for k, v in args.items()},
            target=target if isinstance(target, str) else None,
        )
    if "dockerComposeFile" in data:
        raise BackendError(
            f"{location} uses dockerComposeFile, which lanes do not run: set lanes.image to an image instead"
        )
    raise BackendError(f"{location} names no 'image' and no 'build.dockerfile': set one, or set lanes.image")


async def image_spec(repo: Path, commit: str, configured: str | None) -> ImageSpec:
    """``lanes.image`` when set, else the devcontainer.json of ``commit``; BackendError saying what
    to set when there is neither."""
    if configured:
        return ImageSpec(source="lanes.image", image=configured)
    found = await read_devcontainer(repo, commit)
    if found is None:
        raise BackendError(
            "no image for the lane: set lanes.image in runtime_config.json, or add "
            ".devcontainer/devcontainer.json with an 'image' or a 'build' to the repository"
        )
    return spec_from_devcontainer(*found)


async def build_context(repo: Path, commit: str, spec: ImageSpec) -> bytes:
    """The build context of ``spec`` as a tar: ``git archive`` of ``commit``'s ``spec.context``."""
    prefix = "" if spec.context in (".", "") else spec.context.rstrip("/") + "/"
    if spec.context.startswith("..") or spec.context.startswith("/"):
        raise BackendError(f"{spec.source}: the build context {spec.context!r} is outside the repository")
    treeish = f"{commit}:{prefix}" if prefix else commit
    done = await run_git(["archive", "--format=tar", treeish], repo)  # hardened: no smudge filter runs
    if done.code != 0:
        raise BackendError(f"cannot archive the build context {spec.context!r}: {done.err.decode().strip()}")
    return done.out


def dockerfile_in_context(spec: ImageSpec) -> str:
    """The Dockerfile's path inside the build context (BackendError when it lies outside it)."""
    assert spec.dockerfile is not None
    rel = posixpath.relpath(spec.dockerfile, spec.context or ".")
    if rel.startswith(".."):
        raise BackendError(f"{spec.source}: the Dockerfile {spec.dockerfile} is outside the build context")
    return rel
