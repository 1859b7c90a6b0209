"""Issue 28 items 4 and 5: a credential answers only the asks of the projects it was issued for (the
pairing names the project; a key or a JWT may name several) and says which; JWTs and browser tokens
live no longer than the server allows; the JWT secret can come from a file or the environment, and
keys shorter than 32 bytes are refused off loopback."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import jwt
import pytest

from paragents.serve.auth import SESSION_HEADER, sign_browser_token
from paragents.serve.launch import JWT_SECRET_ENV, ServeOptions, auth_from
from paragents.serve.server import ServeRefused
from tests.serve.cli_process import paragents
from tests.serve.conftest import JWT_SECRET, KEY, Served

H = {"Authorization": f"Bearer {KEY}"}


STRANGERS: list[subprocess.Popen[bytes]] = []
"""Processes standing in for "another paragents process" waiting on an ask: alive, and neither this
process nor one of its parents (the answer route refuses a client paragents started)."""


@pytest.fixture(autouse=True)
def _stop_strangers() -> Iterator[None]:
    yield
    while STRANGERS:
        proc = STRANGERS.pop()
        proc.kill()
        proc.wait()


async def other_project_ask(served: Served, tmp_path: Path, rid: str = "other-ask-1") -> Path:
    """A pending ask of a session of another project (another process waits on it)."""
    STRANGERS.append(subprocess.Popen(["sleep", "600"]))
    other = tmp_path / "other-project"
    other.mkdir()
    record = await served.runtime.store.sessions.create(name="x", project_dir=other, workdir=other, model="m")
    await served.runtime.store.approvals.add(
        rid,
        record.id,
        kind="approval",
        tool="run_command",
        summary="run_command make deploy",
        call={"id": "c1", "name": "run_command", "arguments": json.dumps({"command": "make deploy"})},
        pid=STRANGERS[-1].pid,
    )
    return other.resolve()


def token(**claims: object) -> str:
    base: dict[str, object] = {"sub": "ci", "iss": "paragents-tests", "aud": "paragents"}
    base["exp"] = int(time.time()) + 600
    base.update(claims)
    return jwt.encode(base, JWT_SECRET, algorithm="HS256")


async def test_a_key_cannot_answer_another_projects_ask_and_is_told_which(
    served: Served, tmp_path: Path
) -> None:
    other = await other_project_ask(served, tmp_path)
    assert "other-ask-1" not in str((await served.client.get("/inbox", headers=H)).json())
    r = await served.client.post("/inbox/other-ask-1/answer", headers=H, json={"answer": "allow_once"})
    message = r.json()["error"]["message"]
    assert r.status_code == 403 and str(other) in message and served.server.auth.project in message
    row = await served.runtime.store.approvals.get("other-ask-1")
    assert row is not None and row.state == "pending"


async def test_a_jwt_naming_both_projects_lists_and_answers_the_other_ones_ask(
    served: Served, tmp_path: Path
) -> None:
    other = await other_project_ask(served, tmp_path)
    both = {"Authorization": f"Bearer {token(projects=[served.server.auth.project, str(other)])}"}
    items = (await served.client.get("/inbox", headers=both)).json()["items"]
    assert [i["id"] for i in items] == ["other-ask-1"] and items[0]["command"] == "make deploy"
    r = await served.client.post("/inbox/other-ask-1/answer", headers=both, json={"answer": "reject_once"})
    by = "web:jwt:ci (client 127.0.0.1:"  # the credential, then who used it (sessions/answerer.py)
    assert r.status_code == 200 and r.json()["by"].startswith(by)
    row = await served.runtime.store.approvals.get("other-ask-1")
    assert row is not None and row.answer == "reject_once" and str(row.answered_by).startswith(by)
    only_other = {"Authorization": f"Bearer {token(projects=[str(other)])}"}
    refused = await served.client.get("/sessions", headers=only_other)  # not this server's project
    assert refused.status_code == 403 and str(other) in refused.json()["error"]["message"]


async def test_a_browser_paired_for_another_project_answers_nothing_here(
    served: Served, tmp_path: Path
) -> None:
    sid, rid = await served.pending_write()
    elsewhere = {SESSION_HEADER: sign_browser_token(b"c" * 32, served.clock.now, str(tmp_path / "elsewhere"))}
    r = await served.client.post(f"/inbox/{rid}/answer", headers=elsewhere, json={"answer": "allow_once"})
    assert r.status_code == 403 and "elsewhere" in r.json()["error"]["message"]
    assert (await served.client.get("/inbox", headers=elsewhere)).json() == {"items": []}
    assert (await served.client.get("/sessions", headers=elsewhere)).status_code == 403
    assert served.runtime.sessions[sid].pending
    here = {SESSION_HEADER: sign_browser_token(b"c" * 32, served.clock.now, served.server.auth.project)}
    ok = await served.client.post(f"/inbox/{rid}/answer", headers=here, json={"answer": "allow_once"})
    assert ok.status_code == 200 and ok.json()["by"].startswith("web:browser:")
    await served.runtime.wait_idle(sid)


async def test_jwts_live_no_longer_than_the_server_allows(served: Served) -> None:
    """A JWT valid for a year (or issued two days ago) is refused: at most 24 h by default."""
    far = await served.client.get(
        "/inbox", headers={"Authorization": f"Bearer {token(exp=int(time.time()) + 365 * 86400)}"}
    )
    assert far.status_code == 401 and "lives longer than this server allows (24 h)" in far.text
    old = await served.client.get(
        "/inbox", headers={"Authorization": f"Bearer {token(iat=int(time.time()) - 2 * 86400)}"}
    )
    assert old.status_code == 401 and "older than this server allows" in old.text
    assert (
        await served.client.get("/inbox", headers={"Authorization": f"Bearer {token()}"})
    ).status_code == 200


def test_the_jwt_secret_comes_from_a_file_or_the_environment(tmp_path: Path) -> None:
    secret_file = tmp_path / "jwt.secret"
    secret_file.write_text("s" * 40 + "\n")
    auth, _ = auth_from(ServeOptions(jwt_secret_file=str(secret_file)), env={})
    assert auth.jwt_secret == "s" * 40
    auth, _ = auth_from(ServeOptions(), env={JWT_SECRET_ENV: "e" * 40})
    assert auth.jwt_secret == "e" * 40 and auth.api_key is None
    with pytest.raises(ServeRefused, match=r"cannot read the JWT secret file .*missing"):
        auth_from(ServeOptions(jwt_secret_file=str(tmp_path / "missing")), env={})


def test_short_keys_are_refused_off_loopback_only() -> None:
    with pytest.raises(ServeRefused, match="the API key is shorter than 32 bytes"):
        auth_from(ServeOptions(host="0.0.0.0"), env={"PARAGENTS_SERVE_KEY": "hunter2"})
    with pytest.raises(ServeRefused, match="the JWT secret is shorter than 32 bytes"):
        auth_from(ServeOptions(host="0.0.0.0"), env={JWT_SECRET_ENV: "short"})
    auth, _ = auth_from(ServeOptions(host="0.0.0.0"), env={"PARAGENTS_SERVE_KEY": "k" * 32})
    assert auth.api_key == "k" * 32
    auth_from(ServeOptions(), env={"PARAGENTS_SERVE_KEY": "hunter2"})  # loopback: allowed


def test_serve_with_a_short_key_on_a_public_address_exits_2(tmp_path: Path) -> None:
    done = paragents("serve", "--host", "0.0.0.0", "--port", "0", env={"PARAGENTS_SERVE_KEY": "hunter2"})
    assert done.returncode == 2 and "shorter than 32 bytes" in done.stderr
    done = paragents(
        "serve", "--host", "0.0.0.0", "--port", "0", "--jwt-secret-file", str(tmp_path / "nope"),
        env={"PARAGENTS_SERVE_KEY": ""},
    )  # fmt: skip
    assert done.returncode == 2 and "cannot read the JWT secret file" in done.stderr
