"""``/model NAME`` and ``/mode NAME`` say in the panel what they set (they printed nothing: only the
title changed). Real Runtime, real app."""

from __future__ import annotations

from typing import Any

from paragents.llm.replay import ReplayServer
from paragents.ui.app import make_app
from paragents.ui.widgets.transcript import TextEntry
from tests.ui.conftest import SIZE, wait_until
from tests.ui.helpers import started


async def test_model_and_mode_each_print_one_confirmation_line(
    make_runtime: Any, replay: ReplayServer
) -> None:
    runtime = await make_runtime()
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        (panel,) = await started(pilot, app)

        def lines() -> list[str]:
            return [e.text for e in panel.transcript.records if isinstance(e, TextEntry)]

        await pilot.press(*"/model m2", "enter")
        await wait_until(pilot, lambda: any("Model set to m2" in line for line in lines()), "the model line")
        await pilot.press(*"/mode plan", "enter")
        await wait_until(
            pilot, lambda: any("Permission mode set to plan" in line for line in lines()), "mode"
        )
        assert len([line for line in lines() if " set to " in line]) == 2
        await app.shutdown_runtime()
