# scripts/lib/measure.sh: one measured point (sourced by lib.sh): warm-up, the measured window
# with everything read around it, and the load tools' invocations (wrk, h2load).

# point_done DIR REP: the run.json of a point is written last, so it marks it finished.
point_done() { [[ -f $1/r$2.run.json ]]; }

# measure_point DIR REP TOOL: warm-up, then one measured run of TOOL (wrk or
# h2load) with, read around it: the server tree's CPU ticks and its RSS (after
# warm-up; the window's own peak, the high-water mark having been reset just
# before), the pinned cores' /proc/stat counters, and the tool's own CPU time;
# then the tool's optional after-step (outside the window). Everything the tools
# wrote is kept; files land under their final names only when the point is
# complete. The functions <tool>_warmup, <tool>_measure and <tool>_after take DIR,
# REP and the part-file prefix; the scenario fields come from the SC_* variables.
measure_point() {
    local dir=$1 rep=$2 tool=$3 part="$1/.r$2" pids t0 t1 w0 w1 rc=0 start alive f
    local rss_warm peak_method stat0 stat1 hwm up0 tool_wall window_end client_ticks wall
    "${tool}_warmup" "$dir" "$rep"
    [[ $TLS == true ]] && tls_probe "$part"
    mapfile -t pids < <(tree_pids "$SERVER_PID")
    rss_warm=$(mem_kb VmRSS "${pids[@]}")
    peak_method=$(reset_peak_rss "${pids[@]}")
    [[ $peak_method == sampled ]] && rss_sampler_start "$part.rss.samples" "${pids[@]}"
    start=$(utc_now)
    stat0=$(proc_stat_json)
    t0=$(cpu_ticks "${pids[@]}")
    read -r up0 _ </proc/uptime
    w0=$(date +%s.%N)
    SNAPSHOT_PIDS="${pids[*]}" CLIENT_TIME_FILE="$part.client.time.txt" \
        "${tool}_measure" "$dir" "$rep" "$part" || rc=$?
    w1=$(date +%s.%N)
    tool_wall=$(awk -v a="$w0" -v b="$w1" 'BEGIN { printf "%.6f", b - a }')
    mapfile -t pids < <(tree_pids "$SERVER_PID")
    if [[ -s $part.end.snapshot ]]; then
        # The window ends where the load ended (the tool's snapshot), not where
        # the tool exited after its own post-processing.
        window_end=load_end
        t1=$(snapshot_ticks "$part.end.snapshot" pid)
        stat1=$(proc_stat_json "$part.end.snapshot")
        client_ticks=$(snapshot_ticks "$part.end.snapshot" self)
        wall=$(awk -v a="$up0" -v b="$(snapshot_uptime "$part.end.snapshot")" 'BEGIN { printf "%.6f", b - a }')
    else
        window_end=tool_exit
        t1=$(cpu_ticks "${pids[@]}")
        stat1=$(proc_stat_json)
        client_ticks=null
        wall=$tool_wall
    fi
    rss_sampler_stop
    if [[ $peak_method == sampled ]]; then
        hwm=$(sort -n "$part.rss.samples" | tail -n 1)
    else
        hwm=$(mem_kb VmHWM "${pids[@]}")
    fi
    server_alive && alive=true || alive=false
    LAT_EXIT_CODE=null
    if declare -F "${tool}_after" >/dev/null; then "${tool}_after" "$dir" "$rep" "$part"; fi
    jq -n --argjson pids "$(printf '%s\n' "${pids[@]}" | jq -s .)" --argjson clk "$(getconf CLK_TCK)" \
        --argjson t0 "$t0" --argjson t1 "$t1" --argjson wall "$wall" \
        --argjson tool_wall "$tool_wall" --arg window_end "$window_end" \
        --argjson rss "$(mem_kb VmRSS "${pids[@]}")" --argjson hwm "${hwm:-null}" \
        --argjson rss_start "${SERVER_RSS_START:-null}" --argjson rss_warm "$rss_warm" \
        --arg method "$peak_method" --argjson alive "$alive" \
        '{pids: $pids, clk_tck: $clk, cpu_ticks_before: $t0, cpu_ticks_after: $t1, wall_s: $wall,
          tool_wall_s: $tool_wall, window_end: $window_end,
          rss_start_kb: $rss_start, rss_warm_kb: $rss_warm, rss_peak_kb: $hwm,
          rss_peak_method: $method, rss_kb: $rss, server_alive: $alive}' >"$part.server.json"
    jq -n --argjson clk "$(getconf CLK_TCK)" --arg scpu "$SERVER_CPUS" --arg ccpu "$CLIENT_CPUS" \
        --argjson before "$stat0" --argjson after "$stat1" --argjson cticks "$client_ticks" \
        --arg window_end "$window_end" \
        '{clk_tck: $clk, server_cpus: $scpu, client_cpus: $ccpu, window_end: $window_end,
          client_cpu_ticks: $cticks,
          fields: ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice"],
          proc_stat_before: $before, proc_stat_after: $after}' >"$part.cpu.json"
    for f in "$part".*; do mv "$f" "$dir/r$rep.${f##*/.r$rep.}"; done
    jq -n --argjson rep "$rep" --arg start "$start" --arg finish "$(utc_now)" --argjson rc "$rc" \
        --arg cmd "$LAST_TOOL_CMD" --argjson alive "$alive" --argjson latrc "$LAT_EXIT_CODE" \
        --argjson pos "${POINT_POSITION:-null}" \
        '{rep: $rep, start_utc: $start, end_utc: $finish, exit_code: $rc, cmd: $cmd, server_alive: $alive,
          position: $pos}
         + (if $latrc == null then {} else {lat_exit_code: $latrc} end)' \
        >"$dir/.run.json.tmp"
    mv "$dir/.run.json.tmp" "$dir/r$rep.run.json"
}

# wrk: one thread per client CPU; the Lua script sets the method/body/pipelining
# and its done() hook writes the JSON with the whole latency histogram.
wrk_args() {
    WRK_ARGS=(-t "$CLIENT_THREADS" -c "$SC_CONNS" --timeout "${WRK_TIMEOUT:-2s}" -s "$LUA_DIR/$SC_LUA" "$SC_URL")
}

wrk_env() {
    echo "WRK_LUA_DIR=$LUA_DIR BODY_SIZE=$SC_SIZE PIPELINE_DEPTH=$SC_DEPTH"
}

wrk_warmup() {
    (( WARMUP > 0 )) || return 0
    wrk_args
    on_client env $(wrk_env) WRK_JSON=/dev/null wrk -d "${WARMUP}s" "${WRK_ARGS[@]}" >/dev/null 2>&1 || true
}

wrk_measure() {
    local part=$3
    wrk_args
    LAST_TOOL_CMD="$(wrk_env) wrk -d ${DURATION}s ${WRK_ARGS[*]}"
    on_client env $(wrk_env) WRK_JSON="$part.wrk.json" WRK_END_SNAPSHOT="$part.end.snapshot" \
        WRK_SNAPSHOT_PIDS="$SNAPSHOT_PIDS" wrk -d "${DURATION}s" "${WRK_ARGS[@]}" \
        >"$part.stdout.txt" 2>"$part.stderr.txt"
}

# h2load: one thread per client CPU, -m streams per connection, -D seconds.
# The warm-up is a separate unrecorded run, as for wrk, not h2load's own
# --warm-up-time: that would put the warm-up inside the window over which the
# server's CPU time is read, while h2load counts only the measured requests.
h2load_args() {
    H2_ARGS=(-t "$CLIENT_THREADS" -c "$SC_CONNS" -m "$SC_DEPTH" -D "$1")
    [[ $SC_KIND == echo_post ]] && H2_ARGS+=(-d "$(payload_file "$SC_SIZE")")
    H2_ARGS+=("$SC_URL")
}

lat_duration() { echo $(( DURATION >= 2 ? DURATION / 2 : 1 )); }

h2load_warmup() {
    (( WARMUP > 0 )) || return 0
    h2load_args "$WARMUP"
    on_client h2load "${H2_ARGS[@]}" >/dev/null 2>&1 || true
}

# The throughput run: no per-request log, because writing it slows h2load
# measurably (about 15 % at 400k req/s here).
h2load_measure() {
    local part=$3
    h2load_args "$DURATION"
    LAST_TOOL_CMD="h2load ${H2_ARGS[*]}"
    on_client h2load "${H2_ARGS[@]}" >"$part.stdout.txt" 2>"$part.stderr.txt"
}

# The latency run: the same load with --log-file (one line per request), reduced
# at once to a compact histogram by httplab.parse.h2log; the log itself is not kept
# (tens of MB per run). Half the measured duration, rounded down (at least 1 s),
# gives ≥ 10^4 samples at these rates and keeps the suite's time in bounds.
h2load_after() {
    local part=$3 log
    log=$(mktemp "${LAB_LOG_TMP:-/dev/shm}/h2load.XXXXXX.log" 2>/dev/null || mktemp)
    h2load_args "$(lat_duration)"
    LAT_EXIT_CODE=0
    on_client h2load --log-file="$log" "${H2_ARGS[@]}" >"$part.lat.stdout.txt" 2>"$part.lat.stderr.txt" ||
        LAT_EXIT_CODE=$?
    on_client "$(lab_python)" -m httplab.parse.h2log "$log" "$part.lat.h2log.json" 2>>"$part.lat.stderr.txt" || true
    rm -f "$log"
}
