"""``host_paths.startup_reason`` and ``credential_reason`` pinned in tests/permissions (the mutation
run's selection; the escape tests of tests/security use them through the real sandbox): what is
protected, what is not, and each reason's words (docs/permissions.md)."""

from __future__ import annotations

import pytest

from paragents.permissions.host_paths import credential_reason, startup_reason

HOME = "/h"


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/p/.gitconfig", "/p/.gitconfig is read by git or Python at start (.gitconfig)"),
        ("/p/.GitConfig", "/p/.GitConfig is read by git or Python at start (.GitConfig)"),
        ("/p/lib/x.pth", "/p/lib/x.pth is read by git or Python at start (x.pth)"),
        ("/p/x.pthx", None),
        (
            "/p/.vscode/tasks.json",
            "/p/.vscode/tasks.json is inside .vscode/ (settings, tasks or hooks another program runs)",
        ),
        (
            "/p/.claude/settings.json",
            "/p/.claude/settings.json is inside .claude/ (settings, tasks or hooks another program runs)",
        ),
        ("/p/.claude/commands/x.md", None),  # Claude Code leaves commands/ open
        ("/p/.claude/agents", None),
        ("/p/.vscode", None),  # the directory itself is no file inside it
        ("/p/commands/.claude", None),
        ("/h/.bashrc", "/h/.bashrc is a start-up or configuration file in your home directory"),
        ("/h/.BASHRC", "/h/.BASHRC is a start-up or configuration file in your home directory"),
        ("/h/notes.txt", None),
        ("/h/.ssh/config", "/h/.ssh/config is in ~/.ssh (start-up, credentials or programs of your account)"),
        (
            "/h/.local/bin/git",
            "/h/.local/bin/git is in ~/.local/bin (start-up, credentials or programs of your account)",
        ),
        ("/h", None),
        ("/hx/.bashrc", None),
        ("/p/.bashrc", None),
        ("/etc/hosts", "/etc/hosts is in /etc (system configuration and programs)"),
        ("/etcx/hosts", None),
    ],
)
def test_startup_reason(path: str, reason: str | None) -> None:
    assert startup_reason(path, HOME) == reason


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/h/.ssh/id_rsa", "/h/.ssh/id_rsa is in ~/.ssh, a credential place (keys, tokens, history)"),
        ("/h/.netrc", "/h/.netrc is in ~/.netrc, a credential place (keys, tokens, history)"),
        ("/h/.sshx", None),
        ("/h", None),
        ("/p/.ssh/id_rsa", None),  # not the home directory's
        ("/h/src/a.py", None),
    ],
)
def test_credential_reason(path: str, reason: str | None) -> None:
    assert credential_reason(path, HOME) == reason
    assert credential_reason(path, "") is None
