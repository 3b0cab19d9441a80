# scripts/lib/tool_h3load.sh: the HTTP/3 load tool (sourced by lib.sh): h3load's warm-up and measured
# run, as measure_point calls them (<tool>_warmup, <tool>_measure).
#
# h3load is the lab's own (tools/h3load, built into build/tools by build.sh; its source's header
# says why: Debian's h2load has no HTTP/3, oha's HTTP/3 client waits out the server's idle timeout
# after every run). A closed loop as h2load's: SC_CONNS QUIC connections, SC_DEPTH streams (requests
# in flight) on each, for DURATION seconds, one client thread per client CPU. Its JSON report
# (--json) holds the run's answers, statuses, errors, its TLS facts and the window's exact latency
# histogram (httplab.parse.h3load); the throughput and the latency come from this one run (h2load's
# points need a second run for the latency log, which slows h2load; h3load's histogram does not).
# The warm-up is a run of its own before it, as for wrk and h2load; the measured run makes its
# connections inside its window, as theirs do.

h3load_bin() { echo "${H3LOAD:-$BUILD_DIR/tools/h3load}"; }

# h3load_args DURATION: H3LOAD_ARGS for one run of the parsed scenario (the run's self-signed
# certificate is not checked: --insecure, as curl -k and h2load do).
h3load_args() {
    H3LOAD_ARGS=(-c "$SC_CONNS" -m "$SC_DEPTH" -d "$1" -t "$(( CLIENT_THREADS < SC_CONNS ? CLIENT_THREADS : SC_CONNS ))"
                 --timeout "${H3LOAD_TIMEOUT:-5}" --insecure)
    [[ $SC_KIND == echo_post ]] && H3LOAD_ARGS+=(--body "$(payload_file "$SC_SIZE")")
    H3LOAD_ARGS+=("$SC_URL")
}

# (one client host only: the netns and inventory modes' several client hosts run wrk and h2load)
h3load_single_host() {
    multi_client && die "scenario $SC_ID: h3load loads from one client host; run the HTTP/3 suite with --clients 1"
    return 0
}

h3load_warmup() {
    h3load_single_host
    (( WARMUP > 0 )) || return 0
    h3load_args "$WARMUP"
    tool_run "$(( WARMUP + TOOL_MARGIN ))" /dev/null /dev/null "$(h3load_bin)" "${H3LOAD_ARGS[@]}" || true
    note_tool_fault "h3load's warm-up" "$WARMUP"
}

h3load_measure() {
    local part=$3
    h3load_args "$DURATION"
    LAST_TOOL_CMD="h3load ${H3LOAD_ARGS[*]}"
    # (--end-snapshot: the counters read around the window, copied the moment the load ends, before
    # h3load closes its connections, as the lab's wrk script does: the server's window ends with the load)
    tool_run "$(( DURATION + TOOL_MARGIN ))" "$part.stdout.txt" "$part.stderr.txt" \
        "$(h3load_bin)" --json "$part.h3load.json" --end-snapshot "$part.end.snapshot" \
        --snapshot-pids "$SNAPSHOT_PIDS" "${H3LOAD_ARGS[@]}"
}
