"""``paragents serve``: a small authenticated HTTP API over the running Runtime, the phone inbox page
and (``--tui``) the whole app through textual-serve. See docs/serve.md. Nothing here imports Textual.

The server runs on its own thread and event loop (:mod:`.server`); everything it asks of the Runtime
goes through :class:`~paragents.serve.bridge.RuntimeBridge`, the one seam between the two."""
