"""Keys that arrive in the same terminal read as a key that moves focus must follow the focus: f6 then
a prompt must reach the next session (it reached the previous one and was sent to the wrong agent),
ctrl+g then an answer key must answer, and text typed right after an answer must land in the prompt
(it was lost in the bar being removed). Found by a fresh-user test in tmux (one send-keys call)."""

from __future__ import annotations

from pathlib import Path

from paragents.events import PermissionAnswer
from paragents.ui.app import make_app
from tests.ui.bars import rm_ask
from tests.ui.conftest import SIZE, wait_until
from tests.ui.fake_runtime import FakeRuntime, make_view
from tests.ui.prompt_input import feed, started
from tests.ui.snapshot_app import app_with, settle
from tests.ui.snapshot_app import feed as feed_events


async def test_a_prompt_typed_in_the_same_read_as_f6_goes_to_the_next_session(tmp_path: Path) -> None:
    runtime = FakeRuntime([make_view("s1", "api"), make_view("s2", "web"), make_view("s3", "docs")], tmp_path)
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot, app)
        assert app.active_sid == "s1"
        feed(app, "\x1b[17~III\r")  # F6, then "III" and Enter, in one read
        await wait_until(pilot, lambda: bool(runtime.submitted), "the prompt")
        assert runtime.submitted == [("s2", "III")]
        feed(app, "\x1b[17~\x1b[17~JJ\r")  # two F6 and a prompt: s2 -> s3 -> s1
        await wait_until(pilot, lambda: len(runtime.submitted) == 2, "the second prompt")
        assert runtime.submitted[1] == ("s1", "JJ")


async def test_answer_keys_right_after_ctrl_g_and_text_right_after_the_answer(tmp_path: Path) -> None:
    app, runtime = app_with(tmp_path, ["api"])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        request = rm_ask()
        feed_events(runtime, [request])
        await settle(pilot)
        panel = next(iter(app.panels.values()))
        prompt = panel.prompt_box.input
        assert panel.approval_bar is not None and not request.reply.done()
        feed(app, "\x07nhello world")  # ctrl+g, n (deny), then text for the prompt, in one read
        await wait_until(pilot, lambda: request.reply.done(), "the answer")
        await settle(pilot)
        assert request.reply.result() == PermissionAnswer("reject_once")
        assert app.focused is prompt and prompt.text == "hello world"
