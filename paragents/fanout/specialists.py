"""The specialist profiles of ``/review`` (the parallel-agents worker set): security, test, perf,
devops, arch, docs, code and review, as built-in :class:`~paragents.config.SessionProfile` values the
config's ``profiles`` can edit (a field written there replaces the built-in one) or extend (a new
name). Nothing here imports Textual."""

from __future__ import annotations

from collections.abc import Iterable

from paragents.config import RuntimeConfig, SessionProfile

_COMMON = (
    "You are a read-only reviewer of a code change. You may read files of the project to check your "
    "findings; you cannot change anything. Report only problems you can point to in the diff or the files, "
    "each with the file, the line and the evidence (a short quote). Report nothing you would have to guess."
)


def _builtin(description: str, focus: str) -> SessionProfile:
    return SessionProfile(description=description, system_prompt=f"{_COMMON}\n\nYour focus: {focus}")


BUILTIN_PROFILES: dict[str, SessionProfile] = {
    "security": _builtin(
        "injection, secrets, authn/authz, unsafe input handling",
        "security: injection (SQL, shell, path), secrets in code or logs, missing authorisation, unsafe "
        "deserialisation, untrusted input reaching files, commands or markup.",
    ),
    "test": _builtin(
        "missing or weak tests, untested branches, flaky waits",
        "tests: changed behaviour without a test, tests that cannot fail, removed tests, sleeps used as "
        "synchronisation, branches and error paths left untested.",
    ),
    "perf": _builtin(
        "complexity, needless I/O, blocking calls, memory",
        "performance: quadratic loops, repeated I/O or queries, blocking calls on an event loop, "
        "unbounded memory or output.",
    ),
    "devops": _builtin(
        "build, CI, packaging, configuration, deployment",
        "build and operations: CI scripts, dependencies and lock files, packaging, configuration "
        "defaults, migrations, deployment and rollback.",
    ),
    "arch": _builtin(
        "layering, coupling, module boundaries, API shape",
        "architecture: layering and import rules, coupling, responsibilities of modules, public API "
        "shape and naming.",
    ),
    "docs": _builtin(
        "docs, docstrings, changelog, comments that lie",
        "documentation: README, docs, docstrings and CHANGELOG out of date with the change, comments "
        "that no longer say what the code does.",
    ),
    "code": _builtin(
        "correctness, error handling, edge cases",
        "correctness: logic errors, off-by-one, unhandled errors and edge cases (empty, None, unicode), "
        "resource leaks, races.",
    ),
    "review": _builtin(
        "a general review of the whole change",
        "a general code review: anything a careful senior reviewer would ask to change before merging.",
    ),
}
"""The built-in specialists, by name (``/review`` with no list asks every one)."""


def profiles(config: RuntimeConfig) -> dict[str, SessionProfile]:
    """Every profile: the built-ins with the config's edits applied (only the fields the config sets),
    then the config's new ones."""
    merged = dict(BUILTIN_PROFILES)
    for name, edit in config.profiles.items():
        base = merged.get(name)
        if base is None:
            merged[name] = edit
        else:
            merged[name] = base.model_copy(update={f: getattr(edit, f) for f in edit.model_fields_set})
    return merged


class UnknownSpecialist(ValueError):
    """A ``/review`` list names a profile that does not exist; ``str(err)`` names it and the choices."""


def choose(names: Iterable[str] | None, config: RuntimeConfig) -> dict[str, SessionProfile]:
    """The profiles named (every built-in one for None or an empty list), in the order given, each
    once. Raises :class:`UnknownSpecialist` naming the unknown names and the known ones."""
    known = profiles(config)
    wanted = [n.strip() for n in (names or []) if n.strip()] or list(BUILTIN_PROFILES)
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise UnknownSpecialist(
            f"unknown specialist {', '.join(unknown)}: choose from {', '.join(sorted(known))} "
            '(or add one under "profiles" in runtime_config.json)'
        )
    return {name: known[name] for name in dict.fromkeys(wanted)}


def parse_list(text: str | None) -> list[str]:
    """``"security,test"`` (or ``"security test"``) -> ``["security", "test"]``; None/empty -> []."""
    return [w for w in (text or "").replace(",", " ").split() if w]
