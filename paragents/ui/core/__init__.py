"""Infrastructure of the TUI that knows no feature: safe display of untrusted text (``text``,
``glyphs``), keys (``keys``, ``type_ahead``), the repaint ticker, the Textual messages and the
slash-command table (``messages``, ``commands``, ``agent_commands``), signals, GC tuning and the
terminal-gone guard. It imports no feature package, no screen and no widget."""
