"""The Toad host of the peer benchmark, run by Toad's Python 3.14 (``bench/toad_python.py``) from this
repository's root: ``<toad python> -m bench.toad_driver --rate R --tokens K --agent-python P --sent F``.
It must not import paragents (only ``bench.common``/``bench.probes``/``bench.peer_probe``, which are
standard library). Prints one JSON object (see :func:`bench.peer_probe.summarize`).

It builds ``ToadApp`` exactly as ``toad acp "<command>"`` does (the same ``agent_data``), with the fake
agent ``P bench/acp_stream_agent.py`` as the command, runs it headless with ``App.run_test`` at
200x50, waits until the agent is ready, then submits the prompt as the prompt box does (a
``UserInputSubmitted`` message to the conversation) and waits for the turn's end
(``Conversation.agent_turn_over``). Toad's anonymous usage statistics are switched off in its settings
and its remote version check is skipped (no network in a benchmark); everything else is stock Toad.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from bench.peer_probe import PeerProbe, summarize
from bench.probes import LagTicker, Window

SIZE = (200, 50)
SETTLE_S = 0.5
AGENT = Path(__file__).with_name("acp_stream_agent.py")


def _isolate(root: Path) -> None:
    """Toad's config, state and data dirs under ``root`` (XDG), with usage statistics off."""
    for name in ("config", "state", "data", "cache"):
        path = root / f"xdg-{name}"
        path.mkdir(parents=True, exist_ok=True)
        os.environ[f"XDG_{name.upper()}_HOME"] = str(path)
    settings = root / "xdg-config" / "toad" / "toad.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"statistics": {"allow_collect": False}}))


async def run(args: argparse.Namespace) -> dict[str, Any]:
    root = Path(os.environ.get("BENCH_ROOT") or args.sent.parent)
    _isolate(root)
    project = root / "project"
    project.mkdir(parents=True, exist_ok=True)

    from textual.widgets import Markdown
    from toad.app import ToadApp
    from toad.messages import UserInputSubmitted
    from toad.widgets.agent_response import AgentResponse
    from toad.widgets.conversation import Conversation

    from bench.common import CHARS_PER_TOKEN, corpus, pieces

    chunks = pieces(corpus(args.tokens * CHARS_PER_TOKEN, 0))
    ends = [sum(len(c) for c in chunks[: i + 1]) for i in range(len(chunks))]
    handed_chars = [0]

    def track(method: Any) -> Any:
        """Wrap ``Markdown.update``/``append``: once the returned awaitable completes (blocks updated
        and mounted), an ``AgentResponse``'s source up to that call counts as handed to the screen."""

        def wrapper(self: Any, markdown: str) -> Any:
            done = method(self, markdown)
            if isinstance(self, AgentResponse):
                target = len(self.source)

                def mark(_: Any) -> None:
                    handed_chars[0] = max(handed_chars[0], target)

                done._future.add_done_callback(mark)
            return done

        return wrapper

    Markdown.update = track(Markdown.update)  # type: ignore[method-assign]
    Markdown.append = track(Markdown.append)  # type: ignore[method-assign]
    ToadApp.run_version_check = lambda self: None
    turn_over = asyncio.Event()
    original_turn_over = Conversation.agent_turn_over

    async def agent_turn_over(self: Any, stop_reason: str | None) -> None:
        await original_turn_over(self, stop_reason)
        turn_over.set()

    Conversation.agent_turn_over = agent_turn_over
    pace = ["--rate", str(args.rate), "--tokens", str(args.tokens), "--sent", str(args.sent)]
    command = shlex.join([args.agent_python, str(AGENT), *pace])
    agent_data: Any = {  # as `toad acp COMMAND` builds it (toad/cli.py)
        "identity": "bench.custom.batrachian.ai",
        "name": "bench",
        "short_name": "agent",
        "url": "https://github.com/batrachianai/toad",
        "protocol": "acp",
        "type": "coding",
        "author_name": "bench",
        "author_url": "",
        "publisher_name": "bench",
        "publisher_url": "",
        "description": "Agent launched from CLI",
        "tags": [],
        "help": "",
        "run_command": {"*": command},
        "actions": {},
    }
    app = ToadApp(agent_data=agent_data, project_dir=str(project))
    probe = PeerProbe(app, lambda: bisect.bisect_right(ends, handed_chars[0]))
    lag, window = LagTicker(), Window()
    async with app.run_test(size=SIZE) as pilot:
        deadline = time.monotonic() + 90
        while True:
            found = app.screen.query(Conversation)
            if found and found.first().agent_ready and found.first().agent is not None:
                break
            if time.monotonic() > deadline:
                raise TimeoutError("Toad's agent did not become ready")
            await pilot.pause(0.05)
        conversation = found.first()
        await pilot.pause(0.3)
        lag.start()
        probe.recording = True
        window.start()
        conversation.post_message(UserInputSubmitted("go", shell=False))
        await asyncio.wait_for(turn_over.wait(), timeout=args.tokens / args.rate * 20 + 60)
        await probe.until_shown(len(chunks))
        await asyncio.sleep(SETTLE_S)
        window.stop()
        lag.stop()
        replies = list(app.screen.query(AgentResponse))
        text_ok = bool(replies) and replies[-1].source == "".join(chunks)
    sent = json.loads(args.sent.read_text())
    result = summarize(probe, lag, window, sent)
    result.update(text_ok=text_ok, host="toad", python=sys.version.split()[0])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.toad_driver")
    parser.add_argument("--rate", type=float, required=True)
    parser.add_argument("--tokens", type=int, required=True)
    parser.add_argument("--agent-python", required=True, help="the python that runs the fake agent")
    parser.add_argument("--sent", type=Path, required=True, help="where the agent writes its send times")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args))), flush=True)


if __name__ == "__main__":
    main()
