"""Open the session layer for a command line run: one place for the project directory check, the CLI
overrides, config and policy errors, their messages and exit code (the TUI and ``paragents run``)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paragents.cli.exit_codes import EXIT_CONFIG

if TYPE_CHECKING:
    from paragents.sessions import Opened


class OpenFailed(Exception):
    """The runtime could not be opened; the message was printed to stderr, exit with ``code``."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def fail(prog: str, message: str, code: int = EXIT_CONFIG) -> OpenFailed:
    """Print ``prog: message`` to stderr as plain text and return the :class:`OpenFailed` to raise."""
    print(f"{prog}: {message}", file=sys.stderr)
    return OpenFailed(code)


def project_dir_of(args: argparse.Namespace, prog: str) -> Path:
    """Return ``--dir`` (default: the current directory) resolved; raises OpenFailed if not a directory."""
    project_dir = Path(args.dir or ".").expanduser().resolve()
    if not project_dir.is_dir():
        raise fail(prog, f"--dir {project_dir} is not a directory")
    return project_dir


def endpoint_given(args: argparse.Namespace) -> bool:
    """True when the endpoint comes from the command line (``--endpoint``) or the environment
    (``PARAGENTS_BASE_URL``, as the README's Configuration says): no config file is needed then."""
    return bool(getattr(args, "endpoint", None) or os.environ.get("PARAGENTS_BASE_URL"))


async def open_runtime(
    args: argparse.Namespace,
    project_dir: Path,
    *,
    prog: str,
    extra_overrides: dict[str, Any] | None = None,
    require_config: bool = False,
    require_model: bool = False,
    keyless_ok: bool = False,
    unattended_wait: float | None = None,
) -> Opened:
    """Open the session layer of ``project_dir`` (:func:`paragents.sessions.open_sessions`) with the
    CLI's ``--endpoint``/``--model``/``--no-tools`` overrides and rules. Config and policy errors (an
    unreadable policy: fail closed) print one line and raise :class:`OpenFailed` with exit code 2; so
    do a missing ``runtime_config.json`` (and neither ``--endpoint`` nor ``PARAGENTS_BASE_URL``) when
    ``require_config`` and a missing model (neither in a file, ``PARAGENTS_MODEL`` nor ``--model``)
    when ``require_model``. ``unattended_wait``: see ``Runtime.create``."""
    # deferred: start-up (`paragents --help` imports this module)
    from paragents.config import ConfigError, has_config
    from paragents.sessions import open_sessions

    if require_config and not has_config(project_dir) and not endpoint_given(args):
        raise fail(
            prog,
            "no runtime_config.json found. Run `paragents` once for setup, or pass --endpoint URL "
            "and --model NAME (or set PARAGENTS_BASE_URL and PARAGENTS_MODEL; the key then comes "
            "from PARAGENTS_API_KEY or OPENAI_API_KEY).",
        )
    overrides: dict[str, Any] = {"base_url": args.endpoint, "model": args.model}
    if getattr(args, "no_tools", False):
        overrides["tools"] = False
    overrides.update(extra_overrides or {})
    try:
        opened = await open_sessions(
            project_dir,
            cli_overrides=overrides,
            cli_rules=args.cli_rules,
            keyless_ok=keyless_ok,
            unattended_wait=unattended_wait,
        )
    except ConfigError as exc:
        raise fail(prog, f"config error: {exc}") from exc
    except Exception as exc:  # PolicyError and friends: refuse to start, with the message
        raise fail(prog, str(exc)) from exc
    if require_model and not opened.api.config.model:
        await opened.api.shutdown()
        raise fail(prog, "no model configured: pass --model NAME (or set PARAGENTS_MODEL) or run /setup")
    return opened
