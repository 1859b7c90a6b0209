"""The SQLite store: sessions, conversations, messages, turns, usage, audit, events, reservations,
notes. See :class:`Store`; it is the only place in paragents that runs SQL."""

from paragents.store.approvals import AnswerResult, ApprovalRecord
from paragents.store.compactions import CompactionRecord
from paragents.store.decisions import DecisionRecord, SessionMessageRecord
from paragents.store.fanout import CandidateRecord, GroupRecord
from paragents.store.history import INTERRUPTED_RESULT, repair_history
from paragents.store.lanes import LaneRecord
from paragents.store.migrations import SCHEMA_VERSION
from paragents.store.records import (
    ConversationRecord,
    HistoryChanged,
    HolderRecord,
    NoteRecord,
    ReservationRecord,
    SessionHeld,
    SessionRecord,
    StoredMessage,
    StoreError,
    TurnRecord,
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
    "repair_history",
]
