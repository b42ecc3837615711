dofile("scripts/bench-http/common.lua")
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local queries = {"which hotel did we book in lisbon", "when is the train to sintra", "what was the refund budget",
  "did the postgres migration deploy on friday", "what is the pricing of the contract"}
request = function()
  return wrk.format(nil, "/v1/context", nil,
    '{"chat_id":"' .. chat() .. '","budget_tokens":2000,"strategy":"rag_augmented","query":"' .. queries[math.random(#queries)] .. '"}')
end
