"""How long a test waits for something before calling it a hang.

Every bounded wait in the suite (a subprocess, a replay, a condition) is a hang guard, not a speed
limit: it only has to end a run that would otherwise never finish. On the shared 2-core machine with
eight other jobs and ``--load 2`` (load average 12-16), a plain ``paragents run`` that takes 1-2 s on
an idle machine took 11-12 s, and single runs took over 60 s; guards of 30-60 s failed there while
nothing was stuck. So they are all this one generous bound."""

HANG_GUARD_S = 300.0
"""Seconds before a wait counts as a hang."""
