"""Where a shell command's relative paths lead (``cd`` targets) and which paths it may write: the
write targets the conflict checker reserves (``write_targets``), computed from
:func:`paragents.permissions.shell.parse_command`'s result."""

from __future__ import annotations

import os
from pathlib import Path

from paragents.permissions import resolve
from paragents.permissions.parsed import ParsedCommand
from paragents.permissions.shell import parse_command


def resolve_target(path: str, bases: list[Path], home: Path) -> list[Path]:
    """Return the absolute spellings of ``path`` (``~`` expanded) for each possible shell cwd in ``bases``.

    Paths are made absolute but not normalised (``..`` and symlinks are the policy's job)."""
    return list(dict.fromkeys(Path(resolve.absolute(path, base, home)) for base in bases))


def shell_bases(parsed: ParsedCommand, cwd: Path, home: Path) -> tuple[list[Path], bool]:
    """Return the directories relative paths may be resolved against (cwd and each ``cd`` target).

    The flag is True when some ``cd`` target cannot be known (so relative paths cannot be either)."""
    bases = [cwd]
    unknown = False
    for target in parsed.cd_dirs:
        if target is None or target == "-":
            unknown = True
            continue
        for base in list(bases):
            for resolved in resolve_target(target, [base], home):
                if resolved not in bases:
                    bases.append(resolved)
    return bases, unknown


def repository_root(path: Path) -> Path:
    """The nearest directory at or above ``path`` holding ``.git`` (a directory or a worktree's
    file), else ``path`` itself."""
    for candidate in (path, *path.parents):
        if (candidate / ".git").exists():
            return candidate
    return path


def write_targets(command: str, cwd: Path) -> tuple[list[Path], bool]:
    """Return (absolute paths ``command`` may write, True if some targets cannot be known beforehand).

    Counts output redirects (``>``, ``>>``, ``&>``, ``>|``), ``tee`` and the files changed by cp/mv/rm/
    touch/mkdir/sed -i/truncate/chmod/ln, and the whole repository a git command rewrites the working
    tree of (``git checkout``, ``switch``, ``reset --hard``, ``stash``, ``restore``, ``clean`` ...: its
    top-level directory, the nearest one holding ``.git``). ``/dev/null`` and fd duplications are
    not targets. Paths are joined to ``cwd`` (and to literal ``cd`` targets) and ``~`` is expanded,
    not resolved."""
    parsed = parse_command(command)
    home = Path(os.path.expanduser("~"))
    bases, cd_unknown = shell_bases(parsed, cwd, home)
    paths: list[Path] = []
    unknown = parsed.problem is not None
    for tree in parsed.trees:
        if tree.path is None or (cd_unknown and not tree.path.startswith(("/", "~"))):
            unknown = True
            continue
        for path in resolve_target(tree.path, bases, home):
            top = repository_root(Path(os.path.normpath(path)))
            if top not in paths:
                paths.append(top)
    for target in parsed.writes:
        if target.path is None:
            unknown = True
            continue
        if cd_unknown and not target.path.startswith(("/", "~")):
            unknown = True
        for path in resolve_target(target.path, bases, home):
            normal = Path(os.path.normpath(path))
            if normal not in paths:
                paths.append(normal)
    return paths, unknown
