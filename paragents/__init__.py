"""paragents: parallel LLM coding-agent sessions side by side in one terminal."""

__version__ = "0.1.0"
