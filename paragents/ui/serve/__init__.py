"""The HTTP API from the TUI: ``/serve`` and ``/pair`` (``hooks``), the pairing screen (``pair``),
and ``paragents serve --tui``: the whole app in a browser (``tui_web``, ``tui_static/``)."""
