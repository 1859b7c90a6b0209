"""Where each task's trials run with ``eval run --on container|k8s`` (docs/eval.md, "Trials in
containers and Pods"): :func:`place_tasks` gives every task a
:class:`~paragents.backends.base.Placement` (the image of its trial's container or Pod, its working
directory as an alias of the lane's workspace, the Pod's ``/tests`` and ``/logs``), or None: a local
lane, with a note saying why in the task's notes (which the report lists per task).

- ``container``: a Harbor task's ``environment/Dockerfile`` is built on the engine when every base
  image it names is there (:mod:`paragents.eval.images`; no registry is reachable from here), and
  the built image's working directory becomes the task's base commit; a task naming a prebuilt
  ``[environment] docker_image`` runs in it when the engine has it. A task with neither runs in
  ``lanes.image``. SWE-style tasks run in ``lanes.image`` or the repository's devcontainer image.
- ``k8s``: a cluster cannot pull an image built on this machine, so a Harbor task runs in its
  ``docker_image`` or else ``lanes.image``, its lane holding the files its Dockerfile copies (as a
  local lane does); without either it runs in a local lane.

Nothing here imports Textual."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from paragents.backends.base import BackendError, Placement, check_place_path
from paragents.config import LaneSettings
from paragents.eval.errors import EvalError
from paragents.eval.harbor import read_task_toml
from paragents.eval.images import BuildFailed, EngineImages, base_images, context_tar
from paragents.eval.tasks import Task, TaskSet

LOCAL_FIRST = "environment/Dockerfile not built"
"""How the local lane's own note (:func:`paragents.eval.harbor.environment_files`) starts."""
POD_DIRS = ("/tests", "/logs")
"""The empty directories a trial's Pod gets (its user copies the hidden tests into the first)."""


def _workdir_alias(task: Task) -> str | None:
    """The task's working directory when it can be an alias of the lane's workspace, else None."""
    try:
        return check_place_path(task.workdir)
    except BackendError:
        return None


def _local(task: Task, why: str) -> tuple[Task, None]:
    return dataclasses.replace(task, notes=(f"{why}: ran in a local lane", *task.notes)), None


def _kept_notes(task: Task) -> tuple[str, ...]:
    """The task's notes that still hold in a container (its network's, not the local lane's)."""
    return tuple(n for n in task.notes if n.startswith("network_mode"))


async def place_tasks(
    tasks: TaskSet, on: str, lanes: LaneSettings
) -> tuple[TaskSet, dict[str, Placement | None]]:
    """Each task (with its notes and, for a built image, its files) and its placement (None: a local
    lane). EvalError (exit 2) when the Docker engine does not answer."""
    placed: list[Task] = []
    placements: dict[str, Placement | None] = {}
    if on == "container":
        async with EngineImages(lanes.container) as engine:
            for task in tasks.tasks:
                new, placement = await _in_container(task, engine, lanes)
                placed.append(new)
                placements[task.id] = placement
    else:
        for task in tasks.tasks:
            new, placement = _in_pod(task, lanes)
            placed.append(new)
            placements[task.id] = placement
        if any(p is not None for p in placements.values()):
            await check_cluster(lanes)
    return dataclasses.replace(tasks, tasks=tuple(placed)), placements


async def check_cluster(lanes: LaneSettings) -> None:
    """EvalError (exit 2) unless the cluster of ``lanes.kubernetes`` answers (its ``/version``)."""
    import asyncio

    import kr8s

    settings = lanes.kubernetes
    try:
        api = await kr8s.asyncio.api(
            kubeconfig=settings.kubeconfig, context=settings.context, namespace=settings.namespace
        )
        await asyncio.wait_for(api.version(), 15)
    except Exception as exc:  # kubeconfig, TLS, transport, auth: one line whatever failed
        why = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
        raise EvalError(
            f"--on k8s: the cluster of the kubeconfig did not answer ({why}); check lanes.kubernetes "
            "(kubeconfig, context), or run with --on local"
        ) from None


async def _in_container(
    task: Task, engine: EngineImages, lanes: LaneSettings
) -> tuple[Task, Placement | None]:
    alias = _workdir_alias(task)
    network = lanes.container.network
    extra: tuple[str, ...] = ()
    if task.allow_internet and network == "none":
        extra = (
            f"the hidden tests ran with the container's network (lanes.container.network: {network}), not "
            "the network the task allows",
        )
    if task.format == "swe":
        return dataclasses.replace(task, notes=(*task.notes, *extra)), Placement(
            aliases=(alias,) if alias else ()
        )
    if alias is None:
        return _local(task, f"--on container: the working directory {task.workdir} cannot be the lane's")
    folder = Path(task.source)
    dockerfile = folder / "environment" / "Dockerfile"
    env = read_task_toml(folder).environment
    if dockerfile.is_file():
        try:
            bases = base_images(dockerfile.read_bytes())
        except (OSError, ValueError) as exc:
            raise EvalError(f"{dockerfile}: cannot be parsed ({exc})") from None
        missing = await engine.missing(bases)
        if missing:
            return _local(
                task,
                f"--on container: the base image {', '.join(missing)} is not on the Docker engine and no "
                "image registry is reachable from here, so environment/Dockerfile was not built",
            )
        build_network = env.network_mode == "public" or (
            env.network_mode is None and env.allow_internet is True
        )
        context, digest = context_tar(dockerfile.parent)
        try:
            image = await engine.build(
                context, digest, network=build_network, timeout=env.build_timeout_sec, source=str(dockerfile)
            )
        except BuildFailed as exc:
            return _local(task, f"--on container: environment/Dockerfile did not build ({exc})")
        first = (
            f"environment/Dockerfile built as {image} (from {', '.join(bases) or 'scratch'}; build network "
            f"{'default' if build_network else 'none'}): the trial ran in a container of it, its lane "
            f"holding the image's {task.workdir}"
        )
    elif env.docker_image:
        image = env.docker_image
        if not await engine.has(image):
            return _local(
                task,
                f"--on container: the prebuilt image {image} is not on the Docker engine and no image "
                "registry is reachable from here",
            )
        first = (
            f"the trial ran in a container of the prebuilt image {image}, its lane holding its {task.workdir}"
        )
    elif lanes.image:
        first = f"no environment/Dockerfile: the trial ran in a container of lanes.image {lanes.image}"
        notes = (first, *_kept_notes(task), *extra)
        return dataclasses.replace(task, notes=notes), Placement(image=lanes.image, aliases=(alias,))
    else:
        return _local(
            task, "--on container: the task has no environment/Dockerfile and lanes.image is not set"
        )
    files, modes, read_notes = await engine.working_files(image, task.workdir)
    notes = (first, *read_notes, *_kept_notes(task), *extra)
    return dataclasses.replace(task, files=files, modes=modes, notes=notes), Placement(
        image=image, aliases=(alias,)
    )


def _in_pod(task: Task, lanes: LaneSettings) -> tuple[Task, Placement | None]:
    alias = _workdir_alias(task)
    if alias is None:
        return _local(task, f"--on k8s: the working directory {task.workdir} cannot be the lane's")
    if task.format == "swe":
        return task, Placement(image=None, aliases=(alias,), empty_dirs=POD_DIRS)
    config = read_task_toml(Path(task.source))
    prebuilt = config.environment.docker_image
    image = prebuilt or lanes.image
    if not image:
        return _local(
            task, "--on k8s: no image for the Pod (set lanes.image, or the task's [environment] docker_image)"
        )
    what = f"the task's prebuilt image {image}" if prebuilt else f"lanes.image {image}"
    first = (
        f"the trial ran in a Pod of {what}, its lane at {task.workdir} holding the files "
        "environment/Dockerfile copies (a cluster cannot pull an image built on this machine, so the "
        "Dockerfile was not built)"
    )
    rest = tuple(n for n in task.notes if not n.startswith(LOCAL_FIRST))
    return dataclasses.replace(task, notes=(first, *rest)), Placement(
        image=image, aliases=(alias,), empty_dirs=POD_DIRS
    )
