"""The compare screen's keys with recorded actions (no runtime): evidence order shown, `a` opens the
lanes merge dialog for the highlighted candidate (refused for a failed verify unless the override is
ticked; the drafted message editable), `g` grafts the selected hunks onto the target, `d` needs a
second press, and an action's error is shown as its message."""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.widgets import Button, Checkbox, DataTable, SelectionList, Static, TextArea

from paragents.fanout.compare import Comparison
from paragents.fanout.errors import FanoutError
from paragents.lanes.bring_back import LaneState, MergePlan
from paragents.lanes.merge_result import MergeResult
from paragents.lanes.review import LaneReview
from paragents.store.records import VerifyRecord
from paragents.ui.fanout.compare import CompareActions, CompareScreen, demo_comparison
from paragents.ui.lanes.merge import MergeScreen

VERIFY = "uv run pytest -q"


class Landing:
    """The merge dialog's actions for a candidate, recorded."""

    def __init__(self, done: list[tuple[Any, ...]]) -> None:
        self.done = done

    async def draft(self, lane: str, strategy: str) -> tuple[str, str]:
        return f"Fix add ({lane})", "built from the lane's prompts"

    async def merge(
        self, lane: str, strategy: str, reviewed: LaneState, message: str, *, override: bool = False
    ) -> MergeResult:
        self.done.append(("apply", lane, message, override))
        return MergeResult(lane, strategy, "main", "c" * 40, f"applied {lane}")


def lander(done: list[tuple[Any, ...]]) -> Any:
    """``land``: the candidate's review and squash plan; fix-add-1's verify failed on its tree."""

    async def land(name: str) -> tuple[Any, Any, Any]:
        state = LaneState("h" * 40, "t" * 40, "t" * 40)
        code = 1 if name == "fix-add-1" else 0
        verify = VerifyRecord(1, VERIFY, state.head, state.tree, code, "", 0.0)
        plan = MergePlan(
            name, "squash", "main", "o" * 40, state.head, ["git merge-tree --write-tree ..."], state.tree,
            verify=verify, verify_command=VERIFY,
        )  # fmt: skip
        return Landing(done), LaneReview(name, name, state.head, state=state, verify=verify), plan

    return land


class Harness(App[None]):
    def __init__(self, actions: CompareActions) -> None:
        super().__init__()
        self.actions = actions

    def on_mount(self) -> None:
        self.push_screen(CompareScreen(demo_comparison(), self.actions))


def status(app: App[None]) -> str:
    return str(app.screen.query_one("#cmp-status", Static).content)


async def test_keys_act_on_the_highlighted_candidate_and_selected_hunks() -> None:
    done: list[tuple[Any, ...]] = []

    async def graft(onto: str, source: str, keys: set[str]) -> str:
        done.append(("graft", onto, source, *sorted(keys)))
        raise FanoutError("the selected hunks do not apply", 6)

    async def discard() -> str:
        done.append(("discard",))
        return "removed 3 lane(s)"

    async def reload() -> Comparison:
        return demo_comparison()

    app = Harness(CompareActions(lander(done), graft, discard, reload))
    async with app.run_test(size=(130, 40)) as pilot:
        await pilot.pause()
        table = app.screen.query_one(DataTable)
        assert [str(table.get_row_at(i)[1]) for i in range(3)] == ["fix-add-3", "fix-add-2", "fix-add-1"]
        await pilot.press("g")
        assert "select hunks below first" in status(app) and done == []
        await pilot.press("down", "tab", "space", "g")  # fix-add-2's hunk onto the target fix-add-3
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert done == [("graft", "fix-add-3", "fix-add-2", "app.py @@ -1,2 +1,7 @@")]
        assert status(app) == "the selected hunks do not apply"
        assert app.screen.query_one(SelectionList).selected == ["app.py @@ -1,2 +1,7 @@"]
        await pilot.press("shift+tab", "up", "a")
        await wait_for(pilot, lambda: isinstance(app.screen, MergeScreen))
        await wait_for(pilot, lambda: app.screen.query_one(TextArea).text.startswith("Fix add"))
        app.screen.query_one(TextArea).load_text("Fix add, edited")
        await pilot.click("#go")
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen) and "applied" in status(app))
        assert done[-1] == ("apply", "fix-add-3", "Fix add, edited", False)
        assert status(app) == "applied fix-add-3"
        await pilot.press("d")
        assert done[-1][:2] == ("apply", "fix-add-3")  # one press only warns
        await pilot.press("d")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert done[-1] == ("discard",) and status(app) == "removed 3 lane(s)"


async def wait_for(pilot: Any, ready: Any, tries: int = 200) -> None:
    for _ in range(tries):
        if ready():
            return
        await pilot.pause(0.02)
    raise AssertionError("timed out")


async def test_apply_refuses_a_failed_candidate_unless_the_override_is_ticked() -> None:
    """Issue 27 item 5: `a` on a candidate whose verify failed opens the dialog and refuses; ticking
    "merge although verify has not passed" lands it (recorded as an override)."""
    done: list[tuple[Any, ...]] = []

    async def nothing(*_: Any) -> str:
        return ""

    async def reload() -> Comparison:
        return demo_comparison()

    app = Harness(CompareActions(lander(done), nothing, nothing, reload))
    async with app.run_test(size=(130, 40)) as pilot:
        await pilot.pause()
        await pilot.press("down", "down", "a")  # fix-add-1: its verify failed
        await wait_for(pilot, lambda: isinstance(app.screen, MergeScreen))
        dialog = app.screen
        plan_text = str(dialog.query_one("#plan-text", Static).content)
        assert "FAILED (exit 1)" in plan_text and "git merge-tree --write-tree" in plan_text
        await pilot.click("#go")
        await wait_for(pilot, lambda: "Merge refused" in str(dialog.query_one("#status", Static).content))
        assert done == [] and not dialog.query_one("#go", Button).disabled
        await pilot.click("#override")
        assert dialog.query_one("#override", Checkbox).value
        dialog.query_one("#go", Button).press()
        await wait_for(pilot, lambda: bool(done))
        assert done == [("apply", "fix-add-1", "Fix add (fix-add-1)", True)]


async def test_candidates_that_changed_the_same_one_file_show_the_same_overlap_count() -> None:
    """The overlaps cell named the other candidates by their name suffix ("2!, 3" beside "1, 3"), read
    as counts that differed. Each fix-add-N of the demo changed only app.py: all show "1 file", then
    the others by their place in the table ("!": merge-tree predicts a conflict, as for 2 and 3)."""

    async def nothing(*_: object) -> str:
        return ""

    async def reload() -> Comparison:
        return demo_comparison()

    app = Harness(CompareActions(lander([]), nothing, nothing, reload))
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        table = app.screen.query_one(DataTable)
        rows = {str(table.get_row_at(i)[1]): str(table.get_row_at(i)[7]) for i in range(3)}
    assert rows == {
        "fix-add-3": "1 file: #2!, #3",
        "fix-add-2": "1 file: #1!, #3",
        "fix-add-1": "1 file: #1, #2",
    }
