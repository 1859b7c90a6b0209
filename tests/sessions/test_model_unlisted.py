"""``/model NAME`` for a model the server's ``/models`` does not list is accepted with one warning naming
the server and how to see its models; when ``/models`` cannot be read it says that instead, never a
traceback (fresh-user finding after issue 29). Real Runtime, real httpx against the loopback replay
server (which lists model "m") or a closed port."""

from __future__ import annotations

import socket

from paragents import events as ev
from tests.runtime_env import Env


def warnings(env: Env, sid: str) -> list[str]:
    return [n.text for n in env.sink.of(ev.Notice, sid) if n.level == "warning"]


async def test_an_unlisted_model_is_set_with_one_warning_naming_the_server(env: Env) -> None:
    rt = await env.runtime()
    try:
        a = await rt.lifecycle.new_session("a")
        b = await rt.lifecycle.new_session("b")
        await rt.controls.set_model(a.id, "m")  # listed: nothing to say
        assert warnings(env, a.id) == []
        await rt.controls.set_model(a.id, "gpt-9")
        assert a.model == "gpt-9"  # accepted: a server may serve more than it lists
        [said] = warnings(env, a.id)
        assert "'gpt-9'" in said and f"{env.server.base_url}/models does not list it" in said
        assert "(it lists m)" in said and "/setup" in said
        await rt.controls.set_model(b.id, "gpt-9")  # warned once
        assert b.model == "gpt-9" and warnings(env, b.id) == []
    finally:
        await rt.shutdown()


async def test_a_server_whose_models_cannot_be_read_is_named_without_a_traceback(env: Env) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    rt = await env.runtime(base_url=f"http://127.0.0.1:{port}/v1")
    try:
        view = await rt.lifecycle.new_session("a")
        await rt.controls.set_model(view.id, "other")
        assert view.model == "other"
        [said] = warnings(env, view.id)
        assert f"http://127.0.0.1:{port}/v1/models could not be read" in said and "'other'" in said
        assert "Traceback" not in said
    finally:
        await rt.shutdown()
