"""The newer endpoints: DELETE one message, GET facts, GET export, search
min_score and the fact kind."""
import asyncio
import time
import uuid

import pytest

from contextd import AsyncClient, Client, ContextdError

TURNS = [
    {"id": "n1", "role": "user", "content": "I am planning a trip to Lisbon in May. I prefer window seats."},
    {"id": "n2", "role": "assistant", "content": "Booked: Casa Amora, May 3-7."},
    {"id": "n3", "role": "user", "content": "My passport number is X1234567."},
    {"id": "n4", "role": "assistant", "content": "Noted."},
]


def cid():
    return "py-" + uuid.uuid4().hex[:8]


def test_delete_message_leaves_a_tombstone(summarising_server):
    c, chat = Client(summarising_server), cid()
    c.append(chat, TURNS, user_id="gina")
    c.delete_message(chat, "n3")
    tomb = next(m for m in c.messages(chat)["messages"] if m["id"] == "n3")
    assert tomb.get("deleted") is True and not tomb.get("content")
    # A tombstone keeps its id, seq, role and time, and shows nothing of the rest.
    assert set(tomb) == {"id", "seq", "role", "created_at", "deleted"}, tomb
    assert "X1234567" not in c.context(chat, query="passport").context
    with pytest.raises(ContextdError) as e:
        c.delete_message(chat, "no-such-id")
    assert (e.value.status, e.value.code) == (404, "not_found")


def test_facts(summarising_server):
    c, chat = Client(summarising_server), cid()
    c.append(chat, TURNS, user_id="hank")
    c.refresh_summary(chat)
    for _ in range(100):
        page = c.facts(chat, limit=50)
        if page["facts"]:
            break
        time.sleep(0.05)
    assert page["facts"], "facts are drawn from the chat"
    for f in page["facts"]:
        assert f["chat_id"] == chat and f["text"] and f["seqs"]
        assert f["superseded_by"] is None, "a current fact's superseded_by is null"
    assert len(c.facts(chat, include_superseded=True)["facts"]) >= len(page["facts"])
    with pytest.raises(ContextdError) as e:
        c.facts("py-unknown-chat")
    assert e.value.status == 404
    hits = c.search("Lisbon window seats", chat_id=chat, kinds=["fact"])
    assert hits and all(h.kind == "fact" for h in hits)
    # A fact hit names the fact and its sources, as /v1/facts does.
    ids = {f["id"]: f for f in c.facts(chat, include_superseded=True)["facts"]}
    for h in hits:
        assert h.fact_id in ids and h.seqs == ids[h.fact_id]["seqs"] and h.valid_at, h


def test_search_min_score(summarising_server):
    c, chat = Client(summarising_server), cid()
    c.append(chat, TURNS)
    every = c.search("Casa Amora hotel", chat_id=chat, kinds=["turn"])
    assert every
    # min_score bounds the dense similarity (the score is the fused rank
    # score); lexical matches stay, so a strict search finds no more.
    strict = c.search("Casa Amora hotel", chat_id=chat, kinds=["turn"], min_score=0.99)
    assert len(strict) <= len(every)
    assert c.search("xylophone quantum zebra", chat_id=chat, kinds=["turn"], min_score=0.99) == []


def test_export_chat_and_user(summarising_server):
    c, a, b = Client(summarising_server), cid(), cid()
    user = "u-" + uuid.uuid4().hex[:6]
    c.append(a, TURNS, user_id=user)
    c.append(b, TURNS[:2], user_id=user)
    chat = c.export_chat(a)
    assert chat[0]["type"] == "chat"
    assert len([r for r in chat if r["type"] == "message"]) == 4
    assert all(r["tenant"] == "default" for r in chat)
    dump = c.export_user(user)
    assert len([r for r in dump if r["type"] == "message"]) == 6

    async def flow():
        async with AsyncClient(summarising_server) as ac:
            assert await ac.export_chat(a) == c.export_chat(a)
            page = await ac.facts(a)
            assert "facts" in page
            await ac.delete_message(a, "n1")
            assert next(m for m in (await ac.messages(a))["messages"] if m["id"] == "n1").get("deleted") is True
    asyncio.run(flow())
