"""The SQLite store: sessions, conversations, messages, turns, usage, audit, events, reservations,
notes, lanes, approvals, fan-out groups. See :class:`Store` (its repositories: ``store.sessions``,
``store.approvals``...); it is the only place in paragents that runs SQL. The records it returns
live in :mod:`paragents.store.records` (re-exported here)."""

from paragents.store.history import INTERRUPTED_RESULT, repair_history
from paragents.store.migrations import SCHEMA_VERSION
from paragents.store.records import (
    AnswerResult,
    ApprovalRecord,
    CandidateRecord,
    CompactionRecord,
    ConversationRecord,
    DecisionRecord,
    GroupRecord,
    HistoryChanged,
    HolderRecord,
    LaneRecord,
    NoteRecord,
    ReservationRecord,
    SessionHeld,
    SessionMessageRecord,
    SessionRecord,
    StoredMessage,
    StoreError,
    TurnRecord,
    VerifyRecord,
)
from paragents.store.store import Store

__all__ = [
    "INTERRUPTED_RESULT",
    "SCHEMA_VERSION",
    "AnswerResult",
    "ApprovalRecord",
    "CandidateRecord",
    "CompactionRecord",
    "ConversationRecord",
    "DecisionRecord",
    "GroupRecord",
    "HistoryChanged",
    "HolderRecord",
    "LaneRecord",
    "NoteRecord",
    "ReservationRecord",
    "SessionHeld",
    "SessionMessageRecord",
    "SessionRecord",
    "Store",
    "StoreError",
    "StoredMessage",
    "TurnRecord",
    "VerifyRecord",
    "repair_history",
]
