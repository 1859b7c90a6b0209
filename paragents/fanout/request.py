"""What a user asks of a fan-out (:class:`FanoutRequest`), read from ``/fanout`` arguments, and the
checks made before anything is opened: N within ``fanout.max``, known models. Nothing here imports
Textual."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from paragents.config import RuntimeConfig
from paragents.fanout.errors import EXIT_CONFIG, FanoutError

USAGE = '/fanout N [--models a,b,c] [--on container|k8s] [--verify "CMD"] [--judge[=MODEL]] PROMPT'


@dataclass(frozen=True)
class FanoutRequest:
    """A best-of-N: ``n`` siblings, the ``models`` they use in turn (empty: the configured model), the
    ``verify`` command, whether to ``judge`` (and with which model), the ``prompt`` and the siblings'
    permission ``mode``."""

    n: int
    prompt: str
    models: tuple[str, ...] = ()
    verify: str | None = None
    judge: bool = False
    judge_model: str | None = None
    mode: str | None = None
    """Permission mode of every sibling (None: the configured default; headless ``--mode``)."""
    on: str | None = None
    """Where the siblings' lanes run: local, container, k8s (None: ``lanes.backend``; docs/remote.md)."""

    def model_for(self, idx: int, default: str) -> str:
        """The model of candidate ``idx`` (1-based): the models in turn, else ``default``."""
        return self.models[(idx - 1) % len(self.models)] if self.models else default


def known_models(config: RuntimeConfig) -> set[str]:
    """Models a fan-out may name: the configured model and those listed under ``models``."""
    return {m for m in (config.model, *config.models) if m}


def check_request(request: FanoutRequest, config: RuntimeConfig) -> None:
    """Raise FanoutError (exit 2) for an N outside 1..``fanout.max``, an empty prompt or an unknown model."""
    top = config.fanout.max
    if request.n < 1 or request.n > top:
        raise FanoutError(
            f"a fan-out opens 1 to {top} sessions, not {request.n} (fanout.max in the config sets the limit)",
            EXIT_CONFIG,
        )
    if not request.prompt.strip():
        raise FanoutError(f"the fan-out has no prompt: {USAGE}", EXIT_CONFIG)
    known = known_models(config)
    if not known:
        raise FanoutError("no model is configured: run /setup, or pass --models", EXIT_CONFIG)
    asked = [*request.models, *([request.judge_model] if request.judge_model else [])]
    for model in asked:
        if model not in known:
            raise FanoutError(
                f"unknown model {model!r}: known models are {', '.join(sorted(known))} "
                "(add it under `models` in the config)",
                EXIT_CONFIG,
            )


_OPTION = re.compile(r"\s*(--models|--verify|--judge|--on)(=|\s+|$)")


def parse_fanout(text: str) -> FanoutRequest:
    """Read ``N [--models a,b,c] [--on WHERE] [--verify "CMD"] [--judge[=MODEL]] PROMPT`` (options
    before the prompt; the prompt is the rest, taken as written). Raises FanoutError (exit 2) with the
    usage."""
    head, _, rest = text.strip().partition(" ")
    if not head.isdigit():
        raise FanoutError(f"how many sessions? {USAGE}", EXIT_CONFIG)
    models: tuple[str, ...] = ()
    verify: str | None = None
    judge, judge_model = False, None
    on: str | None = None
    while (match := _OPTION.match(rest)) is not None:
        name, sep = match.group(1), match.group(2)
        rest = rest[match.end() :]
        if name == "--judge":
            judge = True
            if sep == "=":
                judge_model, _, rest = rest.partition(" ")
            continue
        value, rest = _take_value(rest, name)
        if name == "--models":
            models = tuple(m for m in (p.strip() for p in value.split(",")) if m)
        elif name == "--on":
            on = value
        else:
            verify = value
    return FanoutRequest(int(head), rest.strip(), models, verify, judge, judge_model or None, on=on)


def _take_value(rest: str, name: str) -> tuple[str, str]:
    rest = rest.lstrip()
    if not rest:
        raise FanoutError(f"{name} needs a value: {USAGE}", EXIT_CONFIG)
    if rest[0] in "\"'":
        lexer = shlex.shlex(rest, posix=True)
        lexer.whitespace_split = True
        try:
            value = lexer.get_token() or ""
        except ValueError:
            raise FanoutError(f"{name}: the quote is not closed: {USAGE}", EXIT_CONFIG) from None
        return value, rest[lexer.instream.tell() :] if hasattr(lexer.instream, "tell") else ""
    value, _, after = rest.partition(" ")
    return value, after
