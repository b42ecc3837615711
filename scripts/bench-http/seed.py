"""Seeds CHATS chats of TURNS turns into a contextd (or, with --warm, asks one
context per chat). Standard library only."""
import json, random, sys, urllib.request

args = sys.argv[1:]
warm = args and args[0] == "--warm"
if warm:
    args = args[1:]
base, chats, turns = args[0], int(args[1]), int(args[2])
rng = random.Random(1)
WORDS = ("hotel lisbon train sintra booking invoice refund budget deploy friday postgres qdrant "
         "vegetarian dinner flight meeting report release schedule customer ticket migration "
         "contract pricing design review backlog cache latency profile summary episode").split()

def post(path, body):
    req = urllib.request.Request(base + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        r.read()

for c in range(chats):
    if warm:
        post("/v1/context", {"chat_id": f"chat-{c}", "budget_tokens": 2000, "strategy": "running_summary"})
        continue
    msgs = []
    for t in range(turns):
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 40)))
        msgs.append({"id": f"m{t}", "role": "user" if t % 2 == 0 else "assistant",
                     "content": f"turn {t}: {words}."})
    post(f"/v1/chats/chat-{c}/messages", {"user_id": f"user-{c % 20}", "messages": msgs})
