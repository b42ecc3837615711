"""AsyncClient has every method of Client; both raise ContextdError for
every failure, no answer included; forgetting a profile item."""
import asyncio
import inspect
import socket
import time
import uuid

import pytest

from contextd import AsyncClient, Client, ContextdError

TURNS = [
    {"role": "user", "content": "I prefer window seats. I am planning a trip to Lisbon in May."},
    {"role": "assistant", "content": "Noted: window seats."},
    {"role": "user", "content": "Book the train to Sintra for May 5."},
]


def public(cls):
    return {n for n, f in inspect.getmembers(cls, inspect.isfunction) if not n.startswith("_")}


def test_async_client_has_every_method_of_client():
    # close/aclose are the one pair that differs in name: aclose is the
    # async convention (httpx, contextlib).
    sync, aio = public(Client) - {"close"}, public(AsyncClient) - {"aclose"}
    assert sync == aio, f"only in Client: {sorted(sync - aio)}; only in AsyncClient: {sorted(aio - sync)}"
    for name in sync:
        assert inspect.iscoroutinefunction(getattr(AsyncClient, name)), name
        s = inspect.signature(getattr(Client, name))
        a = inspect.signature(getattr(AsyncClient, name))
        assert list(s.parameters) == list(a.parameters), f"{name}: {s} vs {a}"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_refused_connection_is_contextd_error_unavailable():
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(ContextdError) as e:
        Client(url).context("x")
    assert (e.value.status, e.value.code) == (0, "unavailable")
    assert "unreachable" in e.value.message

    async def flow():
        async with AsyncClient(url) as c:
            with pytest.raises(ContextdError) as e:
                await c.messages("x")
            assert (e.value.status, e.value.code) == (0, "unavailable")
    asyncio.run(flow())


@pytest.fixture
def stalling_url():
    # A socket that accepts connections (the kernel completes the
    # handshake) and never answers.
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    yield f"http://127.0.0.1:{s.getsockname()[1]}"
    s.close()


def test_timeout_is_contextd_error_unavailable(stalling_url):
    with pytest.raises(ContextdError) as e:
        Client(stalling_url, timeout=0.2).summary("x")
    assert (e.value.status, e.value.code) == (0, "unavailable")
    assert "timed out" in e.value.message

    async def flow():
        async with AsyncClient(stalling_url, timeout=0.2) as c:
            with pytest.raises(ContextdError) as e:
                await c.summary("x")
            assert e.value.code == "unavailable"
    asyncio.run(flow())


def wait_for_preference(c, user, text):
    # The profile is merged in the background after a summary.
    for _ in range(200):
        prof = c.profile(user)["profile"]
        item = next((p for p in prof["user_preferences"] if text in p["text"]), None)
        if item:
            return item
        time.sleep(0.05)
    pytest.fail(f"no preference {text!r} in {prof}")


def test_forget_profile_item(summarising_server):
    c = Client(summarising_server)
    user, cid = "u-" + uuid.uuid4().hex[:6], "py-" + uuid.uuid4().hex[:8]
    c.append(cid, TURNS, user_id=user)
    c.refresh_summary(cid)
    item = wait_for_preference(c, user, "window seats")
    c.forget_profile_item(user, item["id"])
    prof = c.profile(user)["profile"]
    assert item["id"] not in [p["id"] for p in prof["user_preferences"]]
    with pytest.raises(ContextdError) as e:
        c.forget_profile_item(user, "no-such-item")
    assert (e.value.status, e.value.code) == (404, "not_found")


def test_async_messages_refresh_and_forget(summarising_server):
    async def flow():
        user, cid = "u-" + uuid.uuid4().hex[:6], "py-" + uuid.uuid4().hex[:8]
        async with AsyncClient(summarising_server) as c:
            await c.append(cid, TURNS, user_id=user)
            page = await c.messages(cid, limit=2)
            assert [m["content"] for m in page["messages"]] == [TURNS[0]["content"], TURNS[1]["content"]]
            rest = await c.messages(cid, after_seq=page["next_after_seq"])
            assert [m["seq"] for m in rest["messages"]] == [3]
            res = await c.refresh_summary(cid)
            assert res is None or res.get("summary"), res
            item = None
            for _ in range(200):
                prof = (await c.profile(user))["profile"]
                item = next((p for p in prof["user_preferences"] if "window seats" in p["text"]), None)
                if item:
                    break
                await asyncio.sleep(0.05)
            assert item, prof
            await c.forget_profile_item(user, item["id"])
            prof = (await c.profile(user))["profile"]
            assert item["id"] not in [p["id"] for p in prof["user_preferences"]]
    asyncio.run(flow())
