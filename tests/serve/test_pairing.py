"""Pairing: a one-time link sets a signed cookie; replayed, expired (fake clock) or unknown links and
forged or expired cookies are refused with JSON errors; cookie POSTs need the CSRF header and Origin."""

from __future__ import annotations

import httpx
import pytest

from paragents.serve.auth import COOKIE_NAME, sign_cookie
from paragents.serve.limits import Limits
from paragents.serve.pairing import PAIRING_TTL, new_pairing, qr_text
from tests.serve.conftest import Served


async def with_cookie(
    served: Served, value: str, method: str = "GET", path: str = "/inbox", **kw: object
) -> httpx.Response:
    served.client.cookies.set(COOKIE_NAME, value)
    try:
        return await served.client.request(method, path, **kw)  # type: ignore[arg-type]
    finally:
        served.client.cookies.clear()


async def link(served: Served) -> str:
    return (await new_pairing(served.runtime.store, served.url, now=served.clock.now))[len(served.url) :]


async def test_a_pairing_link_works_once_and_sets_a_signed_httponly_cookie(served: Served) -> None:
    path = await link(served)
    first = await served.client.get(path)
    assert first.status_code == 303 and first.headers["location"] == "/"
    set_cookie = first.headers["set-cookie"]
    assert set_cookie.startswith(f"{COOKIE_NAME}=v1.") and "HttpOnly" in set_cookie
    assert "SameSite=Strict" in set_cookie and "Max-Age=3600" in set_cookie
    assert (await served.client.get("/inbox")).status_code == 200  # the client kept the cookie
    served.client.cookies.clear()
    replay = await served.client.get(path)
    assert replay.status_code == 410 and "already used" in replay.json()["error"]["message"]
    assert "set-cookie" not in replay.headers
    logged = [r["path"] for r in await served.runtime.store.recent_access() if r["path"].startswith("/pair")]
    assert logged == ["/pair/<code>", "/pair/<code>"]  # the code itself is never logged


async def test_a_pairing_link_expires_after_five_minutes(served: Served) -> None:
    path = await link(served)
    served.clock.now += PAIRING_TTL + 1
    late = await served.client.get(path)
    assert late.status_code == 410 and "expired" in late.json()["error"]["message"]
    assert (await served.client.get("/pair/not-a-code")).status_code == 404


@pytest.mark.parametrize("limits", [Limits(max_failures=100)])
async def test_forged_and_expired_cookies_are_refused(served: Served, limits: Limits) -> None:
    good = sign_cookie(b"c" * 32, served.clock.now + 60)
    forged = good[:-4] + ("0000" if not good.endswith("0000") else "1111")
    other_key = sign_cookie(b"x" * 32, served.clock.now + 60)
    for value in (forged, other_key, "v1.9999999999.abc.def", "garbage"):
        r = await with_cookie(served, value)
        assert r.status_code == 401 and r.json()["error"]["message"] == "cookie is not valid"
    assert (await with_cookie(served, good)).status_code == 200
    served.clock.now += 61
    late = await with_cookie(served, good)
    assert late.status_code == 401 and "expired" in late.json()["error"]["message"]


async def test_cookie_posts_need_the_csrf_header_and_same_origin(served: Served) -> None:
    sid, rid = await served.pending_write()
    cookie = sign_cookie(b"c" * 32, served.clock.now + 600)
    body = {"answer": "allow_once"}
    bare = await with_cookie(served, cookie, "POST", f"/inbox/{rid}/answer", json=body)
    assert bare.status_code == 403
    foreign = await with_cookie(
        served,
        cookie,
        "POST",
        f"/inbox/{rid}/answer",
        json=body,
        headers={"X-Requested-With": "paragents", "Origin": "http://evil.example"},
    )
    assert foreign.status_code == 403
    assert served.runtime.sessions[sid].pending  # nothing was answered
    ok = await with_cookie(
        served,
        cookie,
        "POST",
        f"/inbox/{rid}/answer",
        json=body,
        headers={"X-Requested-With": "paragents", "Origin": served.url},
    )
    assert ok.status_code == 200
    await served.runtime.wait_idle(sid)


def test_the_qr_code_is_plain_text() -> None:
    text = qr_text("http://127.0.0.1:8765/pair/abc")
    assert "\x1b" not in text and "█" in text and len(text.splitlines()) > 10
