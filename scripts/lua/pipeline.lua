-- Pipelined scenario: each request() call returns $PIPELINE_DEPTH copies of the
-- request, sent in one write. wrk records one latency sample per batch (when the
-- last response of the batch arrives), so latency here is per batch, not per request.
dofile(os.getenv("WRK_LUA_DIR") .. "/report.lua")

local depth = tonumber(os.getenv("PIPELINE_DEPTH") or "")
if depth == nil or depth < 1 then error("pipeline.lua: PIPELINE_DEPTH must be >= 1") end
local batch

function init(args)
  local one = wrk.format(nil, wrk.path)
  batch = string.rep(one, depth)
end

function request()
  return batch
end
