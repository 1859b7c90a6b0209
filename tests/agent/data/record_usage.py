"""Record real prompt/usage pairs for the token-estimate calibration test.

Run by hand against a live OpenAI-compatible server (the repo's local model:
``../shared/tools/local-model start`` serves SmolLM2-135M at http://127.0.0.1:8080/v1):

    uv run python tests/agent/data/record_usage.py http://127.0.0.1:8080/v1 smollm2

Each conversation below is sent as one NON-streamed chat completion with ``max_tokens: 1`` (the
stock llama.cpp server reports ``usage`` only on non-streamed replies); the server's ``usage`` is
written with the messages to ``usage_calibration.json`` next to this file. The texts are taken from
this repository (README prose, Python source, JSON config, shell output) so they look like what a
coding agent really sends. ``tool`` messages are not recorded: that server's chat template leaves
them out of the prompt, so their count would not be honest.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[3]
OUT = Path(__file__).with_name("usage_calibration.json")
SYSTEM = (
    "You are a coding agent working in a terminal for the user, inside the project folder below. "
    "Use the tools to read, search, edit files and run commands; prefer small, verifiable steps.\n\n"
    "Working directory: /home/user/project\n\nToday's date: 2025-01-01"
)


def _read(rel: str, start: int, end: int) -> str:
    return "\n".join((ROOT / rel).read_text(encoding="utf-8").splitlines()[start:end])


def conversations() -> list[tuple[str, list[dict[str, str]]]]:
    """Return (name, messages) pairs to record."""
    readme = _read("README.md", 0, 30)
    code = _read("paragents/models.py", 0, 80)
    store = _read("paragents/store/history.py", 20, 83)
    config = _read("runtime_config.example.json", 0, 40)
    policy = _read("paragents/permissions/policy.py", 0, 60)
    perms = _read("paragents/permissions/permissions.example.json", 0, 30)
    return [
        (
            "greeting",
            [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "hello, who are you?"}],
        ),
        (
            "readme-question",
            [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": "Summarise this README for a new contributor:\n\n" + readme},
            ],
        ),
        (
            "code-review",
            [
                {"role": "system", "content": SYSTEM},
                {
                    "role": "user",
                    "content": "Review this module and list bugs:\n\n```python\n" + code + "\n```",
                },
                {
                    "role": "assistant",
                    "content": "The module looks sound. `parse_arguments` treats an empty string as `{}`.",
                },
                {"role": "user", "content": "And this one?\n\n```python\n" + store + "\n```"},
            ],
        ),
        (
            "config-json",
            [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": "What does each field do?\n" + config},
            ],
        ),
        (
            "multi-turn-prose",
            [
                {"role": "system", "content": SYSTEM},
                {
                    "role": "user",
                    "content": "We need to add compaction to the agent. Where should the cut go?",
                },
                {
                    "role": "assistant",
                    "content": "Cut before a user message so that an assistant message with tool calls "
                    "always keeps its tool results; keep the last few turns verbatim and summarise the rest "
                    "into one message that records the task, the decisions, the files touched and "
                    "open questions.",
                },
                {
                    "role": "user",
                    "content": "Good. Also keep notes across restarts, and show the context percentage.",
                },
                {
                    "role": "assistant",
                    "content": "Notes go to the store's notes table and into the system prompt; the panel "
                    "title shows used over window as a percentage, from the server's usage when it "
                    "reports it.",
                },
                {"role": "user", "content": "Write the plan as a numbered list with file names."},
            ],
        ),
        (
            "shell-output",
            [
                {"role": "system", "content": SYSTEM},
                {
                    "role": "user",
                    "content": "The tests fail, here is the output:\n"
                    "============================= test session starts ==============================\n"
                    "platform linux -- Python 3.11.9, pytest-8.3.3, pluggy-1.5.0\n"
                    "rootdir: /home/user/project\nconfigfile: pyproject.toml\nplugins: asyncio-0.24.0\n"
                    "collected 472 items\n\ntests/engine/test_agent.py ........F.....\n"
                    "FAILED tests/engine/test_agent.py::test_cancel_keeps_partial - AssertionError: "
                    "assert 'partial' in ''\n"
                    "=================== 1 failed, 471 passed in 41.20s ===================",
                },
            ],
        ),
        (
            "holdout-policy-code",
            [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": "Explain this file:\n" + policy},
                {"role": "assistant", "content": "It maps tool names to rule families and loads rule files."},
                {"role": "user", "content": "And these rules?\n" + perms},
            ],
        ),
    ]


def main() -> None:
    """Send each conversation and write the recorded usage file."""
    base_url, model = sys.argv[1], sys.argv[2]
    records = []
    with httpx.Client(timeout=300) as client:
        for name, messages in conversations():
            body = {"model": model, "messages": messages, "max_tokens": 1, "stream": False}
            reply = client.post(f"{base_url}/chat/completions", json=body).json()
            records.append({"name": name, "messages": messages, "usage": reply["usage"]})
            print(name, reply["usage"])
    OUT.write_text(
        json.dumps(
            {"model": model, "server": "llama-cpp-python 0.3.36 (llama.cpp)", "records": records}, indent=2
        )
        + "\n",
        encoding="utf-8",
    )


if __name__ == "__main__":
    main()
