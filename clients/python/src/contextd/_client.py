"""Sync and async clients over httpx, sharing request building and answer
parsing; only the transport differs."""
from __future__ import annotations

import asyncio
import json
import math
import random
import time
import uuid
from typing import Any, Dict, Iterable, List, Optional, Sequence
from urllib.parse import quote

import httpx

from .types import AppendResult, ContextResult, Episode, SearchHits, Summary

RETRY_STATUSES = (429, 503)


class ContextdError(Exception):
    """Every failure of a call: an API error (the HTTP status and the server's
    code, message and field), or status 0 with code "unavailable" when no
    answer came (connection refused, network error, timeout)."""

    def __init__(self, status: int, code: str, message: str, field: Optional[str] = None):
        super().__init__(f"{status} {code}: {message}" + (f" (field {field})" if field else ""))
        self.status, self.code, self.message, self.field = status, code, message, field


def _seg(s: str) -> str:
    return quote(s, safe="")


def _messages(messages: Iterable[Dict[str, Any]]) -> List[Dict[str, Any]]:
    # An id per message makes a retried append store nothing twice. It is
    # written into the caller's dict: a retry of the same messages after a
    # lost answer (a timeout, a reset) then sends the same ids.
    out = []
    for m in messages:
        if isinstance(m, dict) and not m.get("id"):
            m["id"] = uuid.uuid4().hex
        out.append(dict(m))
    return out


def _drop_none(d: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def _context_body(chat_id, query, agent, budget_tokens, strategy, since, until, include, user_id, append,
                  wait_for_summary=None, rag_scope=None):
    return _drop_none({"chat_id": chat_id, "query": query, "agent": agent, "budget_tokens": budget_tokens,
                       "strategy": strategy, "since": since, "until": until,
                       "include": list(include) if include is not None else None, "user_id": user_id,
                       "append": _messages(append) if append else None,
                       "wait_for_summary": wait_for_summary, "rag_scope": rag_scope})


def _search_body(query, chat_id, user_id, k, since, until, kinds, min_score):
    return _drop_none({"query": query, "chat_id": chat_id, "user_id": user_id, "k": k, "since": since,
                       "until": until, "kinds": list(kinds) if kinds is not None else None,
                       "min_score": min_score})


def _facts_params(after_seq, limit, include_superseded):
    p = {"after_seq": after_seq, "limit": limit}
    if include_superseded:
        p["include_superseded"] = "true"
    return p


def _error(resp: httpx.Response) -> ContextdError:
    try:
        e = resp.json().get("error", {})
    except (ValueError, AttributeError):  # not JSON, or not the API's object
        e = {}
    if not isinstance(e, dict) or not isinstance(e.get("code"), str):
        return ContextdError(resp.status_code, "http_error", f"HTTP {resp.status_code}: {resp.text[:200]}")
    return ContextdError(resp.status_code, e["code"], str(e.get("message", "")), e.get("field") or None)


def _invalid(resp: httpx.Response, why: str) -> ContextdError:
    return ContextdError(resp.status_code, "invalid_response", f"the answer is not contextd's JSON ({why}): {resp.text[:200]}")


def _unavailable(method: str, path: str, err: Exception) -> ContextdError:
    # No answer at all (refused, reset, timed out): the same error type as an
    # API error, so callers handle one exception.
    why = "timed out" if isinstance(err, httpx.TimeoutException) else (str(err) or type(err).__name__)
    e = ContextdError(0, "unavailable", f"{method} {path}: contextd is unreachable ({why})")
    e.__cause__ = err
    return e


def _answer(resp: httpx.Response, ndjson: bool, expect: bool) -> Any:
    """The body of a 2xx answer (None when it has none and none is expected);
    anything else is a ContextdError."""
    if resp.status_code >= 300:  # an error, or a redirect (a wrong base_url, http to https)
        raise _error(resp)
    if not resp.content:
        if expect:
            raise _invalid(resp, "empty")
        return None
    try:
        if ndjson:
            return [json.loads(line) for line in resp.text.splitlines() if line.strip()]
        return resp.json()
    except ValueError as err:
        raise _invalid(resp, str(err)) from err


def _retry_after(resp: httpx.Response, attempt: int, base: float) -> float:
    ra = resp.headers.get("Retry-After")
    if ra:
        try:
            secs = float(ra)
            if math.isfinite(secs) and secs >= 0:
                return min(secs, 30.0)
        except ValueError:
            pass
    return min(base * (2 ** attempt), 10.0) * (0.5 + random.random() / 2)


class _Base:
    def __init__(self, base_url: str, api_key: Optional[str], timeout: float, retries: int, backoff: float):
        self.base_url = base_url.rstrip("/")
        self.headers = {"Content-Type": "application/json"}
        if api_key and api_key.strip():
            # A key read from a file keeps its newline, which no header may hold.
            self.headers["Authorization"] = f"Bearer {api_key.strip()}"
        self.timeout, self.retries, self.backoff = timeout, retries, backoff


class Client(_Base):
    """A synchronous contextd client. Retries 429 and 503 with backoff,
    honouring Retry-After; raises ContextdError for every failure: an API
    error, or code "unavailable" (status 0) when contextd cannot be reached
    or does not answer within the timeout."""

    def __init__(self, base_url: str = "http://localhost:8080", api_key: Optional[str] = None,
                 timeout: float = 30.0, retries: int = 3, backoff: float = 0.2):
        super().__init__(base_url, api_key, timeout, retries, backoff)
        self._http = httpx.Client(base_url=self.base_url, headers=self.headers, timeout=timeout)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _call(self, method: str, path: str, body: Optional[Dict[str, Any]] = None, params=None,
              ndjson: bool = False, expect: bool = True) -> Any:
        for attempt in range(self.retries + 1):
            try:
                resp = self._http.request(method, path, json=body, params=params)
            except (httpx.TransportError, httpx.DecodingError) as err:
                raise _unavailable(method, path, err) from err
            if resp.status_code in RETRY_STATUSES and attempt < self.retries:
                time.sleep(_retry_after(resp, attempt, self.backoff))
                continue
            return _answer(resp, ndjson, expect)
        raise AssertionError("unreachable")

    def append(self, chat_id: str, messages: Sequence[Dict[str, Any]], *, user_id: Optional[str] = None,
               agent: Optional[str] = None) -> AppendResult:
        body = _drop_none({"user_id": user_id, "agent": agent, "messages": _messages(messages)})
        return AppendResult.from_json(self._call("POST", f"/v1/chats/{_seg(chat_id)}/messages", body))

    def context(self, chat_id: str, *, query: Optional[str] = None, agent: Optional[str] = None,
                budget_tokens: Optional[int] = None, strategy: Optional[str] = None, since: Optional[str] = None,
                until: Optional[str] = None, include: Optional[Sequence[str]] = None, user_id: Optional[str] = None,
                append: Optional[Sequence[Dict[str, Any]]] = None, wait_for_summary: Optional[bool] = None,
                rag_scope: Optional[str] = None) -> ContextResult:
        body = _context_body(chat_id, query, agent, budget_tokens, strategy, since, until, include, user_id, append,
                             wait_for_summary, rag_scope)
        return ContextResult.from_json(self._call("POST", "/v1/context", body))

    def context_messages(self, chat_id: str, query: Optional[str] = None, **kw) -> List[Dict[str, Any]]:
        """The OpenAI-style messages to put before a model call."""
        kw["include"] = ["messages"]
        return self.context(chat_id, query=query, **kw).messages or []

    def search(self, query: str, *, chat_id: Optional[str] = None, user_id: Optional[str] = None,
               k: Optional[int] = None, since: Optional[str] = None, until: Optional[str] = None,
               kinds: Optional[Sequence[str]] = None, min_score: Optional[float] = None) -> SearchHits:
        """The hits, best first (a list; its ``degraded`` says what the answer lacks)."""
        body = _search_body(query, chat_id, user_id, k, since, until, kinds, min_score)
        return SearchHits.from_json(self._call("POST", "/v1/search", body))

    def messages(self, chat_id: str, *, after_seq: int = 0, limit: int = 100) -> Dict[str, Any]:
        return self._call("GET", f"/v1/chats/{_seg(chat_id)}/messages", params={"after_seq": after_seq, "limit": limit})

    def summary(self, chat_id: str, *, chain_limit: Optional[int] = None) -> Summary:
        """The running summary, the newest chain_limit records of its chain (server default 50) and the newest episodes."""
        return Summary.from_json(self._call("GET", f"/v1/chats/{_seg(chat_id)}/summary",
                                            params=_drop_none({"chain_limit": chain_limit})))

    def refresh_summary(self, chat_id: str) -> Dict[str, Any]:
        return self._call("POST", f"/v1/chats/{_seg(chat_id)}/summary/refresh")

    def episodes(self, chat_id: str, *, after_seq: int = 0, limit: int = 100) -> List[Episode]:
        d = self._call("GET", f"/v1/chats/{_seg(chat_id)}/episodes", params={"after_seq": after_seq, "limit": limit})
        return [Episode.from_json(e) for e in d.get("episodes", [])]

    def profile(self, user_id: str) -> Dict[str, Any]:
        return self._call("GET", f"/v1/users/{_seg(user_id)}/profile")

    def delete_chat(self, chat_id: str) -> None:
        self._call("DELETE", f"/v1/chats/{_seg(chat_id)}", expect=False)

    def delete_user(self, user_id: str) -> None:
        self._call("DELETE", f"/v1/users/{_seg(user_id)}", expect=False)

    def delete_message(self, chat_id: str, message_id: str) -> None:
        """Forget one turn: it stays as a tombstone, and what was derived from it is rebuilt."""
        self._call("DELETE", f"/v1/chats/{_seg(chat_id)}/messages/{_seg(message_id)}", expect=False)

    def forget_profile_item(self, user_id: str, item_id: str) -> None:
        """Forget a profile item; the same turns never derive it again."""
        self._call("DELETE", f"/v1/users/{_seg(user_id)}/profile/items/{_seg(item_id)}", expect=False)

    def facts(self, chat_id: str, *, after_seq: int = 0, limit: int = 100,
              include_superseded: bool = False) -> Dict[str, Any]:
        """A page of the chat's facts in seq order: {"facts": [...], "next_after_seq"}."""
        return self._call("GET", f"/v1/chats/{_seg(chat_id)}/facts",
                          params=_facts_params(after_seq, limit, include_superseded))

    def export_chat(self, chat_id: str) -> List[Dict[str, Any]]:
        """The chat in the dump format: one dict per record."""
        return self._call("GET", f"/v1/chats/{_seg(chat_id)}/export", ndjson=True)

    def export_user(self, user_id: str) -> List[Dict[str, Any]]:
        """Every chat of the user and their profile in the dump format."""
        return self._call("GET", f"/v1/users/{_seg(user_id)}/export", ndjson=True)


class AsyncClient(_Base):
    """The same API as Client, with async methods."""

    def __init__(self, base_url: str = "http://localhost:8080", api_key: Optional[str] = None,
                 timeout: float = 30.0, retries: int = 3, backoff: float = 0.2):
        super().__init__(base_url, api_key, timeout, retries, backoff)
        self._http = httpx.AsyncClient(base_url=self.base_url, headers=self.headers, timeout=timeout)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()

    async def _call(self, method: str, path: str, body: Optional[Dict[str, Any]] = None, params=None,
                    ndjson: bool = False, expect: bool = True) -> Any:
        for attempt in range(self.retries + 1):
            try:
                resp = await self._http.request(method, path, json=body, params=params)
            except (httpx.TransportError, httpx.DecodingError) as err:
                raise _unavailable(method, path, err) from err
            if resp.status_code in RETRY_STATUSES and attempt < self.retries:
                await asyncio.sleep(_retry_after(resp, attempt, self.backoff))
                continue
            return _answer(resp, ndjson, expect)
        raise AssertionError("unreachable")

    async def append(self, chat_id: str, messages: Sequence[Dict[str, Any]], *, user_id: Optional[str] = None,
                     agent: Optional[str] = None) -> AppendResult:
        body = _drop_none({"user_id": user_id, "agent": agent, "messages": _messages(messages)})
        return AppendResult.from_json(await self._call("POST", f"/v1/chats/{_seg(chat_id)}/messages", body))

    async def context(self, chat_id: str, *, query: Optional[str] = None, agent: Optional[str] = None,
                      budget_tokens: Optional[int] = None, strategy: Optional[str] = None,
                      since: Optional[str] = None, until: Optional[str] = None,
                      include: Optional[Sequence[str]] = None, user_id: Optional[str] = None,
                      append: Optional[Sequence[Dict[str, Any]]] = None, wait_for_summary: Optional[bool] = None,
                      rag_scope: Optional[str] = None) -> ContextResult:
        body = _context_body(chat_id, query, agent, budget_tokens, strategy, since, until, include, user_id, append,
                             wait_for_summary, rag_scope)
        return ContextResult.from_json(await self._call("POST", "/v1/context", body))

    async def context_messages(self, chat_id: str, query: Optional[str] = None, **kw) -> List[Dict[str, Any]]:
        kw["include"] = ["messages"]
        return (await self.context(chat_id, query=query, **kw)).messages or []

    async def search(self, query: str, *, chat_id: Optional[str] = None, user_id: Optional[str] = None,
                     k: Optional[int] = None, since: Optional[str] = None, until: Optional[str] = None,
                     kinds: Optional[Sequence[str]] = None, min_score: Optional[float] = None) -> SearchHits:
        """The hits, best first (a list; its ``degraded`` says what the answer lacks)."""
        body = _search_body(query, chat_id, user_id, k, since, until, kinds, min_score)
        return SearchHits.from_json(await self._call("POST", "/v1/search", body))

    async def summary(self, chat_id: str, *, chain_limit: Optional[int] = None) -> Summary:
        return Summary.from_json(await self._call("GET", f"/v1/chats/{_seg(chat_id)}/summary",
                                                  params=_drop_none({"chain_limit": chain_limit})))

    async def episodes(self, chat_id: str, *, after_seq: int = 0, limit: int = 100) -> List[Episode]:
        d = await self._call("GET", f"/v1/chats/{_seg(chat_id)}/episodes", params={"after_seq": after_seq, "limit": limit})
        return [Episode.from_json(e) for e in d.get("episodes", [])]

    async def profile(self, user_id: str) -> Dict[str, Any]:
        return await self._call("GET", f"/v1/users/{_seg(user_id)}/profile")

    async def delete_chat(self, chat_id: str) -> None:
        await self._call("DELETE", f"/v1/chats/{_seg(chat_id)}", expect=False)

    async def delete_user(self, user_id: str) -> None:
        await self._call("DELETE", f"/v1/users/{_seg(user_id)}", expect=False)

    async def messages(self, chat_id: str, *, after_seq: int = 0, limit: int = 100) -> Dict[str, Any]:
        return await self._call("GET", f"/v1/chats/{_seg(chat_id)}/messages",
                                params={"after_seq": after_seq, "limit": limit})

    async def refresh_summary(self, chat_id: str) -> Dict[str, Any]:
        return await self._call("POST", f"/v1/chats/{_seg(chat_id)}/summary/refresh")

    async def delete_message(self, chat_id: str, message_id: str) -> None:
        await self._call("DELETE", f"/v1/chats/{_seg(chat_id)}/messages/{_seg(message_id)}", expect=False)

    async def forget_profile_item(self, user_id: str, item_id: str) -> None:
        await self._call("DELETE", f"/v1/users/{_seg(user_id)}/profile/items/{_seg(item_id)}", expect=False)

    async def facts(self, chat_id: str, *, after_seq: int = 0, limit: int = 100,
                    include_superseded: bool = False) -> Dict[str, Any]:
        return await self._call("GET", f"/v1/chats/{_seg(chat_id)}/facts",
                                params=_facts_params(after_seq, limit, include_superseded))

    async def export_chat(self, chat_id: str) -> List[Dict[str, Any]]:
        return await self._call("GET", f"/v1/chats/{_seg(chat_id)}/export", ndjson=True)

    async def export_user(self, user_id: str) -> List[Dict[str, Any]]:
        return await self._call("GET", f"/v1/users/{_seg(user_id)}/export", ndjson=True)
