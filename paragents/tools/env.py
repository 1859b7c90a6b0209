"""The environment of the programs paragents starts: the user's own, without paragents' additions and
without secrets.

- :func:`user_environment`: ``os.environ`` as it was before ``uv run`` / ``uvx`` / an activated
  virtualenv started paragents: paragents' own virtualenv (``sys.prefix``) leaves ``PATH`` and
  ``VIRTUAL_ENV``, and the variables uv sets for the program it runs (``UV_RUN_RECURSION_DEPTH``,
  ``UV_INTERNAL__*``, ``UV``) and ``PYTHONHOME`` go.
- :func:`command_env`: what a command gets (``run_command``, ACP terminals, lane setup and verify):
  the user environment filtered through an ALLOW-list (:data:`ALLOWED_NAMES`,
  :data:`ALLOWED_PATTERNS`, plus the user's ``sandbox.env_allow``), values holding credentials
  (``https://user:pass@host``) dropped, and :data:`FORCED_ENV` on top.
- :func:`is_secret_env`: the deny test other scrubbers use (notification commands, MCP and ACP
  server environments, serve): names of keys, tokens, passwords and connection strings.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase
from pathlib import Path

ALLOWED_NAMES = frozenset({
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TZ", "TMPDIR", "PWD",
    "HOSTNAME", "EDITOR", "VISUAL", "COLUMNS", "LINES", "CI", "DEBIAN_FRONTEND",
    "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_DIRS",
    "XDG_CONFIG_DIRS",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy",
    "all_proxy",
    "GOPATH", "GOROOT", "GOBIN", "GOFLAGS", "GOMODCACHE", "CARGO_HOME", "RUSTUP_HOME", "JAVA_HOME",
    "NVM_DIR", "NVM_BIN", "PYENV_ROOT", "PNPM_HOME", "VOLTA_HOME", "BUN_INSTALL", "DENO_DIR",
    "ANDROID_HOME", "GEM_HOME", "GEM_PATH", "CONDA_PREFIX", "CONDA_DEFAULT_ENV",
    "PKG_CONFIG_PATH", "LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH", "MANPATH", "INFOPATH",
    "CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "MAKEFLAGS",
    "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PYTHONIOENCODING", "PYTHONUTF8",
    "EMAIL", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
})  # fmt: skip
"""Variables a command gets from the user's environment (when their value holds no credentials)."""
ALLOWED_PATTERNS = ("LC_*",)
"""Name patterns (shell globs, case-sensitive) a command gets too."""
FORCED_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "TERM": "dumb", "GIT_TERMINAL_PROMPT": "0", "NO_COLOR": "1"}
"""Set for every command: no pagers, no colours, no interactive prompts."""

SECRET_ENV_NAMES = frozenset({
    "PARAGENTS_API_KEY", "OPENAI_API_KEY", "PARAGENTS_SERVE_KEY", "DATABASE_URL", "PGPASSWORD",
    "MYSQL_PWD", "REDIS_URL", "MONGODB_URI", "SENTRY_DSN", "SSH_AUTH_SOCK", "GPG_AGENT_INFO",
})  # fmt: skip
"""Variables that hold a secret (or reach one: an agent socket) whatever their value."""
_SECRET_NAME = re.compile(
    r"(_API_KEY|_KEY|_TOKEN|_PAT|_DSN|_SECRET|_SECRET_ACCESS_KEY|PASSWORD|PASSWD|_PASS|_PWD|_CREDENTIALS?"
    r"|_AUTH|_COOKIE|_SESSION)$|SECRET|PRIVATE_KEY|ACCESS_KEY|TOKEN",
)
"""Upper-cased names matching this hold secrets (``GH_PAT``, ``STRIPE_SECRET_KEY``, ``*_PASSWORD``...)."""
_CREDENTIAL_URL = re.compile(r"[a-z][a-z0-9+.-]*://[^/@\s:]*:[^/@\s]+@", re.IGNORECASE)
"""A URL with a password in it (``postgres://user:pass@host/db``)."""
_UV_RUN_VARS = ("UV_RUN_RECURSION_DEPTH", "UV", "UV_INTERNAL__PARENT_INTERPRETER")
"""Variables uv sets for the program ``uv run`` / ``uvx`` starts."""


def has_credentials(value: str) -> bool:
    """True when ``value`` holds a URL with a password (``scheme://user:secret@host``)."""
    return bool(_CREDENTIAL_URL.search(value))


def is_secret_env(name: str, value: str | None = None) -> bool:
    """True when the variable ``name`` (with ``value`` when given) may hold a secret: API keys, tokens,
    passwords, connection strings and URLs with credentials."""
    upper = name.upper()
    if upper in SECRET_ENV_NAMES or _SECRET_NAME.search(upper):
        return True
    return value is not None and has_credentials(value)


def _own_prefix() -> Path | None:
    """paragents' own virtualenv (or uv tool environment) when it runs in one, else None."""
    if sys.prefix == sys.base_prefix:
        return None
    return Path(sys.prefix).resolve()


def _same_path(a: str, b: Path) -> bool:
    try:
        return Path(a).expanduser().resolve() == b
    except (OSError, RuntimeError, ValueError):
        return False


def user_environment(base: Mapping[str, str] | None = None, prefix: Path | None = None) -> dict[str, str]:
    """``base`` (default ``os.environ``) without what starting paragents added: its virtualenv's
    ``bin`` in ``PATH``, ``VIRTUAL_ENV`` naming it, uv's run variables and ``PYTHONHOME``.

    ``prefix``: paragents' environment (default: ``sys.prefix`` when it is a virtualenv). A
    ``VIRTUAL_ENV`` naming another environment (one the user activated) is kept."""
    env = dict(os.environ if base is None else base)
    own = prefix.resolve() if prefix is not None else _own_prefix()
    for name in (*_UV_RUN_VARS, "PYTHONHOME", "__PYVENV_LAUNCHER__"):
        env.pop(name, None)
    for name in [n for n in env if n.startswith("UV_INTERNAL__")]:
        env.pop(name)
    if own is None:
        return env
    if "VIRTUAL_ENV" in env and _same_path(env["VIRTUAL_ENV"], own):
        env.pop("VIRTUAL_ENV")
        env.pop("VIRTUAL_ENV_PROMPT", None)
    if "PATH" in env:
        own_bins = {own / "bin", own / "Scripts"}
        kept = [
            p for p in env["PATH"].split(os.pathsep) if not p or not any(_same_path(p, b) for b in own_bins)
        ]
        env["PATH"] = os.pathsep.join(kept)
    return env


def allowed(name: str, extra: Iterable[str] = ()) -> bool:
    """True when ``name`` is on the allow-list (:data:`ALLOWED_NAMES`, :data:`ALLOWED_PATTERNS`) or
    matches one of ``extra`` (names or shell globs, e.g. ``MYAPP_*``)."""
    if name in ALLOWED_NAMES:
        return True
    return any(fnmatchcase(name, pattern) for pattern in (*ALLOWED_PATTERNS, *extra))


def command_env(base: Mapping[str, str] | None = None, allow: Iterable[str] = ()) -> dict[str, str]:
    """Return the environment of a command: the allowed variables of the user's environment
    (``base``, default ``os.environ``, seen through :func:`user_environment`), without values that
    hold credentials, with :data:`FORCED_ENV` applied. ``allow``: more names or globs to pass (the
    user's ``sandbox.env_allow``); a name there is passed even when it looks like a secret."""
    extra = tuple(allow)
    source = user_environment(base)
    env = {}
    for name, value in source.items():
        if name in ALLOWED_NAMES or any(fnmatchcase(name, p) for p in ALLOWED_PATTERNS):
            if not has_credentials(value) and not is_secret_env(name):
                env[name] = value
        elif any(fnmatchcase(name, p) for p in extra):
            env[name] = value
    env.update(FORCED_ENV)
    return env
