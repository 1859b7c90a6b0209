"""The compare screen's keys with recorded actions (no runtime): evidence order shown, `a` applies the
highlighted candidate, `g` grafts the selected hunks onto the target, `d` needs a second press, and
an action's error is shown as its message."""

from __future__ import annotations

from textual.app import App
from textual.widgets import DataTable, SelectionList, Static

from paragents.fanout.compare import Comparison
from paragents.fanout.errors import FanoutError
from paragents.ui.screens.compare import CompareActions, CompareScreen, demo_comparison


class Harness(App[None]):
    def __init__(self, actions: CompareActions) -> None:
        super().__init__()
        self.actions = actions

    def on_mount(self) -> None:
        self.push_screen(CompareScreen(demo_comparison(), self.actions))


def status(app: App[None]) -> str:
    return str(app.screen.query_one("#cmp-status", Static).content)


async def test_keys_act_on_the_highlighted_candidate_and_selected_hunks() -> None:
    done: list[tuple[str, ...]] = []

    async def apply(name: str) -> str:
        done.append(("apply", name))
        return f"applied {name}"

    async def graft(onto: str, source: str, keys: set[str]) -> str:
        done.append(("graft", onto, source, *sorted(keys)))
        raise FanoutError("the selected hunks do not apply", 6)

    async def discard() -> str:
        done.append(("discard",))
        return "removed 3 lane(s)"

    async def reload() -> Comparison:
        return demo_comparison()

    app = Harness(CompareActions(apply, graft, discard, reload))
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
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert done[-1] == ("apply", "fix-add-3") and status(app) == "applied fix-add-3"
        await pilot.press("d")
        assert done[-1] == ("apply", "fix-add-3")  # one press only warns
        await pilot.press("d")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert done[-1] == ("discard",) and status(app) == "removed 3 lane(s)"
