dofile("scripts/bench-http/common.lua")
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
request = function()
  return wrk.format(nil, "/v1/chats/" .. chat() .. "/messages", nil,
    '{"messages":[{"role":"user","content":"one more turn about the lisbon hotel and the friday deploy"}]}')
end
