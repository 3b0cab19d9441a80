#!/usr/bin/env bash
# idle_memory.sh: what an idle keep-alive connection costs each server in memory (the target and
# the commands: docs/hostile-clients.md).
#
#   scripts/idle_memory.sh [--quick] [--targets evloop:h1,evloop:h2c,nginx:h1,...]
#                          [--conns 1000,5000,20000] [--reps N] [--run-id ID] [--order-seed N]
#                          [--skip-build]
#
# For each target (server:mode, mode h1 or h2c), each N and each rep: the server is started fresh,
# pinned to the server CPUs exactly as the suites start it (lib/servers.sh start_server), and the
# client (python -m httplab idle-client, httplab/lab/idle_client.py), pinned to the client CPUs, warms it up, reads the server tree's
# memory once stable, opens N keep-alive connections that each make one request (h2c: preface,
# SETTINGS, one request) and read the answer, then stay idle; reads the memory again once stable,
# checks every connection is still open, and closes them. Per connection:
# (VmRSS with them − VmRSS before) / N, VmRSS summed over the server's processes.
#
# Profiles: full (default) N = 1000, 5000, 20000 and 5 reps; --quick N = 1000, 5000 and 2 reps.
# Targets default to evloop, nginx and h2o, each in h1 and h2c. The order of the targets in each
# rep is a seeded random Latin square (httplab.lab.schedule), kept in order.json.
# Raw records (written once, never rewritten): raw/<run_id>/idle_memory/<server>.<mode>/c<N>/
# r<rep>.json, the server's log beside it as r<rep>.server.log; --run-id ID resumes a run,
# measuring only the points it lacks. Then the tidy frame data/<run_id>/idle_memory.{parquet,csv}
# and the table (python -m httplab idle-memory raw/<run_id>).
#
# Open files: N connections need N descriptors in the server and in the client. The script raises
# the soft limit to the hard one, and the hard one to N + a reserve where it may (root with
# CAP_SYS_RESOURCE). Where it may not, an N above the limit is measured at the largest N it holds
# (limit − the reserve), and the record and the table say so (conns_asked beside conns).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

IDLE_DIR=idle_memory
IDLE_TARGETS=evloop:h1,evloop:h2c,nginx:h1,nginx:h2c,h2o:h1,h2o:h2c
IDLE_FD_RESERVE=${LAB_IDLE_FD_RESERVE:-64}   # descriptors a server or the client needs besides the connections
IDLE_CLIENT_TIMEOUT=30                       # seconds to open all N (a server that caps waits this long)
IDLE_CLIENT_LIMIT=$(( IDLE_CLIENT_TIMEOUT + 2 * 10 + 30 ))   # + two readings' settle limit + warm-up

usage() { header_usage "${BASH_SOURCE[0]}"; }

# fd_limits MAX_N: soft limit to the hard one, the hard one to MAX_N + the reserve where allowed.
# Sets FD_HARD (what the servers and the client will have).
fd_limits() {
    local want=$(( $1 + IDLE_FD_RESERVE ))
    FD_HARD=$(ulimit -Hn)
    if [[ $FD_HARD != unlimited ]] && (( FD_HARD < want )); then
        if ulimit -Hn "$want" 2>/dev/null; then FD_HARD=$want
        else log "note: the open-file hard limit is $FD_HARD and cannot be raised here ($(id -un), no CAP_SYS_RESOURCE): an N above $(( FD_HARD - IDLE_FD_RESERVE )) is measured at $(( FD_HARD - IDLE_FD_RESERVE )) connections"; fi
    fi
    ulimit -Sn "$FD_HARD"
    if [[ $FD_HARD == unlimited ]]; then FD_HARD=$(( want * 2 )); fi
}

# idle_point SERVER MODE N REP: one point (skipped when its record exists).
idle_point() {
    local server=$1 mode=$2 asked=$3 rep=$4 dir file conns
    dir=$RUN_DIR/$IDLE_DIR/$server.$mode/c$asked
    file=$dir/r$rep.json
    [[ -f $file ]] && return 0
    conns=$(( asked < FD_HARD - IDLE_FD_RESERVE ? asked : FD_HARD - IDLE_FD_RESERVE ))
    mkdir -p "$dir"
    rm -f "$dir/.r$rep.json"
    SERVER_LOG=$dir/r$rep.server.log
    [[ -e $SERVER_LOG ]] && SERVER_LOG=$dir/r$rep.server.resumed-$(date +%s).log
    SERVER_MODE=$mode start_server "$server" "$SERVER_LOG"
    tool_run "$IDLE_CLIENT_LIMIT" "$dir/.r$rep.client.txt" - "$(lab_python)" -m httplab idle-client \
        --port "$SERVER_PORT" --mode "$mode" --conns "$conns" --asked "$asked" --server-pid "$SERVER_PID" \
        --timeout "$IDLE_CLIENT_TIMEOUT" --out "$dir/.r$rep.json" ||
        die "the client failed on $server ($mode, N=$asked, rep $rep): $TOOL_END; its output: $dir/.r$rep.client.txt; the server log: $SERVER_LOG"
    server_alive || die "$server died during the point ($mode, N=$asked, rep $rep); its log: $SERVER_LOG"
    stop_server
    mv "$dir/.r$rep.json" "$file"
    log "[$server $mode N=$asked r$rep] $(tail -n 1 "$dir/.r$rep.client.txt")"
    rm -f "$dir/.r$rep.client.txt"
}

main() {
    local quick=false targets=$IDLE_TARGETS conns="" reps="" run_id="" build=true seed="" t
    while (( $# )); do
        case $1 in
            --targets|--conns|--reps|--run-id|--order-seed) need_value "$1" "$#" ;;&
            --quick)      quick=true ;;
            --targets)    targets=$2; shift ;;
            --conns)      conns=$2; shift ;;
            --reps)       reps=$2; shift ;;
            --run-id)     run_id=$2; shift ;;
            --order-seed) seed=$2; shift ;;
            --skip-build) build=false ;;
            -h|--help)    usage; exit 0 ;;
            *)            usage; die "unknown flag '$1'" ;;
        esac
        shift
    done
    if [[ -n $run_id ]]; then   # a resumed run keeps what it started with
        [[ $run_id =~ ^[A-Za-z0-9._-]+$ && -f $RAW_ROOT/$run_id/$IDLE_DIR/order.json ]] ||
            die "$RAW_ROOT/$run_id is not a run of idle_memory.sh (no $IDLE_DIR/order.json)"
        RUN_DIR=$RAW_ROOT/$run_id
        reps=$(jq -r .params.reps "$RUN_DIR/meta.json")
        conns=$(jq -r '.params.conns | map(tostring) | join(",")' "$RUN_DIR/meta.json")
        targets=$(jq -r '.params.targets | join(",")' "$RUN_DIR/meta.json")
    elif $quick; then conns=${conns:-1000,5000} reps=${reps:-2}
    else conns=${conns:-1000,5000,20000} reps=${reps:-5}; fi
    check_count --reps "$reps" 1
    IFS=, read -ra CONNS <<<"$conns"
    for t in "${CONNS[@]}"; do check_count --conns "$t" 1; done
    IFS=, read -ra TARGETS <<<"$targets"
    local servers=() server mode
    load_servers
    for t in "${TARGETS[@]}"; do
        server=${t%%:*} mode=${t#*:}
        [[ $t == *:* && ( $mode == h1 || $mode == h2c ) ]] || die "--targets takes server:mode pairs, mode h1 or h2c (got '$t')"
        known_server "$server" || die "unknown server '$server' (known: ${LAB_SERVERS[*]})"
        server_has_mode "$server" "$mode" || die "$server has no '$mode' mode in its manifest (${SERVER_MANIFEST[$server]})"
        server_serves "$server" "$( [[ $mode == h1 ]] && echo h1 || echo h2 ):ping" || die "$server does not serve GET /ping over $mode"
        [[ " ${servers[*]} " == *" $server "* ]] || servers+=("$server")
    done
    [[ -z $seed || $seed =~ ^[0-9]+$ ]] || die "--order-seed takes a number (got '$seed')"
    $build && "$LAB_ROOT/scripts/build.sh" --servers "$(IFS=,; echo "${servers[*]}")"
    default_cpu_sets
    fd_limits "$(printf '%s\n' "${CONNS[@]}" | sort -n | tail -n 1)"

    if [[ -n $run_id ]]; then
        log "resuming run $run_id: idle connections $conns, $reps reps, targets $targets"
    else
        RUN_DIR=$RAW_ROOT/$(new_run_id)
        create_run_meta "$RUN_DIR" idle_memory "$IDLE_DIR" "$(jq -n --argjson reps "$reps" --arg conns "$conns" \
            --arg targets "$targets" --argjson quick "$quick" --argjson hard "$FD_HARD" \
            --argjson reserve "$IDLE_FD_RESERVE" \
            '{reps: $reps, conns: ($conns | split(",") | map(tonumber)), targets: ($targets | split(",")),
              quick: $quick, nofile_hard: $hard, fd_reserve: $reserve}')"
        mkdir -p "$RUN_DIR/$IDLE_DIR"
        "$(lab_python)" -m httplab schedule --seed "${seed:-$(printf '%s' "$(basename "$RUN_DIR")" | cksum | cut -d' ' -f1)}" \
            --reps "$reps" --suite "$IDLE_DIR" -- "${TARGETS[@]}" >"$RUN_DIR/$IDLE_DIR/order.json"
        log "new run $(basename "$RUN_DIR"): idle connections $conns, $reps reps, targets $targets; server CPUs $SERVER_CPUS, client CPUs $CLIENT_CPUS"
    fi
    trap 'tool_stop; stop_server' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    local rep order n
    for (( rep = 1; rep <= reps; rep++ )); do
        read -ra order < <(jq -r --argjson r "$rep" '.orders[$r - 1] | join(" ")' "$RUN_DIR/$IDLE_DIR/order.json")
        for t in "${order[@]}"; do
            for n in "${CONNS[@]}"; do idle_point "${t%%:*}" "${t#*:}" "$n" "$rep"; done
        done
    done
    finish_run_meta "$RUN_DIR" true
    (cd "$LAB_ROOT" && "$(lab_python)" -m httplab idle-memory "$RUN_DIR" --out "$DATA_ROOT/$(basename "$RUN_DIR")" \
        --report "$REPORTS_ROOT/$(basename "$RUN_DIR")" &&
        "$(lab_python)" -m httplab index "$REPORTS_ROOT" --raw "$RAW_ROOT" --data "$DATA_ROOT" >/dev/null)
}

main "$@"
