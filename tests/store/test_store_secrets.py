"""The store never keeps API keys or auth headers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paragents.config import RuntimeConfig
from paragents.models import AssembledReply, ToolCall, Usage, tool_message, user_message
from paragents.store import Store, StoreError

KEY = "sk-test-0123456789abcdefSECRETKEY"


def _db_bytes(db_file: Path) -> bytes:
    return b"".join(p.read_bytes() for p in db_file.parent.iterdir() if p.name.startswith(db_file.name))


async def test_full_session_db_does_not_contain_the_configured_key(db_file: Path, project: Path) -> None:
    config = RuntimeConfig.model_validate({"base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key": KEY})
    assert config.resolve_api_key() == KEY
    async with await Store.open(db_file) as store:
        made = await store.sessions.create(name="s", project_dir=project, workdir=project, model=config.model)
        turn = await store.turns.start(made.id, "list files")
        await store.messages.append(made.id, user_message("list files"), turn_id=turn)
        reply = AssembledReply(content="", tool_calls=[ToolCall("c1", "run_command", '{"command": "ls"}')])
        await store.messages.append(made.id, reply.to_message(), turn_id=turn)
        await store.audit.record(
            made.id,
            tool="Bash",
            input={"command": "ls"},
            decision="allow",
            reason="rule",
            rule="Bash(ls)",
            scope="session",
            answered_by="policy",
        )
        await store.messages.append(made.id, tool_message("c1", "a.py\nb.py"), turn_id=turn)
        await store.turns.add_usage(made.id, turn, config.model, Usage(10, 5, 15))
        await store.events.record(made.id, "config", {"base_url": config.base_url, "model": config.model})
        await store.sessions.update(made.id, session_rules=["Bash(ls)"])
        await store.turns.finish(turn, "completed")
        assert _db_bytes(db_file)  # the files exist while open (WAL)
        assert KEY.encode() not in _db_bytes(db_file)
    assert KEY.encode() not in _db_bytes(db_file)
    assert KEY[-8:].encode() not in _db_bytes(db_file)


@pytest.mark.parametrize("header", ["Authorization", "authorization", "X-Api-Key", "api_key"])
async def test_auth_headers_are_refused_everywhere(db_file: Path, project: Path, header: str) -> None:
    secret = {"headers": {header: f"Bearer {KEY}"}}
    async with await Store.open(db_file) as store:
        made = await store.sessions.create(name="s", project_dir=project, workdir=project, model="m")
        with pytest.raises(StoreError) as err:
            await store.messages.append(made.id, {"role": "user", "content": "x", **secret})
        assert header in str(err.value) and KEY not in str(err.value)
        with pytest.raises(StoreError):
            await store.events.record(made.id, "request", {"nested": [secret]})
        with pytest.raises(StoreError):
            await store.audit.record(
                made.id,
                tool="WebFetch",
                input=secret,
                decision="ask",
                reason=None,
                rule=None,
                scope=None,
                answered_by="user",
            )
        assert await store.messages.count(made.id) == 0
    assert KEY.encode() not in _db_bytes(db_file)


async def test_text_mentioning_authorization_is_still_stored(store: Store, project: Path) -> None:
    made = await store.sessions.create(name="s", project_dir=project, workdir=project, model="m")
    text = json.dumps({"note": "set the Authorization header in client.py"})
    await store.messages.append(made.id, user_message(text))
    assert await store.messages.load_history(made.id) == [user_message(text)]
