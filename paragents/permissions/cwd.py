"""The directory a command runs in: ``run_command``'s ``cwd`` argument (and an ACP agent's
``terminal/create`` ``cwd``) is a path the model chose, so it is checked like one.

:func:`check_cwd` resolves it against the session's working directory (``~`` expanded, symlinks
resolved), requires every resolution to lie inside the session's working directories (its workdir or
lane worktree and ``additionalDirectories``), checks the directory as a Read (a ``Read`` deny rule
hides it: the command is denied) and against the protected paths (a command running in ``.git/`` or
``.paragents/`` always asks: what it writes there cannot be told apart from what it reads), and returns
the resolved directory. The policy then resolves every relative path of the command against it, so
``printf … >> config`` with ``cwd: ".git"`` is judged as a write of ``.git/config``.
"""

from __future__ import annotations

import os

from paragents.permissions import resolve
from paragents.permissions.evaluate import Checker, Part


def check_cwd(checker: Checker, raw: object) -> tuple[list[Part], str | None]:
    """Check a command's ``cwd`` argument ``raw`` (None: the session's working directory).

    Returns ``(parts, base)``: the parts to add to the command's (a refusal, a Read deny, a protected
    directory) and the resolved directory its relative paths resolve against (None when the command
    runs in the working directory or when ``cwd`` is refused)."""
    if raw is None:
        return [], None
    label = f"cwd {raw!r}"
    if not isinstance(raw, str) or not raw or "\x00" in raw:
        return [Part(label, "invalid", "the command's cwd must be a non-empty path string")], None
    target = resolve.absolute(raw, checker.cwd, checker.home)
    candidates = resolve.resolutions(target, checker.real_dirs)
    real = os.path.realpath(target)
    if real not in candidates:
        candidates.append(real)
    outside = [c for c in candidates if not resolve.is_inside(c, checker.dirs)]
    if outside:
        roots = ", ".join(dict.fromkeys(checker.dirs))
        why = (
            f"the command's cwd {raw!r} resolves to {outside[0]}, outside the session's working "
            f"directories ({roots}); commands run only inside them"
        )
        return [Part(label, "invalid", why)], None
    if not os.path.isdir(real):
        return [Part(label, "invalid", f"the command's cwd {raw!r} is not an existing directory")], None
    parts: list[Part] = []
    read = checker.check_path("Read", real)
    if read.category == "deny_rule":
        why = f"the command would run in {real}, which is hidden: {read.reason}"
        return [Part(label, "deny_rule", why, read.rule)], None
    for candidate in candidates:
        protected = resolve.protected_reason(candidate, checker.home, checker.managed, checker.real_dirs)
        if protected:
            why = (
                f"the command runs in a protected directory ({protected}); what it changes there always asks"
            )
            parts.append(Part(label, "protected", why))
            break
    return parts, real
