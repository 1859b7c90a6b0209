"""Commands get the user's environment, not paragents' own (issue 27 item 4) and never a secret:
paragents started the README way (``uv run paragents``, a real subprocess) runs ``env`` for a
scripted model; the command sees neither paragents' virtualenv nor uv's run variables."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from paragents.llm.replay import ScriptedResponse, ThreadedReplayServer
from paragents.tools.env import command_env, has_credentials, is_secret_env, user_environment
from tests.patience import HANG_GUARD_S

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not installed")
def test_a_command_of_paragents_started_by_uv_run_sees_the_users_environment(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    venv = str(REPO / ".venv")
    user_path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if not p.startswith(venv))
    env = {
        **os.environ,
        "PATH": user_path,
        "MY_OWN": "kept?",
        "LANG": "C.UTF-8",
        "DATABASE_URL": "pg://u:pw@h/d",
    }
    for name in ("VIRTUAL_ENV", "UV_RUN_RECURSION_DEPTH", "UV"):
        env.pop(name, None)
    args = json.dumps({"command": "env"})
    with ThreadedReplayServer(models=["m"]) as server:
        server.add(
            ScriptedResponse.from_message(tool_calls=[{"id": "c1", "name": "run_command", "arguments": args}])
        )
        server.add(ScriptedResponse.from_message(content="done"))
        done = subprocess.run(
            ["uv", "run", "--project", str(REPO), "--no-sync", "--frozen", "paragents", "run",
             "--endpoint", server.base_url, "--model", "m", "--allow", "Bash", "--json", "show the env"],
            cwd=project, env=env, input="", capture_output=True, text=True, timeout=HANG_GUARD_S,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    [seen] = [m["content"] for m in json.loads(done.stdout)["messages"] if m["role"] == "tool"]
    lines = dict(line.split("=", 1) for line in seen.splitlines() if "=" in line)
    assert "VIRTUAL_ENV" not in lines and "UV_RUN_RECURSION_DEPTH" not in lines and "UV" not in lines
    assert not any(p.startswith(venv) for p in lines["PATH"].split(os.pathsep)), lines["PATH"]
    assert set(user_path.split(os.pathsep)) <= set(lines["PATH"].split(os.pathsep))
    assert lines["LANG"] == "C.UTF-8" and "MY_OWN" not in lines and "DATABASE_URL" not in lines


def test_user_environment_drops_only_paragents_own_venv(tmp_path: Path) -> None:
    own, theirs = tmp_path / "paragents-venv", tmp_path / "project-venv"
    base = {
        "PATH": os.pathsep.join([str(own / "bin"), str(theirs / "bin"), "/usr/bin"]),
        "VIRTUAL_ENV": str(own),
        "UV_RUN_RECURSION_DEPTH": "1",
        "PYTHONHOME": "/x",
    }
    env = user_environment(base, prefix=own)
    assert env["PATH"] == os.pathsep.join([str(theirs / "bin"), "/usr/bin"])
    assert not {"VIRTUAL_ENV", "UV_RUN_RECURSION_DEPTH", "PYTHONHOME"} & set(env)
    activated = user_environment({**base, "VIRTUAL_ENV": str(theirs)}, prefix=own)
    assert activated["VIRTUAL_ENV"] == str(theirs)  # one the user activated is theirs


@pytest.mark.parametrize(
    "name",
    ["DATABASE_URL", "GH_PAT", "PGPASSWORD", "STRIPE_SECRET_KEY", "SMTP_PASSWORD", "SENTRY_DSN",
     "AWS_SECRET_ACCESS_KEY", "NPM_TOKEN", "PARAGENTS_SERVE_KEY", "MY_PRIVATE_KEY", "ANTHROPIC_API_KEY"],
)  # fmt: skip
def test_is_secret_env_flags_common_secret_names(name: str) -> None:
    assert is_secret_env(name)


def test_values_with_credentials_are_secret_and_never_passed() -> None:
    assert has_credentials("https://user:pw@proxy:3128") and not has_credentials("https://proxy:3128")
    assert is_secret_env("HTTPS_PROXY", "http://u:p@proxy") and not is_secret_env(
        "HTTPS_PROXY", "http://proxy"
    )
    env = command_env({"HTTPS_PROXY": "http://u:p@proxy", "NO_PROXY": "localhost", "PATH": "/bin"})
    assert "HTTPS_PROXY" not in env and env["NO_PROXY"] == "localhost"
