"""What a fan-out runs on (:class:`FanoutHost`): the session API it drives (``rt``), the store's
repositories its own records and its lanes live in (:class:`FanoutStore`), and the chat client in force
for the judge's one request. The composition root builds it (``FanoutHost.of(opened)`` from
:func:`paragents.sessions.open_sessions`); nothing in fan-out reaches into the session layer's
internals. Nothing here imports Textual."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from paragents.llm import ChatClient
    from paragents.sessions import Opened
    from paragents.sessions.api import SessionsAPI
    from paragents.store.fanout import FanoutRepo
    from paragents.store.holders import HoldersRepo
    from paragents.store.lane_verify import LaneVerifyRepo
    from paragents.store.lanes import LanesRepo
    from paragents.store.sessions import SessionsRepo
    from paragents.store.turns import TurnsRepo


class FanoutStore(Protocol):
    """The store's repositories fan-out uses (``paragents.store.Store`` is one): its groups and
    candidates, the siblings' lanes (made, landed, removed: ``lanes``, ``sessions``, ``holders``,
    ``lane_verify``) and their token use (``turns``)."""

    @property
    def fanout(self) -> FanoutRepo: ...
    @property
    def lanes(self) -> LanesRepo: ...
    @property
    def lane_verify(self) -> LaneVerifyRepo: ...
    @property
    def sessions(self) -> SessionsRepo: ...
    @property
    def holders(self) -> HoldersRepo: ...
    @property
    def turns(self) -> TurnsRepo: ...


@dataclass(frozen=True)
class FanoutHost:
    """The session API, the store and the chat client a fan-out (best-of-N, review, split) runs on."""

    rt: SessionsAPI
    store: FanoutStore
    chat: Callable[[], ChatClient]
    """The chat client in force (a ``/reload`` replaces it: the judge asks for it when it runs)."""

    @classmethod
    def of(cls, opened: Opened) -> FanoutHost:
        """The host of a session layer the composition root opened."""
        return cls(opened.api, opened.store, opened.chat)
