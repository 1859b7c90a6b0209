"""Fan-out: one prompt to several sibling sessions, each in its own lane, judged by evidence and
merged by the user (docs/fanout.md). Core code: never imports textual.

- :mod:`.errors`: FanoutError and the exit codes of ``paragents fanout``
- :mod:`.request`: what the user asked (``/fanout`` arguments) and its checks
- :mod:`.group`: opening the siblings (sessions + lanes) and following them to the end
- :mod:`.verify`: the verify command in a candidate's lane, failing test names
- :mod:`.evidence`: per-candidate diff, hunks, overlaps, usage; the evidence order
- :mod:`.compare`: the user's actions: apply, graft hunks, discard all
- :mod:`.judge`: the optional judge request and its JSON schema
- :mod:`.rules`: allow rules answered for a whole group
- :mod:`.headless`: ``paragents fanout``
- :mod:`.split`: ``/split`` / ``paragents split``: a planned split into one integration lane
- :mod:`.review`, :mod:`.specialists`, :mod:`.report`: ``/review`` / ``paragents review``: specialists'
  findings merged
- :mod:`.asking`, :mod:`.answers`: worker sessions and JSON answers with one retry
"""
