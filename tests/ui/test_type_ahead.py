"""Keys typed right after ctrl+n go to the new session's prompt (they landed in the previous panel's
prompt, and Enter sent them there), with a real Runtime whose new session takes a while to open."""

from __future__ import annotations

import asyncio
from typing import Any

from paragents.ui.app import make_app
from tests.ui.conftest import SIZE, wait_until
from tests.ui.helpers import started


async def test_keys_typed_while_a_new_session_opens_go_to_its_prompt(make_runtime: Any) -> None:
    runtime = await make_runtime()
    opened = asyncio.Event()
    real_new = runtime.new_session

    async def slow_new(*args: Any, **kwargs: Any) -> Any:
        await opened.wait()  # a loaded machine: the session is not there yet when typing goes on
        return await real_new(*args, **kwargs)

    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        (first,) = await started(pilot, app)
        runtime.new_session = slow_new
        await pilot.press("ctrl+n", *"for the new one", "ctrl+j", *"second line")
        await pilot.pause()
        assert first.prompt_box.input.value == ""  # nothing lands in the old panel
        opened.set()
        await wait_until(pilot, lambda: len(app.panels) == 2, "the new panel")
        second = list(app.panels.values())[1]
        await wait_until(pilot, lambda: bool(second.prompt_box.input.value), "the held keys")
        assert second.prompt_box.input.value == "for the new one\nsecond line"
        assert first.prompt_box.input.value == ""
        await pilot.press(*" and more")  # later keys follow, in order
        await wait_until(pilot, lambda: second.prompt_box.input.value.endswith("and more"), "later keys")
        await app.action_quit()


async def test_a_refused_new_gives_the_held_keys_back_to_the_prompt(make_runtime: Any) -> None:
    from paragents.sessions import SessionError

    runtime = await make_runtime()

    async def refused(*args: Any, **kwargs: Any) -> Any:
        raise SessionError("the store is busy")

    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        (first,) = await started(pilot, app)
        runtime.new_session = refused
        await pilot.press("ctrl+n", *"still here")
        await wait_until(pilot, lambda: first.prompt_box.input.value == "still here", "the keys back")
        assert len(app.panels) == 1
        await app.action_quit()
