"""Escape suite: credentials in the user's home that the sandbox's deny-list did not name (attack
report, escape 12).

A fake home (outside ``/tmp``) held podman's ``auth.json``, the Hugging Face token, ``~/.m2/settings.xml``
and many more; a sandboxed ``cat`` read each one. The home is now hidden by default, with a
read-only allow-list of toolchains (and ``PATH`` entries, and ``sandbox.homeVisible``), and git gets
the user's identity without the rest of ``~/.gitconfig``.

Evidence on the host: no planted secret appears in what the commands printed (the tool results the
model reads)."""

from __future__ import annotations

import secrets
import subprocess
from pathlib import Path

import pytest

from tests.security.conftest import GIT_IDENTITY, Host, Hostile, git_repo, require_bwrap

CREDENTIALS = (
    ".config/containers/auth.json", ".cache/huggingface/token", ".huggingface/token", ".m2/settings.xml",
    ".gradle/gradle.properties", ".config/pip/pip.conf", ".pip/pip.conf", ".terraformrc",
    ".config/sops/age/keys.txt", ".fly/config.yml", ".config/configstore/update-notifier.json",
    ".databrickscfg", ".snowflake/connections.toml", ".dbt/profiles.yml", ".kaggle/kaggle.json",
    ".authinfo", ".netrc.gpg", ".config/composer/auth.json", ".mc/config.json", ".config/openai/key",
    ".env", ".local/share/fish/fish_history", ".local/share/atuin/history.db", ".node_repl_history",
    ".irb_history", ".sqlite_history", ".rediscli_history", ".ipython/profile_default/history.sqlite",
    ".viminfo", ".lesshst", ".cargo/credentials.toml",
)  # fmt: skip
"""Files the report read from a sandbox (the old deny-list named none of them but the last)."""


@pytest.fixture(autouse=True)
def _bwrap() -> None:
    require_bwrap()


def plant(home: Path) -> dict[str, str]:
    planted = {}
    for rel in CREDENTIALS:
        secret = f"secret-{secrets.token_hex(6)}"
        path = home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(secret + "\n")
        planted[rel] = secret
    return planted


async def test_credentials_in_the_home_are_hidden_and_toolchains_are_not(
    host: Host, hostile: Hostile
) -> None:
    planted = plant(host.home)
    tool = host.home / ".cargo" / "bin" / "mytool"
    tool.parent.mkdir(parents=True, exist_ok=True)
    tool.write_text("#!/bin/sh\necho toolchain-ok\n")
    tool.chmod(0o755)
    repo = git_repo(host.root / "project")
    rt = await hostile.open(repo, sandbox={"mode": "required", "autoAllow": True})
    view = await rt.lifecycle.new_session("a")
    reads = " ; ".join(f"cat ~/{rel}" for rel in CREDENTIALS)
    out = await hostile.attack(
        view, f"{reads}; ls -a ~; true", f"{tool} && echo x > ~/scratch && cat ~/scratch"
    )
    leaked = [rel for rel, secret in planted.items() if secret in out[0]]
    assert leaked == [], out[0]
    assert "toolchain-ok" in out[1] and "x" in out[1], out[1]  # allow-listed, and the home is a scratch
    assert not (host.home / "scratch").exists()  # ... whose writes stay in the sandbox


async def test_git_gets_the_identity_but_not_the_rest_of_the_gitconfig(
    host: Host, hostile: Hostile, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``url.<x>.insteadOf`` or ``http.extraHeader`` in ``~/.gitconfig`` may hold a token: the sandbox
    gets a git config of the identity and harmless keys only; a commit still has the user's name."""
    token = f"ghp_{secrets.token_hex(8)}"
    (host.home / ".gitconfig").write_text(
        "[user]\n\tname = Ada Lovelace\n\temail = ada@example.com\n"
        f'[url "https://x:{token}@example.com/"]\n\tinsteadOf = https://example.com/\n'
        f"[http]\n\textraHeader = Authorization: Bearer {token}\n"
    )
    for name in GIT_IDENTITY:
        monkeypatch.delenv(name)
    repo = git_repo(host.root / "project")
    rt = await hostile.open(repo, sandbox={"mode": "required", "autoAllow": True})
    view = await rt.lifecycle.new_session("api", lane=True)
    out = await hostile.attack(
        view,
        "cat ~/.gitconfig; git config --list; echo y > y.txt && git add -A && git commit -qm y && echo ok",
    )
    assert token not in out[0], out[0]
    assert "ok" in out[0], out[0]
    author = subprocess.run(
        ["git", "log", "-1", "--format=%an <%ae>", "paragents/api"], cwd=repo, capture_output=True, text=True
    ).stdout.strip()
    assert author == "Ada Lovelace <ada@example.com>"


async def test_home_visible_shows_what_the_user_adds(host: Host, hostile: Hostile) -> None:
    (host.home / ".config" / "mytool").mkdir(parents=True)
    (host.home / ".config" / "mytool" / "settings").write_text("visible-setting\n")
    planted = plant(host.home)
    repo = git_repo(host.root / "project")
    sandbox = {"mode": "required", "autoAllow": True, "homeVisible": ["~/.config/mytool"]}
    rt = await hostile.open(repo, sandbox=sandbox)
    view = await rt.lifecycle.new_session("a")
    out = await hostile.attack(view, "cat ~/.config/mytool/settings; cat ~/.m2/settings.xml; true")
    assert "visible-setting" in out[0] and planted[".m2/settings.xml"] not in out[0], out[0]
