# scripts/lib/canary.sh: the machine's canary (sourced by lib.sh), measured at the start, the middle
# and the end of every suite, so that a run says how fast its machine was while it ran, whether
# that moved, and so that two runs (two machines) can be compared through it (docs/method.md#canary).
#
# Three parts, each LAB_CANARY_SECONDS long (default: the suite's run duration, 1 to 3 s), but for
# the two programs in the quick profile (canary_probe_seconds):
#   cpu       build/bench/canary cpu: a fixed integer loop on the first server CPU (Mops/s)
#   pingpong  build/bench/canary pingpong: one byte back and forth over loopback TCP, echoed on the
#             first server CPU, sent from the first client CPU (round trips/s)
#   floor     the floor responder (accept, read, fixed reply) on the first server CPU, loaded by wrk
#             with 100 connections on the client CPUs for the same time (req/s)
# Raw records, written once, never rewritten: <suite>/canary.<when>/{cpu,pingpong}.json,
# floor.stdout.txt, floor.stderr.txt, and canary.json last (it marks the canary done).
# A part that cannot run (a host without build/bench/canary, the inventory mode's remote load) is
# recorded with its reason; the canary never stops a suite.

# canary_seconds: the floor's run length (and the two programs', outside the quick profile).
canary_seconds() {
    local s=${LAB_CANARY_SECONDS:-$DURATION}
    (( s < 1 )) && s=1
    (( s > 3 )) && s=3
    echo "$s"
}

# canary_probe_seconds: the CPU loop's and the ping-pong's length: canary_seconds, but a quarter of a
# second in the quick profile (unless LAB_CANARY_SECONDS is set), which checks the pipeline, not the
# machine: a quick part is seconds long, and its canary had been a fifth of it. A quarter second
# still holds 5·10^7 loop operations and thousands of round trips here, and the programs time
# themselves. The floor keeps its second: wrk's shortest run.
canary_probe_seconds() {
    if [[ ${PROFILE:-full} == quick && -z ${LAB_CANARY_SECONDS:-} ]]; then echo 0.25; else canary_seconds; fi
}

# canary_first_cpu LIST: the first CPU a taskset list names ("4-7,9" -> 4).
canary_first_cpu() { local l=${1%%,*}; echo "${l%%-*}"; }

# canary WHEN: the canary at WHEN (start, mid or end) of the suite, once.
canary() {
    local when=$1 dir=$RUN_DIR/$SUITE/canary.$1 s ps scpu ccpu host bin=$BUILD_DIR/bench/canary
    [[ ${LAB_CANARY:-1} == 1 ]] || return 0
    [[ -f $dir/canary.json ]] && return 0
    mkdir -p "$dir"
    s=$(canary_seconds) ps=$(canary_probe_seconds) scpu=$(canary_first_cpu "$SUITE_SERVER_CPUS") ccpu=$(canary_first_cpu "$CLIENT_CPUS")
    read -ra host <<<"$(server_host_prefix)"
    local problems=()
    if [[ -x $bin ]]; then
        "${host[@]}" taskset -c "$scpu" "$bin" cpu "$ps" >"$dir/cpu.json.tmp" 2>"$dir/cpu.err" &&
            mv "$dir/cpu.json.tmp" "$dir/cpu.json" || problems+=("cpu: $(tail -n 1 "$dir/cpu.err")")
        "${host[@]}" "$bin" pingpong "$ps" "$scpu" "$ccpu" >"$dir/pingpong.json.tmp" 2>"$dir/pingpong.err" &&
            mv "$dir/pingpong.json.tmp" "$dir/pingpong.json" || problems+=("pingpong: $(tail -n 1 "$dir/pingpong.err")")
        rm -f "$dir"/*.tmp
        [[ -s $dir/cpu.err ]] || rm -f "$dir/cpu.err"
        [[ -s $dir/pingpong.err ]] || rm -f "$dir/pingpong.err"
    else
        problems+=("cpu, pingpong: $bin is not built (scripts/build.sh --servers floor)")
    fi
    if multi_client; then
        problems+=("floor: the load comes from $CLIENT_HOSTS client host(s) of the ${HOSTS:-local} mode; the canary's floor is measured in the local and netns modes")
    else
        canary_floor "$dir" "$s" "$scpu" || problems+=("floor: $CANARY_FLOOR_PROBLEM")
    fi
    local reasons='[]' p
    for p in "${problems[@]}"; do reasons=$(jq --arg p "$p" '. + [$p]' <<<"$reasons"); done
    write_json_once "$dir/canary.json" "$(jq -n --arg when "$when" --arg t "$(utc_now)" --argjson s "$s" \
        --argjson ps "$ps" --arg scpu "$scpu" --arg ccpu "$ccpu" --arg cthreads "$CLIENT_THREADS" \
        --argjson problems "$reasons" \
        '{when: $when, utc: $t, seconds: $s, probe_seconds: $ps, server_cpu: $scpu, client_cpus: env.CLIENT_CPUS,
          client_threads: ($cthreads | tonumber), send_cpu: $ccpu, problems: $problems}')"
    (( ${#problems[@]} == 0 )) || log "note: canary ($when) of suite $SUITE: ${problems[*]}"
}

# canary_floor DIR SECONDS CPU: the floor responder on CPU, wrk -c100 on the client CPUs. The
# suite's own server variables are saved and put back: the canary runs between its points. A floor
# that is built but does not start stops the suite (start_server dies), as it would as a server.
canary_floor() {
    local dir=$1 s=$2 cpu=$3 saved_cpus=${SERVER_CPUS:-} saved_log=${SERVER_LOG:-} rc=0
    CANARY_FLOOR_PROBLEM=
    if ! known_server floor || [[ ! -x $BUILD_DIR/bench/floor ]]; then
        CANARY_FLOOR_PROBLEM="the floor responder is not built (scripts/build.sh --servers floor)"; return 1
    fi
    SERVER_CPUS=$cpu SERVER_LOG=$dir/floor.server.log
    # the floor speaks HTTP/1.1 alone, whatever the suite's own mode (h2c, tls)
    SERVER_MODE=h1 start_server floor "$SERVER_LOG"
    tool_run "$(( s + TOOL_MARGIN ))" "$dir/floor.stdout.txt" "$dir/floor.stderr.txt" \
        wrk -t "$CLIENT_THREADS" -c 100 -d "${s}s" "http://$SERVER_ADDR:$SERVER_PORT/ping" || rc=$?
    stop_server
    SERVER_CPUS=$saved_cpus SERVER_LOG=$saved_log
    if (( rc != 0 )); then CANARY_FLOOR_PROBLEM="wrk ended with $TOOL_END (see $dir/floor.stderr.txt)"; return 1; fi
}

# canary_moments: when a suite measures the machine's canary (canary, above): at the start;
# halfway (after the middle rep) in every profile but the quick one, with more than one rep; at the
# end, but in the quick profile with one rep, whose suite lasts seconds, over which a drift says
# nothing.
canary_moments() {
    local m=start
    (( REPS > 1 )) && [[ ${PROFILE:-full} != quick ]] && m+=" mid"
    (( REPS > 1 )) || [[ ${PROFILE:-full} != quick ]] && m+=" end"
    echo "$m"
}
canary_at() { [[ " $(canary_moments) " == *" $1 "* ]]; }
