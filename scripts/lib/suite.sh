# scripts/lib/suite.sh: the suite driver (sourced by lib.sh): scenarios, which server runs what,
# the reps' balanced order, progress, and the flags and profiles every bench_*.sh takes.

# A suite declares SUITE, PROTOCOL (h1|h2|h3, the default of its scenarios), TLS,
# SCHEME, SERVER_MODE (h1|h2c|tls|h3) and SCENARIOS: one line per scenario, "id kind
# method route size connections depth lua", where kind is a route kind (the
# manifests' `serves`, httplab.lab.manifest.ROUTE_KINDS), optionally prefixed with
# its protocol ("h2:ping") when a suite mixes them; its servers are those whose
# manifests start in SERVER_MODE and serve one of its kinds (suite_servers); size is the payload, depth the pipeline depth over
# HTTP/1.1 or the concurrent streams per connection over HTTP/2, and lua wrk's
# script ("-" for h2load). HTTP/1.1 is loaded with wrk, HTTP/2 with h2load, HTTP/3 with h3load.
# suite_run then runs rep after rep; within a rep each server (started fresh, gated,
# then loaded with every scenario it serves) in an order that alternates with the
# rep, so slow drift of the machine hits every server alike.

parse_scenario() {
    read -r SC_ID SC_KIND SC_METHOD SC_ROUTE SC_SIZE SC_CONNS SC_DEPTH SC_LUA <<<"$1"
    SC_PROTOCOL=${PROTOCOL:-}
    if [[ $SC_KIND == *:* ]]; then SC_PROTOCOL=${SC_KIND%%:*} SC_KIND=${SC_KIND#*:}; fi
    case $SC_PROTOCOL in
        h1) SC_TOOL=wrk ;;
        h2) SC_TOOL=h2load ;;
        h3) SC_TOOL=h3load ;;
        *)  die "scenario $SC_ID: unknown protocol '$SC_PROTOCOL' (h1, h2, h3)" ;;
    esac
    # a suite may load every protocol with one tool of its own (the latency suite: oha)
    SC_TOOL=${SUITE_TOOL:-$SC_TOOL}
}

scenario_dir() { echo "$RUN_DIR/$SUITE/$1/$SC_ID"; }

# headline_scenario: the parsed scenario is one of the suite's HEADLINE_SCENARIOS
# (the seed's first table), the ones the A/A copy runs.
headline_scenario() { [[ ",${HEADLINE_SCENARIOS:-}," == *",$SC_ID,"* ]]; }

# add_aa_copy: with AA=1, the A/A copy of AA_BASE joins the suite's servers when AA_BASE is
# among them and a headline scenario is selected. AA_BASE defaults to the suite's first server
# of tier "contestant" (its manifest's tier): the one every report's Δs are about.
add_aa_copy() {
    local base=${AA_BASE:-} line s
    if [[ -z $base ]]; then
        for s in "${SUITE_SERVERS[@]}"; do [[ $(server_tier "$s") == contestant ]] && { base=$s; break; }; done
    fi
    [[ ${AA:-0} == 1 && -n $base && " ${SUITE_SERVERS[*]} " == *" $base "* ]] || return 0
    for line in "${SCENARIOS[@]}"; do
        parse_scenario "$line"
        if scenario_selected && headline_scenario; then SUITE_SERVERS+=("$base$AA_SUFFIX"); return 0; fi
    done
}

# suite_order: each rep's order of the servers, from a seeded random Latin square
# (httplab.lab.schedule): every server takes every position about equally often over the
# reps, so a position effect (the first server after a pause, the last one on a
# warm machine) cannot favour one of them, and can be tested from the tidy data.
# Written once to <suite>/order.json with its seed; a resumed suite reads it back.
# Sets REP_ORDERS (one line of server names per rep) and ORDER_SEED.
suite_order() {
    local file=$RUN_DIR/$SUITE/order.json seed
    if [[ ! -f $file ]]; then
        seed=${ORDER_SEED:-$(printf '%s' "$(basename "$RUN_DIR")/$SUITE" | cksum | cut -d' ' -f1)}
        "$(lab_python)" -m httplab schedule --seed "$seed" --reps "$REPS" --suite "$SUITE" \
            -- "${SUITE_SERVERS[@]}" >"$file.tmp"
        mv "$file.tmp" "$file"
    fi
    local want have
    want=$(printf '%s\n' "${SUITE_SERVERS[@]}" | sort | tr '\n' ' ')
    have=$(jq -r '.servers[]' "$file" | sort | tr '\n' ' ')
    [[ $want == "$have" && $(jq -r '.orders | length' "$file") -ge $REPS ]] ||
        die "$file was made for servers [$have] and $(jq -r '.orders | length' "$file") reps; this suite runs [$want] and $REPS reps: resume with the same flags, or start a new run (--new)"
    ORDER_SEED=$(jq -r .seed "$file")
    mapfile -t REP_ORDERS < <(jq -r '.orders[] | join(" ")' "$file")
}

# host_state WHEN: the host's state (CPU model and flags, governor, boost, SMT, THP,
# ASLR, kernel, load, the busiest other processes) into <suite>/host.WHEN.json,
# once; the report warns when it moved between start and end.
host_state() {
    local file=$RUN_DIR/$SUITE/host.$1.json
    [[ -f $file ]] && return 0
    on_client "$(lab_python)" -m httplab host-state --exclude-pid $$ --sample "$(host_sample_seconds)" >"$file.tmp" 2>/dev/null &&
        mv "$file.tmp" "$file" || { rm -f "$file.tmp"; log "note: host state ($1) could not be read"; }
}

# host_sample_seconds: how long host_state watches the other processes' CPU time: half a second,
# a fifth in the quick profile, whose parts last seconds (a neighbour busy enough to matter shows
# in a fifth of a second as well; each point's window records the foreign CPU time besides).
host_sample_seconds() { if [[ ${PROFILE:-full} == quick ]]; then echo 0.2; else echo 0.5; fi; }

# scenario_selected: --scenarios takes a comma-separated list of globs; a glob written SUITE:GLOB
# applies to that suite only (one run_all line can pick different scenarios in two suites whose ids
# overlap: http1's get_ping_c100 is 100 connections, h3's is 100 × 10 streams).
scenario_selected() {
    local pat
    [[ -z ${SCENARIO_FILTER:-} ]] && return 0
    IFS=, read -ra pats <<<"$SCENARIO_FILTER"
    for pat in "${pats[@]}"; do
        if [[ $pat == *:* ]]; then
            [[ ${pat%%:*} == "$SUITE" ]] || continue
            pat=${pat#*:}
        fi
        [[ $SC_ID == $pat ]] && return 0
    done
    return 1
}

# todo_for SERVER REP: the scenario lines SERVER still has to run in REP (in the block TODO_BLOCK
# only, when it is set: one scenario id, suite_blocks).
todo_for() {
    local server=$1 rep=$2 line
    for line in "${SCENARIOS[@]}"; do
        parse_scenario "$line"
        scenario_selected || continue
        [[ -z ${TODO_BLOCK:-} || $SC_ID == "$TODO_BLOCK" ]] || continue
        server_serves "$server" "$SC_PROTOCOL:$SC_KIND" || continue
        is_aa_copy "$server" && ! headline_scenario && continue
        point_done "$(scenario_dir "$server")" "$rep" || echo "$line"
    done
}

write_scenario_json() {
    local dir=$1 server=$2
    mkdir -p "$dir"
    [[ -f $dir/scenario.json ]] && return 0   # (written once, by the first rep: no jq for the others)
    write_json_once "$dir/scenario.json" "$(jq -n --arg suite "$SUITE" --arg proto "$SC_PROTOCOL" \
        --argjson tls "$TLS" --arg server "$server" --arg id "$SC_ID" --arg route "$SC_ROUTE" \
        --arg method "$SC_METHOD" --argjson size "$SC_SIZE" --argjson conns "$SC_CONNS" \
        --argjson streams "$( [[ $SC_PROTOCOL == h2 || $SC_PROTOCOL == h3 ]] && echo "$SC_DEPTH" || echo 1)" \
        --argjson pipe "$( [[ $SC_PROTOCOL == h1 ]] && echo "$SC_DEPTH" || echo 1)" \
        --argjson threads "$CLIENT_THREADS" --argjson dur "$DURATION" --argjson warm "$WARMUP" \
        --argjson latdur "$( [[ $SC_TOOL == h2load ]] && lat_duration || echo null)" \
        --arg tool "$SC_TOOL" --arg url "$SC_URL" --argjson extra "${SC_EXTRA_JSON:-"{}"}" \
        --argjson hosts "$CLIENT_HOSTS" --arg layout "$(client_layout)" \
        '{suite: $suite, protocol: $proto, tls: $tls, server: $server, scenario: $id, route: $route,
          method: $method, size_bytes: $size, connections: $conns, streams: $streams,
          pipeline: $pipe, client_threads: $threads, duration_s: $dur, warmup_s: $warm,
          latency_run_duration_s: $latdur,
          tool: $tool, url: $url, client_hosts: $hosts, client_layout: $layout} + $extra')"
}

# eta_text T0 DONE LEFT: "ETA 3m05s" from the pace since T0 over DONE measured points.
eta_text() {
    local t
    (( $2 > 0 )) || return 0
    t=$(( ($(date +%s) - $1) * $3 / $2 ))
    printf 'ETA %dm%02ds' $(( t / 60 )) $(( t % 60 ))
}

# progress DONE SKIPPED TOTAL LABEL: one line for the suite (points measured and skipped of its
# total, with an ETA from its pace) and, under run_all.sh, for the whole run: RUN_PROGRESS_FILE holds
# the run's measured and skipped points before this suite, RUN_TOTAL and RUN_T0 the run's total and
# start. Points skipped by a failed verify gate count as skipped, not done, so the ETA stays honest.
progress() {
    local done=$1 skipped=$2 total=$3 label=$4 line run_done run_skipped
    line="[$SUITE $done/$total$( (( skipped )) && echo ", $skipped skipped")] $label $(eta_text "$SUITE_T0" "$done" "$(( total - done - skipped ))")"
    if [[ -n ${RUN_PROGRESS_FILE:-} && -n ${RUN_TOTAL:-} ]]; then
        run_done=$(( RUN_BASE_DONE + done )) run_skipped=$(( RUN_BASE_SKIPPED + skipped ))
        echo "$run_done $run_skipped" >"$RUN_PROGRESS_FILE"
        line+=" | run $run_done/$RUN_TOTAL$( (( run_skipped )) && echo ", $run_skipped skipped"), $(( ($(date +%s) - RUN_T0) / 60 ))m elapsed, $(eta_text "$RUN_T0" "$run_done" "$(( RUN_TOTAL - run_done - run_skipped ))")"
    fi
    log "$line"
}

# ---------------------------------------------------------------- stopping under faults
#
# What a suite does when something goes wrong, so that a rerun of the same command resumes:
# - a server dies or stops answering after a point: that point is recorded (failed: it measured
#   a dying server) and the suite stops, naming the server's log;
# - a load tool is killed or runs past its deadline: the point is not recorded (it measured
#   nothing) and the suite stops, naming the tool's output and the server's log (a tool past its
#   deadline while its server answers is first run again, once: see suite_run);
# - the raw directory is read-only or nearly full: checked before each server start and each
#   point; a write that still fails stops the suite through set -e, and the EXIT trap says where;
# - Ctrl-C or SIGTERM: the point under way is not recorded; the suite stops at once.
# In every case the server and the tool under way are ended (their whole process trees), the
# finished raw files stay as they were, and the unfinished point is redone on resume.
# SUITE_AT says what the suite is doing, for these messages; SERVER_LOG is the running server's log.

# abort_suite MESSAGE: stops the suite (the caller returns 1): the message is logged and kept in
# <suite>/suite.aborted.<time>.json where it can be written; the finished raw files stay.
abort_suite() {
    SUITE_STOPPED=1
    stop_server
    log "suite $SUITE stopped: $1"
    log "finished points are kept under $RUN_DIR/$SUITE; rerun the same command to resume"
    keep_stop_message "$1"
}

# keep_stop_message MESSAGE: why the suite stopped, in <suite>/suite.aborted.<time>.json, where
# run_all.sh reads it back for its last line (the one a log's tail shows).
keep_stop_message() {
    write_json_once "$RUN_DIR/$SUITE/suite.aborted.$(date +%s).json" \
        "$(jq -n --arg s "$SUITE" --arg m "$1" --arg t "$(utc_now)" '{suite: $s, status: "aborted", message: $m, end_utc: $t}')" \
        2>/dev/null || log "(the message could not be kept in $RUN_DIR/$SUITE: $(raw_problem "$RUN_DIR/$SUITE"))"
}

# raw_writable DIR WHAT: stops the suite when DIR cannot take raw files (raw_problem) before WHAT
# (a server start, a point) begins, rather than halfway through writing it.
raw_writable() {
    local problem
    problem=$(raw_problem "$1")
    [[ -z $problem ]] && return 0
    abort_suite "cannot write the raw files of $2: $problem${SERVER_LOG:+; the server log: $SERVER_LOG}"
    return 1
}

# suite_signal NAME: the INT and TERM traps. The exit runs suite_exit.
suite_signal() {
    SUITE_SIGNAL=$1
    exit $(( 128 + $(kill -l "$1") ))
}

# suite_exit: the EXIT trap. Ends the tool and the server under way (whatever ended the suite)
# and says where it stopped when it did not say so itself (abort_suite): on a signal, or on an
# error set -e caught (a write that failed: the raw directory's state is given). A signal is then
# raised again, so that run_all.sh (and any shell) sees the suite died of it and stops too.
suite_exit() {
    local rc=$? problem
    set +e          # the clean-up runs to its end whatever fails in it
    tool_stop
    rss_sampler_stop
    stop_server
    sliced_stop_all
    hosts_down
    rm -rf "$GATE_TMP"
    [[ -z ${OHA_DB:-} ]] || rm -f "$OHA_DB"   # oha's per-request record of a point not finished
    if [[ -n ${SUITE_SIGNAL:-} ]]; then
        log "suite $SUITE interrupted${SUITE_AT:+ during $SUITE_AT}${SUITE_POINT:+; the point is not recorded and is redone on resume}; finished points are kept under $RUN_DIR/$SUITE; rerun the same command to resume"
        trap - EXIT "$SUITE_SIGNAL"
        kill -s "$SUITE_SIGNAL" $$
    elif (( rc != 0 )) && [[ -n ${SUITE_AT:-} && -z ${SUITE_STOPPED:-} ]]; then
        problem=$(raw_problem "$RUN_DIR/$SUITE")
        log "suite $SUITE stopped by the error above during $SUITE_AT${problem:+ ($problem)}${SUITE_POINT:+; the point is not recorded and is redone on resume}${SERVER_LOG:+; the server log: $SERVER_LOG}"
        log "finished points are kept under $RUN_DIR/$SUITE; rerun the same command to resume"
        [[ -n $problem ]] || keep_stop_message "${DIE_MESSAGE:-an error (exit status $rc)} (during $SUITE_AT)"
    fi
}

# point_recorded SERVER REP DONE SKIPPED TOTAL LABEL: the progress line of a point just recorded;
# when its server died or stopped answering meanwhile (POINT_ALIVE false), the suite stops (returns 1).
point_recorded() {
    progress "$3" "$4" "$5" "$6"
    $POINT_ALIVE && return 0
    abort_suite "$1 $SERVER_TROUBLE during $SC_ID (rep $2): $SERVER_TROUBLE_DETAIL; the point is recorded as a failed run; its log: $SERVER_LOG"
    return 1
}

# suite_blocks: the blocks of a rep, one per line, in the order they run; in each block every server
# of the rep's order starts, is gated, serves the block's points and stops (BLOCKS, --blocks):
#   server    one block holding every point (printed as an empty line): a server starts once per
#             rep and serves all its points one after the other. A pair's two runs are then as
#             far apart as a rep is long (80 s for the http1 suite at 1 s runs).
#   scenario  one block per scenario id: all servers run a scenario before any runs the next, each
#             started for it. A pair's two runs are then seconds apart, so they share more of the
#             machine's drift (docs/method.md "Sizing the reps": on this VM the speed of the two
#             vCPUs' loopback moves between levels ~20 % apart for seconds at a time), at the cost
#             of a server start per point.
# A suite that orders a server's points itself (the latency suites: the rates follow the capacity
# point of the same start) always runs in server blocks.
#   sliced    every server of the rep up at once, and each scenario's runs interleaved in short
#             slices (scripts/lib/sliced.sh): a pair's two runs share the same seconds.
BLOCK_MODES=(server scenario sliced)

# check_blocks MODE: dies unless MODE is one of BLOCK_MODES (run_all.sh checks it before anything
# starts, each bench script again for itself).
check_blocks() {
    [[ " ${BLOCK_MODES[*]} " == *" $1 "* ]] || die "--blocks takes server, scenario or sliced (got '$1')"
}

suite_blocks() {
    local line
    if [[ ${BLOCKS:-server} != scenario ]] || declare -F suite_order_points >/dev/null; then echo; return 0; fi
    for line in "${SCENARIOS[@]}"; do
        parse_scenario "$line"
        scenario_selected && echo "$SC_ID"
    done
    return 0
}

# suite_run: the suite's points, rep by rep. With LAB_COUNT_POINTS=1 it only prints how many points
# it would measure and their estimated seconds (suite_plan: run_all.sh adds them up for the run's
# planned duration and progress line) and touches nothing.
suite_run() {
    local rep server line total=0 done=0 skipped=0 i order dir f blocks block
    if [[ -n ${LAB_COUNT_POINTS:-} ]]; then suite_plan; return 0; fi
    if [[ -f $RUN_DIR/$SUITE/suite.json ]]; then
        log "suite $SUITE of $(basename "$RUN_DIR") is already complete; nothing to do"
        return 0
    fi
    PAYLOAD_DIR=$BUILD_DIR/payload GATE_TMP=$(mktemp -d) SUITE_AT="the start of the suite" SUITE_POINT= SERVER_LOG=
    SUITE_SERVER_CPUS=$SERVER_CPUS
    trap suite_exit EXIT
    trap 'suite_signal INT' INT
    trap 'suite_signal TERM' TERM
    raw_writable "$RUN_DIR/$SUITE" "suite $SUITE" || return 1
    mkdir -p "$RUN_DIR/$SUITE"
    SUITE_AT="making the hosts (--hosts ${HOSTS:-local})"
    hosts_up
    SUITE_AT="the start of the suite"
    make_gate_payloads
    if [[ -n ${RUN_PROGRESS_FILE:-} ]]; then
        read -r RUN_BASE_DONE RUN_BASE_SKIPPED <"$RUN_PROGRESS_FILE" || RUN_BASE_DONE=0 RUN_BASE_SKIPPED=0
    fi
    # Checked here, in this shell: a mistake found inside todo_for's process
    # substitution would be lost and the suite would look complete.
    local selected=0
    for line in "${SCENARIOS[@]}"; do
        parse_scenario "$line"
        scenario_selected || continue
        for server in "${SUITE_SERVERS[@]}"; do
            server_serves "$server" "$SC_PROTOCOL:$SC_KIND" && selected=$(( selected + 1 ))
        done
    done
    if (( selected == 0 )); then
        log "suite $SUITE: nothing selected (--scenarios '${SCENARIO_FILTER:-}', servers ${SUITE_SERVERS[*]}); skipped"
        return 0
    fi
    [[ $BLOCKS == sliced ]] && sliced_check
    read -r total f < <(suite_plan)
    mapfile -t blocks < <(suite_blocks)
    log "suite $SUITE: $total points to run (${REPS} reps, ${DURATION}s + ${RUN_WARMUP}s warm-up each$( [[ -z ${SUITE_LONGER_WARMUPS:-} ]] || echo " (longer for some servers, above)"), $( if [[ $BLOCKS == sliced ]]; then echo "every server's runs interleaved in ${SLICE_S} s slices"; elif ((${#blocks[@]} > 1)); then echo "${#blocks[@]} scenario blocks per rep"; else echo "one block per rep"; fi); planned: $(plan_text "$f"), an estimate), server CPUs $SERVER_CPUS, client CPUs $CLIENT_CPUS"
    suite_order
    host_state start
    # the machine's own speed before, halfway through and after the suite (scripts/lib/canary.sh)
    SUITE_AT="the canary at the start of the suite"
    canary start
    SUITE_T0=$(date +%s)
    for (( rep = 1; rep <= REPS; rep++ )); do
        read -ra order <<<"${REP_ORDERS[rep - 1]}"
        if [[ $BLOCKS == sliced ]]; then
            SL_DONE=$done SL_SKIPPED=$skipped SL_TOTAL=$total
            sliced_rep "$rep" "${order[@]}" || return 1
            done=$SL_DONE skipped=$SL_SKIPPED
            blocks=()
        fi
        for block in "${blocks[@]}"; do
            TODO_BLOCK=$block
            for i in "${!order[@]}"; do
                server=${order[$i]} POINT_POSITION=$(( i + 1 ))
                mapfile -t todo < <(todo_for "$server" "$rep")
                (( ${#todo[@]} )) || continue
                # a suite may order a server's points itself (suite_order_points SERVER REP LINE...)
                if declare -F suite_order_points >/dev/null; then
                    mapfile -t todo < <(suite_order_points "$server" "$rep" "${todo[@]}")
                fi
                SUITE_AT="the start of $server (rep $rep)"
                raw_writable "$RUN_DIR/$SUITE/$server" "$server (rep $rep)" || return 1
                mkdir -p "$RUN_DIR/$SUITE/$server"
                # A rep resumed after a stop starts its server again with a log of its own: the first
                # one's (maybe the record of its crash) stays as it was.
                SERVER_LOG=$RUN_DIR/$SUITE/$server/server.r$rep${TODO_BLOCK:+.$TODO_BLOCK}.log
                [[ -e $SERVER_LOG ]] && SERVER_LOG=$RUN_DIR/$SUITE/$server/server.r$rep${TODO_BLOCK:+.$TODO_BLOCK}.resumed-$(date +%s).log
                # <server>@<n> runs on the first n CPUs of the share, every other server on all of it;
                # the point's cpu.json records them
                SERVER_CPUS=$(point_server_cpus "$server")
                start_server "$server" "$SERVER_LOG"
                SUITE_AT="the verify gate of $server (rep $rep)"
                if ! gate "$server" "$rep"; then
                    log "$server failed the verify gate in rep $rep (see $RUN_DIR/$SUITE/$server/verify.r$rep*.txt and its log $SERVER_LOG); not loading it"
                    stop_server
                    skipped=$(( skipped + ${#todo[@]} ))
                    progress "$done" "$skipped" "$total" "$server r$rep skipped (verify gate)"
                    continue
                fi
                for line in "${todo[@]}"; do
                    parse_scenario "$line"
                    SC_URL="$SCHEME://$SERVER_ADDR:$SERVER_PORT$SC_ROUTE"
                    [[ $SC_KIND == echo_get ]] && SC_URL+="?size=$SC_SIZE"
                    dir=$(scenario_dir "$server")
                    SUITE_AT="$server $SC_ID (rep $rep)"
                    raw_writable "$dir" "$SUITE_AT" || return 1
                    # A suite's point may depend on an earlier one (the latency suite's rates on the
                    # server's measured capacity): suite_prepare_point SERVER REP sets what the point
                    # needs (SC_EXTRA_JSON: fields for scenario.json) or says why it cannot run.
                    SC_EXTRA_JSON='{}'
                    server_warmup "$server"
                    if declare -F suite_prepare_point >/dev/null && ! suite_prepare_point "$server" "$rep"; then
                        skipped=$(( skipped + 1 ))
                        progress "$done" "$skipped" "$total" "$server $SC_ID r$rep skipped ($POINT_SKIP_REASON)"
                        continue
                    fi
                    SUITE_POINT=1
                    write_scenario_json "$dir" "$server"
                    POINT_RETRIED=
                    measure_point "$dir" "$rep" "$SC_TOOL"
                    if [[ $POINT_FAULT_KIND == deadline || $POINT_FAULT_KIND == unconnected ]] && server_check; then
                        # A load tool that hung past its deadline while its server still answers
                        # measured nothing, and the hang can be the tool's own (Debian's h2load never
                        # closed a client still in its TLS handshake when its window ended: seen in
                        # the test command's smoke run; the lab's build, scripts/setup.sh, does, but
                        # a host may run Debian's). The point is measured again, once, as a resumed
                        # run would; its run.json says so (retried_after). A second hang stops the suite.
                        # So are clients still connecting at a window's end (note_unconnected); a
                        # second time the point is recorded, and failed.
                        log "$SUITE_AT: $POINT_FAULT, and $server still answers: measuring the point again (once)"
                        POINT_RETRIED=$POINT_FAULT
                        measure_point "$dir" "$rep" "$SC_TOOL"
                    fi
                    if [[ -n $POINT_FAULT ]]; then
                        # the server is asked too: a tool often hangs because its server does
                        if server_check; then f="$server still answers"
                        else f="$server $SERVER_TROUBLE as well ($SERVER_TROUBLE_DETAIL)"; fi
                        abort_suite "$POINT_FAULT while loading $SUITE_AT; the point is not recorded and is redone on resume${POINT_FAULT_FILES:+; its output: $POINT_FAULT_FILES}; $f; the server log: $SERVER_LOG"
                        return 1
                    fi
                    SUITE_POINT=
                    done=$(( done + 1 ))
                    point_recorded "$server" "$rep" "$done" "$skipped" "$total" "$server $SC_ID r$rep" || return 1
                done
                stop_server
                SERVER_LOG=
            done
        done
        TODO_BLOCK=
        # (not in the quick profile, which checks the pipeline: canary_moments)
        if (( rep == (REPS + 1) / 2 )) && canary_at mid; then
            SUITE_AT="the canary halfway through the suite"
            canary mid
        fi
    done
    # (the quick profile with one rep has none: the start's figures already show the machine)
    if canary_at end; then
        SUITE_AT="the canary at the end of the suite"
        canary end
    fi
    SUITE_AT="the end of the suite"
    host_state end
    write_json_once "$RUN_DIR/$SUITE/suite.json" \
        "$(jq -n --arg s "$SUITE" --arg t "$(utc_now)" '{suite: $s, status: "complete", message: "", end_utc: $t}')"
    SUITE_AT=
    log "suite $SUITE complete in $(( $(date +%s) - SUITE_T0 ))s"
}

# point_server_cpus SERVER: the CPUs SERVER is pinned to: for <server>@<n>, the first n of the
# suite's server CPUs in SERVER_CPU_ORDER (a plan's order: one thread per physical core first; by
# default the share's own order), else the whole share, SUITE_SERVER_CPUS.
point_server_cpus() {
    local n order
    n=$(cores_of "$1")
    [[ -n $n ]] || { echo "$SUITE_SERVER_CPUS"; return 0; }
    read -ra order <<<"${SERVER_CPU_ORDER:-$(cpu_list_expand "$SUITE_SERVER_CPUS")}"
    (( n >= 1 && n <= ${#order[@]} )) || die "$1: the server share has ${#order[@]} CPUs ($SUITE_SERVER_CPUS)"
    local IFS=,
    echo "${order[*]:0:n}"
}

# ---------------------------------------------------------------- profiles and flags

# run_params_json: the profile's parameters as meta.json records them.
run_params_json() {
    jq -n --argjson d "$DURATION" --argjson w "${RUN_WARMUP:-$WARMUP}" --argjson r "$REPS" --argjson aa "${AA:-0}" \
        --argjson lat "$(lat_duration)" --argjson latw "$LAT_WARMUP_S" --argjson le "${LATENCY_EVERY:-1}" --arg hosts "${HOSTS:-local}" --argjson clients "$CLIENT_HOSTS" \
        --arg rtt "${NETNS_RTT_MS:-}" --arg plan "${CPU_PLAN_NOTE:-}" --arg blocks "${BLOCKS:-server}" --argjson slice "$SLICE_S" \
        '{duration_s: $d, warmup_s: $w, reps: $r, aa: $aa, latency_run_s: $lat, latency_warmup_s: $latw, latency_every: $le, hosts: $hosts, blocks: $blocks,
          client_hosts: $clients, rtt_ms: (if $rtt == "" then null else ($rtt | tonumber) end)}
         + (if $plan == "" then {} else {cpu_plan: $plan} end)
         + (if $blocks == "sliced" then {slice_s: $slice} else {} end)'
}

# apply_profile NAME: durations and reps, for each that no flag gave. In the full profile a suite
# may declare its own ([full] in its suite.toml: suite_full_design); the run's meta.json records
# each part's (suite_params) when it starts.
apply_profile() {
    case $1 in
        # quick checks the pipeline, not the servers: no warm-up (it would double each point's time)
        quick) DURATION=${DURATION:-1} WARMUP=${WARMUP:-0} REPS=${REPS:-1} AA=${AA:-0} ;;
        full)  [[ -z ${SUITE:-} ]] || suite_full_design
               DURATION=${DURATION:-3} WARMUP=${WARMUP:-1} REPS=${REPS:-5} AA=${AA:-1} ;;
        # the write-ups' own runs (wrk -t4 -c100 -d10s) with the lab's warm-up, reps and A/A copy;
        # the CPU split is seed_conditions' (below)
        seed)  DURATION=${DURATION:-10} WARMUP=${WARMUP:-1} REPS=${REPS:-5} AA=${AA:-1} ;;
        *)     die "unknown profile '$1' (quick, full, seed)" ;;
    esac
    PROFILE=$1
}

# suite_full_design: the settings of SUITE's suite.toml [full] (httplab.lab.suites: BLOCKS, REPS,
# DURATION, WARMUP, LATENCY_EVERY), each where no flag gave it: a flag overrides the one setting
# it names.
suite_full_design() {
    local out line var
    out=$("$(lab_python)" -m httplab suites --full "$SUITE") || die "suite $SUITE: its suite.toml [full] cannot be read (above)"
    while IFS= read -r line; do
        [[ -n $line ]] || continue
        var=${line%%=*}
        [[ -n ${!var:-} ]] || printf -v "$var" '%s' "${line#*=}"
    done <<<"$out"
}

# recorded_design: a part resumed in a run that recorded its design when it started (meta.json
# suite_params.<part>, with its blocks) runs on in that design, whatever the flags or its
# suite.toml say now: a run's points of one part are all measured alike.
recorded_design() {
    local f=${RUN_DIR:-}/meta.json rec slice
    [[ -n ${RUN_DIR:-} && -f $f ]] || return 0
    rec=$(jq -r --arg s "$SUITE" '(.suite_params // {})[$s] // {} | select(has("blocks"))
          | "\(.duration_s) \(.warmup_s) \(.reps) \(.latency_every // 1) \(.blocks) \(.slice_s // "-")"' "$f") ||
        die "could not read the design of $SUITE from $f"
    [[ -n $rec ]] || return 0
    read -r DURATION WARMUP REPS LATENCY_EVERY BLOCKS slice <<<"$rec"
    [[ $slice == - ]] || SLICE_S=$slice
}

# apply_cpu_plan KIND WHAT: the CPU plan KIND (python -m httplab cores KIND: scaling or seed;
# httplab/lab/cores.py) decides the split, whatever the run's default: SERVER_CPUS, CLIENT_CPUS and
# SERVER_CPU_ORDER (one thread per physical core first), exported, and the plan's PLAN_* values.
# A machine the plan cannot use stops here, WHAT named, with the plan's reason above.
apply_cpu_plan() {
    local plan
    plan=$("$(lab_python)" -m httplab cores "$1") || die "$2 cannot run on this machine (above)"
    eval "$plan"
    SERVER_CPUS=$PLAN_SERVER_CPUS CLIENT_CPUS=$PLAN_CLIENT_CPUS SERVER_CPU_ORDER=$PLAN_SERVER_ORDER
    export SERVER_CPUS CLIENT_CPUS SERVER_CPU_ORDER
}

# seed_conditions: the seed-conditions profile's plan (the load tool's four threads on the last four
# CPUs, the server on all the others; a machine with too few is refused, naming how many it needs),
# and SEED_EXTRA_SERVERS: the C server single-threaded, as the write-ups' event loop was (evloop@1),
# beside the one that uses every server core (--workers n).
seed_conditions() {
    apply_cpu_plan seed "the seed-conditions profile"
    SEED_EXTRA_SERVERS=evloop@1 CPU_PLAN_NOTE=$PLAN_NOTE
    export SEED_EXTRA_SERVERS CPU_PLAN_NOTE
}

# parse_suite_flags "$@": the flags every bench_*.sh takes.
suite_usage() {
    cat >&2 <<EOF
usage: $(basename "$0") [--run-dir DIR] [--quick] [--duration S] [--warmup S] [--reps N]
                        [--servers a,b] [--scenarios glob,glob]
  --run-dir DIR   raw/<run_id> to write into (default: a new run under raw/)
  --quick         the quick profile (1 s runs, no warm-up, 1 rep, the suite's QUICK_SCENARIOS
                  unless --scenarios is given); default: full (3 s runs after a 1 s warm-up,
                  5 reps, every scenario)
  --seed-conditions  the write-ups' set-up: the server on all but four CPUs, the load tool with
                  four threads on those four, 10 s runs after a 1 s warm-up, 5 reps, and the C
                  server also single-threaded (evloop@1); refused below 8 CPUs
  --duration S    seconds per measured run (whole seconds)
  --warmup S      seconds of unrecorded warm-up before each measured run
  --reps N        repetitions of every point
  --latency-every N  h2load's latency run (its per-request log, after the measured run) in reps
                  1, 1+N, 1+2N... only (default 1: every rep); the other reps record none
  --servers LIST  servers to run (default: every server whose manifest starts in mode
                  $SERVER_MODE and serves a route of this suite: ${SUITE_SERVERS[*]})
  --scenarios L   only scenario ids matching these globs (e.g. 'get_ping_*'; 'h3:get_ping_*'
                  applies to the h3 suite only)
  --aa, --no-aa   with / without the A/A copy of the contestant on the headline scenarios
                  (${HEADLINE_SCENARIOS:-none}); default: with in the full profile
  --order-seed N  the seed of the servers' random order (default: from the run id and suite)
  --blocks B      server (default): each server starts once per rep and serves all its points;
                  scenario: every server runs a scenario before any runs the next, one start per
                  point, so that the two runs of a comparison are seconds apart (docs/method.md);
                  sliced: every server of a rep up at once, each scenario's tools run in turn in
                  0.1 s slices (LAB_SLICE_S), so that they share the same seconds (wrk and h2load,
                  one client host; wrk's latency is not measured)
  --hosts MODE    local (default: this machine, loopback) or netns (a server host and a client
                  host as network namespaces joined by a veth pair; root)
  --netns-rate R  in netns mode, shape the link with tc tbf at R (e.g. 1gbit; default: unshaped)
  --clients N     in netns mode, N client hosts load every point at once, each with its share
                  of the connections (default 1)
  --inventory F   real machines from the Ansible inventory F (group server: this machine; group
                  clients: the load-generating hosts, all loading every point at once)
  --rtt MS        in netns mode, add MS milliseconds of round-trip time between the hosts (tc
                  netem; refused on a kernel without netem, as this one)
EOF
}

parse_suite_flags() {
    local profile=full servers=""
    suite_servers
    while (( $# )); do
        case $1 in
            --run-dir|--duration|--warmup|--reps|--latency-every|--servers|--scenarios|--order-seed|--blocks|--hosts|--netns-rate|--clients|--inventory|--rtt)
                need_value "$1" "$#" ;;&
            --run-dir)   RUN_DIR=$2; shift ;;
            --quick)     profile=quick ;;
            --seed-conditions) profile=seed ;;
            --duration)  DURATION=$2; shift ;;
            --warmup)    WARMUP=$2; shift ;;
            --reps)      REPS=$2; shift ;;
            --latency-every) LATENCY_EVERY=$2; shift ;;
            --servers)   servers=$2; shift ;;
            --scenarios) SCENARIO_FILTER=$2; shift ;;
            --aa)        AA=1 ;;
            --no-aa)     AA=0 ;;
            --order-seed) ORDER_SEED=$2; shift ;;
            --blocks)    BLOCKS=$2; shift ;;
            --hosts)     check_host_mode "$2"; HOSTS=$2; shift ;;
            --netns-rate) NETNS_RATE=$2; shift ;;
            --clients)   CLIENT_HOSTS=$2; CLIENTS_GIVEN=1; shift ;;
            --inventory) HOSTS=inventory INVENTORY_FILE=$2; shift ;;
            --rtt)       NETNS_RTT_MS=$2; shift ;;
            -h|--help)   suite_usage; exit 0 ;;
            *)           suite_usage; die "unknown flag '$1'" ;;
        esac
        shift
    done
    [[ $profile == seed ]] && seed_conditions
    apply_profile "$profile"
    recorded_design
    # The quick profile checks the pipeline, not the servers: a few points per suite.
    [[ $profile == quick && -z ${SCENARIO_FILTER:-} ]] && SCENARIO_FILTER=${QUICK_SCENARIOS:-}
    [[ $DURATION =~ ^[1-9][0-9]*$ ]] || die "--duration takes whole seconds ≥ 1 (got '$DURATION')"
    [[ $WARMUP =~ ^[0-9]+$ ]] || die "--warmup takes whole seconds (got '$WARMUP')"
    RUN_WARMUP=$WARMUP
    [[ $REPS =~ ^[1-9][0-9]*$ ]] || die "--reps takes a number ≥ 1 (got '$REPS')"
    LATENCY_EVERY=${LATENCY_EVERY:-1}
    [[ $LATENCY_EVERY =~ ^[1-9][0-9]*$ ]] || die "--latency-every takes a number ≥ 1 (got '$LATENCY_EVERY')"
    BLOCKS=${BLOCKS:-server}
    check_blocks "$BLOCKS"
    if [[ -n $servers ]]; then
        local s asked
        IFS=, read -ra asked <<<"$servers"
        SUITE_SERVERS=()
        for s in "${asked[@]}"; do
            known_server "$s" || die "unknown server '$s' (known: ${LAB_SERVERS[*]})"
            if server_has_mode "$s" "$SERVER_MODE"; then SUITE_SERVERS+=("$s")
            elif [[ -z ${LAB_COUNT_POINTS:-} ]]; then log "note: $s has no '$SERVER_MODE' mode in its manifest (${SERVER_MANIFEST[$s]}); suite $SUITE runs without it"; fi
        done
    fi
    [[ -z ${ORDER_SEED:-} || $ORDER_SEED =~ ^[0-9]+$ ]] || die "--order-seed takes a number (got '$ORDER_SEED')"
    hosts_read
    check_client_hosts
    # a suite may turn its servers into others (the scaling suite: <server>@<n> for each n)
    if declare -F suite_expand_servers >/dev/null; then suite_expand_servers; fi
    # the seed-conditions profile adds the single-threaded C server beside the C server
    local extra
    for extra in ${SEED_EXTRA_SERVERS:-}; do
        [[ " ${SUITE_SERVERS[*]} " == *" $(base_server "$extra") "* ]] && SUITE_SERVERS+=("$extra")
    done
    add_aa_copy
    default_cpu_sets
    local counting_alone=
    if [[ -z ${RUN_DIR:-} ]]; then
        # (counting the points alone, LAB_COUNT_POINTS without --run-dir, makes no run)
        [[ -n ${LAB_COUNT_POINTS:-} ]] && counting_alone=1
        RUN_DIR=$RAW_ROOT/$(new_run_id)
    fi
    if [[ ! -f $RUN_DIR/meta.json && -z $counting_alone ]]; then
        create_run_meta "$RUN_DIR" "$PROFILE" "$SUITE" "$(run_params_json)"
    fi
    # the design this part runs in, which may be its suite's own (suite.toml [full]) and which a
    # resumed run keeps (recorded_design)
    if [[ -z ${LAB_COUNT_POINTS:-} ]]; then
        note_suite_params "$RUN_DIR" "$SUITE" "$(run_params_json)" ||
            die "could not write suite $SUITE's design to $RUN_DIR/meta.json ($(raw_problem "$RUN_DIR"))"
    fi
    # (kept for suite_run's first line: the manifests are read once)
    SUITE_LONGER_WARMUPS=$(longer_warmups)
    local longer=$SUITE_LONGER_WARMUPS
    if [[ -n $longer && -z ${LAB_COUNT_POINTS:-} ]]; then
        log "note: suite $SUITE warms these servers' points longer than ${RUN_WARMUP} s (their manifests' min_warmup_s: their runtimes compile as they serve): $(paste -sd, <<<"$longer" | sed 's/ /: /g; s/,/ s, /g') s"
        note_server_warmups "$RUN_DIR" "$longer" ||
            die "could not write suite $SUITE's warm-ups to $RUN_DIR/meta.json ($(raw_problem "$RUN_DIR"))"
    fi
    export RUN_DIR
}

# server_warmup SERVER: sets WARMUP to the warm-up of SERVER's points: the run's (RUN_WARMUP: the
# profile's or --warmup), or its manifest's min_warmup_s where that is longer (a runtime that
# compiles as it serves: V8's JIT; servers that compile ahead of time gain nothing from one,
# docs/method.md). Each point's scenario.json records the warm-up it had; the run's meta.json names
# the servers warmed longer (note_server_warmups).
server_warmup() {
    local b=${1%"$AA_SUFFIX"}
    local min=${SERVER_MIN_WARMUP[${b%@*}]:-0}
    WARMUP=$(( RUN_WARMUP > min ? RUN_WARMUP : min ))
}

# longer_warmups: "SERVER SECONDS" per server of the suite whose points are warmed longer than the
# run's warm-up (server_warmup), one a line.
longer_warmups() {
    local s
    for s in "${SUITE_SERVERS[@]}"; do
        server_warmup "$s"
        (( WARMUP > RUN_WARMUP )) && echo "$s $WARMUP"
    done
    WARMUP=$RUN_WARMUP
}
