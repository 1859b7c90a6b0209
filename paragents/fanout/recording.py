"""Keeping specialist reviews and splits as fan-out evidence (``paragents runs list|show``), in the
same tables as a best-of-N (docs/fanout.md):

- a **review** group: its prompt names the specialists and the base; each specialist (and the patch
  writer, when a patch was asked for) is a candidate whose ``evidence`` holds its findings or why it
  failed; ``settings`` holds the specialists, the base, the workdir and the merged ``report`` (JSON,
  its patch included); the patch is also the patch writer's ``patch``; the ``choice`` says whether the
  user applied the patch.
- a **split** group: its prompt is the task; ``settings`` holds the ``plan``, its schedule and the
  ``integration`` lane; each subtask is a candidate (its session and lane, its outcome in ``state``
  and ``evidence``); the ``choice`` says whether the plan was approved.

Nothing here imports Textual."""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING, Any

from paragents.lanes.git import git

if TYPE_CHECKING:
    from pathlib import Path

    from paragents.fanout.host import FanoutHost
    from paragents.sessions.view import SessionView
    from paragents.store.fanout import FanoutRepo


async def resolve_commit(workdir: Path, ref: str) -> str | None:
    """The commit ``ref`` names in ``workdir`` (None when git cannot resolve it)."""
    found = await git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", cwd=workdir, check=False)
    return (found.out.strip() or None) if found.ok else None


async def open_group(
    fanout: FanoutRepo,
    *,
    kind: str,
    project_dir: Path,
    name: str,
    prompt: str,
    base_ref: str | None,
    base_commit: str | None,
    settings: dict[str, Any],
) -> str:
    """Create a ``running`` group of ``kind`` (``review`` or ``split``) and return its id."""
    group_id = uuid.uuid4().hex
    await fanout.create_group(
        group_id=group_id,
        kind=kind,
        project_dir=str(project_dir),
        name=name,
        prompt=prompt,
        base_ref=base_ref,
        base_commit=base_commit,
        verify=None,
        settings=settings,
    )
    return group_id


async def add_member(
    host: FanoutHost, group_id: str, idx: int, view: SessionView, evidence: dict[str, Any] | None = None
) -> None:
    """Record the worker session ``view`` as candidate ``idx`` of the group (with its lane, if any)."""
    lane = await host.store.lanes.of_session(view.id) if view.lane else None
    await host.store.fanout.add_candidate(
        group_id,
        idx,
        session_id=view.id,
        session_name=view.name,
        model=view.model,
        lane=lane.name if lane else None,
        lane_path=lane.path if lane else None,
        branch=lane.branch if lane else None,
    )
    if evidence:
        await host.store.fanout.update_candidate(group_id, idx, evidence=evidence)


async def merge_settings(fanout: FanoutRepo, group_id: str, **values: Any) -> None:
    """Add ``values`` to the group's settings (keys given replace the stored ones)."""
    group = await fanout.get_group(group_id)
    if group is not None:
        await fanout.update_group(group_id, settings={**group.settings, **values})


async def finish_group(fanout: FanoutRepo, group_id: str, state: str, **settings: Any) -> None:
    """Stamp the group finished in ``state`` (``done``, ``failed``, ``refused``...), adding ``settings``."""
    if settings:
        await merge_settings(fanout, group_id, **settings)
    await fanout.update_group(group_id, state=state, finished=True)


async def record_choice(
    fanout: FanoutRepo, group_id: str, action: str, state: str | None = None, **details: Any
) -> None:
    """Record one user action in the group's choice as the compare screen does: the latest under its
    ``action`` name and every action in ``history`` (``paragents runs list`` prints them)."""
    group = await fanout.get_group(group_id)
    if group is None:
        return
    choice = dict(group.choice or {})
    stamped = {"action": action, **details, "at": time.time()}
    choice["history"] = [*choice.get("history", []), stamped]
    choice[action] = stamped
    await fanout.update_group(group_id, choice=choice, state=state)
