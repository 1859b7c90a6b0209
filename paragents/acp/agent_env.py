"""The environment an external agent asks for in ``terminal/create``: variables that change what a
command runs (a shell start-up file, a preloaded library, an interpreter's start-up code, the program
search path, a program git or a pager starts) are refused, because the policy judged the command line
alone: ``true`` with ``BASH_ENV=./x.sh`` runs ``x.sh``. Nothing here imports Textual."""

from __future__ import annotations

from collections.abc import Mapping

UNSAFE_NAMES = frozenset(
    {
        # shells: start-up files and code run around every command
        "BASH_ENV", "ENV", "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS", "PS4", "IFS", "CDPATH",
        "GLOBIGNORE", "BASH_XTRACEFD", "ZDOTDIR", "SHELL",
        # where programs and libraries are found
        "PATH", "HOME", "TMPDIR",
        # interpreters' start-up code and module paths
        "PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "PYTHONINSPECT", "PYTHONUSERBASE",
        "PERL5OPT", "PERL5LIB", "PERLLIB", "PERL5DB", "RUBYOPT", "RUBYLIB", "NODE_OPTIONS",
        "NODE_PATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH",
        "LUA_INIT", "R_PROFILE", "R_PROFILE_USER", "R_ENVIRON", "TCLLIBPATH",
        # programs other programs start
        "EDITOR", "VISUAL", "PAGER", "MANPAGER", "BROWSER", "SSH_ASKPASS", "SUDO_ASKPASS",
        "LESSOPEN", "LESSCLOSE", "TERM", "NO_COLOR",
    }
)  # fmt: skip
"""Variables an agent may not set for a terminal."""
UNSAFE_PREFIXES = ("LD_", "DYLD_", "GIT_", "PARAGENTS_", "BASH_FUNC_", "NPM_CONFIG_", "PIP_", "UV_")
"""Prefixes of variables an agent may not set (the loader, git, paragents' own, exported bash
functions, package managers' configuration)."""


def unsafe_names(env: Mapping[str, str]) -> list[str]:
    """The names in ``env`` an agent may not set (see :data:`UNSAFE_NAMES`), in order."""
    out = []
    for name in env:
        upper = name.upper()
        if upper in UNSAFE_NAMES or upper.startswith(UNSAFE_PREFIXES) or "=" in name or not name:
            out.append(name)
    return out
