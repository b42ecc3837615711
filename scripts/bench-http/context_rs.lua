dofile("scripts/bench-http/common.lua")
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
request = function()
  return wrk.format(nil, "/v1/context", nil,
    '{"chat_id":"' .. chat() .. '","budget_tokens":2000,"strategy":"running_summary"}')
end
