"""Harbor / terminal-bench 2.0 task directories (docs/eval.md, "Harbor tasks").

A task directory holds ``task.toml`` (config: ``[agent] timeout_sec``, ``[verifier] timeout_sec`` and
``env``, ``[solution] env``, ``[environment]`` build settings, free ``[metadata]``), ``instruction.md``
(the prompt), ``environment/`` (``Dockerfile`` and its build context), ``tests/test.sh`` (the verifier:
it writes ``/logs/verifier/reward.txt`` or ``reward.json``) and optionally ``solution/solve.sh`` (the
oracle). At run time Harbor copies ``tests/`` to ``/tests`` and runs ``bash /tests/test.sh`` from the
working directory, after the agent finished; the oracle's ``solution/`` goes to ``/solution``.

In a local lane (``--on local``, or a container run whose engine lacks the task's base image) the
lane starts with the files the Dockerfile ``COPY``/``ADD``s from its build context into its
``WORKDIR`` (default ``/app``); its ``RUN`` steps and base image are not used, and the task's notes
say so (``--on container`` builds it: :mod:`paragents.eval.environment`). The hidden tests then run in
the lane's sandbox with the lane mounted at the working directory (:mod:`paragents.eval.sandbox`).
Nothing here imports Textual."""

from __future__ import annotations

import glob
import io
import json
import os
import posixpath
import shlex
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from paragents.eval.errors import EvalError
from paragents.eval.tasks import Task, TaskSet, check_task_id

MAX_FILE_BYTES = 2 * 1024 * 1024
"""A file the Dockerfile copies that is larger is skipped (with a note)."""
MAX_FILES = 2000
"""At most this many files are copied into a local lane's workspace."""
DEFAULT_WORKDIR = "/app"
"""The working directory of a task whose Dockerfile sets none (the Harbor tasks' convention)."""


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow")


NetworkMode = Literal["public", "no-network", "allowlist"]


class VerifierConfig(_Section):
    """``[verifier]``: seconds the tests may run, their environment and network (a phase override)."""

    timeout_sec: float = Field(600.0, gt=0)
    env: dict[str, str] = Field(default_factory=dict)
    network_mode: NetworkMode | None = None


class AgentConfig(_Section):
    """``[agent]``: seconds the agent may work (its network is paragents' ``sandbox.network``)."""

    timeout_sec: float = Field(600.0, gt=0)
    network_mode: NetworkMode | None = None


class SolutionConfig(_Section):
    """``[solution]``: the oracle's environment."""

    env: dict[str, str] = Field(default_factory=dict)


class EnvironmentConfig(_Section):
    """``[environment]``: how the container is built (only the network and ``docker_image`` are used by
    a local lane; the rest is kept as metadata). ``network_mode`` (schema 1.3+) is the baseline of
    every phase; ``allow_internet`` is its older spelling."""

    build_timeout_sec: float = Field(600.0, gt=0)
    docker_image: str | None = None
    allow_internet: bool | None = None
    network_mode: NetworkMode | None = None


class TaskToml(BaseModel):
    """The fields of ``task.toml`` paragents reads (unknown keys are kept by Harbor and ignored here)."""

    model_config = ConfigDict(frozen=True, extra="allow")

    version: str | None = None
    schema_version: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    verifier: VerifierConfig = Field(default_factory=VerifierConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    solution: SolutionConfig = Field(default_factory=SolutionConfig)
    environment: EnvironmentConfig = Field(default_factory=EnvironmentConfig)
    source: str | None = None

    def verifier_network(self) -> tuple[bool, str | None]:
        """Whether the verifier gets the network, and a note when a local lane cannot do what the task
        asks (an allowlist runs with no network at all)."""
        env = self.environment
        mode = self.verifier.network_mode or env.network_mode
        if mode is None:
            return (env.allow_internet is not False), None
        if mode == "allowlist":
            return (
                False,
                "network_mode allowlist: the hidden tests ran with no network (no host allowlist here)",
            )
        return mode == "public", None


def is_task_dir(path: Path) -> bool:
    """True when ``path`` is a Harbor task directory (it has a ``task.toml``)."""
    return (path / "task.toml").is_file()


def load_harbor_set(root: Path, *, name: str | None = None) -> TaskSet:
    """Load one task directory, or every task directory below ``root`` (up to three levels, hidden
    folders skipped), sorted by id. Raises EvalError for a set with no task or two tasks of one id."""
    root = root.resolve()
    if is_task_dir(root):
        dirs = [root]
    else:
        dirs = sorted(
            Path(p).parent
            for depth in ("*", "*/*", "*/*/*")
            for p in glob.glob(str(root / depth / "task.toml"))
            if not any(part.startswith(".") for part in Path(p).relative_to(root).parts)
        )
    if not dirs:
        raise EvalError(f"--tasks: {root} holds no Harbor task (no task.toml in it or below it)")
    tasks = [load_harbor_task(d) for d in dirs]
    seen: dict[str, Path] = {}
    for task, folder in zip(tasks, dirs, strict=True):
        if task.id in seen:
            raise EvalError(f"--tasks: two tasks are named {task.id!r}: {seen[task.id]} and {folder}")
        seen[task.id] = folder
    return TaskSet(name or root.name, str(root), tuple(sorted(tasks, key=lambda t: t.id)))


def read_task_toml(folder: Path) -> TaskToml:
    """Parse and check ``folder/task.toml`` (EvalError naming the file and the field)."""
    path = folder / "task.toml"
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalError(f"{path}: cannot be read ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise EvalError(f"{path}: not valid TOML ({exc})") from None
    try:
        return TaskToml.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise EvalError(f"{path}: {where}: {first['msg']}") from None


def load_harbor_task(folder: Path) -> Task:
    """Load the Harbor task in ``folder`` (EvalError naming the file and what is missing)."""
    folder = folder.resolve()
    config = read_task_toml(folder)
    task_id = check_task_id(folder.name, f"{folder}")
    instruction_path = folder / "instruction.md"
    try:
        instruction = instruction_path.read_text("utf-8")
    except OSError:
        raise EvalError(
            f"{instruction_path}: missing (a Harbor task's prompt is its instruction.md)"
        ) from None
    if not instruction.strip():
        raise EvalError(f"{instruction_path}: empty (the agent would get no prompt)")
    tests = folder / "tests"
    if not (tests / "test.sh").is_file():
        raise EvalError(f"{tests / 'test.sh'}: missing (the verifier Harbor runs as bash /tests/test.sh)")
    solution = folder / "solution"
    workdir, files, modes, notes = environment_files(folder / "environment", config)
    network, network_note = config.verifier_network()
    if network_note:
        notes.append(network_note)
    return Task(
        id=task_id,
        format="harbor",
        instruction=instruction,
        source=str(folder),
        files=files,
        modes=modes,
        workdir=workdir,
        tests_dir=tests,
        test_command="bash /tests/test.sh",
        solution_dir=solution if (solution / "solve.sh").is_file() else None,
        verifier_env=dict(config.verifier.env),
        solution_env=dict(config.solution.env),
        agent_timeout=config.agent.timeout_sec,
        verifier_timeout=config.verifier.timeout_sec,
        allow_internet=network,
        notes=tuple(notes),
        hidden=(tests, solution),
        metadata=dict(config.metadata),
    )


def environment_files(
    env_dir: Path, config: TaskToml
) -> tuple[str, dict[str, bytes], dict[str, int], list[str]]:
    """Read ``environment/Dockerfile``: return (its last ``WORKDIR``, the files its ``COPY``/``ADD``
    lines put under that directory as ``{relative path: bytes}``, their modes, and the notes saying
    what a local lane does not do: the base image, ``RUN`` steps, copies elsewhere)."""
    dockerfile = env_dir / "Dockerfile"
    notes: list[str] = []
    if not dockerfile.is_file():
        image = config.environment.docker_image
        what = f"the prebuilt image {image}" if image else "no environment/Dockerfile"
        notes.append(f"{what}: ran in a local lane that starts empty, working directory {DEFAULT_WORKDIR}")
        return DEFAULT_WORKDIR, {}, {}, notes
    from dockerfile_parse import DockerfileParser

    try:
        parser = DockerfileParser(fileobj=io.BytesIO(dockerfile.read_bytes()))
        structure = parser.structure
    except (OSError, ValueError) as exc:
        raise EvalError(f"{dockerfile}: cannot be parsed ({exc})") from None
    workdir = "/"
    copies: list[tuple[list[str], str, str]] = []  # (sources, destination, workdir then)
    runs = 0
    base = ""
    for item in structure:
        op, value = str(item["instruction"]).upper(), str(item["value"])
        if op == "FROM":
            base = value.split()[0] if value.split() else ""
            workdir = "/"
        elif op == "WORKDIR":
            workdir = posixpath.normpath(posixpath.join(workdir, value.strip().strip('"')))
        elif op in ("COPY", "ADD"):
            parsed = _copy_args(value)
            if parsed is None:
                notes.append(f"Dockerfile line {int(item['startline']) + 1}: {op} {value} skipped")
                continue
            sources, dest = parsed
            copies.append((sources, dest, workdir))
        elif op == "RUN":
            runs += 1
    final = workdir if workdir != "/" else DEFAULT_WORKDIR
    files: dict[str, bytes] = {}
    modes: dict[str, int] = {}
    for sources, dest, at in copies:
        target = posixpath.normpath(posixpath.join(at, dest))
        dir_dest = dest.endswith("/") or len(sources) > 1
        for src in sources:
            _copy_into(env_dir, src, target, dir_dest, final, files, modes, notes)
    summary = f"environment/Dockerfile not built: ran in a local lane at {final}"
    details = [f"base image {base} not used" if base else "", f"{runs} RUN step(s) not run" if runs else ""]
    details = [d for d in details if d]
    notes.insert(0, summary + (f" ({'; '.join(details)})" if details else ""))
    return final, files, modes, notes


def _copy_args(value: str) -> tuple[list[str], str] | None:
    """The sources and destination of a COPY/ADD value (JSON or shell form, flags dropped); None for a
    copy from another build stage or a URL (a local lane cannot make those)."""
    text = value.strip()
    words: list[str]
    flags = []
    while text.startswith("--"):
        flag, _, text = text.partition(" ")
        flags.append(flag)
        text = text.strip()
    if any(f.startswith("--from") for f in flags):
        return None
    if text.startswith("["):
        try:
            words = [str(w) for w in json.loads(text)]
        except ValueError:
            return None
    else:
        try:
            words = shlex.split(text)
        except ValueError:
            return None
    if len(words) < 2 or any("://" in w for w in words[:-1]):
        return None
    return words[:-1], words[-1]


def _copy_into(
    context: Path,
    src: str,
    target: str,
    dir_dest: bool,
    workdir: str,
    files: dict[str, bytes],
    modes: dict[str, int],
    notes: list[str],
) -> None:
    """Add the build-context files ``src`` names (a glob) under ``target``, when that is inside
    ``workdir``; sources outside the build context and symbolic links are skipped with a note."""
    root = context.resolve()
    matches = sorted(glob.glob(str(root / src))) if any(c in src for c in "*?[") else [str(root / src)]
    for match in matches:
        path = Path(os.path.normpath(match))
        if path != root and root not in path.parents:
            notes.append(f"COPY {src}: outside the build context, skipped")
            continue
        if not path.exists() or path.is_symlink():
            notes.append(f"COPY {src}: not in environment/ (or a symbolic link), skipped")
            continue
        if path.is_dir():
            entries = [(p, posixpath.join(target, p.relative_to(path).as_posix())) for p in path.rglob("*")]
        else:
            dest = posixpath.join(target, path.name) if dir_dest or target.endswith("/") else target
            entries = [(path, dest)]
        for file, dest in entries:
            if file.is_symlink() or not file.is_file():
                continue
            rel = _under(dest, workdir)
            if rel is None:
                notes.append(f"COPY to {dest}: outside the working directory {workdir}, skipped")
                continue
            if len(files) >= MAX_FILES or file.stat().st_size > MAX_FILE_BYTES:
                notes.append(f"COPY {file.relative_to(root)}: too large or too many files, skipped")
                continue
            files[rel] = file.read_bytes()
            modes[rel] = file.stat().st_mode & 0o777


def _under(dest: str, workdir: str) -> str | None:
    """``dest`` relative to ``workdir`` (posix), or None when it is not below it."""
    dest = posixpath.normpath(dest)
    prefix = workdir.rstrip("/") + "/"
    if not dest.startswith(prefix):
        return None
    rel = dest[len(prefix) :]
    return rel if rel and not rel.startswith("../") else None
