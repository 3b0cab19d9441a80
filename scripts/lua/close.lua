-- No keep-alive: every request carries "Connection: close", so each one pays for
-- a TCP connection set-up and tear-down.
dofile(os.getenv("WRK_LUA_DIR") .. "/report.lua")

wrk.headers["Connection"] = "close"
