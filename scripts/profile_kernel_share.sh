#!/usr/bin/env bash
# profile_kernel_share.sh: where each server's CPU goes by kernel layer under one HTTP/1.1 load
# (evidence for the backends suite: how much of a request's cost a syscall model can touch). For each
# server (a manifest name, started in h1 mode by scripts/serve.sh, pinned as the suites pin it), wrk
# loads GET /ping from the client CPUs while perf samples the server process; perf's per-symbol
# report is kept, and httplab.report.kernel_share sums it by layer (user space, epoll, io_uring,
# syscall entry/exit, scheduler, and the TCP/IP path) into share.md.
#   --servers a,b    default: evloop,evloop_uring,floor,floor_uring (single-process servers)
#   --conns N        wrk connections (default 100)
#   --seconds S      perf sampling time (default 5)
#   --out DIR        default build/profiles/kernel-share-<commit>
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$LAB_ROOT/scripts/lib/profile.sh"

SERVERS=evloop,evloop_uring,floor,floor_uring CONNS=100 SECONDS_PERF=5 OUT=
PORT=${PROFILE_PORT:-18991}
while (($#)); do
    case $1 in
        --servers) need_value "$1" "$#"; SERVERS=$2; shift 2 ;;
        --conns) need_value "$1" "$#"; check_count "$1" "$2" 1; CONNS=$2; shift 2 ;;
        --seconds) need_value "$1" "$#"; check_count "$1" "$2" 1; SECONDS_PERF=$2; shift 2 ;;
        --out) need_value "$1" "$#"; OUT=$2; shift 2 ;;
        -h|--help) header_usage "$0"; exit 0 ;;
        *) die "unknown flag $1 (--help)" ;;
    esac
done
for t in perf wrk; do command -v "$t" >/dev/null || die "$t is missing: run scripts/setup.sh"; done
default_cpu_sets
commit=$(git -C "$LAB_ROOT" rev-parse --short HEAD 2>/dev/null || echo none)
OUT=${OUT:-$BUILD_DIR/profiles/kernel-share-$commit}
mkdir -p "$OUT"

trap stop_server EXIT


# profile NAME: NAME.perf.txt (perf report by symbol) and NAME.wrk.txt in OUT.
profile() {
    local name=$1 rec
    "$LAB_ROOT/scripts/serve.sh" "$name" "$PORT" --mode h1 >"$OUT/$name.server.log" 2>&1 &
    SERVER_PID=$!
    wait_port "$name"
    taskset -c "$CLIENT_CPUS" wrk -t1 -c"$CONNS" -d1 "http://127.0.0.1:$PORT/ping" >/dev/null   # warm-up
    perf record -q -g -p "$SERVER_PID" -o "$OUT/$name.perf.data" -- sleep "$SECONDS_PERF" >/dev/null 2>&1 &
    rec=$!
    taskset -c "$CLIENT_CPUS" wrk -t1 -c"$CONNS" -d$((SECONDS_PERF + 1)) "http://127.0.0.1:$PORT/ping" \
        >"$OUT/$name.wrk.txt"
    wait "$rec" || true
    stop_server
    perf report -i "$OUT/$name.perf.data" --no-children --sort sym -g none --percent-limit 0 --stdio \
        2>/dev/null >"$OUT/$name.perf.txt"
    rm -f "$OUT/$name.perf.data"
    log "$name: $(grep -E 'Requests/sec' "$OUT/$name.wrk.txt" | tr -s ' ')"
}

IFS=, read -ra names <<<"$SERVERS"
args=()
for name in "${names[@]}"; do
    profile "$name"
    args+=("$name=$OUT/$name.perf.txt")
done
{
    echo "Server CPU by kernel layer, wrk -t1 -c$CONNS GET /ping, perf over ${SECONDS_PERF} s ($commit, $(uname -r))"
    echo
    "$(lab_python)" -m httplab kernel-share "${args[@]}"
} >"$OUT/share.md"
cat "$OUT/share.md"
