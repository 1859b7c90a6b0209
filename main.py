"""Run paragents from a checkout: ``python main.py`` is the same as the ``paragents`` command."""

from paragents.cli import main

if __name__ == "__main__":
    main()
