"""The Textual UI of paragents: one client of the core (``paragents.sessions.Runtime``).

Only this package imports Textual. Entry point: :func:`paragents.ui.app.make_app`.

Layout (top to bottom; each part imports only the parts below it, checked by the "ui: ..." import
contracts in pyproject.toml):

- ``eval/``: ``paragents eval run --tui`` (builds the app and follows a run's trials in it).
- the app: ``app.py`` (routing, focus, layout), ``app_actions.py`` (keys), ``answers.py`` (a bar's
  answer), ``command_runner.py`` (slash commands), ``startup.py``, ``palette.py``.
- the features, each with its glue and its own screens: ``fanout/`` (``/fanout``, ``/review``,
  ``/split``, the compare screen; it lands a candidate with the lanes' merge dialog), then
  ``budgets/`` (spend labels, meters, ``/budget``), ``lanes/`` (lane asks, predicted conflicts, the
  Lanes screen and its dialogs), ``serve/`` (``/serve``, ``/pair``, ``serve --tui``).
- ``app_api.py``: what the features may use of the app (a Protocol).
- ``inbox/``: the "needs you" inbox (f2), asks of other processes in it, the bell.
- ``screens/``: screens every feature shares (overview, help/info, sessions, setup).
- ``widgets/``: the session panel and what it shows, every answer bar (a feature's bar lives here
  because the panel and the inbox show it).
- ``core/``: infrastructure that knows no feature: safe text and glyphs, keys, the repaint ticker,
  the message and slash-command vocabulary, signals, GC tuning.
"""
