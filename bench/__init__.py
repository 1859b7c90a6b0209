"""paragents benchmark (``uv run python -m bench``): streaming, startup, reopen, permissions, SSE.

Not unit tests: it measures the real app on this machine and reports; see docs/performance.md."""
