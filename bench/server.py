"""The loopback LLM of the benchmark, run as its own process so its CPU is not charged to the app.

``python -m bench.server --rate R --tokens K`` starts a :class:`paragents.llm.ReplayServer` whose
every chat-completions request gets a fresh synthetic Markdown reply of ``K`` tokens (one 4-character
``chat.completion.chunk`` event per HTTP chunk) paced at ``R`` tokens/s by a ``before_read`` hook
(``--rate 0`` sends as fast as possible: the SSE ceiling run). It prints its base URL on one line and
serves until stdin closes.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import random
import sys

from bench.common import CHARS_PER_TOKEN, corpus
from paragents.llm.replay import ReceivedRequest, ReplayServer, ScriptedResponse


class PacedReplayServer(ReplayServer):
    """A ReplayServer that synthesises a paced reply for every POST instead of reading a queue."""

    def __init__(self, rate: float, tokens: int) -> None:
        super().__init__(models=["m"])
        self.rate = rate
        self.tokens = tokens
        self._count = itertools.count()

    def _next_response(self, request: ReceivedRequest) -> ScriptedResponse:
        if request.method != "POST":
            return super()._next_response(request)
        seed = next(self._count)
        response = ScriptedResponse.from_message(
            corpus(self.tokens * CHARS_PER_TOKEN, seed),
            chunk_size=CHARS_PER_TOKEN,
            usage={"prompt_tokens": 10, "completion_tokens": self.tokens, "total_tokens": self.tokens + 10},
        )
        if self.rate > 0:
            loop = asyncio.get_running_loop()
            period = 1 / self.rate
            start = loop.time() + random.random() * period

            async def pace(i: int) -> None:
                due = start + max(i - 1, 0) * period
                delay = due - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)

            response.before_read = pace
        return response


async def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.server")
    parser.add_argument("--rate", type=float, default=50, help="tokens per second per reply (0: unpaced)")
    parser.add_argument("--tokens", type=int, default=400, help="tokens per reply")
    args = parser.parse_args()
    server = PacedReplayServer(args.rate, args.tokens)
    await server.start()
    print(server.base_url, flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)
    await server.stop()


if __name__ == "__main__":
    asyncio.run(main())
