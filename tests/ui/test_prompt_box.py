"""The prompt box (paragents.ui.widgets.prompt_area / prompt_input): keys in one burst, pastes,
newline keys, undo, history, completion, the app's keys while it has focus, typing after a click in a
transcript.

Keys and pastes are delivered the way a terminal read is: the chunk goes through Textual's own input
parser and every resulting event is handed to the driver at once (:func:`feed`), with nothing waiting
for the app to be idle between them (``pilot.press`` waits after each key, so it cannot show a burst).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual.geometry import Region

from paragents.models import SessionState
from paragents.ui.app import make_app
from paragents.ui.palette import run_from_palette
from paragents.ui.widgets.prompt_area import PromptArea
from tests.ui.conftest import SIZE, wait_until
from tests.ui.fake_runtime import FakeRuntime, make_view
from tests.ui.prompt_input import feed, started

if TYPE_CHECKING:
    from paragents.ui.widgets.prompt_area import PromptArea


def paste(text: str) -> str:
    """``text`` as a bracketed paste."""
    return f"\x1b[200~{text}\x1b[201~"


async def test_keys_in_one_burst_submit_each_prompt_as_typed(tmp_path: Path) -> None:
    runtime = FakeRuntime([make_view("s1", "api")], tmp_path)
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot, app)
        feed(app, "CCC\rDDD\r")
        await wait_until(pilot, lambda: len(runtime.submitted) >= 2, "two prompts")
        await pilot.pause()
        assert runtime.submitted == [("s1", "CCC"), ("s1", "DDD")]


async def test_editing_keys_in_one_burst_apply_in_order(tmp_path: Path) -> None:
    """Backspace and ctrl+j are keys the editor binds: in a burst they act where they were typed."""
    runtime = FakeRuntime([make_view("s1", "api")], tmp_path)
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot, app)
        feed(app, "ab\x7fc\rX\nY\r")
        await wait_until(pilot, lambda: len(runtime.submitted) >= 2, "two prompts")
        await pilot.pause()
        assert runtime.submitted == [("s1", "ac"), ("s1", "X\nY")]


async def test_newline_keys_and_backslash_enter_keep_the_prompt_open(tmp_path: Path) -> None:
    runtime = FakeRuntime([make_view("s1", "api")], tmp_path)
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        area = await started(pilot, app)
        # ctrl+j (LF), shift+enter and alt+enter as the kitty keyboard protocol sends them, "\" + Enter
        feed(app, "a\nb\x1b[13;2uc\x1b[13;3ud\\\re")
        await wait_until(pilot, lambda: area.text == "a\nb\nc\nd\ne", "five lines")
        assert runtime.submitted == []
        feed(app, "\r")
        await wait_until(pilot, lambda: bool(runtime.submitted), "the prompt sent")
        assert runtime.submitted == [("s1", "a\nb\nc\nd\ne")] and area.text == ""


async def test_multiline_and_huge_pastes_are_sent_whole(tmp_path: Path) -> None:
    runtime = FakeRuntime([make_view("s1", "api")], tmp_path)
    app = make_app(runtime)
    three = "first line\r\n\tsecond, indented\r\nthird"
    long_line = "x" * 5000 + "\t" + "y" * 300
    huge = "\r\n".join(f"{i}\t{long_line if i % 97 == 0 else 'some text ' * 3}" for i in range(5000))
    assert len(huge) > 235_000
    async with app.run_test(size=SIZE) as pilot:
        area = await started(pilot, app)
        feed(app, "see: " + paste(three))
        await wait_until(pilot, lambda: area.text.count("\n") == 2, "three lines in the box")
        assert area.text == "see: first line\n\tsecond, indented\nthird"  # shown in full
        feed(app, "\r")
        await wait_until(pilot, lambda: len(runtime.submitted) == 1, "the first prompt")
        feed(app, paste(huge) + " please")
        await wait_until(pilot, lambda: area.text.endswith(" please"), "the huge paste")
        assert area.text == "[pasted 5,000 lines] please"  # shown collapsed
        feed(app, "\r")
        await wait_until(pilot, lambda: len(runtime.submitted) == 2, "the second prompt")
    assert runtime.submitted[0] == ("s1", "see: first line\n\tsecond, indented\nthird")
    assert runtime.submitted[1] == ("s1", huge.replace("\r\n", "\n") + " please")


async def test_a_paste_is_one_undo_step_and_redo_brings_it_back(tmp_path: Path) -> None:
    runtime = FakeRuntime([make_view("s1", "api")], tmp_path)
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        area = await started(pilot, app)
        await pilot.press(*"abc")
        feed(app, paste("one\ntwo\nthree"))
        await wait_until(pilot, lambda: area.text == "abcone\ntwo\nthree", "the paste")
        await pilot.press("ctrl+z")
        assert area.text == "abc"
        await pilot.press("ctrl+shift+z")
        assert area.text == "abcone\ntwo\nthree"
        await pilot.press("ctrl+z", "ctrl+y")
        assert area.text == "abcone\ntwo\nthree"
        feed(app, paste("z" * 3000))  # a collapsed paste is one step too
        await wait_until(pilot, lambda: "[pasted 3,000 characters]" in area.text, "the token")
        await pilot.press("ctrl+z")
        assert area.text == "abcone\ntwo\nthree"


async def test_up_and_down_browse_the_sessions_prompts(tmp_path: Path) -> None:
    view = make_view("s1", "api")
    view.messages = [{"role": "user", "content": "from last time"}, {"role": "assistant", "content": "ok"}]
    runtime = FakeRuntime([view], tmp_path)
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        area = await started(pilot, app)
        feed(app, "one\rtwo\nlines\r")
        await wait_until(pilot, lambda: len(runtime.submitted) == 2, "two prompts")
        feed(app, "draft")
        await wait_until(pilot, lambda: area.text == "draft", "a draft")
        await pilot.press("up")
        assert area.text == "two\nlines"
        await pilot.press("up")
        assert area.text == "one"
        await pilot.press("up")
        assert area.text == "from last time"  # the stored conversation's prompts come first
        await pilot.press("up")
        assert area.text == "from last time"
        await pilot.press("down", "down")
        assert area.text == "two\nlines" and area.cursor_location == (1, 5)  # browsing down: at the end
        await pilot.press("up")  # not on the first line: moves within the prompt
        assert area.text == "two\nlines" and area.cursor_location[0] == 0
        await pilot.press("down", "down")
        assert area.text == "draft"


async def test_slash_completion_and_bad_commands(tmp_path: Path) -> None:
    runtime = FakeRuntime([make_view("s1", "api")], tmp_path)
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        area = await started(pilot, app)
        box = app.panels["s1"].prompt_box
        await pilot.press(*"/se")
        assert area.suggestion == "ssions"
        assert "/sessions" in box._shown_hint[0]
        await pilot.press("tab")
        assert area.text == "/sessions" and app.focused is area
        await pilot.press("ctrl+u", *"/mo")
        await pilot.press("end")
        assert area.text == "/model"
        await pilot.press("ctrl+u", *"/nope", "enter")
        assert area.text == "/nope" and box._shown_hint[1]  # kept, error shown, nothing sent
        assert runtime.submitted == []


async def test_app_keys_work_while_the_prompt_has_focus(tmp_path: Path) -> None:
    view = make_view("s1", "api", state=SessionState.RUNNING)
    runtime = FakeRuntime([view, make_view("s2", "web")], tmp_path)
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        area = await started(pilot, app)
        await pilot.press(*"half typed")
        await pilot.press("escape")
        assert runtime.cancelled == ["s1"] and area.text == "half typed"
        await pilot.press("f6")
        await wait_until(pilot, lambda: app.active_sid == "s2", "f6 focuses the next panel")
        await pilot.press("ctrl+w")
        await wait_until(pilot, lambda: "s2" not in app.panels, "ctrl+w closes it")
        await wait_until(pilot, lambda: app.focused is area, "back in the first prompt")
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: len(app.panels) == 2, "ctrl+n opens a session")
        assert area.text == "half typed"


async def test_typing_after_a_click_in_a_transcript_reaches_that_panels_prompt(tmp_path: Path) -> None:
    runtime = FakeRuntime([make_view("s1", "api"), make_view("s2", "web")], tmp_path)
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot, app)
        second = app.panels["s2"]
        await wait_until(pilot, lambda: second.transcript.size.height > 0, "the panel laid out")
        await pilot.click(second.transcript)
        await wait_until(pilot, lambda: app.focused is second.transcript, "the transcript focused")
        feed(app, "hello\r")
        await wait_until(pilot, lambda: bool(runtime.submitted), "the prompt sent")
        assert runtime.submitted == [("s2", "hello")]
        await pilot.click(second.transcript)
        await wait_until(pilot, lambda: app.focused is second.transcript, "the transcript focused")
        feed(app, paste("a\nb"))
        await wait_until(pilot, lambda: second.prompt_box.input.text == "a\nb", "the paste in the box")


async def test_the_box_grows_to_a_third_of_the_panel_then_scrolls(tmp_path: Path) -> None:
    runtime = FakeRuntime([make_view("s1", "api")], tmp_path)
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        area = await started(pilot, app)
        panel = app.panels["s1"]
        await wait_until(pilot, lambda: area.outer_size.height == 3, "one line and the border")
        feed(app, "1\n2\n3")
        await wait_until(pilot, lambda: area.outer_size.height == 5, "three lines shown")
        feed(app, "\n4" * 40)
        await wait_until(pilot, lambda: area.max_scroll_y > 0, "the box scrolls")
        assert abs(area.outer_size.height - panel.outer_size.height / 3) <= 1  # a third of the panel


async def test_editing_a_queued_prompt_keeps_its_lines(tmp_path: Path) -> None:
    from textual.app import App, ComposeResult
    from textual.widgets import Button

    from paragents.ui.core.messages import QueueEditRequested
    from paragents.ui.widgets.prompt_input import PromptBox, QueuedItem

    edits: list[tuple[str, str | None]] = []

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield PromptBox("s1")

        def on_queue_edit_requested(self, message: QueueEditRequested) -> None:
            edits.append((message.prompt_id, message.text))

    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.query_one(PromptBox).set_queue((("p1", "first line\nsecond line"),))
        await pilot.pause()
        item = app.query_one(QueuedItem)
        await pilot.click(item.query_one(".edit", Button))
        await wait_until(pilot, lambda: bool(item.query(".queued-edit")), "the editor")
        editor = item.query_one(".queued-edit", PromptArea)
        assert editor.text == "first line\nsecond line"
        await wait_until(pilot, lambda: app.focused is editor, "the editor focused")
        await pilot.press("end", "!", "enter")
        await wait_until(pilot, lambda: bool(edits), "the edit")
    assert edits == [("p1", "first line\nsecond line!")]


def test_pastes_are_kept_byte_for_byte_and_tokens_expand_once() -> None:
    from paragents.ui.widgets.prompt_area import Draft, normalize_paste, paste_label, should_collapse

    assert normalize_paste("a\r\nb\rc\n\td") == "a\nb\nc\n\td"
    assert paste_label("x\n" * 5000) == "[pasted 5,000 lines]"
    assert paste_label("y" * 2500) == "[pasted 2,500 characters]"
    assert not should_collapse("short\n\twith a tab")
    assert should_collapse("page\x0cbreak")  # the editor's lines would turn the form feed into "\n"
    draft = Draft.from_text("page\x0cbreak")
    assert draft.shown == "[pasted 10 characters]" and draft.value == "page\x0cbreak"
    token = "[pasted 3 lines]"
    tricky = Draft(f"see {token} and {token}", {token: f"a\n{token}\nb"})  # a paste naming its own token
    assert tricky.value == f"see a\n{token}\nb and a\n{token}\nb"


async def test_the_palette_prefills_a_command_that_takes_an_argument(tmp_path: Path) -> None:
    runtime = FakeRuntime([make_view("s1", "api")], tmp_path)
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        area = await started(pilot, app)
        run_from_palette(app, "rename")
        await pilot.pause()
        await pilot.press(*"new name")
        assert area.text == "/rename new name" and app.focused is area


async def test_a_box_drawn_before_its_component_styles_are_applied_draws_blank(tmp_path: Path) -> None:
    """Under load a box mounted while a modal is on top was drawn in the screen's background before
    Textual applied its component styles: TextArea raised KeyError ('text-area--gutter') and the app
    crashed. It now draws blank lines and asks for another frame."""
    runtime = FakeRuntime([make_view("s1", "api")], tmp_path)
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        area = await started(pilot, app)
        area._component_styles.clear()  # the state of a box not yet styled
        lines = area.render_lines(Region(0, 0, 10, 2))
        assert [line.cell_length for line in lines] == [10, 10]
        app.stylesheet.update(area)  # styled again: it draws its text
        await pilot.pause()
        assert area.render_lines(Region(0, 0, 10, 1))
