# scripts/lib/cost.sh: the instruction-count cost of a request (sourced by scripts/cost.sh after
# lib.sh; docs/cost.md): the request mixes, one server process under cachegrind, one point.
#
# Why this shape:
# - cachegrind --cache-sim=no counts the instructions the server executes in user space (its code,
#   libc, OpenSSL): a count, not a time, so what else runs on the machine cannot move it; with the
#   cache simulation off it is the cheapest valgrind tool (the server runs ~30-50x slower).
# - The count of one process includes start-up, the listener, the readiness probe, connection
#   set-up (the TLS handshake) and shutdown. Two processes that differ only in the number of
#   requests, N1 < N2, cancel all of that: (Ir(N2) − Ir(N1)) / (N2 − N1) is the cost of a request
#   in the steady state (httplab.stats.cost).
# - One connection per mix: the server then serves one connection per loop turn, and what a read
#   or a write carries is fixed by the mix (one request, or 16 pipelined, or 10 streams), not by
#   how fast the client runs beside a slowed-down server. With many connections the number ready
#   per epoll_wait would follow the timing, and the count with it.

COST_DIR=cost                       # raw/<run_id>/cost/
COST_PROTOCOLS_ALL=h1,h1_pipe16,h2c,h2c_m10,tls_h1,tls_h2
COST_TOOL_LIMIT=${LAB_COST_TOOL_LIMIT:-600}   # seconds h2load may take for one point's N requests
COST_READY_LIMIT=${LAB_COST_READY_LIMIT:-60}  # seconds a server under valgrind may take to listen
COST_STOP_GRACE=60                            # seconds for a server under valgrind to write its counts and exit
# Ports of their own (the suites' start at 18080): a suite run beside this one never collides.
COST_PORT_BASE=${LAB_COST_PORT_BASE:-28080}

# cost_mix PROTOCOL: sets the mix of a protocol name: COST_MODE (the manifest's start mode),
# COST_CAP (the route it needs, "<h1|h2>:<kind>"), COST_SCHEME and COST_H2LOAD (h2load's flags
# besides -n and the URL). Every mix is GET /ping over one connection.
cost_mix() {
    case $1 in
        h1)        COST_MODE=h1  COST_CAP=h1:ping     COST_SCHEME=http  COST_H2LOAD="--h1 -c1 -m1" ;;
        h1_pipe16) COST_MODE=h1  COST_CAP=h1:pipeline COST_SCHEME=http  COST_H2LOAD="--h1 -c1 -m16" ;;
        h2c)       COST_MODE=h2c COST_CAP=h2:ping     COST_SCHEME=http  COST_H2LOAD="-c1 -m1" ;;
        h2c_m10)   COST_MODE=h2c COST_CAP=h2:ping     COST_SCHEME=http  COST_H2LOAD="-c1 -m10" ;;
        tls_h1)    COST_MODE=tls COST_CAP=h1:ping     COST_SCHEME=https COST_H2LOAD="--h1 -c1 -m1" ;;
        tls_h2)    COST_MODE=tls COST_CAP=h2:ping     COST_SCHEME=https COST_H2LOAD="-c1 -m1" ;;
        *) return 1 ;;
    esac
}

# cost_can SERVER PROTOCOL: the server starts in the mix's mode and serves its route.
cost_can() {
    cost_mix "$2" && server_has_mode "$1" "$COST_MODE" && server_serves "$1" "$COST_CAP"
}

# cost_start_server NAME MODE LOGFILE CGOUT: NAME started as lib/servers.sh's start_server starts
# it (the manifest's command for MODE through server_command, pinned to SERVER_CPUS, the same
# readiness check), but under cachegrind, which writes its counts to CGOUT when the server exits.
# (scripts/serve.sh execs the server directly and has no place for a wrapper, hence this function;
# it waits with start_server's await_ready, under a longer limit.) Sets SERVER_PID and SERVER_PORT.
cost_start_server() {
    local name=$1 mode=$2 logfile=$3 cgout=$4
    SERVER_PORT=$(LAB_PORT_BASE=$COST_PORT_BASE server_port "$name")
    port_open "$SERVER_PORT" && die "port $SERVER_PORT is already in use; is an old server still running?"
    server_command "$name" "$SERVER_PORT" "$mode"
    COST_SERVER_CMD="${SERVER_CMD[*]}"
    taskset -c "$SERVER_CPUS" valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$cgout" \
        "${SERVER_CMD[@]}" >>"$logfile" 2>&1 &
    SERVER_PID=$!
    await_ready "$name" "$mode" "$COST_READY_LIMIT" "$logfile" && return 0
    stop_server
    die "$name was not ready under valgrind on port $SERVER_PORT within $COST_READY_LIMIT s (log: $logfile)"
}

# cost_stop_server: SIGTERM, and time for valgrind to write its counts (lib/proc.sh end_tree).
cost_stop_server() {
    [[ -n ${SERVER_PID:-} ]] || return 0
    end_tree "$COST_STOP_GRACE" "$SERVER_PID"
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=
}

# cost_point SERVER PROTOCOL N REP: one server process under cachegrind serving N requests of the
# mix (skipped when its record exists). Files under raw/<run_id>/cost/<server>.<protocol>/n<N>/:
# r<rep>.cachegrind.out.xz (the counts), r<rep>.h2load.txt (h2load's report), r<rep>.server.log,
# and r<rep>.json, written last: the point is finished and every request succeeded
# (python -m httplab cost check; else the script stops, naming the point and the reason, and the
# point's files stay as .r<rep>.* for a look).
cost_point() {
    local server=$1 protocol=$2 n=$3 rep=$4 dir tmp start url rc=0 end
    dir=$RUN_DIR/$COST_DIR/$server.$protocol/n$n
    [[ -f $dir/r$rep.json ]] && return 0
    cost_mix "$protocol"
    mkdir -p "$dir"
    tmp=$dir/.r$rep
    rm -f "$tmp".*
    start=$(utc_now)
    cost_start_server "$server" "$COST_MODE" "$tmp.server.log" "$tmp.cachegrind.out"
    url=$COST_SCHEME://$SERVER_ADDR:$SERVER_PORT/ping
    # shellcheck disable=SC2086  # the mix's flags are words
    tool_run "$COST_TOOL_LIMIT" "$tmp.h2load.txt" - h2load $COST_H2LOAD -n "$n" "$url" || rc=$?
    end=$TOOL_END
    server_alive || die "$server died during the point ($protocol, N=$n, rep $rep); its log: $tmp.server.log"
    cost_stop_server
    [[ $end == ok ]] || die "h2load failed on $server ($protocol, N=$n, rep $rep): $end; its output: $tmp.h2load.txt"
    [[ -s $tmp.cachegrind.out ]] || die "valgrind wrote no counts for $server ($protocol, N=$n, rep $rep); the log: $tmp.server.log"
    xz -9 -T1 "$tmp.cachegrind.out"
    chmod 0644 "$tmp.cachegrind.out.xz"   # valgrind writes it 0600; raw files are readable
    jq -n --arg server "$server" --arg protocol "$protocol" --arg mode "$COST_MODE" --argjson n "$n" \
        --argjson rep "$rep" --arg h2load "h2load $COST_H2LOAD -n $n $url" --arg cmd "$COST_SERVER_CMD" \
        --arg valgrind "$(valgrind --version)" --arg start "$start" --arg end_utc "$(utc_now)" \
        --arg tool_end "$end" --argjson rc "$rc" --arg server_cpus "$SERVER_CPUS" --arg client_cpus "$CLIENT_CPUS" \
        '{server: $server, protocol: $protocol, mode: $mode, requests: $n, rep: $rep,
          client_command: $h2load, server_command: $cmd, instrument: "\($valgrind) --tool=cachegrind --cache-sim=no",
          server_cpus: $server_cpus, client_cpus: $client_cpus, start_utc: $start, end_utc: $end_utc,
          tool_end: $tool_end, tool_exit: $rc}' >"$tmp.json"
    local summary
    summary=$("$(lab_python)" -m httplab cost check "$dir" --tmp "$rep") ||
        die "point $server $protocol N=$n rep $rep failed (above); its files: $tmp.*"
    for f in cachegrind.out.xz h2load.txt server.log json; do mv "$tmp.$f" "$dir/r$rep.$f"; done
    log "[$server $protocol N=$n r$rep] $summary"
}
