"""``/serve`` and ``/pair`` in the app: the API runs inside the app process (its own thread), an
approval pending in a panel is answered over HTTP and the panel's bar goes away; /pair shows the link."""

from __future__ import annotations

import json
from typing import Any

import httpx

from paragents.llm.replay import ReplayServer
from paragents.llm.replay_script import ScriptedResponse
from paragents.sessions.factory import opened
from paragents.ui.app import make_app
from paragents.ui.serve.hooks import running
from paragents.ui.serve.pair import PairScreen
from tests.patience import HANG_GUARD_S
from tests.typing_keys import type_line
from tests.ui.conftest import SIZE, wait_until
from tests.ui.helpers import first_panel, notices


async def test_serve_answers_a_panels_approval_over_http_and_pair_shows_a_link(
    make_runtime: Any, replay: ReplayServer
) -> None:
    call = {"id": "c1", "name": "write_file", "arguments": json.dumps({"path": "x.txt", "content": "hi\n"})}
    replay.add(ScriptedResponse.from_message(tool_calls=[call]))
    replay.add(ScriptedResponse.from_message("done"))
    runtime = await make_runtime()
    app = make_app(opened(runtime))
    async with app.run_test(size=SIZE) as pilot:
        panel = await first_panel(pilot, app)
        await type_line(pilot, panel, "/serve 0")
        await wait_until(pilot, lambda: running(app) is not None, "the API")
        server = running(app)
        assert server is not None
        assert any("paragents API on http://127.0.0.1:" in n for n in notices(app))
        assert server.thread.auth.api_key and server.thread.auth.api_key not in " ".join(notices(app))
        await type_line(pilot, panel, "write x")
        await wait_until(pilot, lambda: bool(panel.pending), "the approval bar")
        headers = {"Authorization": f"Bearer {server.thread.auth.api_key}"}
        async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=HANG_GUARD_S) as client:
            items = (await client.get("/inbox")).json()["items"]
            assert [i["tool"] for i in items] == ["write_file"]
            answer = await client.post(f"/inbox/{items[0]['id']}/answer", json={"answer": "allow_once"})
            assert answer.status_code == 200
        await wait_until(pilot, lambda: not panel.pending, "the bar to go")
        await runtime.wait_idle()
        assert (runtime.project_dir / "x.txt").read_text() == "hi\n"
        await type_line(pilot, panel, "/pair")
        await wait_until(pilot, lambda: isinstance(app.screen, PairScreen), "the pair screen")
        assert isinstance(app.screen, PairScreen) and app.screen.link.startswith(server.url + "/pair/")
        await pilot.press("escape")
        await type_line(pilot, panel, "/serve stop")
        await wait_until(pilot, lambda: running(app) is None, "the API to stop")
        await app.shutdown_runtime()
