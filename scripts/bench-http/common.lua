-- Shared by the wrk scripts: a random chat of the seeded ones per request.
local chats = tonumber(os.getenv("CHATS") or "200")
math.randomseed(os.time())
function chat() return "chat-" .. math.random(0, chats - 1) end
