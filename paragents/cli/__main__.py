"""``python -m paragents.cli`` is the ``paragents`` command."""

from paragents.cli import main

main()
