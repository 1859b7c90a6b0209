"""Issue 28 item 2: failed attempts never lock out a request that presents valid credentials (five
``<img src=".../pair/x">`` on any page used to lock 127.0.0.1 out for 15 minutes, key and paired
browser included); guesses are throttled per credential kind across every address, and rotating
127/8 source addresses gains nothing."""

from __future__ import annotations

import httpx
import pytest

from paragents.serve.auth import SESSION_HEADER, sign_browser_token
from paragents.serve.limits import Limits, network
from tests.patience import HANG_GUARD_S
from tests.serve.conftest import KEY, Served

H = {"Authorization": f"Bearer {KEY}"}
STRICT = Limits(max_failures=3, failure_window=60.0, lockout=600.0)


def browser(served: Served) -> dict[str, str]:
    token = sign_browser_token(b"c" * 32, served.clock.now, served.server.auth.project)
    return {SESSION_HEADER: token}


def client_from(served: Served, source: str) -> httpx.AsyncClient:
    """A client whose requests leave from the loopback address ``source`` (e.g. 127.0.0.7)."""
    transport = httpx.AsyncHTTPTransport(local_address=source)
    return httpx.AsyncClient(base_url=served.url, transport=transport, timeout=HANG_GUARD_S)


@pytest.mark.parametrize("limits", [STRICT])
async def test_bad_pairing_links_and_bad_keys_never_lock_out_a_valid_key_or_browser(
    served: Served, limits: Limits
) -> None:
    for _ in range(10):  # what five <img src=".../pair/x"> and more do, and a key guesser
        await served.client.get("/pair/x")
        await served.client.post("/pair", json={"code": "x"})
        await served.client.get("/inbox", headers={"Authorization": "Bearer sk-wrong"})
    assert (await served.client.get("/inbox", headers=H)).status_code == 200
    assert (await served.client.get("/inbox", headers=browser(served))).status_code == 200


@pytest.mark.parametrize("limits", [STRICT])
async def test_failed_guesses_are_locked_per_kind_and_say_so(served: Served, limits: Limits) -> None:
    bad = {"Authorization": "Bearer sk-wrong"}
    codes = [(await served.client.get("/inbox", headers=bad)).status_code for _ in range(4)]
    assert codes == [401, 401, 429, 429]
    locked = await served.client.get("/inbox", headers=bad)
    message = locked.json()["error"]["message"]
    assert "too many failed key credentials" in message and "a valid one is still accepted" in message
    assert int(locked.headers["Retry-After"]) > 500
    assert (await served.client.get("/inbox", headers=H)).status_code == 200  # the same kind, valid
    forged = {SESSION_HEADER: "b1.1.x.y.z"}  # another kind is not locked by key guesses
    assert (await served.client.get("/inbox", headers=forged)).status_code == 401
    served.clock.now += 601
    assert (await served.client.get("/inbox", headers=bad)).status_code == 401


@pytest.mark.parametrize("limits", [STRICT])
async def test_rotating_loopback_source_addresses_gains_nothing(served: Served, limits: Limits) -> None:
    """Each failure from another 127.x address: the kind is locked after three all the same."""
    codes = []
    for n in range(2, 7):
        async with client_from(served, f"127.0.0.{n}") as client:
            r = await client.get("/inbox", headers={"Authorization": "Bearer sk-wrong"})
            codes.append(r.status_code)
    assert codes == [401, 401, 429, 429, 429]
    remotes = {r["remote"] for r in await served.runtime.store.api_access.recent()}
    assert {"127.0.0.2", "127.0.0.6"} <= remotes  # the addresses did rotate


@pytest.mark.parametrize("limits", [Limits(rate=4, per=60.0)])
async def test_the_anonymous_rate_counts_all_of_127_8_as_one_and_spares_credentials(
    served: Served, limits: Limits
) -> None:
    codes = []
    for n in range(2, 8):
        async with client_from(served, f"127.0.0.{n}") as client:
            codes.append((await client.get("/inbox")).status_code)
    assert codes == [401] * 4 + [429] * 2
    assert (await served.client.get("/inbox", headers=H)).status_code == 200  # its own budget
    served.clock.now += 61
    assert (await served.client.get("/inbox")).status_code == 401


@pytest.mark.parametrize("limits", [Limits(rate=5, per=60.0)])
async def test_a_credential_has_its_own_rate_limit(served: Served, limits: Limits) -> None:
    codes = [(await served.client.get("/inbox", headers=H)).status_code for _ in range(6)]
    assert codes == [200] * 5 + [429]
    assert (await served.client.get("/inbox", headers=browser(served))).status_code == 200
    served.clock.now += 61
    assert (await served.client.get("/inbox", headers=H)).status_code == 200


def test_networks_for_the_anonymous_rate() -> None:
    assert network("127.0.0.1") == network("127.200.3.4") == network("::ffff:127.9.9.9") == "127.0.0.0/8"
    assert network("2001:db8::1") == network("2001:db8::ffff") == "2001:db8::/64"
    assert network("10.0.0.1") != network("10.0.0.2")
