"""The files a known command reads and writes (``file_args.py``), pinned per command and option:
readers, writers (cp/mv/install/rsync destinations, ``ln`` targets, ``dd``, ``patch``, ``git
config``, pathspec restores), directories read whole (``grep -r``, ``rg``, ``tar c``, ``cp -r`` ...),
the working tree a git command rewrites, and the option values checked against Read deny rules.
The last tests run the recursive reads that slipped past ``Read(.env)`` through the policy."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from permission_helpers import bash

from paragents.permissions import Policy
from paragents.permissions.file_args import file_args, git_tree_write, option_values, recursive_reads


def words(command: str) -> tuple[str, ...]:
    return tuple(shlex.split(command))


@pytest.mark.parametrize(
    ("command", "reads", "writes", "unknown"),
    [
        ("cp -r srcX/ dst", ("srcX/",), ("dst", "dst/srcX"), None),  # a trailing / is not part of the name
        ("cp -r .. dst/", ("..",), ("dst/",), None),  # . and .. name no file in the destination
        ("cp -r . dst/", (".",), ("dst/",), None),
        ("rsync a/b:c/d dst", ("a/b:c/d",), ("dst", "dst/d"), None),  # host:path only before the first /
        ("cat a b", ("a", "b"), (), None),
        ("cat -n a", ("a",), (), None),
        ("cat -- -x", ("-x",), (), None),
        ("cat -", (), (), None),
        ("less a", ("a",), (), None),
        ("more a", ("a",), (), None),
        ("wc -l a b", ("a", "b"), (), None),
        ("head -n 5 a", ("a",), (), None),
        ("head -n5 a", ("a",), (), None),
        ("head --lines 5 a", ("a",), (), None),
        ("head -c 3 a", ("a",), (), None),
        ("tail -f a", ("a",), (), None),
        ("tail -n 3 -s 1 a", ("a",), (), None),
        ("tail --pid 5 a", ("a",), (), None),
        ("source a b", ("a",), (), None),
        (". a b", ("a",), (), None),
        ("source", (), (), None),
        ("grep x a b", ("a", "b"), (), None),
        ("grep -e x a", ("a",), (), None),
        ("grep -f pats a", ("a",), (), None),
        ("grep --regexp=x a", ("a",), (), None),
        ("grep --file pats a", ("a",), (), None),
        ("grep -m 1 x a", ("a",), (), None),
        ("grep -A 2 -B 3 -C 4 x a", ("a",), (), None),
        ("grep -i x", (), (), None),
        ("grep -- -x a", ("a",), (), None),
        ("sed s/a/b/ f", ("f",), (), None),
        ("sed -e s/a/b/ f g", ("f", "g"), (), None),
        ("sed -i s/a/b/ f", (), ("f",), None),
        ("sed -i.bak s/a/b/ f", (), ("f",), None),
        ("sed --in-place s/a/b/ f", (), ("f",), None),
        ("sed -n -f script f", ("f",), (), None),
        ("sed --expression=s/a/b/ f", ("f",), (), None),
        ("sed -l 5 s/a/b/ f", ("f",), (), None),
        ("sed --file=s f", ("f",), (), None),
        ("cp a b", ("a",), ("b", "b/a"), None),
        ("cp a b dir", ("a", "b"), ("dir", "dir/a", "dir/b"), None),
        ("cp a b dir/", ("a", "b"), ("dir/a", "dir/b"), None),
        ("cp -t dir a b", ("a", "b"), ("dir", "dir/a", "dir/b"), None),
        ("cp --target-directory=dir a", ("a",), ("dir", "dir/a"), None),
        ("cp -S .bak a b", ("a",), ("b", "b/a"), None),
        ("cp a dir/", ("a",), ("dir/", "dir/a"), None),
        ("cp -r src/ dst", ("src/",), ("dst", "dst/src"), None),
        ("cp ./. dst", ("./.",), ("dst",), None),
        ("cp", (), (), None),
        ("cp a", (), ("a",), None),
        ("mv a b", (), ("a", "b", "b/a"), None),
        ("mv a b dir", (), ("a", "b", "dir", "dir/a", "dir/b"), None),
        ("mv -t dir a", (), ("a", "dir", "dir/a"), None),
        ("mv a dir/", (), ("a", "dir/", "dir/a"), None),
        ("install -m 755 a /usr/bin/a", ("a",), ("/usr/bin/a", "/usr/bin/a/a"), None),
        ("install -d d1 d2", (), ("d1", "d2"), None),
        ("install --directory d", (), ("d",), None),
        ("install -t dir a b", ("a", "b"), ("dir", "dir/a", "dir/b"), None),
        ("install -o root -g wheel a b", ("a",), ("b", "b/a"), None),
        ("rsync a b", ("a",), ("b", "b/a"), None),
        ("rsync -av src/ host:dst", ("src/",), (), None),
        ("rsync host:src dst", (), ("dst",), None),
        ("rsync -e ssh a b", ("a",), ("b", "b/a"), None),
        ("rsync --log-file=log a b", ("a",), ("b", "b/a", "log"), None),
        ("rsync --remove-source-files a b", ("a",), ("b", "b/a", "a"), None),
        ("rsync a", (), (), None),
        ("rsync --exclude x a b dst", ("a", "b"), ("dst", "dst/a", "dst/b"), None),
        ("patch", (), (), "patch writes the files its patch names"),
        ("patch f", (), ("f",), None),
        ("patch f p.diff", ("p.diff",), ("f",), None),
        ("patch -i p.diff", ("p.diff",), (), "patch writes the files its patch names"),
        ("patch -o out f", ("f",), ("out",), None),
        ("patch --output=out -i p f", ("p", "f"), ("out",), None),
        ("patch --input p", ("p",), (), "patch writes the files its patch names"),
        ("rm a b", (), ("a", "b"), None),
        ("rm -rf a", (), ("a",), None),
        ("touch a", (), ("a",), None),
        ("touch -r ref a", (), ("a",), None),
        ("touch -d 'now' a", (), ("a",), None),
        ("mkdir -p a", (), ("a",), None),
        ("mkdir -m 755 a", (), ("a",), None),
        ("truncate -s 0 a", (), ("a",), None),
        ("truncate -r ref a", (), ("a",), None),
        ("tee a", (), ("a",), None),
        ("tee -a a", (), ("a",), None),
        ("shred -n 3 a", (), ("a",), None),
        ("shred -s 10 a", (), ("a",), None),
        ("chmod 644 a", (), ("a",), None),
        ("chmod --reference=r a", (), ("a",), None),
        ("chown u:g a", (), ("a",), None),
        ("chgrp g a", (), ("a",), None),
        ("chmod -R 755 d", (), ("d",), None),
        ("ln a b", (), ("b", "b/a", "a"), None),
        ("ln -s a b", (), ("b", "b/a", "a"), None),
        ("ln -s /etc/passwd link", (), ("link", "link/passwd", "/etc/passwd"), None),
        ("ln -s ../x dir/link", (), ("dir/link", "dir/link/x", "dir/../x"), None),
        ("ln -sf a", (), ("a", "a"), None),
        ("ln -s a b dir", (), ("dir", "dir/a", "dir/b", "a", "b"), None),
        ("ln -t dir a", (), ("dir", "dir/a", "a"), None),
        ("ln -s -t dir a", (), ("dir", "dir/a", "a"), None),
        ("ln --symbolic a b", (), ("b", "b/a", "a"), None),
        ("ln -s ~/x l", (), ("l", "l/x", "~/x"), None),
        ("ln -s ~/x d/l", (), ("d/l", "d/l/x", "~/x"), None),  # ~ and / do not hang off the link's dir
        ("ln a d/", (), ("d/", "d/a", "a"), None),
        ("ln a b c", (), ("c", "c/a", "c/b", "a", "b"), None),
        ("dd if=a of=b", ("a",), ("b",), None),
        ("dd of=/dev/sda", (), ("/dev/sda",), None),
        ("dd bs=1", (), (), None),
        ("git config user.name x", (), (".git/config",), None),
        ("git config --get user.name", (), (), None),
        ("git config user.name", (), (), None),
        ("git config -l", (), (), None),
        ("git config --global user.name x", (), ("~/.gitconfig",), None),
        ("git config --system x y", (), ("/etc/gitconfig",), None),
        ("git config -f f x y", (), ("f",), None),
        ("git config --file=f x y", (), ("f",), None),
        ("git config --worktree x y", (), (".git/config.worktree",), None),
        ("git -C sub config x y", (), ("sub/.git/config",), None),
        ("git config --unset x", (), (".git/config",), None),
        ("git config --unset-all x", (), (".git/config",), None),
        ("git config --remove-section s", (), (".git/config",), None),
        ("git config --edit", (), (".git/config",), None),
        ("git config --get x pattern", (), (), None),  # KEY VALUE-PATTERN: still a read
        ("git config set x y", (), (".git/config",), None),
        ("git config --add x y", (), (".git/config",), None),
        ("git config --get-regexp x", (), (), None),
        ("git config -e", (), (".git/config",), None),
        ("git config --list", (), (), None),
        ("git checkout -- a", (), ("a",), None),
        ("git checkout HEAD -- a b", (), ("a", "b"), None),
        ("git checkout main", (), (), None),
        ("git restore a", (), ("a",), None),
        ("git restore --staged a", (), (), None),
        ("git restore --staged -W a", (), ("a",), None),
        ("git restore --staged --worktree a", (), ("a",), None),
        ("git restore a -s", (), ("a",), None),  # a value option last: no value, no crash
        ("git restore -s HEAD a", (), ("a",), None),
        ("git -C sub restore a", (), ("sub/a",), None),
        ("git -C sub checkout -- a", (), ("sub/a",), None),
        ("git --no-pager -C sub checkout -- a", (), ("sub/a",), None),
        ("git status", (), (), None),
        ("install --directory a b", (), ("a", "b"), None),
        ("echo a", (), (), None),
        ("unknown a", (), (), None),
    ],
)
def test_files_read_and_written(
    command: str, reads: tuple[str, ...], writes: tuple[str, ...], unknown: str | None
) -> None:
    found = file_args(words(command))
    assert (found.reads, found.writes, found.unknown_writes) == (reads, writes, unknown)


@pytest.mark.parametrize(
    ("command", "directories"),
    [
        ("grep -r x", (".",)),
        ("grep -r x a b", ("a", "b")),
        ("grep -R x d", ("d",)),
        ("grep -rn x d", ("d",)),
        ("grep --recursive x d", ("d",)),
        ("grep --dereference-recursive x", (".",)),
        ("grep --directories=recurse x d", ("d",)),
        ("grep -d recurse x d", ("d",)),
        ("grep -d skip x d", ()),
        ("grep x d", ()),
        ("grep --color=never x d", ()),  # an r in a long option is no -r
        ("grep -e x -r", (".",)),
        ("grep -r -f p d", ("d",)),
        ("egrep -r x", (".",)),
        ("fgrep -r x", (".",)),
        ("zgrep -r x", (".",)),
        ("rg x", (".",)),
        ("rg x src", ("src",)),
        ("rg -e x", (".",)),
        ("rg -e x src", ("src",)),
        ("rg --files", (".",)),
        ("rg --files src", ("src",)),
        ("rg -g '*.py' x", (".",)),
        ("ag x d", ("d",)),
        ("ack x", (".",)),
        ("ack-grep x", (".",)),
        ("ugrep x", (".",)),
        ("pt x", (".",)),
        ("sift x", (".",)),
        ("rg -t py x src", ("src",)),
        ("git grep x", (".",)),
        ("git -C d grep x", ("d",)),
        ("git status", ()),
        ("tar czf out.tgz src", ("out.tgz", "src")),
        ("tar -cf out.tar a b", ("out.tar", "a", "b")),
        ("tar --create -f x.tar d", ("d",)),
        ("tar xf a.tar", ()),
        ("tar -tf a.tar", ()),
        ("tar -xf a.tar -X excl", ()),  # extracting, with an exclude list: no create mode
        ("tar -cf x.tar a -C d", ("x.tar", "a", "d")),
        ("tar c -C dir .", (".", "dir")),
        ("tar cf x.tar -T list d", ("x.tar", "d")),
        ("bsdtar -cf x d", ("x", "d")),
        ("tar", ()),
        ("tar --exclude x -cf o d", ("o", "d")),
        ("zip -r out.zip d", ("d",)),
        ("zip out.zip a", ()),
        ("cp -r a b", ("a",)),
        ("cp -R a b", ("a",)),
        ("cp -a a b", ("a",)),
        ("cp a b", ()),
        ("cp --recursive a b", ("a",)),
        ("cp --archive a b", ("a",)),
        ("cp -r a host:b", ("a",)),
        ("rsync -a a b", ("a",)),
        ("rsync -r a b c", ("a", "b")),
        ("rsync a b", ()),
        ("rsync -av a host:b", ("a",)),
        ("rsync -av host:a b", ()),
        ("scp -r a host:b", ("a",)),
        ("scp a host:b", ()),
        ("diff -r a b", ("a", "b")),
        ("diff -X ex a b", ()),  # -X FILE: an exclude list, not recursion
        ("cp --preserve a b", ()),  # an r in a long option is no -r
        ("diff a b", ()),
        ("diff -ru a b", ("a", "b")),
        ("cp -t dst -r a", ("a",)),
        ("ls -r", ()),
    ],
)
def test_directories_read_whole(command: str, directories: tuple[str, ...]) -> None:
    assert recursive_reads(words(command)) == directories


@pytest.mark.parametrize(
    ("command", "tree"),
    [
        ("git checkout main", "."),
        ("git switch x", "."),
        ("git restore a", "."),
        ("git clean -fd", "."),
        ("git stash", "."),
        ("git stash list", None),
        ("git stash show", None),
        ("git stash create", None),
        ("git stash pop", "."),
        ("git merge x", "."),
        ("git rebase x", "."),
        ("git pull", "."),
        ("git cherry-pick x", "."),
        ("git revert x", "."),
        ("git am p", "."),
        ("git reset --hard", "."),
        ("git reset --merge", "."),
        ("git reset --keep", "."),
        ("git reset HEAD~1", None),
        ("git status", None),
        ("git commit", None),
        ("git -C sub checkout x", "sub"),
        ("git -C a -C b checkout x", "a/b"),
        ("git -C /abs -C b checkout x", "/abs/b"),
        ("git --work-tree wt checkout x", "wt"),
        ("git --work-tree=wt checkout x", "wt"),
        ("git -C a --work-tree wt checkout x", "wt"),
        ("git --git-dir g checkout x", "."),
        ("git -C", None),
    ],
)
def test_working_trees_git_rewrites(command: str, tree: str | None) -> None:
    assert git_tree_write(words(command)) == tree


@pytest.mark.parametrize(
    ("command", "values"),
    [
        ("grep -f .env x", (".env",)),
        ("grep -e p -f f x", ("f",)),
        ("grep --regexp=p --file=f x", ("f",)),
        ("grep -fF x", ("F",)),
        ("grep -m 1 x", ("1",)),
        ("sed -e s/a/b/ -f s x", ("s",)),
        ("sed --expression=x --file=y z", ("y",)),
        ("cat -- -n", ()),
        ("head -n 5 a", ("5",)),
        ("rsync --files-from=l a b", ("l",)),
        ("ls -f x", ()),
        ("tee -a x", ()),
        ("cp -t d a", ("d",)),
        ("ln -S .b a b", (".b",)),
        ("patch -i p", ("p",)),
        ("grep -f", ()),
    ],
)
def test_option_values_of_file_commands(command: str, values: tuple[str, ...]) -> None:
    assert option_values(words(command)) == values


@pytest.mark.parametrize(
    "command",
    [
        "grep -d recurse KEY {o}",  # -d took no value: "recurse" was the pattern
        "tar --exclude=.git -czf out.tgz {o}",  # the mode is not always the first word
        "tar -rf x.tar {o}",  # appending reads too
        "tar c -C {o} .",  # -C: the operands are read there
        "cp -t dst -r {o}",  # with -t every operand is a source
        "cp -x -r {o} dst",  # cp's -x takes no value (it swallowed -r)
        "git -C {o} grep KEY",  # git grep searches the -C tree
    ],
)
def test_recursive_reads_elsewhere_meet_read_deny_rules(tmp_path: Path, command: str) -> None:
    """Each read ``other/.env`` past ``Read(.env)`` in bypassPermissions mode before."""
    project, other = tmp_path / "proj", tmp_path / "other"
    project.mkdir()
    other.mkdir()
    (other / ".env").write_text("KEY=1\n")
    policy = Policy.load(project, cli_rules={"deny": ["Read(.env)"]})
    got = bash(policy, command.format(o=other), project, mode="bypassPermissions")
    assert (got.decision, got.rule) == ("deny", "Read(.env)")
    assert f"Read of {other}/.env is denied by rule Read(.env) (deny, cli)" in got.reason
