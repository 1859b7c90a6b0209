"""The shell analyser finds every simple command, redirect and file target, and never splits quotes."""

from __future__ import annotations

from pathlib import Path

import pytest

from paragents.permissions.shell import MAX_COMMAND_CHARS, parse_command
from paragents.permissions.targets import write_targets


def effective(command: str) -> list[str]:
    return sorted(" ".join(c.effective) for c in parse_command(command).commands if not c.transparent)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("a && b || c; d", ["a", "b", "c", "d"]),
        ("a | b |& c", ["a", "b", "c"]),
        ("a & b", ["a", "b"]),
        ("a\nb\r\nc", ["a", "b", "c"]),
        ("(a; (b))", ["a", "b"]),
        ("{ a; { b; }; }", ["a", "b"]),
        ("echo $(a) `b`", ["a", "b", "echo $(a) `b`"]),
        ('echo "x $(a) `b`"', ["a", "b", 'echo "x $(a) `b`"']),
        ("cat <(a) >(b)", ["a", "b", "cat <(a) >(b)"]),
        ("for i in 1 2; do a; done", ["a"]),
        ("while a; do b; done", ["a", "b"]),
        ("if a; then b; elif c; then d; else e; fi", ["a", "b", "c", "d", "e"]),
        ("case x in y) a;; *) b;; esac", ["a", "b"]),
        ("f() { a; }", ["a"]),
        ("! a", ["a"]),
        ("x=$(a)", ["a"]),
        ("echo ${x:-$(a)} $((1 + $(b)))", ["a", "b", "echo ${x:-$(a)} $((1 + $(b)))"]),
        ("cat <<EOF\n$(a)\nEOF\n", ["a", "cat"]),
        ("cat <<'EOF'\n$(a)\nEOF\n", ["cat"]),
        ("bash -c 'a; b'", ["a", "b"]),
        ('sh -ec "a && b"', ["a", "b"]),
        ("eval 'a | b'", ["a", "b"]),
        ("find . -exec rm -f {} \\;", ["find . -exec rm -f {} ;", "rm -f {}"]),
    ],
)
def test_every_simple_command_is_found(command: str, expected: list[str]) -> None:
    assert effective(command) == sorted(expected)


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("git commit -m 'a b'", ("git", "commit", "-m", "a b")),
        ('echo "a > b | c"', ("echo", "a > b | c")),
        ("echo '$(id)'", ("echo", "$(id)")),
        ("echo a\\ b", ("echo", "a b")),
        ('echo "q\\"x"', ("echo", 'q"x')),
        ("echo $'a\\tb'", ("echo", "a\tb")),
        ("curl -sS \\\n  -o /dev/null \\\n  http://x", ("curl", "-sS", "-o", "/dev/null", "http://x")),
        ("echo 'x'\"y\"z", ("echo", "xyz")),
    ],
)
def test_words_are_rebuilt_without_quotes(command: str, words: tuple[str, ...]) -> None:
    parsed = parse_command(command)
    assert [c.words for c in parsed.commands] == [words]
    assert parsed.problem is None


@pytest.mark.parametrize(
    ("command", "layers"),
    [
        ("timeout -s KILL 5 rm -rf /", ["timeout -s KILL 5 rm -rf /", "rm -rf /"]),
        ("nice -n 5 nohup rm x", ["nice -n 5 nohup rm x", "nohup rm x", "rm x"]),
        ("env -i A=1 B=2 rm x", ["env -i A=1 B=2 rm x", "rm x"]),
        (
            "command -p builtin exec rm x",
            ["command -p builtin exec rm x", "builtin exec rm x", "exec rm x", "rm x"],
        ),
        ("stdbuf -o L xargs -n 1 rm", ["stdbuf -o L xargs -n 1 rm", "xargs -n 1 rm", "rm"]),
        ("time rm x", ["time rm x", "rm x"]),
    ],
)
def test_wrappers_are_looked_through(command: str, layers: list[str]) -> None:
    (cmd,) = parse_command(command).commands
    assert [" ".join(layer) for layer in cmd.layers] == layers


def test_dangerous_assignments_and_dynamic_names() -> None:
    assert parse_command("LD_PRELOAD=/tmp/x.so ls").commands[0].environment
    assert parse_command("env PATH=/tmp ls").commands[0].environment
    assert parse_command("GIT_SSH_COMMAND=x git fetch").commands[0].environment
    assert parse_command("FOO=$(id) ls").commands[0].risky
    assert parse_command("FOO=bar ls").commands[0].environment  # not on the harmless allow-list
    assert parse_command("LANG=C ls").commands[0].environment is None
    assert parse_command("$CMD -rf /").commands[0].opaque
    assert parse_command("timeout 5 $CMD -rf /").commands[0].opaque
    assert parse_command("env A=1 $(which rm) -rf /").commands[0].opaque
    assert parse_command("PATH+=:/tmp; ls").commands[0].environment
    assert parse_command('eval "$X"').commands[0].opaque
    assert parse_command('bash -c "$X"').commands[0].opaque
    assert parse_command("export PATH=/tmp; ls").commands[0].environment


def test_background_parse_errors_and_length() -> None:
    assert parse_command("sleep 1 &").background
    assert not parse_command("a && b").background
    assert parse_command("ls (").problem
    assert parse_command("echo 'unclosed").problem
    assert parse_command("x" * (MAX_COMMAND_CHARS + 1)).problem
    assert parse_command("ls\x00").problem


def test_redirects_and_file_arguments(tmp_path: Path) -> None:
    parsed = parse_command("cat a < in > out 2>&1 >> log &> both >| clob 2>/dev/null; tee t1 t2 < /dev/null")
    assert sorted(t.path or "?" for t in parsed.writes) == ["both", "clob", "log", "out", "t1", "t2"]
    assert sorted(t.path or "?" for t in parsed.reads) == ["a", "in"]
    paths, unknown = write_targets(
        "cp a b dest; mv m1 m2; rm -rf r; touch t; mkdir -p d; sed -i s/x/y/ s", tmp_path
    )
    names = sorted(str(p.relative_to(tmp_path)) for p in paths)
    # a copy or move into what may be a directory also writes DEST/<source name>
    assert names == ["d", "dest", "dest/a", "dest/b", "m1", "m2", "m2/m1", "r", "s", "t"]
    assert not unknown
    paths, unknown = write_targets("truncate -s 0 tr; chmod 644 ch; ln -s src lnk; dd if=i of=o", tmp_path)
    # a link is a write of what it points to too: a later write through it reaches that file
    assert sorted(str(p.relative_to(tmp_path)) for p in paths) == ["ch", "lnk", "lnk/src", "o", "src", "tr"]


def test_write_targets_flags_unknown_targets(tmp_path: Path) -> None:
    assert write_targets("echo x > $OUT", tmp_path)[1]
    assert write_targets("rm *.txt", tmp_path)[1]
    assert write_targets("find . -name x | xargs rm", tmp_path)[1]
    assert write_targets("cd $D && rm x", tmp_path)[1]
    assert write_targets("echo x > 'a*b'", tmp_path) == ([tmp_path / "a*b"], False)


def test_write_targets_follow_cd_and_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    paths, unknown = write_targets("cd sub && echo x > f; echo y > ~/g", tmp_path)
    assert set(paths) == {tmp_path / "f", tmp_path / "sub" / "f", tmp_path / "home" / "g"}
    assert not unknown
