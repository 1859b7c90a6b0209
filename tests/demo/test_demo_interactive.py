"""``paragents demo`` as a newcomer meets it: the first approval waits for the user (and says so), a
conflict says when the demo will answer it, and a typed prompt is refused with a notice instead of a
failed turn. The real DemoPlayer runs the packaged cassette; Pilot stands in for the terminal."""

from __future__ import annotations

from typing import Any

from paragents.demo.launcher import WAIT_FOR_USER, DemoPlayer, demo_cassette
from paragents.ui.app import DEMO_TYPED_PROMPT, ParagentsApp
from paragents.ui.widgets.session_panel import SessionPanel
from paragents.ui.widgets.transcript import TextEntry
from tests.ui.conftest import SIZE, wait_until


def texts(panel: SessionPanel) -> list[str]:
    return [e.text for e in panel.transcript.records if isinstance(e, TextEntry)]


def ctx_percent(panel: SessionPanel) -> int:
    """The "ctx N%" the panel's title shows."""
    return int(panel.title_text().plain.split("ctx ")[1].split("%")[0])


class PilotDemo(DemoPlayer):
    """The demo with Pilot as the user: no pacing, conflicts answered by the script at once."""

    def __init__(self) -> None:
        super().__init__(demo_cassette(), pace=0, auto_answer_after=0, tune_gc=False)
        self.checked = False

    def done(self, name: str, turns: int) -> bool:
        log = self.journal.log(name)
        return len(log.turns) >= turns and log.turns[-1]["status"] == "completed"

    async def run_app(self, app: ParagentsApp) -> None:
        # Every toast shown, kept: a toast lasts 8 s of wall time, which a loaded machine spends
        # before the checks below run (the live list was seen empty).
        shown: list[str] = []
        notify = app.notify

        def recording_notify(message: str, *args: Any, **kwargs: Any) -> None:
            shown.append(str(message))
            notify(message, *args, **kwargs)

        app.notify = recording_notify  # type: ignore[method-assign]
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.ready and len(app.panels) == 3, "the three demo panels")
            panels = {p.view.name: p for p in app.panels.values()}
            api, docs = panels["api"], panels["docs"]
            await wait_until(pilot, lambda: api.approval_bar is not None, "api's approval")
            await wait_until(pilot, lambda: self.done("docs", 2) and self.done("notes", 1), "the others")
            assert api.approval_bar is not None and api.view.pending, "the first ask must wait for the user"
            during = ctx_percent(api)
            assert WAIT_FOR_USER in texts(api)
            assert any("the demo will answer in" in t for t in texts(docs))  # the conflict's countdown
            assert any("answer it yourself" in t for t in shown), shown  # also when the bar hides it
            # the resolved conflict leaves one plain line saying how it ended
            ended = [t for t in texts(docs) if t.startswith("Conflict on ")]
            assert len(ended) == 1 and ended[0].endswith("README.md resolved: run anyway."), ended

            docs.prompt_box.input.focus()
            docs.prompt_box.input.value = "hello there"
            await pilot.press("enter")
            await wait_until(
                pilot, lambda: any(n.message == DEMO_TYPED_PROMPT for n in app._notifications), "the notice"
            )
            assert not app.runtime.prompts.is_running(docs.session_id)
            assert not any(t.startswith("Turn failed") for t in texts(docs))

            app.focus_panel(api.session_id)
            await pilot.press("y")  # a stray key: it goes into the prompt and answers nothing
            await pilot.pause()
            assert api.view.pending and api.prompt_box.input.text.endswith("y")
            await pilot.press("ctrl+g", "y")  # the deliberate act: go to the bar, then answer
            await wait_until(pilot, lambda: self.done("api", 1), "api to finish after the answer")
            await wait_until(pilot, lambda: api.view.state.value == "idle", "api idle")
            # The context only grows within a turn: the title must not drop after it (the cassette's
            # made-up usage once showed "ctx 31%" while running, then "ctx 11%" when idle)
            assert ctx_percent(api) >= during > 0, (during, api.title_text().plain)
            self.checked = True


async def test_the_demo_waits_for_the_user_and_refuses_typed_prompts() -> None:
    player = PilotDemo()
    await player.play()
    assert player.checked
    assert not [e for e in player.errors if "timed out" in e]
