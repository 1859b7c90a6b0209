"""The store's records: what its repositories return (frozen dataclasses) and its errors.

Clients outside the core (``paragents.ui``, ``paragents.serve``) import these from the subject's
module (``paragents.store.records.approvals``...), never from :mod:`paragents.store` itself or a
repository module: an import contract in pyproject.toml keeps it so. The rest of paragents may use the
names re-exported here or by :mod:`paragents.store`.
"""

from paragents.store.records.approvals import (
    APPROVAL_ANSWERS,
    CONFLICT_ANSWERS,
    AnswerResult,
    AnswerStatus,
    ApprovalRecord,
    ApprovalState,
)
from paragents.store.records.decisions import DecisionRecord, SessionMessageRecord
from paragents.store.records.errors import HistoryChanged, SessionHeld, StoreError
from paragents.store.records.fanout import CandidateRecord, GroupRecord
from paragents.store.records.lanes import LaneRecord, VerifyRecord
from paragents.store.records.sessions import (
    CompactionRecord,
    ConversationRecord,
    HolderRecord,
    NoteRecord,
    ReservationRecord,
    SessionRecord,
    StoredMessage,
    TurnRecord,
)

__all__ = [
    "APPROVAL_ANSWERS",
    "CONFLICT_ANSWERS",
    "AnswerResult",
    "AnswerStatus",
    "ApprovalRecord",
    "ApprovalState",
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
    "StoreError",
    "StoredMessage",
    "TurnRecord",
    "VerifyRecord",
]
