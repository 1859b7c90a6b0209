"""Screens of the paragents TUI every feature shares (overview, help and info, sessions list, setup);
a feature's own screens live in its package (``ui/lanes/``, ``ui/fanout/``, ``ui/serve/``)."""
