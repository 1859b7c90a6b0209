"""Issue 28 item 3: every place a person approves from shows the whole call or says plainly how much
is not shown and opens it all: a ``curl … | sh`` on line 306 of a command was in no screen (the
preview keeps 300 lines), and the row of an ask another process waits on said ``omitted: 0``."""

from __future__ import annotations

import os

from paragents.serve.approvals import ROW_PREVIEW_NOTE
from tests.serve.calls import EVIL, LONG_COMMAND, LONG_FILE, command_call, pending_call
from tests.serve.conftest import KEY, Served, write_call

H = {"Authorization": f"Bearer {KEY}"}


async def item(served: Served, rid: str) -> dict[str, object]:
    items = (await served.client.get("/inbox", headers=H)).json()["items"]
    return next(i for i in items if i["id"] == rid)


async def test_a_long_command_is_sent_whole_and_its_cut_preview_says_so(served: Served) -> None:
    sid, rid = await pending_call(served, "long", command_call(LONG_COMMAND))
    shown = await item(served, rid)
    assert shown["command"] == LONG_COMMAND and EVIL in str(shown["command"])
    assert shown["preview"]["omitted"] == 10 and EVIL not in shown["preview"]["text"]  # type: ignore[index]
    assert (
        shown["not_shown"] == "10 more lines not shown"
        and shown["size"] == f"310 lines, {len(LONG_COMMAND):,} characters"
    )
    assert shown["destructive"] and "sh runs a program read from the output of `curl" in str(
        shown["destructive_reason"]
    )  # the second tap, for the policy's reason (its one classifier)
    await served.client.post(f"/inbox/{rid}/answer", headers=H, json={"answer": "reject_once"})
    await served.runtime.wait_idle(sid)


async def test_a_long_file_write_says_how_much_is_cut_and_opens_the_whole_call(served: Served) -> None:
    sid, rid = await pending_call(served, "write", write_call("big.txt", LONG_FILE))
    shown = await item(served, rid)
    assert shown["command"] is None and "LAST LINE" not in shown["preview"]["text"]  # type: ignore[index]
    assert shown["not_shown"] == "101 more lines not shown"
    whole = (await served.client.get(f"/inbox/{rid}/call", headers=H)).json()
    assert whole["whole"] == "path: big.txt\ncontent:\n" + LONG_FILE and "LAST LINE" in whole["whole"]
    assert (await served.client.get("/inbox/nope/call", headers=H)).status_code == 404
    await served.client.post(f"/inbox/{rid}/answer", headers=H, json={"answer": "reject_once"})
    await served.runtime.wait_idle(sid)


async def test_an_ask_of_another_process_shows_its_whole_command_and_never_claims_nothing_is_cut(
    served: Served,
) -> None:
    view = await served.runtime.new_session("other")
    for rid, call, preview in (
        ("row-cmd", command_call(LONG_COMMAND), "\n".join(LONG_COMMAND.splitlines()[:300])),
        ("row-file", write_call("big.txt", LONG_FILE), LONG_FILE[:300]),
    ):
        await served.runtime.store.approvals.add(
            rid, view.id, kind="approval", tool=call["name"], summary="s", call=call, preview=preview,
            pid=os.getppid(),
        )  # fmt: skip
    command = await item(served, "row-cmd")
    assert command["command"] == LONG_COMMAND and command["not_shown"] == ""
    file = await item(served, "row-file")
    assert file["preview"]["omitted"] is None and file["not_shown"] == ROW_PREVIEW_NOTE  # type: ignore[index]
    whole = (await served.client.get("/inbox/row-file/call", headers=H)).json()
    assert whole["whole"].endswith("LAST LINE\n")
