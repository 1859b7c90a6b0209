"""What ``/budget`` says: a cap set next to another kept one names the kept one; a huge value is one
clear error (a real Runtime against the loopback server)."""

from __future__ import annotations

from typing import Any

from paragents.ui.app import make_app
from tests.ui.conftest import SIZE, wait_until
from tests.ui.helpers import started


async def type_command(pilot: Any, text: str) -> None:
    await pilot.press(*text, "enter")


async def test_a_money_cap_after_a_token_cap_says_the_token_cap_still_holds(make_runtime: Any) -> None:
    runtime = await make_runtime()
    app = make_app(runtime)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        (panel,) = await started(pilot, app)
        await type_command(pilot, "/budget session 500k")
        await wait_until(pilot, lambda: runtime.sessions[panel.session_id].budget is not None, "the cap")
        await type_command(pilot, "/budget session 5usd")
        said = lambda: [n.message for n in app._notifications]  # noqa: E731
        await wait_until(pilot, lambda: any("$5.00" in m for m in said()), "the second toast")
        (message,) = [m for m in said() if "$5.00" in m]
        assert "the 500k tokens cap still holds" in message and "/budget session off" in message
        await type_command(pilot, "/budget session 99999999999999999999999999k")
        await wait_until(pilot, lambda: any("too large" in m for m in said()), "the error")
        (error,) = [m for m in said() if "too large" in m]
        assert "at most 1000000M tokens" in error and "\n" not in error
        await app.shutdown_runtime()


def test_the_headers_spend_today_reads_like_the_panel_titles() -> None:
    from types import SimpleNamespace

    from paragents.limits import Spend
    from paragents.ui.budgets.hooks import Meters, today_text

    budgets = SimpleNamespace(today=None, project_cap=lambda: None)
    refresher = SimpleNamespace(meters=Meters(today=Spend(prompt=9000, completion=871, estimated=True)))
    app = SimpleNamespace(runtime=SimpleNamespace(budgets=budgets), meter_refresher=refresher, demo=False)
    assert today_text(app) == "today ~9.9k tok"  # not "~9871 tok" next to titles saying "5.0k tok"
