"""``paragents eval run --tui``: an eval run's trials followed in the TUI (``hooks``)."""
