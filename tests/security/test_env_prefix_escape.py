"""Attack report, escape 7: a variable set for an allowed command changes what it runs. With the sandbox
off, `HOME=. git status` (allowed by `Bash(git status)`) read a `.gitconfig` the session had written
and ran its `core.fsmonitor` on the host; `XDG_CONFIG_HOME=tools/xdg git status` did the same through a
committed `tools/xdg/git/config`, from `run_command` and from an ACP agent's `terminal/create` env
(allowed by the same rule). Any variable off a short harmless allow-list now makes the command ask
(never allowed by a rule or the sandbox's auto-allow), and an agent's terminal env is refused by
name. The attacks run through the real engine; every ask is refused; evidence: the marker files."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.security.acp_attack import AcpAttack, acp, term
from tests.security.hostile import Hostile, hostile, needs_bwrap

__all__ = ["acp", "hostile"]


def plant_configs(project: Path, marker: Path) -> None:
    """A repository holding a `.gitconfig` and a `tools/xdg/git/config` whose fsmonitor leaves ``marker``."""
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    hook = f'[core]\n\tfsmonitor = "touch {marker} #"\n'
    (project / ".gitconfig").write_text(hook)
    (project / "tools" / "xdg" / "git").mkdir(parents=True)
    (project / "tools" / "xdg" / "git" / "config").write_text(hook)


ATTACKS = [
    "HOME=. git status",
    "XDG_CONFIG_HOME=tools/xdg git status",
    "env XDG_CONFIG_HOME=tools/xdg git status",
    "export HOME=.; git status",
    "HOME=.; git status",
    "GIT_CONFIG_GLOBAL=.gitconfig git status",
]


async def test_a_variable_that_points_git_at_a_planted_config_asks_and_never_runs(
    hostile: Hostile, tmp_path: Path
) -> None:
    marker = tmp_path / "fsmonitor-ran"
    plant_configs(hostile.project, marker)
    rules = {"allow": ["Bash(git status)", "Bash(env *)", "Bash(export *)"]}
    rt = await hostile.runtime(rules, sandbox="off")
    sid = await hostile.attack(
        rt,
        [("run_command", {"command": c}) for c in ATTACKS]
        + [("run_command", {"command": "LANG=C NO_COLOR=1 GIT_PAGER=cat git status"})],  # usability
    )
    await rt.shutdown()
    assert not marker.exists()
    asked = hostile.asked(sid)
    assert len(asked) == len(ATTACKS), [a.reason for a in asked]
    for ask, name in zip(asked, ["HOME", "XDG_CONFIG_HOME", "XDG_CONFIG_HOME", "HOME", "HOME", "GIT_CONFIG"],
                         strict=True):  # fmt: skip
        assert f"sets {name}" in ask.reason, ask.reason
    assert "On branch" in hostile.sink.outputs(sid)[-1] or "No commits yet" in hostile.sink.outputs(sid)[-1]


@needs_bwrap
async def test_the_sandboxs_auto_allow_does_not_let_a_variable_through(
    hostile: Hostile, tmp_path: Path
) -> None:
    marker = tmp_path / "fsmonitor-ran"
    plant_configs(hostile.project, marker)
    rt = await hostile.runtime(
        {"allow": ["Bash(git status)"]}, sandbox={"mode": "required", "autoAllow": True}
    )
    sid = await hostile.attack(rt, [("run_command", {"command": "HOME=. git status"})])
    await rt.shutdown()
    [asked] = hostile.asked(sid)
    assert "sets HOME" in asked.reason
    assert not marker.exists()


async def test_an_agents_terminal_env_off_the_allow_list_is_refused_by_name(
    acp: AcpAttack, tmp_path: Path
) -> None:
    marker = tmp_path / "fsmonitor-ran"
    plant_configs(acp.project, marker)
    names = ["XDG_CONFIG_HOME", "GOFLAGS", "PYTEST_ADDOPTS", "MAKEFLAGS", "GCONV_PATH", "OPENSSL_CONF",
             "AWS_CONFIG_FILE", "CC", "KUBECONFIG", "HOME"]  # fmt: skip
    rt = await acp.runtime({"allow": ["Bash(git status)"]}, sandbox="off")
    values = {"XDG_CONFIG_HOME": str(acp.project / "tools" / "xdg"), "HOME": str(acp.project)}
    said = await acp.run(rt, *(term("git status", env={n: values.get(n, "x")}) for n in names))
    await rt.shutdown()
    assert not marker.exists()
    assert said.count("term refused") == len(names), said
    assert all(f"env sets {n}," in said for n in names), said
