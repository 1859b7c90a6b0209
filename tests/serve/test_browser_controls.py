"""The phone page draws a command's control characters as symbols, as the terminal does (fresh-user
finding, ``paragents inbox --show``): ESC as "␛", BEL as "␇", a bidi override as ``<U+202E>``; a browser
draws none of them, so the card showed ``printf ''`` for a command that clears the screen."""

from __future__ import annotations

import asyncio
from typing import Any

from paragents.serve.pairing import new_pairing
from paragents.terminal_text import show_controls
from tests.patience import HANG_GUARD_S
from tests.serve.chromium import needs_chromium, phone_browser
from tests.serve.conftest import Served
from tests.serve.test_shown import command_call, pending_call

pytestmark = needs_chromium

COMMAND = "printf '\x1b[2J\x07' && echo \u202egnp.exe"
EVERY = "".join(chr(c) for c in range(0xA0)) + "\u00ad\u200b\u200d\u202e\u2066\u2028\ufeff\U000e0041 end"


async def test_the_card_shows_a_commands_control_characters_as_the_terminal_does(served: Served) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    _, rid = await pending_call(served, "esc", command_call(COMMAND))
    link = await new_pairing(served.runtime.store.api_access, served.url, now=served.clock.now)

    def look() -> dict[str, Any]:
        with phone_browser() as driver:
            driver.get(link)
            card = WebDriverWait(driver, HANG_GUARD_S).until(
                lambda d: d.find_element(By.CSS_SELECTOR, f'article.card[data-id="{rid}"]')
            )
            pre = card.find_element(By.CSS_SELECTOR, "pre")
            return {
                "shown": pre.get_attribute("textContent"),
                "every": driver.execute_script("return visible(arguments[0])", EVERY),
            }

    seen = await asyncio.to_thread(look)
    assert seen["shown"] == show_controls(COMMAND) + "\n"
    assert "printf '\u241b[2J\u2407' && echo <U+202E>gnp.exe" in seen["shown"]
    assert seen["every"] == show_controls(EVERY)  # the page and the terminal draw the same symbols
