"""Pairing: a one-time code traded (``POST /pair``) for a browser token the page keeps in its origin's
localStorage and sends in a header; replayed, expired or unknown codes and forged, expired or
future-dated tokens are refused with JSON errors; no cookie is ever set or read."""

from __future__ import annotations

import httpx
import pytest

from paragents.serve.auth import SESSION_HEADER, sign_browser_token
from paragents.serve.limits import Limits
from paragents.serve.pairing import PAIRING_TTL, new_pairing, qr_text
from tests.serve.conftest import Served


async def code_of(served: Served) -> str:
    link = await new_pairing(served.runtime.store.api_access, served.url, now=served.clock.now)
    return link.rsplit("/", 1)[1]


async def with_token(
    served: Served, token: str, method: str = "GET", path: str = "/inbox", **kw: object
) -> httpx.Response:
    return await served.client.request(method, path, headers={SESSION_HEADER: token}, **kw)  # type: ignore[arg-type]


async def test_a_pairing_code_works_once_and_gives_a_token_not_a_cookie(served: Served) -> None:
    code = await code_of(served)
    page = await served.client.get(f"/pair/{code}")  # the link's page: it does not use the code
    assert page.status_code == 200 and "/static/pair.js" in page.text and "set-cookie" not in page.headers
    assert "script-src 'self'" in page.headers["content-security-policy"]
    first = await served.client.post("/pair", json={"code": code})
    assert first.status_code == 200 and "set-cookie" not in first.headers
    body = first.json()
    assert body["header"] == SESSION_HEADER and body["project"] == served.server.auth.project
    assert body["expires_at"] == served.clock.now + 3600
    assert (await with_token(served, body["token"])).status_code == 200
    replay = await served.client.post("/pair", json={"code": code})
    assert replay.status_code == 410 and "already used" in replay.json()["error"]["message"]
    rows = await served.runtime.store.api_access.recent()
    assert code not in str(rows) and body["token"] not in str(rows)  # neither is ever logged
    [paired] = [r["principal"] for r in rows if r["path"] == "/pair" and r["status"] == 200]
    assert paired.startswith("pairing:browser:")


async def test_a_pairing_code_expires_after_five_minutes(served: Served) -> None:
    code = await code_of(served)
    served.clock.now += PAIRING_TTL + 1
    late = await served.client.post("/pair", json={"code": code})
    assert late.status_code == 410 and "expired" in late.json()["error"]["message"]
    assert (await served.client.post("/pair", json={"code": "not-a-code"})).status_code == 404


async def test_a_cross_site_form_cannot_pair(served: Served) -> None:
    code = await code_of(served)
    form = await served.client.post("/pair", data={"code": code})  # what a form on any page can send
    assert form.status_code == 415
    foreign = await served.client.post("/pair", json={"code": code}, headers={"Origin": "http://127.0.0.1:1"})
    assert foreign.status_code == 403
    assert (await served.client.post("/pair", json={"code": code})).status_code == 200  # still unused


@pytest.mark.parametrize("limits", [Limits(max_failures=100)])
async def test_forged_expired_and_future_tokens_are_refused(served: Served, limits: Limits) -> None:
    project = served.server.auth.project
    good = sign_browser_token(b"c" * 32, served.clock.now, project)
    forged = good[:-4] + ("0000" if not good.endswith("0000") else "1111")
    other_key = sign_browser_token(b"x" * 32, served.clock.now, project)
    for value in (forged, other_key, "b1.9999999999.eA.abc.def", "garbage"):
        r = await with_token(served, value)
        assert (
            r.status_code == 401 and r.json()["error"]["message"] == "browser token is not valid: pair again"
        )
    assert (await with_token(served, good)).status_code == 200
    served.clock.now += 3600
    late = await with_token(served, good)
    assert late.status_code == 401 and "expired" in late.json()["error"]["message"]


@pytest.mark.parametrize("limits", [Limits(max_failures=100)])
async def test_a_token_signed_far_into_the_future_is_not_accepted_beyond_the_lifetime(
    served: Served, limits: Limits
) -> None:
    """Issue 25 "Also" / issue 28 item 5: a credential minted from the signing secret with a date in
    2100 was accepted until then; the server decides the lifetime (``--browser-hours``) from the
    issue time and refuses one issued in the future."""
    project = served.server.auth.project
    future = sign_browser_token(b"c" * 32, 4_102_444_800, project)  # 2100-01-01
    r = await with_token(served, future)
    assert r.status_code == 401 and "issued in the future" in r.json()["error"]["message"]
    old = sign_browser_token(b"c" * 32, served.clock.now - 3601, project)
    assert (await with_token(served, old)).status_code == 401


async def test_a_cookie_is_never_a_credential(served: Served) -> None:
    """Cookies reach every server on the same host name whatever the port (RFC 6265 §8.5): none is
    read, not even one holding a valid token."""
    good = sign_browser_token(b"c" * 32, served.clock.now, served.server.auth.project)
    for name in ("paragents_session", SESSION_HEADER):
        served.client.cookies.set(name, good)
        try:
            assert (await served.client.get("/inbox")).status_code == 401
        finally:
            served.client.cookies.clear()


def test_the_qr_code_is_plain_text() -> None:
    text = qr_text("http://127.0.0.1:8765/pair/abc")
    assert "\x1b" not in text and "█" in text and len(text.splitlines()) > 10
