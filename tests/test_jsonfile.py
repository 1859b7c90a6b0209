"""One JSON reader (paragents/jsonfile.py): every loader of a JSON file names the file, the line and the
column of a syntax error in the same words, and says "cannot be read" for a file it cannot read."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from paragents import jsonfile
from paragents.cassette.loader import CassetteError, load_cassette
from paragents.config import ConfigError, read_config_file
from paragents.eval.answers import load_policy
from paragents.eval.errors import EvalError
from paragents.eval.results import load_results
from paragents.mcp.project import McpConfigError, read_mcp_json
from paragents.permissions.settings import PolicyError, load_file

BAD = '{\n  "a": 1,\n  "b" 2\n}\n'  # line 3, column 7: Expecting ':' delimiter
SAID = "not valid JSON (line 3, column 7: Expecting ':' delimiter)"


def test_bad_json_names_the_file_line_column_and_reason(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(BAD)
    with pytest.raises(jsonfile.JsonFileError) as caught:
        jsonfile.load(path)
    assert str(caught.value) == f"{path}: {SAID}"
    assert (caught.value.line, caught.value.column, caught.value.reason) == (3, 7, "Expecting ':' delimiter")


def test_a_missing_file_is_its_own_kind_and_an_unreadable_one_says_why(tmp_path: Path) -> None:
    with pytest.raises(jsonfile.JsonFileMissing, match=r"x\.json: no such file"):
        jsonfile.load(tmp_path / "x.json")
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(jsonfile.JsonFileError, match=r"dir\.json: cannot be read \(Is a directory\)"):
        jsonfile.load(tmp_path / "dir.json")
    (tmp_path / "latin.json").write_bytes(b'{"a": "caf\xe9"}')
    with pytest.raises(jsonfile.JsonFileError, match=r"latin\.json: cannot be read \(not UTF-8 text: "):
        jsonfile.load(tmp_path / "latin.json")


def test_text_is_named_by_where_it_came_from() -> None:
    with pytest.raises(jsonfile.JsonFileError, match=r"^--input: not valid JSON \(line 1, column 2: "):
        jsonfile.loads("{bad", "--input")
    assert jsonfile.loads('{"a": [1]}', "--input") == {"a": [1]}


LOADERS: list[tuple[str, Callable[[Path], Any], type[Exception]]] = [
    ("runtime_config.json", read_config_file, ConfigError),
    ("permissions.json", lambda p: load_file(p, "project"), PolicyError),
    (".mcp.json", read_mcp_json, McpConfigError),
    ("cassette.json", load_cassette, CassetteError),
    ("results.json", load_results, EvalError),
    ("answers.json", lambda p: load_policy("script", str(p)), EvalError),
]


@pytest.mark.parametrize(("name", "load", "error"), LOADERS, ids=[n for n, _, _ in LOADERS])
def test_every_loader_says_the_same_of_bad_json(
    tmp_path: Path, name: str, load: Callable[[Path], Any], error: type[Exception]
) -> None:
    path = tmp_path / name
    path.write_text(BAD)
    with pytest.raises(error) as caught:
        load(path)
    assert f"{path}: {SAID}" in str(caught.value)


@pytest.mark.parametrize(("name", "load", "error"), LOADERS, ids=[n for n, _, _ in LOADERS])
def test_every_loader_says_an_unreadable_file_cannot_be_read(
    tmp_path: Path, name: str, load: Callable[[Path], Any], error: type[Exception]
) -> None:
    path = tmp_path / name
    path.write_bytes(b'{"a": "caf\xe9"}')
    with pytest.raises(error) as caught:
        load(path)
    assert f"{path}: cannot be read (not UTF-8 text: " in str(caught.value)
