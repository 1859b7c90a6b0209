"""Notifications that reach the user where they are (no Textual here).

- :mod:`paragents.notify.escapes`: the terminal escape sequence (OSC 9 / OSC 777 / OSC 99 / BEL)
  chosen from the environment, tmux/screen passthrough, control characters stripped.
- :mod:`paragents.notify.outbound`: ``notify.webhook`` (JSON POST, retried with backoff in the
  background) and ``notify.command`` (argv, no shell).
- :mod:`paragents.notify.notifier`: which core events become notifications (needs you, finished,
  failed), never for the focused visible session, digests, one escalation, per-session mute.
"""

from paragents.notify.escapes import choose_method, clean, notification_bytes, title_sequence
from paragents.notify.notifier import Note, Notifier

__all__ = ["Note", "Notifier", "choose_method", "clean", "notification_bytes", "title_sequence"]
