"""The Textual UI of paragents: one client of the core (``paragents.sessions.Runtime``).

Only this package imports Textual. Entry point: :func:`paragents.ui.app.make_app`.
"""
