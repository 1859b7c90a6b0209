"""Runtime config: the example file, precedence, validation messages, 0600 saving and redaction."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from paragents import paths
from paragents.config import (
    ConfigError,
    RuntimeConfig,
    describe_config,
    load_config,
    read_config_file,
    redact,
    save_user_config,
)

REPO = Path(__file__).resolve().parents[2]


def test_example_file_loads_and_documents_every_field() -> None:
    path = REPO / "runtime_config.example.json"
    data = read_config_file(path)
    cfg = RuntimeConfig.model_validate(data)
    assert cfg.model == "smollm2"
    raw = json.loads(path.read_text())
    for name in RuntimeConfig.model_fields:
        assert f"//{name}" in raw, f"runtime_config.example.json does not document {name}"


def test_project_file_overrides_user_file_and_cli_overrides_both(tmp_path: Path) -> None:
    save_user_config({"base_url": "http://127.0.0.1:1/v1", "model": "user-model", "max_parallel_turns": 2})
    (tmp_path / "runtime_config.json").write_text(json.dumps({"model": "project-model"}))
    loaded = load_config(tmp_path)
    assert loaded.config.model == "project-model"
    assert loaded.config.max_parallel_turns == 2
    assert loaded.sources["model"] == str(tmp_path / "runtime_config.json")
    assert loaded.sources["max_parallel_turns"] == str(paths.user_runtime_config_path())
    assert loaded.sources["read_timeout"] == "default"
    loaded = load_config(tmp_path, cli={"model": "cli-model", "base_url": None})
    assert loaded.config.model == "cli-model" and loaded.sources["model"] == "cli"
    assert loaded.config.base_url == "http://127.0.0.1:1/v1"


def test_unknown_key_names_file_field_and_known_keys(tmp_path: Path) -> None:
    (tmp_path / "runtime_config.json").write_text(json.dumps({"modle": "x"}))
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path)
    msg = str(err.value)
    assert "runtime_config.json" in msg and "'modle'" in msg and "known keys" in msg and "model" in msg


def test_wrong_type_and_bad_url_are_named(tmp_path: Path) -> None:
    (tmp_path / "runtime_config.json").write_text(json.dumps({"max_parallel_turns": "many"}))
    with pytest.raises(ConfigError, match="max_parallel_turns"):
        load_config(tmp_path)
    (tmp_path / "runtime_config.json").write_text(json.dumps({"base_url": "localhost:8080"}))
    with pytest.raises(ConfigError, match=r"base_url.*http"):
        load_config(tmp_path)


def test_json_syntax_error_names_line(tmp_path: Path) -> None:
    (tmp_path / "runtime_config.json").write_text('{\n  "model": "x",\n}\n')
    with pytest.raises(ConfigError, match=r"line 3"):
        load_config(tmp_path)


def test_saved_config_is_0600_and_key_file_readable_by_others_is_refused(tmp_path: Path) -> None:
    path = save_user_config(
        {"base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key": "sk-secret-123456"}
    )
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_config(tmp_path).config.resolve_api_key() == "sk-secret-123456"
    os.chmod(path, 0o644)
    with pytest.raises(ConfigError, match=r"chmod 600"):
        load_config(tmp_path)


def test_missing_key_env_var_says_what_to_do(tmp_path: Path) -> None:
    cfg = RuntimeConfig(api_key_env="MY_KEY_VAR")
    with pytest.raises(ConfigError, match=r"\$MY_KEY_VAR.*not set"):
        cfg.resolve_api_key({})
    assert cfg.resolve_api_key({"MY_KEY_VAR": "k"}) == "k"


def test_show_config_redacts_the_key(tmp_path: Path) -> None:
    key = "sk-abcdefghijklmnop1234"
    loaded = load_config(tmp_path, env={"OPENAI_API_KEY": key})
    rows = describe_config(loaded, env={"OPENAI_API_KEY": key})
    shown = dict((name, (value, source)) for name, value, source in rows)
    assert shown["api_key"][0] == "sk-…1234"
    assert shown["api_key"][1] == "env:OPENAI_API_KEY"
    assert key not in json.dumps(rows)
    assert redact(None) == "(none)"


def test_a_reload_names_the_entries_of_a_table_that_changed_not_a_cut_json() -> None:
    from paragents.config import describe_changes

    old = '{"fake": {"command": "a", "args": ["-x"]}, "gone": {"command": "g"}}'
    new = '{"fake": {"command": "b", "args": ["-x"]}, "qwen": {"command": "qwen"}}'
    text = describe_changes([("agents", old, new), ("model", "m", "n")], [])
    assert "agents: +qwen -gone ~fake" in text and "model: m → n" in text and "{" not in text
