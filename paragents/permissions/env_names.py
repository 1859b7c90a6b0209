"""Environment variables a command may be given without changing what it runs (attack report,
escape 7): ``HOME=. git status`` read a ``.gitconfig`` the session wrote and ran its fsmonitor on the
host; ``XDG_CONFIG_HOME=tools/xdg git status`` did the same through a committed config;
``GOFLAGS=-toolexec=x``, ``PYTEST_ADDOPTS=-p evil``, ``MAKEFLAGS``, ``GCONV_PATH``,
``OPENSSL_CONF``, ``AWS_CONFIG_FILE`` (``credential_process``), ``CC``, ``KUBECONFIG`` (exec plugins)
each make an allowed program run another one. No deny-list can name them all, so the decision is an
allow-list: a variable on :data:`HARMLESS` (locale, time zone, colours, terminal size, CI markers,
output buffering) changes output, not behaviour; any other one set for a command (a prefix ``NAME=v
cmd``, ``env NAME=v cmd``, ``export NAME=v``, an ACP agent's ``terminal/create`` env) is judged as
possibly changing what runs.

:func:`changes_what_runs` is the stricter test for plain shell assignments (``NAME=v; cmd``): those
only reach commands when the variable is already exported, which the names listed there usually are.
Nothing here imports anything."""

from __future__ import annotations

HARMLESS = frozenset(
    {
        "LANG", "LANGUAGE", "TZ", "TERM", "COLORTERM", "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR",
        "CLICOLOR", "CLICOLOR_FORCE", "CI", "DEBUG", "VERBOSE", "SOURCE_DATE_EPOCH", "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED", "PYTHONIOENCODING", "PYTHONUTF8",
        "PYTHONFAULTHANDLER", "NODE_ENV", "RUST_BACKTRACE", "RUST_LOG", "CARGO_TERM_COLOR",
        "GIT_TERMINAL_PROMPT",
    }
)  # fmt: skip
"""Variables that change a command's output (language, colours, buffering), never which code runs."""
HARMLESS_PREFIXES = ("LC_",)
PAGER_NAMES = frozenset({"PAGER", "GIT_PAGER", "MANPAGER", "SYSTEMD_PAGER"})
HARMLESS_PAGERS = frozenset({"", "cat"})
"""A pager variable is harmless with these values (``GIT_PAGER=cat git log``: no pager at all)."""

_CHANGES_WHAT_RUNS = frozenset(
    {
        "PATH", "HOME", "SHELL", "TMPDIR", "ENV", "BASH_ENV", "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS",
        "PS4", "IFS", "CDPATH", "GLOBIGNORE", "ZDOTDIR", "EDITOR", "VISUAL", "PAGER", "MANPAGER",
        "BROWSER", "LESSOPEN", "LESSCLOSE", "NODE_OPTIONS", "NODE_PATH", "PERL5OPT", "PERL5LIB",
        "RUBYOPT", "RUBYLIB", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "CLASSPATH", "GOFLAGS", "MAKEFLAGS",
        "GCONV_PATH", "OPENSSL_CONF", "KUBECONFIG", "CC", "CXX", "LUA_INIT", "SSH_ASKPASS",
        "SUDO_ASKPASS", "GNUPGHOME", "CURL_HOME", "WGETRC", "INPUTRC", "VIMINIT", "EXINIT",
    }
)  # fmt: skip
_CHANGES_PREFIXES = (
    "LD_", "DYLD_", "GIT_", "XDG_", "PYTHON", "PYTEST_", "NPM_CONFIG_", "PIP_", "UV_", "CARGO_",
    "RUSTC_", "AWS_", "BASH_FUNC_", "PARAGENTS_",
)  # fmt: skip


def harmless(name: str, value: str | None = None) -> bool:
    """True when setting ``name`` (to ``value``, when known) cannot change which code a command runs."""
    if name in HARMLESS or name.startswith(HARMLESS_PREFIXES):
        return True
    return name in PAGER_NAMES and value is not None and value.strip() in HARMLESS_PAGERS


def changes_what_runs(name: str) -> bool:
    """True for variables that are usually exported and change which code runs (``PATH``, ``HOME``,
    ``LD_*``, ``GIT_*``, ``XDG_*``, interpreters' and build tools' options): a plain shell assignment
    of one (``HOME=.; git status``) reaches every later command."""
    upper = name.upper()
    return upper in _CHANGES_WHAT_RUNS or upper.startswith(_CHANGES_PREFIXES)
