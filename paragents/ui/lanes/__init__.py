"""Lanes in the TUI: the lane question and a lane's setup output, predicted conflicts as inbox rows
(``hooks``); the Lanes screen (``screen``) and its dialogs (``merge``, ``commit``); both sides of a
predicted conflict (``prediction``). The bars (``lane_ask_bar``, ``prediction_bar``, ``setup_log``)
are in ``ui/widgets/`` (the session panel and the inbox show them)."""
