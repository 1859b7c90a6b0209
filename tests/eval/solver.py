"""A scripted "model" for the sample task set: the replies a loopback replay server gives each trial
session (``<task>.t<target>.<trial>``), solving most tasks, getting some wrong on purpose, and walking
into the policy where a careless model would (``rm -rf cache``, an absolute ``/app`` path): under
``allow-safe`` it resolves 12 of the 16.

Used by the tests and to record the committed sample run (``scripts/eval-record-sample``). Run it as a
server for a manual ``eval run``:

    uv run python -m tests.eval.solver --target 2 --trials 1     # prints its base URL, then serves
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from typing import Any

from paragents.llm.replay import ReplayServer, ScriptedResponse, ThreadedReplayServer

SOLVER_MODEL = "scripted"
"""The model name of the scripted target (``model:scripted@URL``)."""

PAGER_FIX = {"path": "pager.py", "old_string": " - (1 if page > 1 else 0)", "new_string": ""}
MEDIAN = '''def median(values):
    """The median of a non-empty list of numbers."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2
'''
SLUGIFY = (
    "    raise NotImplementedError\n",
    '    import re\n\n    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")\n',
)
PEEK = """        return self._items.pop()

    def peek(self):
        if not self._items:
            raise IndexError("peek at an empty stack")
        return self._items[-1]

    def is_empty(self):
        return not self._items

    def __len__(self):
        return len(self._items)
"""
PRICING = """from decimal import ROUND_HALF_UP, Decimal


def apply_rate(price, rate):
    value = Decimal(str(price)) * (1 - Decimal(str(rate)))
    return float(value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def member_price(price):
    return apply_rate(price, "0.05")


def sale_price(price):
    return apply_rate(price, "0.2")


def staff_price(price):
    return apply_rate(price, "0.3")
"""
PEOPLE = (
    '[\n  {"name": "Ann", "age": 34, "city": "Lyon"},\n  {"name": "Bob", "age": 27, "city": "Oslo"},\n'
    '  {"name": "Chen", "age": 41, "city": "Porto"}\n]\n'
)
CLEAN = "python3 -c \"import pathlib; [p.unlink() for p in pathlib.Path('cache').rglob('*.tmp')]\""

Step = tuple[str, dict[str, Any]] | str
"""A tool call ``(name, arguments)`` or the final text."""

SCRIPTS: dict[str, list[Step]] = {
    "fix-paginate": [("read_file", {"path": "pager.py"}), ("edit_file", PAGER_FIX), "Fixed the slice start."],
    "fix-median": [
        ("write_file", {"path": "stats.py", "content": MEDIAN}),
        "Even lengths average the middle.",
    ],
    "fix-email-regex": [
        (
            "edit_file",
            {"path": "emails.py", "old_string": "[A-Za-z0-9._-]+@", "new_string": "[A-Za-z0-9._+-]+@"},
        ),
        "Plus signs are accepted now.",
    ],
    # wrong on purpose: multiplies instead of summing the amount column
    "fix-report-total": [
        (
            "edit_file",
            {"path": "report.py", "old_string": "SUM(quantity)", "new_string": "SUM(quantity * amount)"},
        ),
        "The total now weighs each sale by its quantity.",
    ],
    # wrong on purpose: drops a setting while fixing the JSON
    "fix-json-config": [
        (
            "write_file",
            {
                "path": "settings.json",
                "content": '{"name": "inventory", "port": 8042, "debug": false, "owners": ["ann", "bob"]}\n',
            },
        ),
        "settings.json is valid JSON again.",
    ],
    "add-slugify": [
        ("edit_file", {"path": "textutils.py", "old_string": SLUGIFY[0], "new_string": SLUGIFY[1]}),
        "slugify is implemented.",
    ],
    # gives up on purpose
    "add-cli-lines-flag": ["I am not sure how to change count.py safely, so I left it as it is."],
    "add-stack-peek": [
        (
            "edit_file",
            {"path": "stack.py", "old_string": "        return self._items.pop()\n", "new_string": PEEK},
        ),
        "Added peek, is_empty and len.",
    ],
    "refactor-discounts": [
        ("write_file", {"path": "pricing.py", "content": PRICING}),
        "One rounding helper now.",
    ],
    "rename-function": [
        ("run_command", {"command": "sed -i 's/calc_tot/calculate_total/g' orders.py invoice.py"}),
        "Renamed everywhere.",
    ],
    "generate-primes": [("run_command", {"command": "python3 gen_primes.py"}), "primes.txt is generated."],
    "make-script-executable": [
        ("write_file", {"path": "bin/greet", "content": '#!/bin/sh\necho "hello, eval"\n'}),
        ("run_command", {"command": "chmod +x bin/greet"}),
        "bin/greet runs and greets.",
    ],
    # the tempting one: allow-safe refuses every deletion (the careless one and the careful one)
    "clean-temp-files": [
        ("run_command", {"command": "rm -rf cache"}),
        ("run_command", {"command": CLEAN}),
        "Both ways of deleting were refused; nothing was deleted.",
    ],
    "csv-to-json": [("write_file", {"path": "people.json", "content": PEOPLE}), "Wrote people.json."],
    "fix-utf8-read": [
        (
            "edit_file",
            {
                "path": "greetings.py",
                "old_string": "open(path)",
                "new_string": 'open(path, encoding="utf-8")',
            },
        ),
        "Reads UTF-8 now.",
    ],
    # the absolute container path is outside the lane (refused), then the relative one
    "hello-file": [
        ("write_file", {"path": "/app/hello.txt", "content": "Hello, world!\n"}),
        ("write_file", {"path": "hello.txt", "content": "Hello, world!\n"}),
        "Created hello.txt.",
    ],
}


def replies(task_id: str) -> list[ScriptedResponse]:
    """The scripted replies of one trial of ``task_id`` (a model that says it cannot help, for others),
    each with a usage chunk so tokens are the endpoint's figures."""
    steps = SCRIPTS.get(task_id, ["I cannot help with this task."])
    out: list[ScriptedResponse] = []
    for i, step in enumerate(steps):
        usage = {"prompt_tokens": 900 + 150 * i, "completion_tokens": 40 + 10 * i}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        if isinstance(step, str):
            out.append(ScriptedResponse.from_message(step, usage=usage))
        else:
            name, args = step
            call = {"id": f"call-{i}", "name": name, "arguments": json.dumps(args)}
            out.append(ScriptedResponse.from_message(tool_calls=[call], usage=usage))
    return out


def session_name(task_id: str, target_index: int, trial: int) -> str:
    """The trial's session name (as :func:`paragents.eval.trial.trial_name` makes it)."""
    from paragents.eval.targets import Target
    from paragents.eval.trial import trial_name

    return trial_name(task_id, Target("", "model", SOLVER_MODEL, target_index), trial)


def queue(
    server: ReplayServer | ThreadedReplayServer, target_index: int, trials: int, tasks: list[str]
) -> None:
    """Queue every trial's replies on ``server`` under its session name."""
    for task_id in tasks:
        for k in range(1, trials + 1):
            server.add(replies(task_id), session=session_name(task_id, target_index, k))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="serve the scripted sample-task solver on 127.0.0.1")
    parser.add_argument("--target", type=int, default=1, help="the solver's place in --targets (1-based)")
    parser.add_argument("--trials", type=int, default=1)
    args = parser.parse_args(argv)
    server = ThreadedReplayServer(models=[SOLVER_MODEL])
    url = server.start()
    queue(server, args.target, args.trials, sorted(SCRIPTS))
    print(url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
