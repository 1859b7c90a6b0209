"""``paragents demo`` and ``paragents replay --tui``: cassettes played through the real Textual app."""
