import asyncio
import http.server
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid

import pytest

from contextd import AsyncClient, Client, ContextdError

TURNS = [
    {"role": "user", "content": "I am planning a trip to Lisbon in May. I prefer boutique hotels and I am vegetarian."},
    {"role": "assistant", "content": "Booked: Casa Amora, May 3-7. Dinner at Ao 26 Vegan Food Project on May 4.", "name": "Travel Agent"},
    {"role": "user", "content": "Also add a day trip to Sintra on May 5."},
    {"role": "assistant", "content": "Done: train to Sintra at 09:10 on May 5, Pena Palace tickets for 11:00."},
]


def chat_id():
    return "py-" + uuid.uuid4().hex[:8]


def not_there(e: ContextdError) -> bool:
    # No such route in this build (an unknown chat or user is "not_found"
    # with its own message).
    return e.status == 404 and (e.code == "route_not_found" or e.message == "Not Found")


def test_append_is_idempotent_and_generates_ids(server):
    c, cid = Client(server), chat_id()
    r = c.append(cid, TURNS, user_id="alice")
    assert r.appended == 4 and r.duplicates == 0 and r.last_seq == 4
    ids = [m["id"] for m in r.messages]
    assert len(set(ids)) == 4
    again = c.append(cid, [dict(t, id=i) for t, i in zip(TURNS, ids)])
    assert again.appended == 0 and again.duplicates == 4
    page = c.messages(cid)
    assert [m["seq"] for m in page["messages"]] == [1, 2, 3, 4]


def test_context_result_include_and_messages(server):
    c, cid = Client(server), chat_id()
    c.append(cid, TURNS, user_id="alice")
    res = c.context(cid, query="Which hotel did we book?", budget_tokens=1000, strategy="running_summary")
    assert "Casa Amora" in res.context and res.usage["total_tokens"] <= 1000
    assert res.sections["recent"] and res.degraded == []
    only = c.context(cid, include=["messages"])
    assert only.context is None and only.sections is None and only.messages
    msgs = c.context_messages(cid, "Where do we eat?")
    assert all(set(m) >= {"role", "content"} for m in msgs)
    assert any(m.get("name") == "Travel_Agent" for m in msgs)


def test_search_summary_and_delete(server):
    c, cid = Client(server), chat_id()
    c.append(cid, TURNS, user_id="bob-" + cid)
    hits = []
    for _ in range(100):  # the indexer works in the background
        hits = c.search("Sintra train", chat_id=cid, k=3)
        if hits:
            break
        time.sleep(0.05)
    assert hits and hits[0].kind == "turn" and "Sintra" in hits[0].content
    assert hits.degraded == []  # the search waited for the append's turns
    refreshed = c.refresh_summary(cid)
    assert refreshed is not None
    s = c.summary(cid)
    assert isinstance(s.chain, list)
    c.delete_chat(cid)
    with pytest.raises(ContextdError) as e:
        c.summary(cid)
    assert e.value.status == 404
    c.append(cid + "x", TURNS, user_id="carol-" + cid)
    c.delete_user("carol-" + cid)
    with pytest.raises(ContextdError):
        c.context(cid + "x")


def test_episodes_and_profile(server):
    c, cid = Client(server), chat_id()
    c.append(cid, TURNS, user_id="dave-" + cid)
    try:
        eps = c.episodes(cid)
    except ContextdError as e:
        if not_there(e):
            pytest.skip("this contextd has no episodes endpoint")
        raise
    assert isinstance(eps, list)
    try:
        p = c.profile("dave-" + cid)
    except ContextdError as e:
        if not_there(e):
            pytest.skip("this contextd has no profile endpoint")
        raise
    assert p["user_id"] == "dave-" + cid


@pytest.mark.parametrize("call,code,field", [
    (lambda c: c.context("nope-" + uuid.uuid4().hex), "not_found", None),
    (lambda c: c.context("x", budget_tokens=0), "invalid_value", "budget_tokens"),
    (lambda c: c.context("x", include=["usage"]), "invalid_value", "include"),
    (lambda c: c.append("x", [{"role": "robot", "content": "hi"}]), "invalid_role", "messages[0].role"),
    (lambda c: c.search("q", kinds=["summary"]), "invalid_value", "kinds"),
])
def test_api_errors_carry_code_and_field(server, call, code, field):
    with pytest.raises(ContextdError) as e:
        call(Client(server))
    assert e.value.code == code and e.value.message
    if field:
        assert e.value.field == field


def test_api_key(keyed_server):
    with pytest.raises(ContextdError) as e:
        Client(keyed_server).context("x")
    assert e.value.status == 401 and e.value.code == "unauthorized"
    c = Client(keyed_server, api_key="secret-key-for-tests-1")
    assert c.append(chat_id(), TURNS[:1]).appended == 1


def test_oversized_body_with_urllib_reads_the_413(server):
    body = json.dumps({"chat_id": "x", "query": "x" * (12 << 20)}).encode()
    req = urllib.request.Request(server + "/v1/context", body, {"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=60)
    assert e.value.code == 413
    assert json.loads(e.value.read())["error"]["code"] == "body_too_large"


def test_retries_on_503_and_429_honouring_retry_after():
    calls = []

    class H(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            calls.append(time.monotonic())
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if len(calls) <= 2:
                self.send_response(503 if len(calls) == 1 else 429)
                self.send_header("Retry-After", "0.2")
                self.send_header("Content-Type", "application/json")
                body = b'{"error":{"code":"unavailable","message":"down"}}'
            else:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                body = b'{"hits":[],"degraded":["index_behind"]}'
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    srv = http.server.HTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        hits = Client(f"http://127.0.0.1:{srv.server_port}").search("q")
        assert hits == [] and hits.degraded == ["index_behind"]
        assert len(calls) == 3 and calls[1] - calls[0] >= 0.19 and calls[2] - calls[1] >= 0.19
        calls.clear()
        with pytest.raises(ContextdError) as e:
            Client(f"http://127.0.0.1:{srv.server_port}", retries=0).search("q")
        assert e.value.status == 503
    finally:
        srv.shutdown()


def test_async_client(server):
    async def flow():
        cid = chat_id()
        async with AsyncClient(server) as c:
            r = await c.append(cid, TURNS)
            assert r.appended == 4
            res = await c.context(cid, query="hotel", budget_tokens=500)
            assert res.usage["total_tokens"] <= 500 and "Casa Amora" in res.context
            msgs = await c.context_messages(cid, "hotel")
            assert msgs
            with pytest.raises(ContextdError):
                await c.context(cid, budget_tokens=-1)
            await c.delete_chat(cid)
    asyncio.run(flow())


@pytest.mark.parametrize("path", ["clients/python", "clients/python/src"])
def test_importable_from_both_paths(path):
    repo = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
    code = f"import sys; sys.path.insert(0, {os.path.join(repo, path)!r}); import contextd; print(contextd.Client.__name__, contextd.AsyncClient.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "Client AsyncClient"


def test_readme_example_runs_as_written(server):
    readme = open(os.path.join(os.path.dirname(__file__), "..", "README.md")).read()
    code = re.search(r"```python\n(.*?)```", readme, re.S).group(1)
    env = dict(os.environ, CONTEXTD_URL=server, PYTHONPATH=os.path.join(os.path.dirname(__file__), "..", "src"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert "Casa Amora" in out.stdout


class _Scripted(http.server.BaseHTTPRequestHandler):
    """Answers every request with the class's (status, headers, body), or
    drops the connection after reading the request when body is None."""
    answer = (200, {}, b"{}")
    seen = []

    def _serve(self):
        n = int(self.headers.get("Content-Length", 0) or 0)
        type(self).seen.append(json.loads(self.rfile.read(n) or b"null"))
        status, headers, body = type(self).answer
        if body is None:
            self.connection.shutdown(2)  # the answer is lost after the request arrived
            return
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_DELETE = _serve

    def log_message(self, *a):
        pass


@pytest.fixture
def scripted():
    _Scripted.seen = []
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Scripted)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.shutdown()


def test_retried_append_after_a_lost_answer_sends_the_same_ids(scripted):
    _Scripted.answer = (200, {}, None)
    c = Client(f"http://127.0.0.1:{scripted.server_port}", retries=0)
    msgs = [{"role": "user", "content": "book the hotel please"}]
    for _ in range(2):  # the caller's retry of the same messages
        with pytest.raises(ContextdError) as e:
            c.append("r", msgs)
        assert e.value.code == "unavailable"
    ids = [body["messages"][0]["id"] for body in _Scripted.seen]
    assert len(ids) == 2 and ids[0] == ids[1], ids
    assert msgs[0]["id"] == ids[0]


@pytest.mark.parametrize("answer, code", [
    ((200, {"Content-Type": "text/html"}, b"<html>please log in</html>"), "invalid_response"),
    ((307, {"Location": "https://elsewhere/"}, b""), "http_error"),
    ((204, {}, b""), "invalid_response"),
    ((500, {"Content-Type": "application/json"}, b"[1]"), "http_error"),
    ((500, {"Content-Type": "application/json"}, b'{"error":"boom"}'), "http_error"),
    ((503, {"Retry-After": "nan"}, b"{}"), "http_error"),
])
def test_every_failure_is_a_contextd_error(scripted, answer, code):
    _Scripted.answer = answer
    c = Client(f"http://127.0.0.1:{scripted.server_port}", retries=1, backoff=0.01)
    with pytest.raises(ContextdError) as e:
        c.summary("x")
    assert e.value.code == code, e.value


def test_context_sends_wait_for_summary_and_rag_scope(scripted):
    _Scripted.answer = (200, {"Content-Type": "application/json"}, b'{"chat_id":"x","context":"","degraded":[],"usage":{}}')
    c = Client(f"http://127.0.0.1:{scripted.server_port}", api_key="k-0123456789abcdef\n")
    c.context("x", query="q", wait_for_summary=True, rag_scope="user")
    assert _Scripted.seen[-1]["wait_for_summary"] is True and _Scripted.seen[-1]["rag_scope"] == "user"


def test_summary_says_when_it_is_a_preview(scripted):
    _Scripted.answer = (200, {"Content-Type": "application/json"},
                        b'{"summary":{"narrative":"n","covered_to_seq":110},"chain":[],"episodes":[],"preview":true}')
    c = Client(f"http://127.0.0.1:{scripted.server_port}")
    s = c.summary("x")
    assert s.preview is True and s.summary["covered_to_seq"] == 110 and s.chain == []
