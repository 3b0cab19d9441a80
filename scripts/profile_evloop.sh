#!/usr/bin/env bash
# profile_evloop.sh: where the C server spends its time on one load point, as evidence
# for a change to its hot path. Two views of the same point:
#   - perf (linux-perf): the server's stacks sampled while the load runs, kept as
#     perf.txt (the top symbols, user and kernel) and flame.svg (inferno's flame graph);
#   - callgrind: user-space instructions per request over a fixed number of requests,
#     which, unlike time, does not move with what else the machine is doing
#     (callgrind.txt: the total and the top functions).
# The server is pinned to SERVER_CPUS, the load tool to CLIENT_CPUS (lib.sh).
#   --mode h2c|h2|h1      h2c: h2load -m10 over cleartext; h2: HTTPS/2 (ALPN) h2load -m10;
#                         h1: HTTPS/1.1 with h2load --h1 (default h2c)
#   --path P              the request path (default /ping)
#   --conns N             connections (default 100)
#   --requests N          requests under callgrind (default 100000)
#   --seconds S           perf sampling time (default 5)
#   --bin DIR             a build directory holding bench/http{,s}_bench_server (default:
#                         this checkout's, built first)
#   --label TEXT          what the evidence is of (default: this checkout's commit)
#   --out DIR             where the evidence goes (default build/profiles/<mode>-<label>)
#   --no-perf, --no-callgrind
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$LAB_ROOT/scripts/lib/profile.sh"

LABEL= MODE=h2c REQ_PATH=/ping CONNS=100 REQUESTS=100000 SECONDS_PERF=5 BIN_DIR= OUT= DO_PERF=1 DO_CG=1
PORT=${PROFILE_PORT:-18990}

while (($#)); do
    case $1 in
        --mode) need_value "$1" "$#"; MODE=$2; shift 2 ;;
        --path) need_value "$1" "$#"; REQ_PATH=$2; shift 2 ;;
        --conns) need_value "$1" "$#"; check_count "$1" "$2" 1; CONNS=$2; shift 2 ;;
        --requests) need_value "$1" "$#"; check_count "$1" "$2" 1000; REQUESTS=$2; shift 2 ;;
        --seconds) need_value "$1" "$#"; check_count "$1" "$2" 1; SECONDS_PERF=$2; shift 2 ;;
        --bin) need_value "$1" "$#"; BIN_DIR=$2; shift 2 ;;
        --out) need_value "$1" "$#"; OUT=$2; shift 2 ;;
        --label) need_value "$1" "$#"; LABEL=$2; shift 2 ;;
        --no-perf) DO_PERF=0; shift ;;
        --no-callgrind) DO_CG=0; shift ;;
        -h|--help) header_usage "$0"; exit 0 ;;
        *) die "unknown flag $1 (--help)" ;;
    esac
done
[[ $MODE =~ ^(h2c|h2|h1)$ ]] || die "--mode takes h2c, h2 or h1 (got '$MODE')"
for t in perf valgrind callgrind_annotate inferno-collapse-perf inferno-flamegraph h2load; do
    command -v "$t" >/dev/null || die "$t is missing: run scripts/setup.sh"
done
default_cpu_sets

if [[ -z $BIN_DIR ]]; then
    make -s -C "$LAB_ROOT/servers/evloop" BUILD="$BUILD_DIR" bench
    BIN_DIR=$BUILD_DIR
fi
commit=${LABEL:-$(git -C "$LAB_ROOT" rev-parse --short HEAD 2>/dev/null || echo none)}
OUT=${OUT:-$BUILD_DIR/profiles/$MODE-$commit}
mkdir -p "$OUT"

# server_cmd: SERVER_CMD, the binary and arguments for this mode (TLS: a throwaway certificate).
server_cmd() {
    if [[ $MODE == h2c ]]; then
        SERVER_CMD=("$BIN_DIR/bench/http_bench_server" "$PORT")
    else
        local cert=$OUT/.cert.pem key=$OUT/.key.pem
        [[ -s $cert ]] || openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost \
            -keyout "$key" -out "$cert" 2>/dev/null
        SERVER_CMD=("$BIN_DIR/bench/https_bench_server" "$PORT" "$cert" "$key")
    fi
}

# load ARGS...: h2load for this mode on the client CPUs, with a request count or a duration.
load() {
    local scheme=http extra=(-m10)
    [[ $MODE != h2c ]] && scheme=https
    [[ $MODE == h1 ]] && extra=(--h1 -m1)
    taskset -c "$CLIENT_CPUS" h2load "${extra[@]}" -c"$CONNS" "$@" "$scheme://127.0.0.1:$PORT$REQ_PATH"
}


trap stop_server EXIT

profile_perf() {
    server_cmd
    taskset -c "$SERVER_CPUS" "${SERVER_CMD[@]}" 2>/dev/null &
    SERVER_PID=$!
    wait_port
    load -D 1 >/dev/null   # warm-up
    perf record -q -F 999 -g --call-graph dwarf,16384 -p "$SERVER_PID" -o "$OUT/perf.data" \
        -- sleep "$SECONDS_PERF" >/dev/null 2>&1 &
    local rec=$!
    load -D $((SECONDS_PERF + 1)) | grep -E '^(finished|requests):' >"$OUT/perf-load.txt"
    wait "$rec" || true
    stop_server
    perf report -i "$OUT/perf.data" --no-children --sort dso,sym -g none --percent-limit 0.5 --stdio 2>/dev/null \
        | grep -vE '^$' >"$OUT/perf.txt"
    perf script -i "$OUT/perf.data" 2>/dev/null | inferno-collapse-perf >"$OUT/stacks.folded"
    inferno-flamegraph --title "evloop $MODE $REQ_PATH, $CONNS connections ($commit)" \
        <"$OUT/stacks.folded" >"$OUT/flame.svg"
    rm -f "$OUT/perf.data"
    log "perf: $OUT/perf.txt, $OUT/flame.svg ($(head -1 "$OUT/perf-load.txt"))"
}

profile_callgrind() {
    # Only the loop's turns count (aeProcessEvents*): not start-up, not shutdown.
    server_cmd
    valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.out" --collect-atstart=no \
        --toggle-collect='aeProcessEvents*' "${SERVER_CMD[@]}" 2>/dev/null &
    SERVER_PID=$!
    wait_port
    local done
    done=$(load -n "$REQUESTS" | awk '/^requests:/ { print $8 }')
    stop_server
    [[ $done == "$REQUESTS" ]] || die "callgrind: $done of $REQUESTS requests succeeded"
    local ir
    ir=$(callgrind_annotate "$OUT/callgrind.out" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
    {
        echo "evloop $MODE $REQ_PATH, $CONNS connections, $REQUESTS requests ($commit)"
        echo "user-space instructions in the loop: $ir; per request: $(( ir / REQUESTS ))"
        echo
        callgrind_annotate "$OUT/callgrind.out" 2>/dev/null | sed -n '/file:function/,$p' | awk 'NR <= 42'
    } >"$OUT/callgrind.txt"
    rm -f "$OUT/callgrind.out"
    log "callgrind: $(sed -n 2p "$OUT/callgrind.txt")"
}

(( DO_PERF )) && profile_perf
(( DO_CG )) && profile_callgrind
rm -f "$OUT/.cert.pem" "$OUT/.key.pem"
log "evidence in $OUT"
