"""Widgets of the paragents TUI (session panel, transcript, tool calls, approval bar, prompt box)."""
