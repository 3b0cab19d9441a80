# scripts/lib/measure.sh: one measured point (sourced by lib.sh): warm-up, the measured window
# with everything read around it, and the load tools' invocations (wrk, h2load).

# point_done DIR REP: the run.json of a point is written last, so it marks it finished.
point_done() { [[ -f $1/r$2.run.json ]]; }

# ---------------------------------------------------------------- the load tools' deadline

# Every tool run has a deadline: its own duration plus LAB_TOOL_MARGIN seconds (connection
# set-up, wrk's histogram dump: up to ~1 s here). Past it coreutils' timeout sends SIGTERM, and
# SIGKILL TOOL_KILL_AFTER seconds later for a tool that ignores SIGTERM.
TOOL_MARGIN=${LAB_TOOL_MARGIN:-10}
TOOL_KILL_AFTER=2

# tool_run LIMIT OUT ERR CMD...: CMD on the client CPUs (on_client), its stdout and stderr to the
# files OUT and ERR (ERR "-": with stdout), ended at LIMIT seconds. It runs in the background and is waited for, because
# bash runs a trap (Ctrl-C, SIGTERM) only once a foreground command has ended, while `wait`
# returns at once; TOOL_PID lets the EXIT trap end it (tool_stop). The redirections are the
# background command's own: a trap runs inside those of the function it interrupts, and its
# messages must not land in a tool's output file. timeout runs CMD in a process group of its
# own, so a Ctrl-C reaches it only through tool_stop, and a past-deadline kill reaches everything
# CMD started. Returns CMD's status and sets TOOL_END: ok, "exit N", "signal N" (killed by it) or
# deadline.
tool_run() {
    local limit=$1 out=$2 err=$3 rc=0 t0=${EPOCHREALTIME/./}
    shift 3
    TOOL_FILES=$out
    [[ $err == - || $err == "$out" ]] || TOOL_FILES+=", $err"
    if [[ $err == - ]]; then on_client timeout -k "$TOOL_KILL_AFTER" "$limit" "$@" >"$out" 2>&1 &
    else on_client timeout -k "$TOOL_KILL_AFTER" "$limit" "$@" >"$out" 2>"$err" &
    fi
    TOOL_PID=$!
    wait "$TOOL_PID" || rc=$?
    TOOL_PID=
    if (( rc == 0 )); then TOOL_END=ok
    elif (( rc == 124 || ${EPOCHREALTIME/./} - t0 >= limit * 1000000 )); then TOOL_END=deadline
    elif (( rc > 128 )); then TOOL_END="signal $(( rc - 128 ))"
    else TOOL_END="exit $rc"; fi
    return "$rc"
}

# tool_stop: ends a tool run that is under way (the EXIT trap: Ctrl-C, an error).
tool_stop() {
    local pid
    [[ -n ${TOOL_PID:-} ]] || return 0
    for pid in $TOOL_PID; do end_tree "$TOOL_KILL_AFTER" "$pid"; done   # (several with fanout_run)
    for pid in $TOOL_PID; do wait "$pid" 2>/dev/null || true; done
    TOOL_PID=
}

# note_tool_fault WHAT RUN_S: after tool_run, when the tool did not end by itself (killed by a
# signal, or stopped at its deadline), POINT_FAULT says so. Such a run measured nothing: the point
# is not recorded, and the suite stops. A tool that exits with an error ended by itself: its run
# is recorded and failed by the status rule (wrk that cannot connect, say). POINT_FAULT_KIND is
# the kind of fault (deadline, signal, lost), for the suite to decide on without reading the text.
note_tool_fault() {
    local host status
    case $TOOL_END in
        deadline|signal*|lost*) POINT_FAULT_KIND=${TOOL_END%% *} ;;&
        deadline) POINT_FAULT="$1 ran past its deadline ($( (( $2 )) && echo "$2 s run + $TOOL_MARGIN s margin" || echo "$TOOL_MARGIN s")) and was stopped" ;;
        signal*)  POINT_FAULT="$1 was killed by signal ${TOOL_END#signal } ($(kill -l "${TOOL_END#signal }"))" ;;
        lost*)    read -r _ host status <<<"$TOOL_END"
                  POINT_FAULT="$1 on client host $host left no record (its launcher exited with status $status; see its stderr: $TOOL_FILES)" ;;
    esac
    [[ -z $POINT_FAULT || $TOOL_FILES == /dev/null* ]] || POINT_FAULT_FILES=$TOOL_FILES
    TOOL_END=   # read once: a tool_run that never ran (its output file could not be made) is no fault
}

# note_unconnected WHAT STDERR: the lab's h2load or wrk had connections still connecting (TCP or TLS)
# when WHAT's connect wait ran out (or, h2load, its window ended), and its stderr says how many (an
# h2load client late for the wait and never connected is named twice: the count is of such lines'
# clients). On a point's
# first try that is a fault of kind "unconnected", which the suite answers as it answers a tool
# past its deadline while its server still answers: the point is not recorded and is measured
# again, once (a handshake that outlasted the window is more often a loaded machine's moment than
# the server's doing: seen in the test command's smoke runs beside their lanes, 2 of Go's 100 TLS
# clients). On the retry the run is
# recorded, and the loader fails the point (it did not load the server with its connections). A
# sliced block measures its points together and cannot redo one: there it is recorded at once.
note_unconnected() {
    [[ -z $POINT_FAULT && -z ${POINT_RETRIED:-} && ${BLOCKS:-server} != sliced ]] || return 0
    local n
    n=$(awk '/^(h2load|wrk): [0-9]+ (client|connection)\(s\) had not finished connecting/ { s += $2 } END { print s + 0 }' "$2" 2>/dev/null || echo 0)
    (( n > 0 )) || return 0
    POINT_FAULT_KIND=unconnected
    POINT_FAULT="$1 had client(s) still connecting when its connect wait or window ended ($n on its stderr)"
    POINT_FAULT_FILES=$2
}

# measure_point DIR REP TOOL: warm-up, then one measured run of TOOL (wrk or
# h2load) with, read around it: the server tree's CPU ticks and its RSS (after
# warm-up; the window's own peak, the high-water mark having been reset just
# before), the pinned cores' /proc/stat counters, and the tool's own CPU time;
# then the tool's optional after-step (outside the window). Everything the tools
# wrote is kept; files land under their final names only when the point is
# complete. The functions <tool>_warmup, <tool>_measure and <tool>_after take DIR,
# REP and the part-file prefix; the scenario fields come from the SC_* variables.
#
# The window's readings are window_open's and window_close's (below), which a sliced block calls
# for several servers at once. When a tool is killed or runs past its deadline
# (note_tool_fault), nothing is recorded: POINT_FAULT says why, and its part files stay for a
# look until the point is redone (POINT_FAULT_FILES: the output of the tool run that failed). Called as a plain command, never in an `if` or `||` (which
# would turn set -e off inside it and let a failed write pass).
measure_point() {
    local dir=$1 rep=$2 tool=$3 part="$1/.r$2" rc=0
    POINT_FAULT= POINT_FAULT_KIND= POINT_FAULT_FILES= POINT_ALIVE=true SERVER_TROUBLE= SERVER_TROUBLE_DETAIL=
    point_done "$dir" "$rep" && die "measure_point: $dir rep $rep is finished; it is never measured again"
    # What an earlier, interrupted attempt at this point left (it has no run.json, so it was
    # never finished): a stale file, an end snapshot say, must not pass for this attempt's.
    rm -f "$part".* "$dir/r$rep".*
    "${tool}_warmup" "$dir" "$rep"
    [[ -z $POINT_FAULT ]] || return 0
    # (not over HTTP/3: QUIC runs TLS on UDP, where s_client cannot go; h3load reports its own
    # handshakes' ALPN and version)
    [[ $TLS == true && $SC_PROTOCOL != h3 ]] && tls_probe "$part"
    [[ -z $POINT_FAULT ]] || return 0
    window_open point "$part" true
    SNAPSHOT_PIDS="${W_PIDS[point]}" CLIENT_TIME_FILE="$part.client.time.txt" \
        "${tool}_measure" "$dir" "$rep" "$part" || rc=$?
    W_W1[point]=$(date +%s.%N)
    note_tool_fault "$tool" "$DURATION"
    [[ -z $POINT_FAULT ]] || { rss_sampler_stop; return 0; }
    window_close point "$dir" "$rep" "$tool" "$rc"
}

# The measured window's readings, kept per KEY (measure_point's is "point"; a sliced block keeps one
# per server): the server tree's pids, its RSS after the warm-up and how its peak is read, the
# start's time, the pinned cores' /proc/stat, the tree's CPU ticks, /proc/uptime and the wall clock.
declare -gA W_PIDS=() W_RSS_WARM=() W_PEAK=() W_START=() W_STAT0=() W_T0=() W_UP0=() W_W0=() W_W1=()

# window_open KEY PART SAMPLER_OK: the window's start for the server SERVER_PID, kept under KEY.
# Where the kernel cannot reset the peak RSS, a sampler reads it instead (one at a time: with
# SAMPLER_OK false that is an error).
window_open() {
    local key=$1 part=$2 pids
    mapfile -t pids < <(tree_pids "$SERVER_PID")
    W_PIDS[$key]="${pids[*]}"
    W_RSS_WARM[$key]=$(mem_kb VmRSS "${pids[@]}")
    W_PEAK[$key]=$(reset_peak_rss "${pids[@]}")
    if [[ ${W_PEAK[$key]} == sampled ]]; then
        [[ $3 == true ]] || die "the peak RSS of several servers at once needs the kernel's clear_refs (the sampled fallback reads one server)"
        rss_sampler_start "$part.rss.samples" "${pids[@]}"
    fi
    W_START[$key]=$(utc_now)
    W_STAT0[$key]=$(proc_stat_json)
    W_T0[$key]=$(cpu_ticks "${pids[@]}")
    read -r W_UP0[$key] _ </proc/uptime
    W_W0[$key]=$(date +%s.%N)
}

# window_close KEY DIR REP TOOL RC: the window's end for the server SERVER_PID (its readings under
# KEY, the tool's end time in W_W1[KEY], its exit status RC), the server asked whether it still
# answers, the tool's after-step; then the point's files land under their final names and its
# run.json, written last, marks it finished. After the window the server must still answer
# (server_check); if not, the point is recorded with server_alive false (a failed run: it measured a
# server dying or hanging) and POINT_ALIVE=false tells the suite to stop.
window_close() {
    local key=$1 dir=$2 rep=$3 tool=$4 rc=$5 part="$2/.r$3" pids t1 stat1 client_ticks wall window_end
    local tool_wall hwm alive f rss finish
    local t0=${W_T0[$key]} stat0=${W_STAT0[$key]} up0=${W_UP0[$key]} window_start=tool_start
    local client_ticks0=0 clock_start_s=null
    tool_wall=$(awk -v a="${W_W0[$key]}" -v b="${W_W1[$key]}" 'BEGIN { printf "%.6f", b - a }')
    mapfile -t pids < <(tree_pids "$SERVER_PID")
    if [[ -s $part.start.snapshot ]]; then
        # The window starts where the tool's clock started (its snapshot: the lab's wrk and h2load
        # write one with --lab-connect-wait once every connection is up), not before its connects:
        # the CPU the server and the tool spent connecting and handshaking is not a request's cost,
        # and a sliced point leaves it out as well (the slicer's connect_*_cpu_s). clock_start_s
        # keeps how long that took.
        window_start=clock_start
        t0=$(snapshot_ticks "$part.start.snapshot" pid)
        stat0=$(proc_stat_json "$part.start.snapshot")
        up0=$(snapshot_uptime "$part.start.snapshot")
        client_ticks0=$(snapshot_ticks "$part.start.snapshot" self)
        clock_start_s=$(awk -v a="${W_UP0[$key]}" -v b="$up0" 'BEGIN { printf "%.6f", b - a }')
    fi
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
        wall=$(awk -v w="$tool_wall" -v c="$clock_start_s" 'BEGIN { printf "%.6f", (c == "null") ? w : w - c }')
    fi
    if [[ ${W_PEAK[$key]} == sampled ]]; then
        rss_sampler_stop
        hwm=$(sort -n "$part.rss.samples" | tail -n 1)
    else
        hwm=$(mem_kb VmHWM "${pids[@]}")
    fi
    server_check && alive=true || alive=false
    POINT_ALIVE=$alive
    LAT_EXIT_CODE=null LAT_RUN=
    # (no after-step for a server that is gone or hung: the point is failed already)
    if $alive && declare -F "${tool}_after" >/dev/null; then "${tool}_after" "$dir" "$rep" "$part"; fi
    [[ -z $POINT_FAULT ]] || return 0
    # (written by bash: json.sh says why)
    rss=$(mem_kb VmRSS "${pids[@]}") finish=$(utc_now)
    json_check "the window of $key" "$t0" "$t1" "$wall" "$tool_wall" "${SERVER_RSS_START:-null}" \
        "${W_RSS_WARM[$key]}" "${hwm:-null}" "$rss" "$alive" "$client_ticks" "$rep" "$rc" \
        "${POINT_POSITION:-null}" "$LAT_EXIT_CODE" "$clock_start_s" "$client_ticks0"
    printf '{"pids": %s, "clk_tck": %s, "cpu_ticks_before": %s, "cpu_ticks_after": %s, "wall_s": %s,
 "tool_wall_s": %s, "window_start": %s, "clock_start_s": %s, "window_end": %s,
 "rss_start_kb": %s, "rss_warm_kb": %s, "rss_peak_kb": %s,
 "rss_peak_method": %s, "rss_kb": %s, "server_alive": %s}\n' \
        "$(json_nums "${pids[@]}")" "$CLK_TCK" "$t0" "$t1" "$wall" "$tool_wall" \
        "$(json_str "$window_start")" "$clock_start_s" \
        "$(json_str "$window_end")" "${SERVER_RSS_START:-null}" "${W_RSS_WARM[$key]}" "${hwm:-null}" \
        "$(json_str "${W_PEAK[$key]}")" "$rss" "$alive" >"$part.server.json"
    printf '{"clk_tck": %s, "server_cpus": %s, "client_cpus": %s, "window_start": %s, "window_end": %s,
 "client_cpu_ticks": %s, "client_cpu_ticks_before": %s,
 "fields": ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice"],
 "proc_stat_before": %s, "proc_stat_after": %s}\n' \
        "$CLK_TCK" "$(json_str "$SERVER_CPUS")" "$(json_str "$CLIENT_CPUS")" "$(json_str "$window_start")" \
        "$(json_str "$window_end")" "$client_ticks" "$client_ticks0" "$stat0" "$stat1" >"$part.cpu.json"
    for f in "$part".*; do mv "$f" "$dir/r$rep.${f##*/.r$rep.}"; done
    {
        printf '{"rep": %s, "start_utc": %s, "end_utc": %s, "exit_code": %s, "cmd": %s, "server_alive": %s,
 "position": %s' "$rep" "$(json_str "${W_START[$key]}")" "$(json_str "$finish")" \
            "$rc" "$(json_str "$LAST_TOOL_CMD")" "$alive" "${POINT_POSITION:-null}"
        [[ $LAT_EXIT_CODE == null ]] || printf ', "lat_exit_code": %s' "$LAT_EXIT_CODE"
        [[ -z $LAT_RUN ]] || printf ', "latency_run": %s' "$LAT_RUN"
        [[ -z ${SERVER_TROUBLE:-} ]] || printf ', "server_trouble": %s' "$(json_str "$SERVER_TROUBLE: $SERVER_TROUBLE_DETAIL")"
        [[ -z ${POINT_RETRIED:-} ]] || printf ', "retried_after": %s' "$(json_str "$POINT_RETRIED")"
        printf '}\n'
    } >"$dir/.run.json.tmp"
    mv "$dir/.run.json.tmp" "$dir/r$rep.run.json"
}

# wrk: one thread per client CPU (at most one per connection); the Lua script sets the
# method/body/pipelining and its done() hook writes the JSON with the whole latency histogram.
# wrk_args [CONNS [LUA_DIR]]: CONNS defaults to the scenario's (a client host's share with
# several hosts), LUA_DIR to this checkout's.
wrk_args() {
    local conns=${1:-$SC_CONNS}
    WRK_ARGS=(-t "$(( CLIENT_THREADS < conns ? CLIENT_THREADS : conns ))" -c "$conns" --timeout "${WRK_TIMEOUT:-2s}"
              -s "${2:-$LUA_DIR}/$SC_LUA" "$SC_URL")
}

wrk_env() {
    echo "WRK_LUA_DIR=${1:-$LUA_DIR} BODY_SIZE=$SC_SIZE PIPELINE_DEPTH=$SC_DEPTH"
}

# wrk_host_cmd CONNS: one client host's wrk (fanout_run's builder), for DURATION_NOW seconds.
wrk_host_cmd() {
    wrk_args "$1" @LAB@/scripts/lua
    TOOL_CMD=(env $(wrk_env @LAB@/scripts/lua) WRK_JSON=@PREFIX@.wrk.json wrk -d "${DURATION_NOW}s" "${WRK_ARGS[@]}")
}

wrk_warmup() {
    (( WARMUP > 0 )) || return 0
    if multi_client; then fanout_warmup wrk_host_cmd; return 0; fi
    wrk_args
    tool_run "$(( WARMUP + TOOL_MARGIN ))" /dev/null /dev/null \
        env $(wrk_env) WRK_JSON=/dev/null wrk -d "${WARMUP}s" "${WRK_ARGS[@]}" || true
    note_tool_fault "wrk's warm-up" "$WARMUP"
}

wrk_measure() {
    local part=$3
    if multi_client; then
        DURATION_NOW=$DURATION wrk_host_cmd "$SC_CONNS"
        LAST_TOOL_CMD="$CLIENT_HOSTS client hosts, each: ${TOOL_CMD[*]}"
        DURATION_NOW=$DURATION fanout_run "$(( DURATION + TOOL_MARGIN ))" "$part" "" wrk_host_cmd
        return
    fi
    wrk_args
    connect_wait_args wrk
    local cmd=(wrk -d "${DURATION}s" "${CONNECT_WAIT[@]}" "${WRK_ARGS[@]}") rc=0
    LAST_TOOL_CMD="$(wrk_env) ${cmd[*]}"
    tool_run "$(( DURATION + TOOL_MARGIN ))" "$part.stdout.txt" "$part.stderr.txt" \
        env $(wrk_env) WRK_JSON="$part.wrk.json" WRK_END_SNAPSHOT="$part.end.snapshot" \
        WRK_START_SNAPSHOT="$part.start.snapshot" WRK_SNAPSHOT_PIDS="$SNAPSHOT_PIDS" "${cmd[@]}" || rc=$?
    note_unconnected "wrk" "$part.stderr.txt"
    return "$rc"
}

# wrk_slice_cmd PART SERVERS CYCLES: wrk for a sliced block (scripts/lib/sliced.sh): TOOL_CMD runs
# until the slicer ends it (SIGINT to its main thread); its requests time out only past the longest
# time it is kept stopped plus wrk's own 2 s: the other servers' slices of a cycle and every
# server's drain after its slice, its own included, each at most SLICE_DRAIN_MAX_S. (With a timeout of
# 2 s plus only the slices, 3 s at five servers, 27 of 60 HTTPS/1.1 points at 500 connections failed
# on wrk's timeouts in the seed suites' sliced run of 2026-11-28; with the drains counted, 5 s, none
# of 100 at 200 and 500 connections did. wrk also counts, at each of its checks every 2 s of wall
# time, a connection that has sent no request yet, which in slices could be one still in its TLS
# handshake; none was in those 100.) Its
# done() hook writes no histogram (WRK_NO_HIST: the latencies are not kept, and walking them would
# take seconds of the tail the slicer counts as the tool's).
wrk_slice_cmd() {
    local part=$1 stopped
    stopped=$(awk -v k="$2" -v s="$SLICE_S" -v dr="$SLICE_DRAIN_MAX_S" \
        'BEGIN { t = (k - 1) * s + k * dr; printf "%d", (t == int(t)) ? t : int(t) + 1 }')
    WRK_TIMEOUT="$(( 2 + stopped ))s" wrk_args
    connect_wait_args wrk
    TOOL_CMD=(env $(wrk_env) WRK_JSON="$part.wrk.json" WRK_END_SNAPSHOT="$part.end.snapshot"
              WRK_SNAPSHOT_PIDS="$SNAPSHOT_PIDS" WRK_NO_HIST=1 wrk -d 3600s "${CONNECT_WAIT[@]}" "${WRK_ARGS[@]}")
    SLICE_END=sigint SLICE_WINDOW=
    # (its one line when the clock starts; none without the option, whose time counts from the start)
    SLICE_READY= SLICE_READY_COUNT=0
    (( ${#CONNECT_WAIT[@]} == 0 )) || SLICE_READY="the clock starts" SLICE_READY_COUNT=1
}

# wrk's latency run, in a sliced rep only (a contiguous run's own histogram is its latency): the
# sliced run's histogram holds the seconds its requests in flight sat stopped, so its done() hook
# writes none (WRK_NO_HIST) and the point's latency comes from this contiguous run after the window,
# as h2load's does (its latency run, below), in the reps latency_rep picks. The server's CPU window
# is closed already; its requests, errors and histogram go to r<rep>.lat.* (httplab/parse/wrk_loader.py
# reads them, and their errors fail the point). wrk takes whole seconds: WRK_LAT_S, a second at the
# seed suites' 1 s runs (about 10^5 requests at their rates), half the measured run at longer ones.
wrk_lat_s() { if (( DURATION >= 2 )); then echo $(( DURATION / 2 )); else echo 1; fi; }
wrk_after() {
    local part=$3 rc=0
    [[ ${BLOCKS:-server} == sliced ]] || return 0
    latency_rep "$2" || { LAT_RUN=false; return 0; }
    LAT_RUN=true LAT_EXIT_CODE=0
    wrk_args
    connect_wait_args wrk
    tool_run "$(( $(wrk_lat_s) + TOOL_MARGIN ))" "$part.lat.stdout.txt" "$part.lat.stderr.txt" \
        env $(wrk_env) WRK_JSON="$part.lat.wrk.json" wrk -d "$(wrk_lat_s)s" "${CONNECT_WAIT[@]}" "${WRK_ARGS[@]}" || rc=$?
    LAT_EXIT_CODE=$rc
    note_tool_fault "wrk's latency run" "$(wrk_lat_s)"
    note_unconnected "wrk's latency run" "$part.lat.stderr.txt"
}

# fanout_warmup BUILDER: the warm-up from every client host at once (the server is warmed as it
# will be loaded); its files are thrown away.
fanout_warmup() {
    local tmp
    tmp=$(mktemp -d)
    DURATION_NOW=$WARMUP fanout_run "$(( WARMUP + TOOL_MARGIN ))" "$tmp/warm" "" "$1" || true
    rm -rf "$tmp"
    note_tool_fault "the warm-up" "$WARMUP"
}

# h2load: one thread per client CPU, -m streams per connection, -D seconds.
# The warm-up is a separate unrecorded run, as for wrk, not h2load's own
# --warm-up-time: that would put the warm-up inside the window over which the
# server's CPU time is read, while h2load counts only the measured requests.
h2load_args() {
    local conns=${2:-$SC_CONNS}
    H2_ARGS=(-t "$(( CLIENT_THREADS < conns ? CLIENT_THREADS : conns ))" -c "$conns" -m "$SC_DEPTH" -D "$1")
    [[ $SC_KIND == echo_post ]] && H2_ARGS+=(-d "${3:-$(payload_file "$SC_SIZE")}")
    H2_ARGS+=("$SC_URL")
}

# h2load_host_cmd CONNS: one client host's h2load (fanout_run's builder) for DURATION_NOW seconds;
# with H2_LOG=1, with the per-request log.
h2load_host_cmd() {
    h2load_args "$DURATION_NOW" "$1" "@PAYLOAD:$SC_SIZE@"
    TOOL_CMD=(h2load)
    [[ ${H2_LOG:-0} == 1 ]] && TOOL_CMD+=(--log-file=@LOG@ --warm-up-time="$LAT_WARMUP")
    TOOL_CMD+=("${H2_ARGS[@]}")
}

# The latency run's length: half the measured duration, rounded down; a 1 s run (the quick
# profile, the test command's smoke runs) gets half a second, which still holds 10^4-10^5 requests
# at these rates. lat_duration: in seconds, as scenario.json and meta.json record it;
# lat_h2load: as h2load's -D takes it (whole seconds, or 500ms); lat_limit: whole seconds, rounded
# up, for the deadline (the window plus its warm-up).
#
# The latency run opens with half a second of h2load's own warm-up (LAT_WARMUP: --warm-up-time),
# after its clients have connected and finished their handshakes (the connect wait, above; without
# it, the warm-up is when they do); h2load neither counts nor logs the warm-up's requests. The
# server is warm already (the throughput run came just before), so this is not for the server
# but to keep connects and handshakes out of the latency window. (With
# Debian's h2load it also made a hang rarer: a client still in its TLS handshake when the window
# ended was never closed. The lab's build closes it and says so: docs/method.md, "The lab's h2load".)
LAT_WARMUP_MS=500
LAT_WARMUP=${LAT_WARMUP_MS}ms                                          # as h2load takes it
LAT_WARMUP_S=$(awk -v ms="$LAT_WARMUP_MS" 'BEGIN { printf "%g", ms / 1000 }')   # as meta.json records it
lat_duration() { if (( DURATION >= 2 )); then echo $(( DURATION / 2 )); else echo 0.5; fi; }
lat_h2load() { if (( DURATION >= 2 )); then echo $(( DURATION / 2 )); else echo 500ms; fi; }
lat_limit() {
    awk -v d="$(lat_duration)" -v w="$LAT_WARMUP_S" 'BEGIN { t = d + w; printf "%d", (t == int(t)) ? t : int(t) + 1 }'
}

h2load_warmup() {
    (( WARMUP > 0 )) || return 0
    if multi_client; then fanout_warmup h2load_host_cmd; return 0; fi
    h2load_args "$WARMUP"
    tool_run "$(( WARMUP + TOOL_MARGIN ))" /dev/null /dev/null h2load "${H2_ARGS[@]}" || true
    note_tool_fault "h2load's warm-up" "$WARMUP"
}

# The clock of a measured run starts once every connection is up (TLS handshake included), at most
# CONNECT_WAIT_S after the tool started: the lab's builds' --lab-connect-wait (scripts/patches/: the
# third change to h2load, wrk's one). Upstream's clocks start at the first connect, so a short
# window's first part loaded the server with fewer connections than the point names while the rest
# handshook, and on a loaded machine a TLS point's last handshakes outlasted a 1 s window (the test
# command's smoke runs: 1 to 13 of 100 h2load clients). The handshakes stay inside the server's CPU
# window (window_open is read before the tool starts); the requests counted come from a window in
# which every connection loads. A connection still connecting when the wait runs out is named on
# stderr and fails the point (note_unconnected, the loaders). Where the option is missing (Debian's
# build, where the lab's could not be built) the runs keep upstream's start, and meta.json's
# tools.<tool>_build says which build ran. The wait is well inside the tool's deadline
# (TOOL_MARGIN). In a sliced block the slicer counts the tool's time from the line the tool writes
# when its clock starts (SLICE_READY). Not on client hosts, which may run Debian's builds.
CONNECT_WAIT_S=5
declare -gA CONNECT_WAIT_OF=()
# connect_wait_args TOOL: CONNECT_WAIT, the option for this machine's TOOL (h2load or wrk), or
# nothing where TOOL lacks it; asked once per tool (its help captured whole: grep -q on a pipe could
# end the tool with SIGPIPE, which pipefail reads as a failure).
connect_wait_args() {
    local help
    if [[ -z ${CONNECT_WAIT_OF[$1]+set} ]]; then
        case $1 in
            h2load) help=$(h2load --help 2>&1 || true) ;;
            wrk)    help=$(wrk -v 2>&1 || true) ;;
            *)      help= ;;
        esac
        CONNECT_WAIT_OF[$1]=
        [[ $help != *--lab-connect-wait* ]] || CONNECT_WAIT_OF[$1]="--lab-connect-wait=${CONNECT_WAIT_S}s"
    fi
    CONNECT_WAIT=(${CONNECT_WAIT_OF[$1]})
}

# The throughput run: no per-request log, because writing it slows h2load
# measurably (about 15 % at 400k req/s here).
h2load_measure() {
    local part=$3
    if multi_client; then
        DURATION_NOW=$DURATION h2load_host_cmd "$SC_CONNS"
        LAST_TOOL_CMD="$CLIENT_HOSTS client hosts, each: ${TOOL_CMD[*]}"
        DURATION_NOW=$DURATION fanout_run "$(( DURATION + TOOL_MARGIN ))" "$part" "" h2load_host_cmd
        return
    fi
    h2load_args "$DURATION"
    connect_wait_args h2load
    local cmd=(h2load "${CONNECT_WAIT[@]}" "${H2_ARGS[@]}") rc=0
    LAST_TOOL_CMD="${cmd[*]}"
    # (the start snapshot: window_close; not in the record, as wrk's files are not)
    tool_run "$(( DURATION + TOOL_MARGIN ))" "$part.stdout.txt" "$part.stderr.txt" \
        env H2LOAD_START_SNAPSHOT="$part.start.snapshot" H2LOAD_SNAPSHOT_PIDS="$SNAPSHOT_PIDS" "${cmd[@]}" || rc=$?
    note_unconnected "h2load's throughput run" "$part.stderr.txt"
    return "$rc"
}

# h2load_slice_cmd PART SERVERS CYCLES: h2load for a sliced block: TOOL_CMD runs until the slicer
# ends it with SIGINT, as wrk (the lab's build of h2load ends a -D run on SIGINT: scripts/setup.sh;
# sliced_check refuses Debian's). Its -D is an hour, which the slices never reach. (Before, it ended
# on its own -D clock, which runs on while the tool is stopped: its window had to be sized for every
# server's slices and drains beside a second's margin, and the slicer waited for each window's end,
# a second or more a block; a tool whose window ran out in long drains lost its last slices.)
h2load_slice_cmd() {
    h2load_args 3600
    connect_wait_args h2load
    TOOL_CMD=(h2load "${CONNECT_WAIT[@]}" "${H2_ARGS[@]}")
    SLICE_END=sigint SLICE_WINDOW=
    # (a line per thread when its clock starts: H2_ARGS begins with -t N)
    SLICE_READY= SLICE_READY_COUNT=0
    (( ${#CONNECT_WAIT[@]} == 0 )) || SLICE_READY="thread #[0-9]+ starts" SLICE_READY_COUNT=${H2_ARGS[1]}
}

# latency_rep REP: whether REP has h2load's latency run: reps 1, 1+N, 1+2N... with
# --latency-every N (LATENCY_EVERY, default 1: every rep). The latency run costs about as much as
# the measured one and the throughput and cost figures do not use it, so a run of many short reps
# (--blocks sliced) may keep it in every Nth rep, spread over the run's length.
latency_rep() { (( ($1 - 1) % ${LATENCY_EVERY:-1} == 0 )); }

# The latency run: the same load with --log-file (one line per request), reduced
# at once to a compact histogram by httplab.parse.h2log; the log itself is not kept
# (tens of MB per run). Half the measured duration, rounded down (lat_duration above),
# gives ≥ 10^4 samples at these rates and keeps the suite's time in bounds.
# With several client hosts each host runs and compacts its own (client_run.sh --h2log).
h2load_after() {
    local part=$3 log
    # (a rep the run's design leaves without it: run.json says latency_run false)
    latency_rep "$2" || { LAT_RUN=false; return 0; }
    LAT_RUN=true LAT_EXIT_CODE=0
    if multi_client; then
        DURATION_NOW=$(lat_h2load) H2_LOG=1 fanout_run "$(( $(lat_limit) + TOOL_MARGIN ))" \
            "$part" .lat h2load_host_cmd h2log || LAT_EXIT_CODE=$?
        note_tool_fault "h2load's latency run" "$(lat_limit)"
        return 0
    fi
    log=$(mktemp "${LAB_LOG_TMP:-/dev/shm}/h2load.XXXXXX.log" 2>/dev/null || mktemp)
    h2load_args "$(lat_h2load)"
    connect_wait_args h2load
    tool_run "$(( $(lat_limit) + TOOL_MARGIN ))" "$part.lat.stdout.txt" "$part.lat.stderr.txt" \
        h2load --log-file="$log" --warm-up-time="$LAT_WARMUP" "${CONNECT_WAIT[@]}" "${H2_ARGS[@]}" || LAT_EXIT_CODE=$?
    note_tool_fault "h2load's latency run" "$(lat_limit)"
    note_unconnected "h2load's latency run" "$part.lat.stderr.txt"
    [[ -z $POINT_FAULT ]] || { rm -f "$log"; return 0; }
    on_client "$(lab_python)" -m httplab h2log "$log" "$part.lat.h2log.json" 2>>"$part.lat.stderr.txt" || true
    rm -f "$log"
}
