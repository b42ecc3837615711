"""contextd: the right conversation context before every model call.

    from contextd import Client
    c = Client("http://localhost:8080")
    c.append("trip", [{"role": "user", "content": "I am vegetarian."}], user_id="alice")
    messages = c.context_messages("trip", query="Where should we eat?")
"""
from ._client import AsyncClient, Client, ContextdError
from .types import AppendResult, ContextResult, Episode, SearchHit, SearchHits, Summary

__all__ = ["Client", "AsyncClient", "ContextdError", "AppendResult", "ContextResult", "Episode", "SearchHit", "SearchHits", "Summary"]
