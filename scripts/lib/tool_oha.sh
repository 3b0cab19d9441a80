# scripts/lib/tool_oha.sh: the open-model load tool (sourced by lib.sh): oha's warm-up and measured
# run, as measure_point calls them (<tool>_warmup, <tool>_measure; no after-step).
#
# oha sends requests on a schedule of its own (-q R: one every 1/R s, whatever the answers do), and
# with --latency-correction times each request from the moment the schedule meant to send it, not
# from when a free connection took it: a server that stalls 50 ms is charged the 50 ms for every
# request it held back (no coordinated omission). The latency suite picks it for that (issue 16:
# oha's ceiling here, one client core, was 108k req/s over HTTP/1.1 and 219k over h2c; vegeta's
# 37k and 57k). Without -q it is a closed-loop tool like wrk, which the suite uses to measure each
# server's capacity. Its JSON report (-o, --output-format json) holds the whole run's summary,
# status codes, errors and nine percentiles taken from every request (httplab.parse.oha).
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

oha_warmup() {
    (( WARMUP > 0 )) || return 0
    oha_args "$WARMUP"
    tool_run "$(( WARMUP + TOOL_MARGIN ))" /dev/null /dev/null oha "${OHA_ARGS[@]}" || true
    note_tool_fault "oha's warm-up" "$WARMUP"
}

oha_measure() {
    local part=$3
    oha_args "$DURATION"
    LAST_TOOL_CMD="oha ${OHA_ARGS[*]}"
    tool_run "$(( DURATION + TOOL_MARGIN ))" "$part.stdout.txt" "$part.stderr.txt" \
        oha -o "$part.oha.json" "${OHA_ARGS[@]}"
}
