"""Under mutation testing (mutmut sets ``MUTANT_UNDER_TEST``) the property tests draw the same
examples in every run, so a mutant's verdict never depends on which examples a run happened to
draw, and a run cannot stop on an example an earlier run saved (docs/permissions.md)."""

from __future__ import annotations

import os

from hypothesis import settings

if "MUTANT_UNDER_TEST" in os.environ:
    settings.register_profile("mutmut", derandomize=True, database=None)
    settings.load_profile("mutmut")
