"""Typed results of the contextd API."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence


@dataclass
class ContextResult:
    """The answer of POST /v1/context. Parts left out by `include` are None."""

    chat_id: str
    agent: str
    strategy: str
    context: Optional[str]
    messages: Optional[List[Dict[str, Any]]]
    sections: Optional[Dict[str, Any]]
    usage: Dict[str, Any]
    degraded: List[str]

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "ContextResult":
        return cls(chat_id=d.get("chat_id", ""), agent=d.get("agent", ""), strategy=d.get("strategy", ""),
                   context=d.get("context"), messages=d.get("messages"), sections=d.get("sections"),
                   usage=d.get("usage", {}), degraded=d.get("degraded", []))


@dataclass
class SearchHit:
    """One /v1/search hit: a turn, an episode (kind == "episode": its
    range and dates) or a fact (kind == "fact": its id, source turns and
    the time it holds from). ``passages`` are a long turn's matching
    passages, as the server sends them."""

    kind: str
    chat_id: str
    seq: int
    content: str
    score: float
    created_at: Optional[str] = None
    role: Optional[str] = None
    episode_id: Optional[str] = None
    from_seq: Optional[int] = None
    to_seq: Optional[int] = None
    started_at: Optional[str] = None
    ended_at: Optional[str] = None
    fact_id: Optional[str] = None
    seqs: Optional[List[int]] = None
    valid_at: Optional[str] = None
    passages: Optional[List[Dict[str, Any]]] = None

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "SearchHit":
        return cls(kind=d.get("kind", "turn"), chat_id=d.get("chat_id", ""), seq=d.get("seq", 0),
                   content=d.get("content", ""), score=d.get("score", 0.0), created_at=d.get("created_at"),
                   role=d.get("role"), episode_id=d.get("episode_id"), from_seq=d.get("from_seq"),
                   to_seq=d.get("to_seq"), started_at=d.get("started_at"), ended_at=d.get("ended_at"),
                   fact_id=d.get("fact_id"), seqs=d.get("seqs"), valid_at=d.get("valid_at"),
                   passages=d.get("passages"))


class SearchHits(List[SearchHit]):
    """/v1/search's hits, best first: a list, which also says what the
    answer lacks. ``degraded`` names every fallback the search took (e.g.
    ``index_behind``: the chat's turns, episodes or facts were not all
    indexed, or its turns' facts not all drawn, within the search's wait);
    it is empty when none was."""

    def __init__(self, hits: Sequence[SearchHit] = (), degraded: Sequence[str] = ()):
        super().__init__(hits)
        self.degraded: List[str] = list(degraded)

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "SearchHits":
        return cls([SearchHit.from_json(h) for h in d.get("hits", [])], d.get("degraded", []))


@dataclass
class Summary:
    """GET /v1/chats/{id}/summary: the running summary /v1/context uses
    when the chat does not fit whole (None before there is any), its
    stored chain of records and the newest episodes. ``preview``: the
    summary is the extension the worker is about to store, computed for
    this answer as for a context's (not in ``chain`` yet)."""

    summary: Optional[Dict[str, Any]]
    chain: List[Dict[str, Any]] = field(default_factory=list)
    episodes: List[Dict[str, Any]] = field(default_factory=list)
    preview: bool = False

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Summary":
        return cls(summary=d.get("summary"), chain=d.get("chain") or [], episodes=d.get("episodes") or [],
                   preview=bool(d.get("preview", False)))


@dataclass
class Episode:
    """A closed stretch of a chat with its own summaries."""

    id: str
    from_seq: int
    to_seq: int
    short: str
    started_at: Optional[str] = None
    ended_at: Optional[str] = None
    summary: Optional[Dict[str, Any]] = None
    raw: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Episode":
        return cls(id=d.get("id", ""), from_seq=d.get("from_seq", 0), to_seq=d.get("to_seq", 0),
                   short=d.get("short", ""), started_at=d.get("started_at"), ended_at=d.get("ended_at"),
                   summary=d.get("summary"), raw=d)


@dataclass
class AppendResult:
    """The answer of an append: ids and seqs of the stored turns."""

    chat_id: str
    appended: int
    duplicates: int
    last_seq: int
    messages: List[Dict[str, Any]]

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "AppendResult":
        return cls(chat_id=d.get("chat_id", ""), appended=d.get("appended", 0), duplicates=d.get("duplicates", 0),
                   last_seq=d.get("last_seq", 0), messages=d.get("messages", []))
