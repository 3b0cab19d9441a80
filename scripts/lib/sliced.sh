# scripts/lib/sliced.sh: a rep in interleaved slices (--blocks sliced; sourced by lib.sh).
#
# Every server of the rep is up at once, each on its own port and all on the server CPUs; then, per
# scenario, one load tool per server is given the client CPUs for SLICE_S seconds in turn (python -m
# httplab slice) until each has run the point's duration. A pair's two runs then share the same
# seconds of the machine's drift, which contiguous runs seconds apart do not (docs/method.md,
# "Interleaved slices"). Each point keeps the files a contiguous one has, read around the whole
# interleaved window (the server idles in the others' slices), plus r<rep>.slices.json: the seconds
# its tool ran, from which the tidy step takes its rate. Warm-ups and after-steps (h2load's latency
# run) run contiguously, one server at a time.
#
# Where it does not apply it refuses before anything starts: several client hosts or the inventory
# mode (the tools must be processes of this machine to be stopped), <server>@<n> (one CPU set for
# all), tools other than wrk and h2load.

SLICE_S=${LAB_SLICE_S:-0.1}
# The longest drain the slicer waits (its DRAIN_MAX_S; tests/unit/test_slicer.py holds the two
# equal): with it, the longest a tool stays stopped (wrk_slice_cmd's timeout).
SLICE_DRAIN_MAX_S=0.5

# sliced_check: dies when this suite cannot run in slices (see above).
sliced_check() {
    local line server
    multi_client && die "--blocks sliced needs one client host on this machine (the tools are stopped and resumed as processes)"
    [[ ${HOSTS:-local} == inventory ]] && die "--blocks sliced runs in the local and netns host modes only"
    for server in "${SUITE_SERVERS[@]}"; do
        [[ -z $(cores_of "$server") ]] || die "--blocks sliced gives every server the same CPUs: $server names its own"
    done
    for line in "${SCENARIOS[@]}"; do
        parse_scenario "$line"
        scenario_selected || continue
        [[ $SC_TOOL == wrk || $SC_TOOL == h2load ]] || die "--blocks sliced drives wrk and h2load; $SUITE's $SC_ID uses $SC_TOOL"
        # (the slicer ends h2load with SIGINT, which Debian's build does not take: scripts/setup.sh)
        [[ $SC_TOOL != h2load ]] || h2load --version 2>&1 | grep -q "SIGINT ends the run" ||
            die "--blocks sliced ends h2load with SIGINT, which needs the lab's build of h2load (scripts/setup.sh builds it; $(command -v h2load) is another)"
    done
}

# The servers of the rep under way: their PIDs, logs and RSS at start (start_server's globals, kept
# per server), and which of them passed the gate.
declare -gA SL_PID=() SL_PORT=() SL_LOG=() SL_RSS=() SL_POS=() SL_CMD=()
SL_UP=()

# sliced_select SERVER: start_server's globals for SERVER, so that the harness's functions (gate,
# server_check, the tools' builders) address it.
sliced_select() {
    SERVER_PID=${SL_PID[$1]} SERVER_PORT=${SL_PORT[$1]} SERVER_LOG=${SL_LOG[$1]} SERVER_RSS_START=${SL_RSS[$1]}
}

# sliced_stop_all: every server of the rep stopped (also the EXIT trap's, through suite_exit).
sliced_stop_all() {
    local server
    for server in "${!SL_PID[@]}"; do
        SERVER_PID=${SL_PID[$server]}
        stop_server
    done
    SL_PID=() SL_UP=()
}

# sliced_rep REP SERVER...: the rep's servers (in its order) started and gated, then every selected
# scenario as one sliced block of the servers that have its point to do; the counters DONE and
# SKIPPED of suite_run are updated through SL_DONE and SL_SKIPPED. Returns 1 when the suite stops.
sliced_rep() {
    local rep=$1 server line i=0 todo ids t
    # the rep's points still to run, "SERVER<US>LINE": listed once per server here, as a block runs
    # only its own scenario (todo_for walks every scenario: once per block and server it cost a
    # twentieth of an http1 rep)
    local -A to_run=()
    shift
    SL_UP=()
    for server in "$@"; do
        i=$(( i + 1 ))
        mapfile -t todo < <(todo_for "$server" "$rep")
        (( ${#todo[@]} )) || continue
        for t in "${todo[@]}"; do to_run["$server"$'\x1f'"$t"]=1; done
        SUITE_AT="the start of $server (rep $rep)"
        raw_writable "$RUN_DIR/$SUITE/$server" "$server (rep $rep)" || return 1
        mkdir -p "$RUN_DIR/$SUITE/$server"
        SERVER_LOG=$RUN_DIR/$SUITE/$server/server.r$rep.log
        [[ -e $SERVER_LOG ]] && SERVER_LOG=$RUN_DIR/$SUITE/$server/server.r$rep.resumed-$(date +%s).log
        start_server "$server" "$SERVER_LOG"
        SL_PID[$server]=$SERVER_PID SL_PORT[$server]=$SERVER_PORT SL_LOG[$server]=$SERVER_LOG
        SL_RSS[$server]=$SERVER_RSS_START SL_POS[$server]=$i
        SERVER_PID=   # kept in SL_PID: stop_server must not end it alone
        sliced_select "$server"
        SUITE_AT="the verify gate of $server (rep $rep)"
        if ! gate "$server" "$rep"; then
            log "$server failed the verify gate in rep $rep (see $RUN_DIR/$SUITE/$server/verify.r$rep*.txt and its log $SERVER_LOG); not loading it"
            SL_SKIPPED=$(( SL_SKIPPED + ${#todo[@]} ))
            progress "$SL_DONE" "$SL_SKIPPED" "$SL_TOTAL" "$server r$rep skipped (verify gate)"
            stop_server
            unset 'SL_PID[$server]'
            continue
        fi
        SL_UP+=("$server")
    done
    SERVER_PID=
    for line in "${SCENARIOS[@]}"; do
        parse_scenario "$line"
        scenario_selected || continue
        ids=()
        for server in "${SL_UP[@]}"; do
            [[ -z ${to_run["$server"$'\x1f'"$line"]:-} ]] || ids+=("$server")
        done
        (( ${#ids[@]} )) || continue
        sliced_block "$rep" "$line" "${ids[@]}" || return 1
    done
    sliced_stop_all
}

# sliced_point_files SERVER REP: sets DIR and PART for SERVER's point of the scenario parsed.
sliced_point_files() {
    SC_URL="$SCHEME://$SERVER_ADDR:${SL_PORT[$1]}$SC_ROUTE"
    [[ $SC_KIND == echo_get ]] && SC_URL+="?size=$SC_SIZE"
    DIR=$(scenario_dir "$1")
    PART=$DIR/.r$2
}

# sliced_block REP LINE SERVER...: the scenario LINE of every SERVER in one interleaved window.
sliced_block() {
    local rep=$1 line=$2 server spec record rc tools=() cycles t ready
    shift 2
    spec=$(mktemp) record=$(mktemp)
    # the warm-ups, one server at a time, then every window opened
    for server in "$@"; do
        parse_scenario "$line"
        sliced_select "$server"
        sliced_point_files "$server" "$rep"
        SUITE_AT="$server $SC_ID (rep $rep)"
        raw_writable "$DIR" "$SUITE_AT" || return 1
        SC_EXTRA_JSON='{}'
        server_warmup "$server"
        write_scenario_json "$DIR" "$server"
        POINT_FAULT= POINT_FAULT_KIND= POINT_FAULT_FILES=
        rm -f "$PART".* "$DIR/r$rep".*
        "${SC_TOOL}_warmup" "$DIR" "$rep"
        [[ $TLS == true ]] && tls_probe "$PART"
        if [[ -n $POINT_FAULT ]]; then
            abort_suite "$POINT_FAULT while warming $SUITE_AT; the server log: $SERVER_LOG"
            return 1
        fi
    done
    cycles=$(awk -v d="$DURATION" -v s="$SLICE_S" 'BEGIN { printf "%d", d / s + 0.5 }')
    local CLIENT_ARGV
    for server in "$@"; do
        parse_scenario "$line"
        sliced_select "$server"
        sliced_point_files "$server" "$rep"
        window_open "$server" "$PART" false
        SNAPSHOT_PIDS="${W_PIDS[$server]}" "${SC_TOOL}_slice_cmd" "$PART" "$#" "$cycles"
        SL_CMD[$server]="${TOOL_CMD[*]}"
        CLIENT_TIME_FILE=$PART.client.time.txt client_argv
        # (the spec written by bash: json.sh says why)
        json_strs "${CLIENT_ARGV[@]}" "${TOOL_CMD[@]}"
        json_check "the slicer's spec" "${SLICE_WINDOW:-null}" "$SLICE_READY_COUNT"
        ready=
        [[ -z $SLICE_READY ]] ||
            ready="\"ready\": {\"pattern\": $(json_str "$SLICE_READY"), \"count\": $SLICE_READY_COUNT}, "
        # (its server's processes: the slicer waits after each of its slices until they are idle;
        # the line its tool writes on stderr when its clock starts, where it waits for its
        # connections: the slicer counts its time from there)
        tools+=("{\"name\": $(json_str "$server"), \"argv\": $JSON_STRS, \"stdout\": $(json_str "$PART.stdout.txt"),
  \"stderr\": $(json_str "$PART.stderr.txt"), \"end\": $(json_str "$SLICE_END")${SLICE_WINDOW:+, \"window_s\": $SLICE_WINDOW},
  $ready\"server_pids\": $(json_nums ${W_PIDS[$server]})}")
    done
    json_check "the slicer's spec" "$SLICE_S" "$DURATION" "$TOOL_MARGIN"
    printf '{"slice_s": %s, "active_s": %s, "grace_s": %s, "tools": [%s]}\n' \
        "$SLICE_S" "$DURATION" "$TOOL_MARGIN" "$(IFS=,; echo "${tools[*]}")" >"$spec"
    SUITE_AT="$SUITE $SC_ID (rep $rep), sliced over $# servers"
    SUITE_POINT=1
    rc=0
    # (the slicer mostly sleeps; on the client CPUs it keeps off the servers')
    taskset -c "$CLIENT_CPUS" "$(lab_python)" -m httplab slice "$spec" --record "$record" || rc=$?
    (( rc <= 1 )) || { abort_suite "the slicer failed (exit $rc) on $SUITE_AT; nothing of it is recorded"; return 1; }
    # each tool's record, one jq for the block: its server, fault, exit and slices.json, a line each
    # (fields parted by \x1f, which no field holds: an empty fault stays a field, and JSON escapes
    # its control characters)
    local -A rec_fault=() rec_exit=() rec_doc=()
    local name f x doc
    while IFS=$'\x1f' read -r name f x doc; do
        rec_fault[$name]=$f rec_exit[$name]=$x rec_doc[$name]=$doc
    done < <(jq -r '{slice_s, active_s, cycles, order} as $c | .tools | to_entries[]
                    | [.key, (.value.fault // "" | gsub("[\t\n\r\u001f]"; " ")), (.value.exit // 0 | tostring),
                       ($c + {tool: .value} | tojson)] | join("\u001f")' "$record")
    for server in "$@"; do
        W_W1[$server]=$(date +%s.%N)
        parse_scenario "$line"
        sliced_select "$server"
        sliced_point_files "$server" "$rep"
        [[ -n ${rec_doc[$server]:-} ]] || die "sliced_block: the slicer recorded nothing for $server ($record)"
        printf '%s\n' "${rec_doc[$server]}" >"$PART.slices.json"
        local fault=${rec_fault[$server]} exit=${rec_exit[$server]}
        if [[ -n $fault ]]; then
            abort_suite "$SC_TOOL against $server was stopped by the slicer ($fault) on $SUITE_AT; the point is not recorded and is redone on resume; its output: $PART.stdout.txt; the server log: $SERVER_LOG"
            return 1
        fi
        POINT_POSITION=${SL_POS[$server]} POINT_RETRIED=
        LAST_TOOL_CMD="in ${SLICE_S} s slices beside $(( $# - 1 )) other servers: ${SL_CMD[$server]}"
        window_close "$server" "$DIR" "$rep" "$SC_TOOL" "$exit"
        if [[ -n $POINT_FAULT ]]; then
            abort_suite "$POINT_FAULT after the window of $server $SC_ID (rep $rep); the server log: $SERVER_LOG"
            return 1
        fi
        SL_DONE=$(( SL_DONE + 1 ))
        point_recorded "$server" "$rep" "$SL_DONE" "$SL_SKIPPED" "$SL_TOTAL" "$server $SC_ID r$rep (sliced)" || return 1
    done
    SUITE_POINT=
    rm -f "$spec" "$record"
}
