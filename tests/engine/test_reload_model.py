"""A new default model (``/setup``, ``/reload``) reaches the open sessions that were on the old
default; a session given its own model keeps it."""

from __future__ import annotations

import json

from paragents import events as ev
from paragents import paths
from paragents.sessions import Runtime
from tests.engine.conftest import Env


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
    assert (await rt.store.get_session(on_default.id)).model == "n"  # type: ignore[union-attr]
    notes = [n.text for n in env.sink.of(ev.Notice, on_default.id)]
    assert any("model m -> n" in n and "/model m" in n for n in notes), notes
    assert not any("-> n" in n.text for n in env.sink.of(ev.Notice, own.id))
    await rt.shutdown()
