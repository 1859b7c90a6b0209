"""An app given the session API alone (no store: a stand-in, as the UI tests' FakeRuntime is) runs
every session command, and the commands that need the session layer's store (fan-out, /serve) say so
instead of failing."""

from __future__ import annotations

from pathlib import Path

from paragents.ui.app import make_app
from tests.typing_keys import type_line
from tests.ui.conftest import SIZE, wait_until
from tests.ui.fake_runtime import FakeRuntime, make_view
from tests.ui.helpers import first_panel, notices


async def test_fan_out_and_serve_say_they_need_the_store(tmp_path: Path) -> None:
    runtime = FakeRuntime([make_view("s1", "one")], tmp_path)
    app = make_app(runtime)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        panel = await first_panel(pilot, app)
        await type_line(pilot, panel, "/fanout 2 fix the add function")
        await wait_until(pilot, lambda: any("store" in n for n in notices(app)), "the fan-out's refusal")
        assert any("fan-out needs the session layer's store" in n for n in notices(app))
        await type_line(pilot, panel, "/serve")
        await wait_until(pilot, lambda: any("The API needs" in n for n in notices(app)), "/serve's refusal")
        assert runtime.submitted == []  # neither went to the model as a prompt
        assert app.is_running  # nothing failed
        await app.action_quit()
