"""A terminal a few columns wide must not crash the app (the prompt box wrapped its placeholder at
width 0: "range() arg 3 must not be zero"), and the app must come back when it grows again. Found by a
fresh-user test that resized tmux to 12x8 with five sessions open."""

from __future__ import annotations

from pathlib import Path

from paragents.ui.app import make_app
from tests.ui.conftest import wait_until
from tests.ui.fake_runtime import FakeRuntime, make_view


async def test_resizing_down_to_a_few_columns_and_back_does_not_crash(tmp_path: Path) -> None:
    views = [make_view(f"s{n}", f"panel{n}") for n in range(1, 6)]
    app = make_app(FakeRuntime(views, tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.ready and len(app.panels) == 5, "panels")
        for width, height in ((20, 10), (12, 8), (10, 6), (7, 3), (20, 4), (1, 1), (120, 40)):
            await pilot.resize_terminal(width, height)
            await pilot.pause()
            app.save_screenshot(str(tmp_path / f"shot-{width}x{height}.svg"))  # draws every widget
        await pilot.press(*"still alive")
        await pilot.pause()
        assert app.focused is not None and "still alive" in getattr(app.focused, "text", "")
    assert app.return_code in (None, 0)
