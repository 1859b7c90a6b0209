"""``paragents serve --tui``: our own static page (no Host reflection, no outside resources, the phone
page's CSP) and textual-serve's terminal behind a one-time websocket ticket bought with credentials:
with a ticket the websocket starts the app and receives its first frame; without one, or with a used
one, the upgrade is refused (issue 28 items 1 and 6)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import httpx
import pytest

from paragents.serve.auth import SESSION_HEADER, sign_browser_token
from paragents.serve.bridge import RuntimeBridge
from paragents.serve.pairing import new_pairing
from paragents.serve.routes import SECURITY_HEADERS
from paragents.serve.server import ServeThread
from paragents.ui.serve.tui_web import tui_extension
from tests.patience import HANG_GUARD_S
from tests.serve.chromium import OFFLINE, needs_chromium, phone_browser
from tests.serve.conftest import Served, auth_config


def wait(driver: Any, condition: Any, timeout: float = HANG_GUARD_S) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(condition)


@pytest.fixture
async def tui_url(served: Served) -> AsyncIterator[str]:
    bridge = RuntimeBridge(served.runtime, clock=served.clock)
    thread = ServeThread(
        bridge, auth_config(), "127.0.0.1", 0, clock=served.clock, extend=tui_extension(served.project)
    )
    url = await asyncio.to_thread(thread.start)
    try:
        yield url
    finally:
        await thread.stop_async()
        bridge.close()


def csp_without_styles(value: str) -> str:
    return value.replace(" 'unsafe-inline'", "")


async def test_the_page_is_static_local_and_under_the_phone_pages_csp(tui_url: str) -> None:
    async with httpx.AsyncClient(base_url=tui_url) as http:
        page = await http.get("/tui/")
        assert page.status_code == 200 and "data-session-websocket-url" not in page.text
        assert (
            csp_without_styles(page.headers["content-security-policy"])
            == SECURITY_HEADERS["Content-Security-Policy"]
        )
        assert (
            "'unsafe-inline'"
            not in page.headers["content-security-policy"].split("script-src")[1].split(";")[0]
        )
        urls = re.findall(r'(?:src|href)="([^"]+)"', page.text)
        assert urls and all(u.startswith("/tui/static/") or u == "data:," for u in urls), urls  # ours
        assert "googleapis" not in page.text and "http" not in page.text.replace("http-equiv", "")
        for path in [*urls[1:], "/tui/static/fonts/RobotoMono-VariableFont_wght.ttf"]:
            asset = await http.get(path)
            assert asset.status_code == 200, path
            assert b"fonts.googleapis" not in asset.content, path
        assert (await http.get("/tui")).headers["location"] == "/tui/"


async def test_a_hostile_host_header_is_refused_never_reflected(tui_url: str) -> None:
    """``Host: 127.0.0.1:P@evil`` went into textual-serve's ``<script src>``; now it is a 400 and the
    page never names a host at all (checked above)."""
    port = tui_url.rsplit(":", 1)[1]
    async with httpx.AsyncClient(base_url=tui_url) as http:
        for host in (f"127.0.0.1:{port}@evil.example", f"127.0.0.1:{port}/x", "evil.example"):
            r = await http.get("/tui/", headers={"Host": host})
            assert r.status_code in (400, 421) and "evil" not in r.text, host


async def test_the_websocket_needs_a_one_time_ticket_and_then_streams_the_app(
    served: Served, tui_url: str
) -> None:
    token = sign_browser_token(b"c" * 32, served.clock.now, served.server.auth.project)
    async with aiohttp.ClientSession() as http:
        for path in ("/tui/ws/not-a-ticket", "/tui/ws"):
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await http.ws_connect(f"{tui_url}{path}?width=80&height=24", headers={"Origin": tui_url})
            assert refused.value.status in (401, 404), path
        async with http.post(f"{tui_url}/ws-ticket") as anonymous:
            assert anonymous.status == 401
        async with http.post(
            f"{tui_url}/ws-ticket", headers={SESSION_HEADER: token, "Origin": tui_url}
        ) as bought:
            assert bought.status == 200
            ticket = (await bought.json())["ticket"]
        ws_url = f"{tui_url}/tui/ws/{ticket}?width=80&height=24"
        async with http.ws_connect(ws_url, headers={"Origin": tui_url}) as ws:
            async with asyncio.timeout(120):
                while True:
                    message = await ws.receive()
                    assert message.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT), message
                    if message.type is aiohttp.WSMsgType.BINARY and message.data:
                        break  # the app's first frame (terminal output)
            await ws.close()
        with pytest.raises(aiohttp.WSServerHandshakeError) as reused:
            await http.ws_connect(ws_url, headers={"Origin": tui_url})
        assert reused.value.status == 401
    rows = await served.runtime.store.api_access.recent()
    assert ticket not in str(rows) and "/tui/ws/<ticket>" in {r["path"] for r in rows}


@needs_chromium
async def test_the_whole_app_runs_in_chromium_offline_with_no_csp_violation(
    served: Served, tui_url: str
) -> None:
    """Issue 28 item 6 in a real browser with no network but 127.0.0.1: pair, open /tui/, the terminal
    shows the app; every resource came from this server and the console has no CSP violation."""
    code = (await new_pairing(served.runtime.store.api_access, tui_url, now=served.clock.now)).rsplit("/", 1)[
        1
    ]

    def run() -> dict[str, Any]:
        with phone_browser(OFFLINE, console=True) as driver:
            driver.set_window_size(1200, 900)
            driver.get(f"{tui_url}/pair/{code}")
            wait(driver, lambda d: d.execute_script("return !!localStorage.getItem('paragents.token')"))
            driver.get(f"{tui_url}/tui/")
            wait(driver, lambda d: d.execute_script("return document.body.classList.contains('-first-byte')"))
            resources = driver.execute_script(
                "return performance.getEntriesByType('resource').map((e) => e.name)"
            )
            fonts = driver.execute_script("return document.fonts.check('16px \"Roboto Mono\"')")
            text = driver.execute_script(
                "return [...document.querySelectorAll('.xterm-rows, canvas')].length"
            )
            return {"resources": resources, "log": driver.get_log("browser"), "fonts": fonts, "drawn": text}

    seen = await asyncio.to_thread(run)
    assert seen["resources"] and all(r.startswith(tui_url + "/") for r in seen["resources"]), seen[
        "resources"
    ]
    assert any(r.endswith("/tui/static/js/textual.js") for r in seen["resources"])
    problems = [
        e["message"]
        for e in seen["log"]
        if "Content Security Policy" in e["message"] or e["level"] == "SEVERE"
    ]
    assert not problems, problems
    assert seen["fonts"] and seen["drawn"]
