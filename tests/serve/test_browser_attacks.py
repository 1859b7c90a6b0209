"""Issue 28 items 1 and 2, reproduced in a real browser (headless Debian Chromium): another server on
127.0.0.1 (a dev server on another port) is visited by the paired phone browser. It must receive
nothing it can replay to answer an ask (cookies ignore ports: the old session cookie reached it and
its replay, with a forged Origin and X-Requested-With, approved the ask), and five
``<img src=".../pair/x">`` on its page must not lock the phone out."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from aiohttp import web

from paragents.serve.limits import Limits
from paragents.serve.pairing import new_pairing
from tests.patience import HANG_GUARD_S
from tests.serve.chromium import needs_chromium, phone_browser
from tests.serve.conftest import KEY, Served

pytestmark = needs_chromium


@dataclass
class DevServer:
    """A hostile page server on another 127.0.0.1 port that keeps every header it receives."""

    paragents_url: str
    seen: list[dict[str, str]] = field(default_factory=list)
    url: str = ""

    def page(self) -> str:
        imgs = "".join(f'<img src="{self.paragents_url}/pair/guess{n}" alt="">' for n in range(8))
        return (
            "<!doctype html><title>dev server</title><p id=done>hello</p>" + imgs + "<script>"
            # what a script on this origin can try: it sees only its own origin's storage
            "document.title = 'storage:' + JSON.stringify(Object.assign({}, localStorage));"
            f"fetch('{self.paragents_url}/inbox', {{credentials: 'include'}}).catch(() => null);"
            "</script>"
        )

    async def handle(self, request: web.Request) -> web.Response:
        self.seen.append(dict(request.headers))
        return web.Response(text=self.page(), content_type="text/html")


@pytest.fixture
async def dev_server(served: Served) -> AsyncIterator[DevServer]:
    dev = DevServer(served.url)
    app = web.Application()
    app.router.add_get("/{tail:.*}", dev.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    dev.url = f"http://127.0.0.1:{port}"
    yield dev
    await runner.cleanup()


def wait(driver: Any, condition: Any, timeout: float = HANG_GUARD_S) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(condition)


CARD_OR_ERROR = (
    "const card = document.querySelector(`article.card[data-id='${arguments[0]}']`);"
    " const live = document.getElementById('live'), status = document.getElementById('status');"
    " if (status) return /Pairing this browser/.test(status.textContent) ? null : status.textContent;"
    " if (!live) return document.body.innerText || null;"  # not the page: an error answer
    " return card ? 'card' : (/lock|too many|HTTP/.test(live.textContent) ? live.textContent : null);"
)


def visit(served: Served, dev: DevServer, link: str, rid: str) -> dict[str, Any]:
    """Pair a phone browser, let it visit the dev server's page, come back to the inbox; return the
    token it keeps, what the dev page's script saw of storage, and the inbox's state afterwards."""
    with phone_browser() as driver:
        driver.get(link)  # pair
        assert wait(driver, lambda d: d.execute_script(CARD_OR_ERROR, rid)) == "card"
        token = driver.execute_script("return localStorage.getItem('paragents.token')")
        driver.get(dev.url + "/")  # the same browser visits the other server's page
        wait(driver, lambda d: d.execute_script("return document.readyState") == "complete")
        storage_seen = driver.title
        driver.get(served.url + "/")  # back to the inbox after the img tags fired
        after = wait(driver, lambda d: d.execute_script(CARD_OR_ERROR, rid))
        return {"token": token, "storage_seen": storage_seen, "after": after}


@pytest.mark.parametrize("limits", [Limits(max_failures=10_000)])  # the img tags lock nothing here
async def test_another_port_gets_nothing_it_can_replay_to_answer_an_ask(
    served: Served, dev_server: DevServer, limits: Limits
) -> None:
    sid, rid = await served.pending_write("api", "notes.txt")
    link = await new_pairing(served.runtime.store.api_access, served.url, now=served.clock.now)
    seen = await asyncio.to_thread(visit, served, dev_server, link, rid)
    assert seen["storage_seen"] == "storage:{}"  # the other origin cannot read the token
    assert dev_server.seen, "the dev server was visited"
    received = "\n".join(f"{k}: {v}" for headers in dev_server.seen for k, v in headers.items())
    assert not seen["token"] or seen["token"] not in received
    # the dev server replays everything it received, dressed as the page (the old cookie's bypass)
    async with httpx.AsyncClient(base_url=served.url, timeout=HANG_GUARD_S) as attacker:
        for headers in dev_server.seen:
            forged = {k: v for k, v in headers.items() if k.lower() in ("cookie", "user-agent", "accept")}
            forged |= {"Origin": served.url, "X-Requested-With": "paragents"}
            r = await attacker.post(f"/inbox/{rid}/answer", headers=forged, json={"answer": "allow_once"})
            assert r.status_code == 401, f"the replay answered the ask: {r.status_code} {r.text}"
    assert served.runtime.sessions[sid].pending  # nothing was answered
    assert not (served.project / "notes.txt").exists()


@pytest.mark.parametrize("limits", [Limits()])  # the defaults: 5 failures used to lock the address out
async def test_img_tags_on_another_page_do_not_lock_the_phone_out(
    served: Served, dev_server: DevServer, limits: Limits
) -> None:
    sid, rid = await served.pending_write("api", "notes.txt")
    link = await new_pairing(served.runtime.store.api_access, served.url, now=served.clock.now)
    seen = await asyncio.to_thread(visit, served, dev_server, link, rid)
    assert seen["after"] == "card", f"the phone was locked out: {seen['after']}"
    hits = [r for r in await served.runtime.store.api_access.recent() if r["path"] == "/pair/<code>"]
    assert len(hits) >= 5  # the img tags did reach the server
    r = await served.client.post(
        f"/inbox/{rid}/answer", headers={"Authorization": f"Bearer {KEY}"}, json={"answer": "allow_once"}
    )
    assert r.status_code == 200
    await served.runtime.wait_idle(sid)
