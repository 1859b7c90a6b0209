"""``python -m paragents.cli`` is the ``paragents`` command."""

from paragents.cli import main

if __name__ == "__main__":  # importing this module (pkgutil walks, tests) must not start the app
    main()
