"""Screens of the paragents TUI (setup, sessions list, config, help, permissions)."""
