"""``paragents serve --tui``: textual-serve's routes sit behind the API's auth. With the paired cookie
a websocket starts the app and receives its first frame; without it the upgrade is refused."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from paragents.serve.auth import COOKIE_NAME, sign_cookie
from paragents.serve.bridge import RuntimeBridge
from paragents.serve.server import ServeThread
from paragents.ui.tui_web import tui_extension
from tests.serve.conftest import Served, auth_config


async def test_the_tui_websocket_needs_the_cookie_and_then_streams_the_app(served: Served) -> None:
    bridge = RuntimeBridge(served.runtime, clock=served.clock)
    thread = ServeThread(
        bridge, auth_config(), "127.0.0.1", 0, clock=served.clock, extend=tui_extension(served.project)
    )
    url = await asyncio.to_thread(thread.start)
    cookie = sign_cookie(b"c" * 32, served.clock.now + 600)
    ws_url = f"{url}/tui/ws?width=80&height=24"
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{url}/tui/") as page:
                assert page.status == 401
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await http.ws_connect(ws_url, headers={"Origin": url})
            assert refused.value.status == 401
            headers = {"Origin": url, "Cookie": f"{COOKIE_NAME}={cookie}"}
            async with http.get(f"{url}/tui/", headers=headers) as page:
                assert page.status == 200 and "/tui/ws" in await page.text()
            async with http.ws_connect(ws_url, headers=headers) as ws:
                async with asyncio.timeout(120):
                    while True:
                        message = await ws.receive()
                        assert message.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT), message
                        if message.type is aiohttp.WSMsgType.BINARY and message.data:
                            break  # the app's first frame (terminal output)
                await ws.close()
    finally:
        await thread.stop_async()
        bridge.close()
