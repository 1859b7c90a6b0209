"""A new default model (``/setup``, ``/reload``) reaches the open sessions that were on the old
default; a session given its own model keeps it."""

from __future__ import annotations

import json

from paragents import events as ev
from paragents import paths
from paragents.sessions import Runtime
from tests.runtime_env import Env


async def test_sessions_on_the_old_default_follow_a_new_default_model(env: Env) -> None:
    config = paths.user_runtime_config_path()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"base_url": env.server.base_url, "model": "m"}))
    rt = await Runtime.create(env.project, cli_overrides={"max_retries": 0}, db_path=env.db)
    rt.set_sink(env.sink)
    on_default = await rt.new_session("a")
    own = await rt.new_session("b")
    await rt.set_model(own.id, "other")
    config.write_text(json.dumps({"base_url": env.server.base_url, "model": "n"}))
    await rt.reload_config()
    assert on_default.model == "n" and own.model == "other"
    assert (await rt.store.sessions.get(on_default.id)).model == "n"  # type: ignore[union-attr]
    notes = [n.text for n in env.sink.of(ev.Notice, on_default.id)]
    assert any("model m -> n" in n and "/model m" in n for n in notes), notes
    assert not any("-> n" in n.text for n in env.sink.of(ev.Notice, own.id))
    await rt.shutdown()


async def test_an_unset_api_key_env_opens_setup_instead_of_refusing_to_start(env: Env) -> None:
    """`paragents` with `api_key_env` naming an unset variable used to exit 2 with "run /setup", which
    it could not reach; the TUI's runtime now starts keyless and says why (the setup screen opens)."""
    import pytest

    from paragents.config import MissingKeyError

    config = paths.user_runtime_config_path()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        json.dumps({"base_url": env.server.base_url, "model": "m", "api_key_env": "NO_SUCH_KEY_1"})
    )
    with pytest.raises(MissingKeyError, match=r"\$NO_SUCH_KEY_1"):
        await Runtime.create(env.project, db_path=env.db, env={})
    rt = await Runtime.create(env.project, db_path=env.db, env={}, keyless_ok=True)
    assert rt.key_problem is not None and "NO_SUCH_KEY_1" in rt.key_problem
    assert any("the setup screen is open" in note for note in rt.notes)
    await rt.shutdown()
