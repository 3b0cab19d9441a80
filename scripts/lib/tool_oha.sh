# scripts/lib/tool_oha.sh: the open-model load tool (sourced by lib.sh): oha's measured run and its
# after-step, as measure_point calls them (<tool>_warmup, <tool>_measure, <tool>_after).
#
# oha sends requests on a schedule of its own (-q R: one every 1/R s, whatever the answers do), and
# with --latency-correction times each request from the moment the schedule meant to send it, not
# from when a free connection took it: a server that stalls 50 ms is charged the 50 ms for every
# request it held back (no coordinated omission). The latency suite picks it for that (measured:
# oha's ceiling here, one client core, was 108k req/s over HTTP/1.1 and 219k over h2c; vegeta's
# 37k and 57k). Without -q it is a closed-loop tool like wrk, which the suite uses to measure each
# server's capacity. Its JSON report (-o, --output-format json) holds the whole run's summary,
# status codes and errors (httplab.parse.oha); the latency histogram of the window comes from its
# per-request record (below).
#
# The load of a point is SC_LOAD: "closed" (as fast as the connections allow), "open" (-q
# SC_TARGET_RPS with --latency-correction) or "open_uncorrected" (the same schedule, timed from
# the actual send: what a paced closed-loop tool reports). SC_TARGET_RPS is resolved by the suite
# before the point (latency_prepare_point).

# oha_args DURATION: OHA_ARGS for one run of the parsed scenario.
oha_args() {
    OHA_ARGS=(--no-tui --output-format json --worker-threads "$CLIENT_THREADS" -c "$SC_CONNS"
              -z "${1}s" -t "${OHA_TIMEOUT:-5s}")
    # -w: answers in flight at the deadline are waited for, rather than counted as "aborted due to
    # deadline" (over HTTP/2 oha 1.16 still aborts a few: the loader allows up to what was in flight)
    OHA_ARGS+=(-w)
    [[ $SC_PROTOCOL == h2 ]] && OHA_ARGS+=(--http2 -p "$SC_DEPTH")
    case $SC_LOAD in
        closed)           ;;
        open)             OHA_ARGS+=(-q "$SC_TARGET_RPS" --latency-correction) ;;
        open_uncorrected) OHA_ARGS+=(-q "$SC_TARGET_RPS") ;;
        *)                die "scenario $SC_ID: unknown oha load '$SC_LOAD' (closed, open, open_uncorrected)" ;;
    esac
    [[ $TLS == true ]] && OHA_ARGS+=(--insecure)   # the run's self-signed certificate
    OHA_ARGS+=("$SC_URL")
}

# The warm-up is the first WARMUP seconds of the measured run itself (one oha process of WARMUP +
# DURATION seconds), not a run of its own: the connections, and over TLS their handshakes, are
# made during it, so the latency window holds no connection set-up (a separate warm-up process
# would leave the measured run to open its 100 connections, and with the latency correction every
# request scheduled behind 100 RSA handshakes would be charged for them). oha writes every answered
# request to a SQLite file after the load (--db-url); oha_after keeps those scheduled in the window
# as a histogram (httplab.parse.oha_db). The server's CPU time and the request count cover the
# whole run, warm-up included, at the same rate: CPU-µs per request is unchanged by it.
oha_warmup() { :; }

oha_measure() {
    local part=$3
    oha_args "$(( WARMUP + DURATION ))"
    OHA_DB=$(mktemp "${LAB_LOG_TMP:-/dev/shm}/oha.XXXXXX.db" 2>/dev/null || mktemp)
    LAST_TOOL_CMD="oha ${OHA_ARGS[*]} (the first ${WARMUP} s are the warm-up)"
    tool_run "$(( WARMUP + DURATION + TOOL_MARGIN ))" "$part.stdout.txt" "$part.stderr.txt" \
        oha -o "$part.oha.json" --db-url "$OHA_DB" "${OHA_ARGS[@]}"
}

# oha_after: the window's histogram out of oha's database, which is then deleted (tens of MB).
oha_after() {
    local part=$3
    [[ -n ${OHA_DB:-} ]] || return 0
    on_client "$(lab_python)" -m httplab oha-hist "$OHA_DB" "$part.oha.hist.json" --skip "$WARMUP" \
        2>>"$part.stderr.txt" || true
    rm -f "$OHA_DB"
    OHA_DB=
}
