# scripts/lib/profile.sh: the one server a profiling script runs at a time (sourced after lib.sh by
# profile_evloop.sh and profile_kernel_share.sh): SERVER_PID and PORT, set by the caller.

SERVER_PID=

# stop_server: the server started last, stopped and reaped (nothing when none runs).
stop_server() {
    [[ -n $SERVER_PID ]] || return 0
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=
}

# wait_port [NAME]: until something listens on PORT (10 s); dies naming NAME if the server exits.
wait_port() {
    local i
    for i in $(seq 100); do
        ss -ltn "sport = :$PORT" | grep -q LISTEN && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || die "${1:-the server} exited while starting"
        sleep 0.1
    done
    die "${1:-the server} did not listen on $PORT"
}
