-- done() hook shared by every wrk scenario of the lab.
-- It writes one JSON document to the path in $WRK_JSON: wrk's summary (with the
-- error counters wrk only prints when they are non-zero), latency summary numbers,
-- and the latency histogram itself (µs value -> count), so that percentiles can be
-- computed from the whole distribution rather than from wrk's printed summary.
--
-- wrk's latency(i) walks the histogram from its minimum each call, so dumping k
-- distinct values costs O(k * range). Past MAX_DISTINCT values (only seen in runs
-- with multi-second latencies, which are failed runs anyway) we store a dense
-- quantile grid instead and say so in "hist_kind".

local MAX_DISTINCT = 40000
local GRID = 4000

local function num(x)
  return string.format("%.17g", x)
end

-- The measured window must end when the load ends, not when this hook has
-- finished: dumping a wide histogram takes wrk up to a second (O(k * range)),
-- during which the server idles and wrk keeps its core busy. So the first thing
-- done() does, when $WRK_END_SNAPSHOT names a file, is copy the counters the
-- suite reads around the window: /proc/uptime, the per-CPU lines of /proc/stat,
-- wrk's own /proc/self/stat, and /proc/PID/stat of each PID in
-- $WRK_SNAPSHOT_PIDS (the server's process tree). The suite parses the file.
local function read_first_line(path)
  local f = io.open(path, "r")
  if f == nil then return nil end
  local line = f:read("*l")
  f:close()
  return line
end

local function end_snapshot(path)
  local out = {}
  out[#out + 1] = "uptime " .. (read_first_line("/proc/uptime") or "")
  local f = io.open("/proc/stat", "r")
  if f ~= nil then
    for line in f:lines() do
      if line:match("^cpu%d+ ") then out[#out + 1] = line end
    end
    f:close()
  end
  out[#out + 1] = "self " .. (read_first_line("/proc/self/stat") or "")
  for pid in (os.getenv("WRK_SNAPSHOT_PIDS") or ""):gmatch("%d+") do
    local line = read_first_line("/proc/" .. pid .. "/stat")
    if line ~= nil then out[#out + 1] = "pid " .. pid .. " " .. line end
  end
  local tmp = path .. ".tmp"
  local g = assert(io.open(tmp, "w"))
  g:write(table.concat(out, "\n") .. "\n")
  g:close()
  assert(os.rename(tmp, path))
end

function done(summary, latency, requests)
  local snap = os.getenv("WRK_END_SNAPSHOT")
  if snap ~= nil and snap ~= "" then end_snapshot(snap) end
  local path = os.getenv("WRK_JSON")
  if path == nil or path == "" then
    io.stderr:write("report.lua: WRK_JSON is not set; no JSON written\n")
    return
  end
  local out = {}
  local e = summary.errors
  out[#out + 1] = string.format(
    '{"tool":"wrk","summary":{"duration_us":%s,"requests":%s,"bytes":%s,' ..
    '"errors":{"connect":%s,"read":%s,"write":%s,"status":%s,"timeout":%s}},',
    num(summary.duration), num(summary.requests), num(summary.bytes),
    num(e.connect), num(e.read), num(e.write), num(e.status), num(e.timeout))
  out[#out + 1] = string.format(
    '"latency":{"min":%s,"max":%s,"mean":%s,"stdev":%s,"p50":%s,"p90":%s,"p99":%s,"p999":%s},',
    num(latency.min), num(latency.max), num(latency.mean), num(latency.stdev),
    num(latency:percentile(50)), num(latency:percentile(90)),
    num(latency:percentile(99)), num(latency:percentile(99.9)))
  out[#out + 1] = string.format(
    '"requests_per_thread":{"mean":%s,"stdev":%s,"max":%s},',
    num(requests.mean), num(requests.stdev), num(requests.max))
  local pairs_out = {}
  local distinct = #latency
  if os.getenv("WRK_NO_HIST") == "1" then
    -- a sliced run (scripts/lib/sliced.sh): its latencies hold the seconds it was stopped, they
    -- are not kept, and walking so wide a histogram would take seconds of the tool's own time
    out[#out + 1] = '"hist_kind":"none","latency_hist":['
  elseif distinct <= MAX_DISTINCT then
    out[#out + 1] = '"hist_kind":"exact","latency_hist":['
    for i = 1, distinct do
      local v, c = latency(i)
      pairs_out[#pairs_out + 1] = "[" .. num(v) .. "," .. num(c) .. "]"
    end
  else
    out[#out + 1] = '"hist_kind":"quantiles","latency_hist":['
    for i = 1, GRID do
      local p = 100.0 * (i - 0.5) / GRID
      pairs_out[#pairs_out + 1] = "[" .. num(latency:percentile(p)) .. "," .. num(1) .. "]"
    end
  end
  out[#out + 1] = table.concat(pairs_out, ",")
  out[#out + 1] = "]}\n"
  local f = assert(io.open(path, "w"))
  f:write(table.concat(out))
  f:close()
end
