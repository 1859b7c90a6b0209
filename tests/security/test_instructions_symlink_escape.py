"""Found by the hostile TUI demo (issue 25): a sandboxed command cannot read ``.env`` (Read deny,
hidden in the sandbox) nor paragents' own ``serve.json`` (hidden), but it can *create a symlink* to
either named ``AGENTS.md`` / ``CLAUDE.md``. paragents then reads the project instructions on the host,
following the link, and sends the target's content to the model in the system prompt of the very
next request (and shows it in ``/memory``). Evidence checked here: what the replay server received.

The loader now reads only regular files, never through a link (agent/context.py)."""

from __future__ import annotations

import json

import pytest

from paragents.events import PermissionAnswer
from tests.security.hostile import Hostile, hostile, needs_bwrap

__all__ = ["hostile"]

SECRET = "dotenv-TOPSECRET-7f3e91"


def sent_to_model(hostile: Hostile) -> str:
    return " ".join(json.dumps(r.body_json or {}) for r in hostile.server.requests)


@needs_bwrap
@pytest.mark.parametrize("name", ["AGENTS.md", "CLAUDE.md"])
async def test_an_instructions_symlink_to_a_denied_file_does_not_reach_the_model(
    hostile: Hostile, name: str
) -> None:
    (hostile.project / ".env").write_text(f"DB_PASSWORD={SECRET}\n")
    hostile.sink.answer = lambda _req: PermissionAnswer(
        "allow_once"
    )  # the user allows `ln -s`, as in the demo
    rt = await hostile.runtime({"deny": ["Read(./.env)"]}, sandbox="required")
    sid = await hostile.attack(rt, [("run_command", {"command": f"ln -s .env {name}"})])
    await rt.shutdown()
    assert (hostile.project / name).is_symlink(), hostile.sink.outputs(sid)  # the command ran, sandboxed
    assert not any(SECRET in out for out in hostile.sink.outputs(sid))  # the sandbox hid .env itself
    assert SECRET not in sent_to_model(hostile)
