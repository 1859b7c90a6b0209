"""Building a devcontainer's Dockerfile on the lane's Docker engine (``build`` in devcontainer.json)."""

from __future__ import annotations

import json

from aiodocker.exceptions import DockerError

from paragents.backends.base import BackendError
from paragents.backends.container import ContainerBackend
from paragents.backends.devcontainer import ImageSpec, build_context, dockerfile_in_context


async def ensure_built(backend: ContainerBackend, spec: ImageSpec) -> str:
    """Build ``spec`` (from the lane's base commit) unless its tag exists; return the tag. The build
    runs on the engine with the engine's defaults (its network: the user's own Dockerfile); errors
    name the devcontainer file and the failing step."""
    lane = backend.spec
    tag = spec.tag(lane.base_commit)
    docker = backend.docker()
    async with backend._engine(f"looking up the image {tag}"):
        try:
            await docker.images.inspect(tag)
            return tag
        except DockerError as exc:
            if exc.status != 404:
                raise
    context = await build_context(lane.repo, lane.base_commit, spec)
    params: dict[str, str] = {"t": tag, "dockerfile": dockerfile_in_context(spec), "rm": "1", "forcerm": "1"}
    if spec.args:
        params["buildargs"] = json.dumps(spec.args)
    if spec.target:
        params["target"] = spec.target
    # aiodocker's images.build() has no ``target``: the Engine API's POST /build, through its client.
    errors: list[str] = []
    async with (
        backend._engine(f"building {spec.source}"),
        docker._query(
            "build", method="POST", params=params, data=context, headers={"Content-Type": "application/x-tar"}
        ) as response,
    ):
        async for line in response.content:
            try:
                item = json.loads(line)
            except ValueError:
                continue
            if isinstance(item, dict) and item.get("error"):
                errors.append(str(item["error"]).strip())
    if errors:
        raise BackendError(f"building the image of {spec.source} failed: {errors[-1][:500]}")
    return tag
