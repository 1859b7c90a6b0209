"""The monkey test's model: a loopback ReplayServer that makes up every reply from a seeded RNG.

Each POST gets a fresh streamed reply built from hostile text (markup-like brackets, ANSI and OSC
sequences, emoji with VS16/ZWJ, CJK, 10,000-character lines) and, often, tool calls that ask in the
default mode (``write_file``, ``run_command``) or read a file full of ``[/]`` (``read_file``, allowed
by the policy). Replies are paced by the server (a short wait before some reads), so asks and text
arrive at moments the test does not choose. A request without tools (compaction) gets text only.
"""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

from paragents.llm.replay import ReceivedRequest, ReplayServer
from paragents.llm.replay_script import ScriptedResponse

HOSTILE: tuple[str, ...] = (
    "[bold red]not bold[/bold red] ",
    "[/] ",
    "[/]",
    "[link=file:///etc/passwd]click[/link] ",
    "[@click=app.quit]quit?[/] ",
    "[on red]x[/on red][b][i] ",
    "\\[escaped] [dim] ",
    "\x1b[31mred\x1b[0m ",
    "\x1b[2J\x1b[H",
    "\x1b]0;evil title\x07",
    "\x1b]52;c;cGFyYWdlbnRz\x07",
    "\x1b]8;;http://example.invalid\x1b\\link\x1b]8;;\x1b\\ ",
    "\x9b2J \x07bell \x1bPdcs\x1b\\ ",
    "progress 10%\r100% ",
    "❤️ ☺️ 👍🏽 ",
    "👩‍👩‍👧‍👦 🏳️‍🌈 🧑‍💻 ",
    "漢字テスト한국어中文 ",
    "e\u0301\u0302 \u200b\u200d\u202eevil\u202c ",
    "\t|a|b|\n|-|-|\n|[/]|`x`|\n",
    "```\n[/] code \x1b[1m\n```\n",
    "# heading [/]\n",
    "\n",
    "plain words here ",
)
"""Pieces of hostile text a reply is made of."""
LONG_LINES: tuple[str, ...] = ("w" * 10_000, "長" * 5_000, "[/]" * 3_000)
"""10,000-character lines (one sometimes joins a reply)."""
HOSTILE_FILE = "notes [b]\x1b[31m.md"
"""A project file whose content is hostile; ``read_file`` of it is allowed by the policy."""


def hostile_text(rng: random.Random) -> str:
    """A reply text of a few hostile pieces (sometimes a 10,000-character line)."""
    parts = [rng.choice(HOSTILE) for _ in range(rng.randint(1, 8))]
    if rng.random() < 0.15:
        parts.insert(rng.randrange(len(parts) + 1), rng.choice(LONG_LINES) + "\n")
    return "".join(parts)


def write_project(project: Path) -> None:
    """Put the hostile file the model reads into ``project``."""
    (project / HOSTILE_FILE).write_text("".join(HOSTILE) + "\n" + "[/]" * 100 + "\n", encoding="utf-8")


class HostileServer(ReplayServer):
    """A ReplayServer whose replies are generated (see the module docstring); ``seed`` fixes them."""

    def __init__(self, seed: int) -> None:
        super().__init__(models=["m"])
        self.rng = random.Random(seed)
        self._calls = 0

    def _tool_call(self) -> dict[str, str]:
        rng = self.rng
        self._calls += 1
        kind = rng.choice(["write_file", "write_file", "run_command", "read_file"])
        if kind == "write_file":
            # shared.md twice: every session writes it, so one session's pending write holds it and
            # another's write meets a conflict bar
            name = rng.choice(
                ["a.txt", "[/]b.txt", "漢字.txt", "x\x1b[31m.txt", "dir/c.md", "shared.md", "shared.md"]
            )
            args = {"path": name, "content": hostile_text(rng)}
        elif kind == "run_command":
            args = {"command": rng.choice(["printf '[/] [bold]x[/bold]\\n'", "cat notes*.md", "ls -la"])}
        else:
            args = {"path": HOSTILE_FILE}
        return {"id": f"call_{self._calls}", "name": kind, "arguments": json.dumps(args)}

    def _reply(self, body: object) -> ScriptedResponse:
        rng = self.rng
        offers_tools = isinstance(body, dict) and bool(body.get("tools"))
        messages = body.get("messages", []) if isinstance(body, dict) else []
        rounds = sum(1 for m in messages[-8:] if isinstance(m, dict) and m.get("role") == "tool")
        calls = []
        if offers_tools and rounds < 4 and rng.random() < 0.55:
            calls = [self._tool_call() for _ in range(rng.choice([1, 1, 1, 2]))]
        text = hostile_text(rng) if not calls or rng.random() < 0.5 else None
        reasoning = hostile_text(rng) if rng.random() < 0.2 else None
        response = ScriptedResponse.from_message(
            text,
            reasoning_content=reasoning,
            tool_calls=calls or None,
            chunk_size=rng.choice([1, 7, 50, 400]),
        )
        pauses = {i: rng.uniform(0.005, 0.06) for i in range(len(response.reads)) if rng.random() < 0.15}

        async def pace(i: int) -> None:
            if i in pauses:
                await asyncio.sleep(pauses[i])  # the model's pace, not a synchronisation

        response.before_read = pace
        return response

    def _next_response(self, request: ReceivedRequest) -> ScriptedResponse:
        if request.method == "POST":
            return self._reply(request.body_json)
        return super()._next_response(request)
