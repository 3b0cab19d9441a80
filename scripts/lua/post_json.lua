-- The shoot-out's POST: a small JSON document to /something (seed 003's
-- "request with body parsing and JSON response"). The body is fixed so every
-- server parses the same bytes; the verify gate checks the echoed document.
dofile(os.getenv("WRK_LUA_DIR") .. "/report.lua")

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"name":"benchmark","value":42,"tags":["a","b"]}'
