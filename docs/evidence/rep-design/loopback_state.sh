#!/usr/bin/env bash
# The two-core VM's loopback state (docs/method.md, "Sizing the reps"): where a point's spread comes
# from, measured outside the harness with the lab's own binaries (build/bench after scripts/build.sh).
#
#   docs/evidence/rep-design/loopback_state.sh starts  N   # N starts of a server, 3 runs of 1 s each
#   docs/evidence/rep-design/loopback_state.sh one     N   # one start of a server, N runs of 1 s
#   docs/evidence/rep-design/loopback_state.sh probes  N   # the floor: ping-pong, run, ping-pong, N times
#
# `starts` and `one` print "SERVER START REQ_PER_S" lines (for the floor and the C server): is a start's
# level its own (a start effect) or the machine's at that moment, which moves within one start too? `probes` prints "PINGPONG_BEFORE REQ_PER_S
# PINGPONG_AFTER": does a 0.3 s loopback ping-pong between the two CPUs (build/bench/canary) read the
# state the run met? Server on CPU 0, wrk (one thread, 100 connections, GET /ping) on CPU 1.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
PORT=${PORT:-19999}
BENCH=build/bench

wrk_once() { taskset -c 1 wrk -t1 -c100 -d1s "http://127.0.0.1:$PORT/ping" | awk '/Requests\/sec/ { print $2 }'; }
pingpong() { "$BENCH/canary" pingpong 0.3 0 1 | jq .round_trips_per_s; }

# up CMD...: the server on CPU 0, back when it answers; SERVER_PID
up() {
    taskset -c 0 "$@" >/dev/null 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/ping" && return 0; sleep 0.05; done
    echo "server did not answer on port $PORT" >&2; exit 1
}
down() { kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; }

# server_up NAME: the floor or the C server (one worker)
server_up() {
    if [[ $1 == floor ]]; then up "$BENCH/floor" "$PORT" 127.0.0.1
    else up "$BENCH/http_bench_server" "$PORT" --bind 127.0.0.1 --workers 1; fi
}

starts() {
    local n=$1 name start
    for name in floor evloop; do
        for (( start = 1; start <= n; start++ )); do
            server_up "$name"
            for _ in 1 2 3; do echo "$name $start $(wrk_once)"; done
            down
        done
    done
}

one() {
    local n=$1 name i
    for name in floor evloop; do
        server_up "$name"
        for (( i = 1; i <= n; i++ )); do echo "$name 1 $(wrk_once)"; done
        down
    done
}

probes() {
    local n=$1 i
    up "$BENCH/floor" "$PORT" 127.0.0.1
    for (( i = 1; i <= n; i++ )); do echo "$(pingpong) $(wrk_once) $(pingpong)"; done
    down
}

case ${1:-} in
    starts|one|probes) "$1" "${2:-15}" ;;
    *) sed -n '2,13p' "${BASH_SOURCE[0]}" >&2; exit 2 ;;
esac
