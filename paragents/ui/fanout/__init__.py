"""Fan-out in the TUI: ``/fanout`` and the inbox's group tags (``hooks``), the compare screen
(``compare``), ``/review`` and ``/split`` (``team``) and their screens (``team_screens``)."""
