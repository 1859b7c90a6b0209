"""Loading a task set of ``--tasks``: ``sample`` (the built-in set), a Harbor task directory (or a
directory of them) or a SWE-style ``.jsonl`` file (docs/eval.md, "Task formats"). Nothing here imports
Textual."""

from __future__ import annotations

from pathlib import Path

from paragents.eval.errors import EvalError
from paragents.eval.harbor import load_harbor_set
from paragents.eval.swe import load_swe_file
from paragents.eval.tasks import TaskSet

SAMPLE_DIR = Path(__file__).resolve().parent / "sample"
"""The built-in sample task set (``--tasks sample``)."""


def load_tasks(spec: str, *, base: Path | None = None) -> TaskSet:
    """Load the task set ``spec``: ``sample`` (the built-in set), a Harbor task directory, a directory
    of Harbor task directories, or a ``.jsonl`` file of SWE-style instances. Relative paths are taken
    from ``base`` (default: the current directory). Raises EvalError naming the file and field."""
    if spec == "sample":
        return load_harbor_set(SAMPLE_DIR, name="sample")
    path = Path(spec).expanduser()
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    if not path.exists():
        raise EvalError(f"--tasks: {spec} does not exist (give a task directory, a .jsonl file or 'sample')")
    if path.is_file():
        if path.suffix != ".jsonl":
            raise EvalError(f"--tasks: {spec} is a file but not a .jsonl of SWE-style instances")
        return load_swe_file(path)
    return load_harbor_set(path)
