-- POST scenario: a body of $BODY_SIZE bytes of 'x', as in the seed write-up.
dofile(os.getenv("WRK_LUA_DIR") .. "/report.lua")

local size = tonumber(os.getenv("BODY_SIZE") or "")
if size == nil then error("post_body.lua: BODY_SIZE must be a number") end
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/octet-stream"
wrk.body = string.rep("x", size)
