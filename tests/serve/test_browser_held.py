"""In a real browser (headless Debian Chromium, phone-sized): a conflict and a budget pause are
answered from the phone page with the terminal's answers; the session's text on the cards is inert."""

from __future__ import annotations

import asyncio
from typing import Any

from paragents.llm.replay import ScriptedResponse
from paragents.models import SessionState
from paragents.serve.pairing import new_pairing
from tests.serve.chromium import needs_chromium, phone_browser
from tests.serve.conftest import Served
from tests.serve.held import BIG, held_conflict, listing
from tests.serve.test_browser import answered, wait

pytestmark = needs_chromium

HOSTILE = '<img src=x onerror="document.title=1">.txt'
"""A file name the model chose: on the card it is text, never an element."""


async def test_a_conflict_and_a_budget_pause_are_answered_from_the_phone(served: Served) -> None:
    from selenium.webdriver.common.by import By

    s = served
    rt = s.runtime
    sid, cid, gate = await held_conflict(s, HOSTILE)
    view = await rt.lifecycle.new_session("api")
    rt.budgets.set_budget(view.id, "session", "12k")
    (s.project / "a").mkdir()
    s.replay.add(
        [listing("a", "c1"), ScriptedResponse.from_message(content="done", usage=BIG)], session="api"
    )
    rt.submit(view.id, "go")
    await s.sink.wait_for(lambda: view.state is SessionState.BUDGET)
    assert view.budget_pause is not None
    pause_id = view.budget_pause.pause_id
    link = await new_pairing(rt.store.api_access, s.url, now=s.clock.now)

    def tap() -> dict[str, Any]:
        with phone_browser() as driver:
            driver.get(link)
            card = wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, f'article.card[data-id="{cid}"]'))
            seen = {
                "conflict": card.text,
                "labels": [b.text for b in card.find_elements(By.CSS_SELECTOR, "button")],
                "imgs": len(driver.find_elements(By.CSS_SELECTOR, "article.card img")),
            }
            card.find_element(By.CSS_SELECTOR, 'button[data-answer="skip"]').click()
            wait(driver, answered(cid))
            pause = driver.find_element(By.CSS_SELECTOR, f'article.card[data-id="{pause_id}"]')
            seen["pause"] = pause.text
            pause.find_element(By.CSS_SELECTOR, 'button[data-answer="raise"]').click()
            box = pause.find_element(By.CSS_SELECTOR, ".note input")
            box.send_keys("1000k")
            pause.find_element(By.CSS_SELECTOR, 'button[data-answer="send_raise"]').click()
            wait(driver, answered(pause_id))
            seen["title"] = driver.title
            return seen

    seen = await asyncio.to_thread(tap)
    assert HOSTILE in seen["conflict"] and seen["imgs"] == 0 and seen["title"] != "1"
    assert seen["labels"] == ["Wait", "Run anyway", "Skip"]
    assert "Budget (session)" in seen["pause"]
    await asyncio.wait_for(rt.wait_idle(sid), 30)
    await asyncio.wait_for(rt.wait_idle(view.id), 30)
    row = await rt.approvals.get_approval(cid)
    assert row is not None and row.answer == "skip" and (row.answered_by or "").startswith("web:browser:")
    assert view.last_result is not None and view.last_result.error_kind is None
    await rt.budgets.saved()
    (recorded,) = await rt.store.events.all(view.id, "budget_answer")
    assert recorded["data"]["answer"] == "raise" and recorded["data"]["value"] == "1000k"
    assert recorded["data"]["by"].startswith("web:browser:")
    gate.set()
    await asyncio.wait_for(rt.wait_idle(), 30)
