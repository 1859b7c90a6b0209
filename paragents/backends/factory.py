"""One way to get a lane's backend from the config: :func:`open_backend`."""

from __future__ import annotations

from paragents.backend_settings import ContainerSettings, KubernetesSettings
from paragents.backends.base import BackendError, BackendKind, ExecutionBackend, LaneSpec, Placement
from paragents.backends.devcontainer import image_spec
from paragents.backends.local import LocalBackend
from paragents.tools.sandbox import SandboxConfig


async def open_backend(
    kind: BackendKind,
    spec: LaneSpec,
    *,
    image: str | None = None,
    container: ContainerSettings | None = None,
    kubernetes: KubernetesSettings | None = None,
    sandbox: SandboxConfig | None = None,
    placement: Placement | None = None,
) -> ExecutionBackend:
    """The backend of lane ``spec`` on ``kind`` (not created yet: call ``create()``).

    ``image``: ``lanes.image`` (None: the project's devcontainer.json at the lane's base commit; a
    devcontainer ``build`` is built by the container backend); ``placement``: what this lane's place
    gets beyond the config (its image first). Client libraries are imported here, so a user of local
    lanes never loads them."""
    if kind == "local":
        return LocalBackend(spec, sandbox)
    place = placement or Placement()
    wanted = await image_spec(spec.repo, spec.base_commit, place.image or image)
    if kind == "container":
        # deferred: aiodocker (and aiohttp) load only for a lane in a container
        from paragents.backends.container import ContainerBackend
        from paragents.backends.images import ensure_built

        settings = container or ContainerSettings()
        backend = ContainerBackend(spec, settings, wanted.image or "", placement=place)
        if wanted.image is None:
            backend.image = await ensure_built(backend, wanted)
        return backend
    if kind == "kubernetes":
        if wanted.image is None:
            raise BackendError(
                f"{wanted.source} builds its image from a Dockerfile, which a cluster cannot pull: "
                "push the image to a registry the cluster reaches and set lanes.image to it"
            )
        from paragents.backends.kubernetes import KubernetesBackend  # deferred: kr8s, only for a Pod lane

        return KubernetesBackend(spec, kubernetes or KubernetesSettings(), wanted.image, placement=place)
    raise BackendError(f"unknown lanes.backend {kind!r}: use local, container or kubernetes")
