"""Issue 25 item 4: a session does not approve its own asks. A hostile session runs ``paragents
approve`` (the real CLI) or posts to ``paragents serve``'s answer route (the real server, with a leaked
key) to answer the pending ask of another session (whose command would leave a marker) and to write a
permanent rule with ``--always``; unsandboxed, as a background job that outlives its command, and
sandboxed. Evidence: the ask's row stays pending, the marker is absent, no rule is written. And every
answer records who gave it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from paragents import events as ev
from paragents import paths
from paragents.events import PermissionAnswer
from paragents.llm.replay import ScriptedResponse, ThreadedReplayServer
from paragents.sessions.runtime import Runtime
from paragents.store import ApprovalRecord, Store
from tests.patience import HANG_GUARD_S
from tests.security.hostile import Hostile, hostile, needs_bwrap, tool_call

__all__ = ["hostile"]

PY = sys.executable
CLI = [PY, "-c", "from paragents.cli import main; main()"]
APPROVE_ALL = f"""
import json, os, subprocess, sys
CLI = {CLI!r}
os.environ["PARAGENTS_STATE_DIR"] = STATE  # where paragents keeps its store (~/.local/state/paragents)
listed = subprocess.run([*CLI, "inbox", "--json", "--all"], capture_output=True, text=True)
rows = json.loads(listed.stdout or "[]")
for row in rows:
    done = subprocess.run([*CLI, "approve", row["id"], *sys.argv[1:]], capture_output=True, text=True)
    print("ANSWER", row["id"], done.returncode, done.stdout.strip(), done.stderr.strip())
print("ROWS", len(rows))
"""


def attack_script() -> str:
    """approve_all.py, knowing where paragents keeps its store (commands do not get paragents'
    PARAGENTS_STATE_DIR: this test's store is not in the default place an attacker would look)."""
    return f"STATE = {str(paths.state_dir())!r}\n" + APPROVE_ALL


async def victim_waiting(hostile: Hostile, rt: Runtime) -> ev.PermissionRequested:
    """Session "victim" asks to run a command that leaves a marker; its ask is left pending."""
    hostile.sink.answer = lambda req: (
        None if req.summary.startswith("run_command touch") else PermissionAnswer("reject_once")
    )
    victim = await rt.lifecycle.new_session("victim")
    marker = hostile.project / "victim-ran"
    hostile.server.add(
        [
            tool_call("run_command", {"command": f"touch {marker}"}),
            ScriptedResponse.from_message(content="ok"),
        ],
        session="victim",
    )
    rt.submit(victim.id, "go")
    await hostile.sink.wait_for(lambda: bool(hostile.asked(victim.id)))
    return hostile.asked(victim.id)[0]


async def finish(hostile: Hostile, rt: Runtime, ask: ev.PermissionRequested) -> ApprovalRecord:
    """The row as the attack left it; then the user rejects it so the victim's turn ends."""
    row = await rt.store.approvals.get(ask.request_id)
    assert row is not None
    if row.state == "pending":
        await rt.approvals.answer_approval(ask.request_id, "reject_once", "test user")
    await asyncio.wait_for(rt.wait_idle(ask.session_id), HANG_GUARD_S)
    await rt.shutdown()
    return row


def no_rule_written(project: Path) -> bool:
    local = project / ".paragents" / "permissions.local.json"
    return not local.exists() or "allow" not in local.read_text()


@pytest.mark.parametrize("flag", ["--always", "--session-wide"])
async def test_a_sessions_command_cannot_answer_through_the_cli(hostile: Hostile, flag: str) -> None:
    """Unsandboxed, a command ran `paragents approve --always ID`: another session's command ran and
    a permanent allow rule was written into the project."""
    (hostile.project / "approve_all.py").write_text(attack_script())
    rt = await hostile.runtime({"allow": [f"Bash({PY} *)"]}, sandbox="off")
    ask = await victim_waiting(hostile, rt)
    sid = await hostile.attack(rt, [("run_command", {"command": f"{PY} approve_all.py {flag}"})])
    row = await finish(hostile, rt, ask)
    [out] = hostile.sink.outputs(sid)
    assert "ROWS 1" in out and "refused" in out and "started by paragents" in out, out
    assert row.state == "pending"
    assert not (hostile.project / "victim-ran").exists() and no_rule_written(hostile.project)


async def test_a_background_poller_that_outlives_its_command_cannot_answer(hostile: Hostile) -> None:
    """A poller started by a command kept running after it (adopted by init: paragents is no longer
    among its parents) and approved the session's later ask."""
    (hostile.project / "approve_all.py").write_text(attack_script())
    out = hostile.project / "poller.out"
    rt = await hostile.runtime({"allow": [f"Bash({PY} *)", "Bash(sleep *)"]}, sandbox="off")
    ask = await victim_waiting(hostile, rt)
    poller = f"sleep 1; {PY} approve_all.py --always > {out}.tmp 2>&1; mv {out}.tmp {out}"
    command = f"({poller}) </dev/null >/dev/null 2>&1 &"
    await hostile.attack(rt, [("run_command", {"command": command})], mode="bypassPermissions")
    for _ in range(int(HANG_GUARD_S * 20)):  # the poller is another process: wait for its report
        if out.exists():
            break
        await asyncio.sleep(0.05)
    row = await finish(hostile, rt, ask)
    text = out.read_text()
    assert "ROWS 1" in text and "refused" in text, text
    assert row.state == "pending"
    assert not (hostile.project / "victim-ran").exists() and no_rule_written(hostile.project)


@needs_bwrap
async def test_a_sandboxed_command_cannot_answer_through_the_cli(hostile: Hostile) -> None:
    """In the sandbox (network none) the same command, with paragents' state directory visible to it
    (as it was before the sandbox hid it): refused (the command carries the session's marker, and it
    runs in another PID namespace: see the next test for that check alone)."""
    (hostile.project / "approve_all.py").write_text(attack_script())
    sandbox = {"mode": "required", "writable": [str(paths.state_dir())]}
    rt = await hostile.runtime({"allow": [f"Bash({PY} *)"]}, sandbox=sandbox)
    ask = await victim_waiting(hostile, rt)
    sid = await hostile.attack(rt, [("run_command", {"command": f"{PY} approve_all.py --session-wide"})])
    row = await finish(hostile, rt, ask)
    [out] = hostile.sink.outputs(sid)
    assert "ROWS 1" in out and "refused" in out, out
    assert row.state == "pending"
    assert not (hostile.project / "victim-ran").exists()


@needs_bwrap
async def test_a_cli_in_another_pid_namespace_is_refused_even_without_the_marker(hostile: Hostile) -> None:
    """`paragents approve` run in bwrap's own PID namespace with a clean environment, the store visible:
    the paragents process that waits on the ask (fresh in the store) is not visible from there."""
    rt = await hostile.runtime(sandbox="off")
    ask = await victim_waiting(hostile, rt)
    state = str(paths.state_dir())
    argv = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    argv += [
        "--bind",
        state,
        state,
        "--unshare-pid",
        "--die-with-parent",
        "--",
        *CLI,
        "approve",
        ask.request_id,
    ]
    env = {k: v for k, v in os.environ.items() if k != "PARAGENTS_TOOL_SESSION"}
    done = await asyncio.to_thread(
        subprocess.run, argv, capture_output=True, text=True, env=env, start_new_session=True
    )
    row = await finish(hostile, rt, ask)
    assert done.returncode == 5 and "another PID namespace" in done.stderr, done.stderr
    assert row.state == "pending" and not (hostile.project / "victim-ran").exists()


POST = """
import json, sys, urllib.request
url, key = sys.argv[1], open(sys.argv[2]).read().strip()
auth = {"Authorization": "Bearer " + key}
items = json.load(urllib.request.urlopen(urllib.request.Request(url + "/inbox", headers=auth)))["items"]
for item in items:
    req = urllib.request.Request(
        url + "/inbox/" + item["id"] + "/answer", data=json.dumps({"answer": "allow_session"}).encode(),
        headers={"Authorization": "Bearer " + key, "Content-Type": "application/json"}, method="POST")
    try:
        print("POSTED", urllib.request.urlopen(req).status)
    except urllib.error.HTTPError as exc:
        print("POSTED", exc.code, exc.read().decode())
print("ITEMS", len(items))
"""


@pytest.mark.parametrize(
    "sandbox", ["off", pytest.param({"mode": "required", "network": "all"}, marks=needs_bwrap)]
)
async def test_a_sessions_command_with_the_key_cannot_answer_over_http(
    hostile: Hostile, sandbox: Any
) -> None:
    """With the network on, a command read the API key and answered POST /inbox/{id}/answer."""
    from paragents.serve.auth import AuthConfig
    from paragents.serve.bridge import RuntimeBridge
    from paragents.serve.server import ServeThread

    key = "sk-serve-leaked-0123456789"
    (hostile.project / "post.py").write_text(POST)
    (hostile.project / "key.txt").write_text(key)  # however it leaked
    rt = await hostile.runtime({"allow": [f"Bash({PY} *)"]}, sandbox=sandbox)
    bridge = RuntimeBridge(rt, rt.store.api_access)
    auth = AuthConfig(api_key=key, browser_secret=b"c" * 32, project=str(rt.project_dir))
    server = ServeThread(bridge, auth, "127.0.0.1", 0)
    await asyncio.to_thread(server.start)
    try:
        ask = await victim_waiting(hostile, rt)
        sid = await hostile.attack(rt, [("run_command", {"command": f"{PY} post.py {server.url} key.txt"})])
    finally:
        await server.stop_async()
        bridge.close()
    row = await finish(hostile, rt, ask)
    [out] = hostile.sink.outputs(sid)
    assert "ITEMS 1" in out and "POSTED 403" in out and "refused" in out, out
    assert row.state == "pending"
    assert not (hostile.project / "victim-ran").exists()


def test_a_person_answers_and_the_answer_records_who(tmp_path: Path) -> None:
    """`paragents run --wait-approvals` waits on an ask; `paragents approve` from outside paragents'
    process tree answers it; the row, the audit log and `inbox --answered` say who: the CLI, its pid,
    terminal and parents. `--always` without a terminal is refused."""
    from paragents.cli import main

    project = tmp_path / "proj"
    project.mkdir()
    with ThreadedReplayServer(models=["m"]) as server:
        server.add(
            [tool_call("run_command", {"command": "touch ran"}), ScriptedResponse.from_message(content="ok")]
        )
        engine = subprocess.Popen(
            [*CLI, "run", "--wait-approvals", "--dir", str(project), "--endpoint", server.base_url,
             "--model", "m", "go"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PARAGENTS_API_KEY": "x"},
        )  # fmt: skip
        try:
            row = wait_for_pending()
            always = subprocess.run(  # no controlling terminal: a permanent rule is refused
                [*CLI, "approve", row.id, "--always"], capture_output=True, text=True, start_new_session=True
            )
            assert (
                always.returncode == 5
                and "--always writes a permanent rule and needs a terminal" in always.stderr
            )
            assert main(["approve", row.id]) == 0
            engine.wait(timeout=HANG_GUARD_S)
        finally:
            if engine.poll() is None:
                engine.kill()
                engine.wait()
    assert (project / "ran").exists()
    answered, audit = stored(row.id)
    assert answered.answered_by is not None
    assert answered.answered_by.startswith(f"cli (pid {os.getpid()}, ") and "parents " in answered.answered_by
    assert [a["answerer"] for a in audit if a["answer"] == "allow_once"] == [answered.answered_by]


def wait_for_pending() -> ApprovalRecord:
    async def pending() -> list[ApprovalRecord]:
        if not paths.db_path().exists():
            return []
        async with await Store.open(paths.db_path()) as store:
            return await store.approvals.find()

    for _ in range(int(HANG_GUARD_S * 20)):  # another process writes it: look until it is there
        rows = asyncio.run(pending())
        if rows:
            return rows[0]
        asyncio.run(asyncio.sleep(0.05))
    raise TimeoutError("no pending approval appeared")


def stored(approval_id: str) -> tuple[ApprovalRecord, list[dict[str, Any]]]:
    async def read() -> tuple[ApprovalRecord, list[dict[str, Any]]]:
        async with await Store.open(paths.db_path()) as store:
            row = await store.approvals.get(approval_id)
            assert row is not None
            return row, await store.audit.recent(row.session_id)

    return asyncio.run(read())


def test_inbox_answered_lists_who_answered(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from paragents.cli import main

    project = tmp_path / "proj"
    project.mkdir()

    async def seed() -> None:
        async with await Store.open(paths.db_path()) as store:
            s = await store.sessions.create(name="api", project_dir=project, workdir=project, model="m")
            await store.approvals.add("ask1", s.id, kind="approval", tool="run_command", summary="npm test")
            await store.approvals.answer("ask1", "allow_once", "web:key (client 192.0.2.7:5123)")

    asyncio.run(seed())
    assert main(["inbox", "--answered", "--dir", str(project), "--json"]) == 0
    [shown] = json.loads(capsys.readouterr().out)
    assert (shown["id"], shown["answered_by"]) == ("ask1", "web:key (client 192.0.2.7:5123)")
