"""A closed session whose directory is gone (a fan-out sibling's lane discarded on the compare screen, a
folder the user removed) is not opened again: reopening or attaching says why, and nothing makes the
removed path again (fresh-user finding after issue 29)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from paragents.sessions import SessionError
from tests.runtime_env import Env


async def test_reopening_a_session_whose_directory_is_gone_is_refused_and_makes_nothing(env: Env) -> None:
    work = env.project / "lane-like"
    work.mkdir()
    rt = await env.runtime()
    try:
        view = await rt.lifecycle.new_session("sib", workdir=work)
        await rt.lifecycle.close_session(view.id)
        shutil.rmtree(work)
        with pytest.raises(SessionError) as refused:
            await rt.lifecycle.reopen_session(view.id)
        assert "'sib'" in str(refused.value) and "no longer exists" in str(refused.value)
        assert str(work) in str(refused.value)
        assert view.id not in rt.sessions
        assert not work.exists()
    finally:
        await rt.shutdown()


async def test_attaching_a_session_whose_directory_is_gone_is_refused(env: Env) -> None:
    work = env.project / "lane-like"
    work.mkdir()
    rt = await env.runtime()
    try:
        view = await rt.lifecycle.new_session("sib", workdir=work)
        await rt.lifecycle.close_session(view.id)
    finally:
        await rt.shutdown()
    shutil.rmtree(work)
    again = await env.runtime()
    try:
        with pytest.raises(SessionError, match="no longer exists"):
            await again.lifecycle.attach_session("sib")
        assert not work.exists() and not again.sessions
    finally:
        await again.shutdown()


async def test_a_session_whose_directory_exists_reopens(env: Env) -> None:
    work = env.project / "kept"
    work.mkdir()
    rt = await env.runtime()
    try:
        view = await rt.lifecycle.new_session("kept", workdir=Path(work))
        await rt.lifecycle.close_session(view.id)
        again = await rt.lifecycle.reopen_session(view.id)
        assert again.id == view.id and view.id in rt.sessions
    finally:
        await rt.shutdown()


def test_only_a_lanes_gone_directory_points_to_the_lane_bundles(tmp_path: Path) -> None:
    from paragents.lanes.repo import gone_dir, lanes_root

    folder = tmp_path / "removed"
    assert gone_dir(folder) == f"its directory {folder} no longer exists"
    lane = lanes_root() / "0123abcd" / "gone-lane"
    said = gone_dir(lane)
    assert said is not None and "a discarded lane's work is kept as a git bundle" in said
