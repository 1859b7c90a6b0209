"""Cassettes: record a live multi-session run, replay it headless (or through the TUI) against a
loopback server, check expectations. Format: ``docs/cassettes.md``; schema: ``schema.json``."""

from paragents.cassette.loader import CassetteError, load_cassette, validate_cassette
from paragents.cassette.model import Answer, Cassette, Expectation, Reply, SessionSpec, Step
from paragents.cassette.player import Player, play_cassette
from paragents.cassette.report import render_text, report_ok

__all__ = [
    "Answer",
    "Cassette",
    "CassetteError",
    "Expectation",
    "Player",
    "Reply",
    "SessionSpec",
    "Step",
    "load_cassette",
    "play_cassette",
    "render_text",
    "report_ok",
    "validate_cassette",
]
