"""In a real browser (headless Debian Chromium, phone-sized): pair, see the pending approval, tap
Allow and the scripted session continues; a destructive command needs a second tap."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from paragents.serve.pairing import new_pairing
from tests.patience import HANG_GUARD_S
from tests.serve.chromium import PHONE, artefact_dir, needs_chromium, phone_browser, read_png
from tests.serve.conftest import Served, reply

pytestmark = needs_chromium


def answered(rid: str) -> Any:
    """A wait condition: the item's card shows it answered, or is gone (the page refreshed)."""
    script = (
        "const c = document.querySelector(`article.card[data-id='${arguments[0]}']`);"
        " return !c || c.dataset.state === 'answered';"
    )
    return lambda driver: driver.execute_script(script, rid)


def wait(driver: Any, condition: Any, timeout: float = HANG_GUARD_S) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(condition)


async def test_phone_page_pairs_shows_the_approval_and_allow_continues_the_session(served: Served) -> None:
    from selenium.webdriver.common.by import By

    sid, rid = await served.pending_write("api", "notes.txt")
    link = await new_pairing(served.runtime.store.api_access, served.url, now=served.clock.now)
    shot = artefact_dir() / "20-phone.png"

    def look() -> dict[str, Any]:
        with phone_browser() as driver:
            driver.get(link)
            card = wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, f'article.card[data-id="{rid}"]'))
            size = driver.execute_script("return [window.innerWidth, window.innerHeight]")
            allow = card.find_element(By.CSS_SELECTOR, 'button[data-answer="allow_once"]')
            rect = allow.rect
            data = driver.get_screenshot_as_png()
            seen = {"text": card.text, "size": size, "rect": rect, "png": data, "url": driver.current_url}
            allow.click()
            wait(driver, answered(rid))
            return seen

    seen = await asyncio.to_thread(look)
    shot.write_bytes(seen["png"])
    assert seen["url"] == served.url + "/" and seen["size"] == list(PHONE)
    assert "api" in seen["text"] and "notes.txt" in seen["text"] and "from the phone" in seen["text"]
    width, height, rows = read_png(seen["png"])
    assert (width, height) == PHONE
    r = seen["rect"]  # the Allow button is on screen, drawn in its green
    x, y = int(r["x"] + r["width"] / 2), int(r["y"] + r["height"] / 2)
    assert 0 < y < height
    red, green, blue = rows[y][x * 4 : x * 4 + 3]
    assert green > red + 40 and green > blue + 40, (red, green, blue)
    await served.runtime.wait_idle(sid)
    assert (served.project / "notes.txt").read_text() == "from the phone\n"
    assert served.runtime.sessions[sid].last_result.status == "completed"  # type: ignore[union-attr]


async def test_a_destructive_command_needs_a_second_tap(served: Served) -> None:
    from selenium.webdriver.common.by import By

    (served.project / "old.txt").write_text("x")
    view = await served.runtime.new_session("rm")
    call = {"id": "c1", "name": "run_command", "arguments": json.dumps({"command": "rm -f old.txt"})}
    served.replay.add(reply(tool_calls=[call]), session="rm")
    served.replay.add(reply("removed"), session="rm")
    served.runtime.submit(view.id, "remove old.txt")
    await served.sink.wait_for(lambda: bool(view.pending))
    rid = next(iter(view.pending))
    link = await new_pairing(served.runtime.store.api_access, served.url, now=served.clock.now)

    def tap() -> tuple[str, bool]:
        with phone_browser() as driver:
            driver.get(link)
            card = wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, f'article.card[data-id="{rid}"]'))
            allow = card.find_element(By.CSS_SELECTOR, 'button[data-answer="allow_once"]')
            allow.click()
            armed = allow.text
            still_pending = bool(view.pending)  # read across threads: a dict lookup, for the assert only
            allow.click()
            wait(driver, answered(rid))
            return armed, still_pending

    armed, still_pending = await asyncio.to_thread(tap)
    assert armed == "Tap again to allow" and still_pending
    await served.runtime.wait_idle(view.id)
    assert not (served.project / "old.txt").exists()


async def test_the_page_shows_line_306_of_a_long_command_and_opens_a_cut_preview_whole(
    served: Served,
) -> None:
    """Issue 28 item 3 in the browser: the whole command is in its card (scrollable), line 306's
    ``curl … | sh`` included; a long file write says how much it leaves out and opens it all."""
    from selenium.webdriver.common.by import By

    from tests.serve.calls import EVIL, LONG_COMMAND, LONG_FILE, command_call, pending_call
    from tests.serve.conftest import write_call

    _, long_rid = await pending_call(served, "long", command_call(LONG_COMMAND))
    _, file_rid = await pending_call(served, "write", write_call("big.txt", LONG_FILE))
    link = await new_pairing(served.runtime.store.api_access, served.url, now=served.clock.now)

    def look() -> dict[str, Any]:
        with phone_browser() as driver:
            driver.get(link)
            card = wait(
                driver, lambda d: d.find_element(By.CSS_SELECTOR, f'article.card[data-id="{long_rid}"]')
            )
            pre = card.find_element(By.CSS_SELECTOR, "pre")
            scrolls = driver.execute_script(
                "return arguments[0].scrollHeight > arguments[0].clientHeight", pre
            )
            driver.execute_script("arguments[0].scrollTop = arguments[0].scrollHeight", pre)
            command_text = pre.text  # what is rendered in the box (all of it, scrolled)
            tail_visible = driver.execute_script(
                "const r = arguments[0].getBoundingClientRect(), range = document.createRange();"
                " const node = [...arguments[0].childNodes]"
                ".find((n) => n.textContent.includes(arguments[1]));"
                " range.selectNodeContents(node); const t = range.getBoundingClientRect();"
                " return t.top >= r.top && t.bottom <= r.bottom;",
                pre,
                EVIL,
            )
            file_card = driver.find_element(By.CSS_SELECTOR, f'article.card[data-id="{file_rid}"]')
            note = file_card.find_element(By.CSS_SELECTOR, ".cut").text
            before = file_card.text
            file_card.find_element(By.CSS_SELECTOR, 'button[data-answer="show_all"]').click()
            whole = wait(driver, lambda d: file_card.find_element(By.CSS_SELECTOR, "pre.whole"))
            driver.execute_script("arguments[0].scrollTop = arguments[0].scrollHeight", whole)
            return {
                "command": command_text, "scrolls": scrolls, "tail_visible": tail_visible, "note": note,
                "before": before, "whole": whole.get_attribute("textContent"),
            }  # fmt: skip

    seen = await asyncio.to_thread(look)
    assert EVIL in seen["command"] and "echo tail 3" in seen["command"]
    assert seen["scrolls"] and seen["tail_visible"]
    assert seen["note"] == "Not everything is shown: 101 more lines not shown."
    assert "LAST LINE" not in seen["before"] and "LAST LINE" in seen["whole"]
