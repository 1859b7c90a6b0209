"""Paths outside a project whose change makes something run later, and paragents' own files (attack
report, escape 11: in bypassPermissions the file tools rewrote ``trusted-projects.json``,
``~/.gitconfig``, ``~/.ssh/config``, ``~/.local/bin/git``, a systemd user unit and the store's
``-wal`` file without an ask).

- :func:`integrity_reason`: paragents' config and state directories (the model key, ``serve.json``,
  the trust records, the store) are paragents' integrity: every tool is DENIED them, in every mode,
  bypassPermissions included (a lane's worktree, which lives in the state directory, is not part of
  it).
- :func:`startup_reason`: files that run code or choose programs for the user's next shell, login,
  git, ssh, editor or Python start, following Claude Code's protected paths (``.git``, ``.vscode``,
  ``.idea``, ``.husky``, ``.claude``, ``.gitconfig``, ``.gitmodules``, shell rc files, ``.ripgreprc``,
  ``.mcp.json``, ``.claude.json``) and adding the home directory's start-up places (``~/.ssh``,
  ``~/.config/git``, ``~/.config/systemd``, ``~/.local/bin``, autostart entries, crontabs ...), the
  system directories and paragents' own installation. Changing one always asks, in every mode.
- :func:`credential_reason`: the credential places the sandbox hides from commands
  (:data:`CREDENTIAL_PATHS`, the same list as :mod:`paragents.tools.sandbox_hide`'s): reading one
  with a file tool always asks, in every mode (in bypassPermissions ``grep`` over a folder holding
  ``~/.ssh`` returned the key).
"""

from __future__ import annotations

import os
import sys
from functools import lru_cache

from paragents import paths

HOME_FILES = frozenset(
    {
        ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv",
        ".zprofile", ".zlogin", ".zlogout", ".kshrc", ".mkshrc", ".cshrc", ".tcshrc", ".login", ".logout",
        ".inputrc", ".xprofile", ".xsessionrc", ".xinitrc", ".pam_environment", ".gitconfig",
        ".git-credentials", ".npmrc", ".pypirc", ".curlrc", ".wgetrc", ".vimrc", ".exrc", ".gvimrc",
        ".emacs", ".tmux.conf", ".screenrc", ".netrc", ".claude.json", ".ripgreprc", ".pgpass",
    }
)  # fmt: skip
"""Start-up and configuration files directly in the home directory."""
HOME_DIRS = (
    ".ssh", ".gnupg", ".aws", ".kube", ".docker", ".config/git", ".config/systemd", ".config/autostart",
    ".config/environment.d", ".config/fish", ".config/nvim", ".config/tmux", ".config/pip", ".config/uv",
    ".config/containers", ".config/gh", ".local/bin", ".local/share/systemd", ".vim", ".emacs.d", ".pip",
    ".cargo/config", ".cargo/config.toml", ".cargo/bin", "bin", "Library/LaunchAgents", ".claude",
)  # fmt: skip
"""Directories (and a few files) below the home directory whose content runs or configures programs."""
SYSTEM_DIRS = (
    "/etc",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/boot",
    "/var/spool/cron",
)
"""System directories: configuration and programs of every user (writable when paragents runs as root)."""
NAMES = frozenset(
    {".gitconfig", ".gitmodules", ".ripgreprc", ".claude.json", "sitecustomize.py", "usercustomize.py"}
)
"""File names protected wherever they are (a ``.gitconfig`` a later ``HOME=.`` makes git read; a
``sitecustomize.py`` Python runs at start)."""
PROJECT_DIRS = frozenset({".vscode", ".idea", ".husky", ".claude"})
"""Directories protected wherever they are (editors' tasks and settings, git hooks installed by husky,
Claude Code's settings and hooks), as in Claude Code."""
CLAUDE_OPEN = frozenset({"commands", "agents", "skills", "worktrees"})
""".claude subdirectories Claude Code leaves unprotected (prompts and subagents, no settings)."""


CREDENTIAL_PATHS = (
    ".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".config/gh", ".config/hub",
    ".netrc", ".git-credentials", ".config/git/credentials", ".docker", ".kube",
    ".pypirc", ".npmrc", ".yarnrc.yml", ".cargo/credentials", ".cargo/credentials.toml",
    ".gem/credentials", ".pgpass", ".my.cnf", ".terraform.d", ".vault-token",
    ".password-store", ".local/share/keyrings", ".config/op", ".oci", ".config/doctl",
    ".s3cfg", ".boto", ".config/rclone", ".codex", ".claude", ".claude.json",
    ".config/github-copilot", ".config/google-chrome", ".config/chromium", ".mozilla",
    ".bash_history", ".zsh_history", ".python_history", ".psql_history", ".mysql_history",
)  # fmt: skip
"""Credential places below the home directory (the sandbox hides the same ones from commands; a test
keeps the two lists equal)."""
OWN_FILES = "paragents' own configuration or state"
"""Words of every :func:`integrity_reason` (how a denial for paragents' own files is told apart)."""


@lru_cache(maxsize=8)
def _integrity_dirs(config: str, state: str) -> tuple[tuple[str, ...], str]:
    dirs: list[str] = []
    for base in (config, state):
        for form in (os.path.normpath(base), os.path.realpath(base)):
            if form not in dirs:
                dirs.append(form)
    return tuple(dirs), os.path.join(os.path.realpath(state), "lanes")


def integrity_dirs() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(paragents' config and state directories (as written and resolved), the lanes' folders below
    them, which are sessions' working directories and not part of paragents' integrity)."""
    state = str(paths.state_dir())
    dirs, lanes = _integrity_dirs(str(paths.config_dir()), state)
    return dirs, (lanes, os.path.join(os.path.normpath(state), "lanes"))


def _below(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip("/") + "/")


def integrity_reason(path: str, dirs: tuple[str, ...], open_dirs: tuple[str, ...]) -> str | None:
    """Why absolute normalised ``path`` is one of paragents' own files (denied to every tool), or None."""
    if any(_below(path, d) for d in open_dirs):
        return None
    base = next((d for d in dirs if _below(path, d)), None)
    if base is None:
        return None
    return (
        f"{path} is in {OWN_FILES} ({base}: keys, trust records, the store); "
        "no tool may read or change it, in any mode"
    )


def holds_integrity(directory: str, dirs: tuple[str, ...]) -> bool:
    """True when ``directory`` holds one of paragents' own directories (a recursive read of it would
    reach them)."""
    return any(_below(d, directory) for d in dirs)


def credential_reason(path: str, home: str) -> str | None:
    """Why reading absolute normalised ``path`` may hand the model a credential (see the module doc),
    or None."""
    if not home or not _below(path, home) or path == home:
        return None
    rel = path[len(home.rstrip("/")) + 1 :]
    found = next((c for c in CREDENTIAL_PATHS if rel == c or rel.startswith(c + "/")), None)
    return f"{path} is in ~/{found}, a credential place (keys, tokens, history)" if found else None


@lru_cache(maxsize=1)
def _install_dirs() -> tuple[str, ...]:
    """paragents' own installation: the interpreter's prefix (its virtualenv, or the uv tool's), which
    holds paragents' installed package and every library it imports. (An editable install's source
    checkout is a project like any other.)"""
    found = [os.path.normpath(sys.prefix), os.path.realpath(sys.prefix)]
    return tuple(d for d in dict.fromkeys(found) if d not in ("/", ""))


def startup_reason(path: str, home: str) -> str | None:
    """Why changing absolute normalised ``path`` may make something run later (see the module doc),
    or None. Names compare case-insensitively (for case-insensitive disks)."""
    parts = path.split("/")
    lowered = [p.lower() for p in parts]
    name = lowered[-1]
    if name in NAMES or name.endswith(".pth"):
        return f"{path} is read by git or Python at start ({parts[-1]})"
    for i, part in enumerate(lowered[:-1]):
        if part in PROJECT_DIRS and not (
            part == ".claude" and i + 1 < len(lowered) and lowered[i + 1] in CLAUDE_OPEN
        ):
            return f"{path} is inside {parts[i]}/ (settings, tasks or hooks another program runs)"
    if home and _below(path, home) and path != home:
        rel = path[len(home.rstrip("/")) + 1 :]
        if rel in HOME_FILES or rel.lower() in HOME_FILES:
            return f"{path} is a start-up or configuration file in your home directory"
        for directory in HOME_DIRS:
            if rel == directory or rel.startswith(directory + "/"):
                return f"{path} is in ~/{directory} (start-up, credentials or programs of your account)"
    for directory in SYSTEM_DIRS:
        if _below(path, directory):
            return f"{path} is in {directory} (system configuration and programs)"
    for directory in _install_dirs():
        if _below(path, directory):
            return f"{path} is part of paragents' own installation ({directory})"
    return None
