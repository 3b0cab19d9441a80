#!/usr/bin/env bash
# cost.sh: instructions per request, counted by valgrind (cachegrind), per server and protocol: a
# cost that the machine's other work cannot move, to gate changes to the C server (docs/cost.md).
#
#   scripts/cost.sh [--servers evloop,floor] [--protocols h1,h1_pipe16,h2c,h2c_m10,tls_h1,tls_h2]
#                   [--n1 2000] [--n2 20000] [--reps 3] [--run-id ID] [--skip-build]
#                   [--gate BASE_RUN_ID | --against REV] [--threshold 1.0]
#
# Each point is one server process under `valgrind --tool=cachegrind --cache-sim=no`, pinned to
# the server CPUs as the suites pin it, serving N requests of one mix from h2load (-n N, on the
# client CPUs), every one of which must succeed with a 2xx; then stopped, and its user-space
# instruction count read. Per rep, N1 and N2 requests in two fresh processes:
# instructions per request = (Ir(N2) − Ir(N1)) / (N2 − N1), which cancels start-up, connection
# set-up and shutdown. The mixes (scripts/lib/cost.sh cost_mix), all GET /ping on one connection:
#   h1 HTTP/1.1 keep-alive, one request at a time   h1_pipe16 HTTP/1.1, 16 pipelined
#   h2c cleartext HTTP/2, one stream at a time      h2c_m10   h2c, 10 concurrent streams
#   tls_h1 HTTPS/1.1 (TLS 1.3, ALPN http/1.1)       tls_h2    HTTPS/2 (ALPN h2)
# A server is measured on the mixes its manifest can serve (the floor: h1 and h1_pipe16).
#
# Raw records (written once): raw/<run_id>/cost/<server>.<protocol>/n<N>/r<rep>.{json,
# cachegrind.out.xz,h2load.txt,server.log}; --run-id ID resumes a run. Then the tidy frames
# data/<run_id>/cost.{parquet,csv} (per rep) and cost_points.{parquet,csv} (per process), and
# reports/<run_id>/cost.{md,html} (python -m httplab cost build).
#
# The gate: --gate BASE_RUN_ID compares this run with a committed one; --against REV first
# measures the servers built from git revision REV (their sources taken with git archive, built
# under build/cost-against/<commit>/) as a run of its own, then this tree. Either way
# `python -m httplab cost gate` prints the ratio per server and protocol and the script exits 1
# when one rose by more than --threshold percent (default 1). The gate alone, on two finished runs:
#   .venv/bin/python -m httplab cost gate BASE_RUN_ID NEW_RUN_ID [--threshold 1.0]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$LAB_ROOT/scripts/lib/cost.sh"

usage() { header_usage "${BASH_SOURCE[0]}"; }

# against_build REV: builds REV's servers/ into build/cost-against/<commit>/ (once) and sets
# AGAINST_COMMIT, AGAINST_BUILD and AGAINST_SERVERS (its manifests).
against_build() {
    AGAINST_COMMIT=$(git -C "$LAB_ROOT" rev-parse --verify -q "$1^{commit}") || die "--against: '$1' is no commit here"
    local root=$BUILD_DIR/cost-against/$AGAINST_COMMIT
    AGAINST_BUILD=$root/build AGAINST_SERVERS=$root/src/servers
    if [[ ! -f $root/.built ]]; then
        rm -rf "$root"; mkdir -p "$root/src"
        git -C "$LAB_ROOT" archive "$AGAINST_COMMIT" servers | tar -x -C "$root/src"
        LAB_SERVERS_DIR=$AGAINST_SERVERS BUILD_DIR=$AGAINST_BUILD "$LAB_ROOT/scripts/build.sh" --servers "$2"
        touch "$root/.built"
    fi
}

main() {
    local servers=evloop,floor protocols=$COST_PROTOCOLS_ALL n1=2000 n2=20000 reps=3 run_id="" build=true
    local gate="" against="" threshold=1.0 args=("$@")
    while (( $# )); do
        case $1 in
            --servers|--protocols|--n1|--n2|--reps|--run-id|--gate|--against|--threshold) need_value "$1" "$#" ;;&
            --servers)    servers=$2; shift ;;
            --protocols)  protocols=$2; shift ;;
            --n1)         n1=$2; shift ;;
            --n2)         n2=$2; shift ;;
            --reps)       reps=$2; shift ;;
            --run-id)     run_id=$2; shift ;;
            --gate)       gate=$2; shift ;;
            --against)    against=$2; shift ;;
            --threshold)  threshold=$2; shift ;;
            --skip-build) build=false ;;
            -h|--help)    usage; exit 0 ;;
            *)            usage; die "unknown flag '$1'" ;;
        esac
        shift
    done
    [[ -z $gate || -z $against ]] || die "--gate and --against exclude each other"
    [[ $threshold =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--threshold takes a percentage such as 1 or 0.5 (got '$threshold')"
    if [[ -n $against ]]; then
        # the revision's servers as a run of their own, then this tree's, then the gate
        against_build "$against" "$servers"
        local rest=() a skip=false
        for a in "${args[@]}"; do   # every flag but --against and its value
            if $skip; then skip=false; elif [[ $a == --against ]]; then skip=true; else rest+=("$a"); fi
        done
        rm -f "$AGAINST_BUILD/.last-cost-run"
        COST_SOURCE="$against ($AGAINST_COMMIT)" COST_LAST_RUN_FILE=$AGAINST_BUILD/.last-cost-run \
            LAB_SERVERS_DIR=$AGAINST_SERVERS BUILD_DIR=$AGAINST_BUILD "$LAB_ROOT/scripts/cost.sh" "${rest[@]}" --skip-build
        gate=$(cat "$AGAINST_BUILD/.last-cost-run")
        log "measured $against ($AGAINST_COMMIT) as run $gate; now this tree"
    fi
    if [[ -n $run_id ]]; then   # a resumed run keeps what it started with
        [[ $run_id =~ ^[A-Za-z0-9._-]+$ && -d $RAW_ROOT/$run_id/$COST_DIR ]] ||
            die "$RAW_ROOT/$run_id is not a run of cost.sh (no $COST_DIR/)"
        RUN_DIR=$RAW_ROOT/$run_id
        reps=$(jq -r .params.reps "$RUN_DIR/meta.json")
        n1=$(jq -r '.params.requests[0]' "$RUN_DIR/meta.json")
        n2=$(jq -r '.params.requests[1]' "$RUN_DIR/meta.json")
        servers=$(jq -r '.params.servers | join(",")' "$RUN_DIR/meta.json")
        protocols=$(jq -r '.params.protocols | join(",")' "$RUN_DIR/meta.json")
    fi
    check_count --reps "$reps" 1
    check_count --n1 "$n1" 1
    check_count --n2 "$n2" 2
    (( n2 > n1 )) || die "--n2 ($n2) must be larger than --n1 ($n1)"
    for t in valgrind h2load xz; do command -v "$t" >/dev/null || die "$t is missing: run scripts/setup.sh"; done
    local s p pairs=() tls=false
    IFS=, read -ra SERVERS <<<"$servers"
    IFS=, read -ra PROTOCOLS <<<"$protocols"
    load_servers
    for s in "${SERVERS[@]}"; do known_server "$s" || die "unknown server '$s' (known: ${LAB_SERVERS[*]})"; done
    for p in "${PROTOCOLS[@]}"; do cost_mix "$p" || die "unknown protocol '$p' (known: $COST_PROTOCOLS_ALL)"; done
    for s in "${SERVERS[@]}"; do
        for p in "${PROTOCOLS[@]}"; do
            if cost_can "$s" "$p"; then pairs+=("$s:$p"); [[ $COST_MODE == tls ]] && tls=true
            else log "note: $s cannot serve $p (its manifest has no '$COST_MODE' mode or no $COST_CAP route): left out"; fi
        done
    done
    (( ${#pairs[@]} )) || die "nothing to measure: no server of --servers serves a protocol of --protocols"
    $build && "$LAB_ROOT/scripts/build.sh" --servers "$servers"
    default_cpu_sets

    if [[ -n $run_id ]]; then
        log "resuming run $run_id"
    else
        RUN_DIR=$RAW_ROOT/$(new_run_id)
        [[ ! -e $RUN_DIR ]] || die "$RUN_DIR exists already (a run started this second); try again"
        create_run_meta "$RUN_DIR" cost "$COST_DIR" "$(jq -n --argjson reps "$reps" --argjson n1 "$n1" --argjson n2 "$n2" \
            --arg servers "$servers" --arg protocols "$protocols" --arg pairs "${pairs[*]}" \
            --arg source "${COST_SOURCE:-this checkout}" --arg valgrind "$(valgrind --version)" \
            '{reps: $reps, requests: [$n1, $n2], servers: ($servers | split(",")),
              protocols: ($protocols | split(",")), points: ($pairs | split(" ")),
              servers_from: $source, instrument: "\($valgrind) --tool=cachegrind --cache-sim=no"}')"
        mkdir -p "$RUN_DIR/$COST_DIR"
        log "new run $(basename "$RUN_DIR"): ${pairs[*]}; N = $n1, $n2; $reps reps; server CPUs $SERVER_CPUS, client CPUs $CLIENT_CPUS"
    fi
    if $tls; then SUITE=$COST_DIR; make_run_certificate; make_client_tls_config; fi
    trap 'tool_stop; cost_stop_server' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    local rep pair n
    for (( rep = 1; rep <= reps; rep++ )); do
        for pair in "${pairs[@]}"; do
            for n in "$n1" "$n2"; do cost_point "${pair%%:*}" "${pair#*:}" "$n" "$rep"; done
        done
    done
    finish_run_meta "$RUN_DIR" true
    local id
    id=$(basename "$RUN_DIR")
    [[ -z ${COST_LAST_RUN_FILE:-} ]] || printf '%s\n' "$id" >"$COST_LAST_RUN_FILE"   # (for --against)
    (cd "$LAB_ROOT" && "$(lab_python)" -m httplab cost build "$RUN_DIR" --out "$DATA_ROOT/$id" \
        --report "$REPORTS_ROOT/$id")
    [[ -z $gate ]] || (cd "$LAB_ROOT" && "$(lab_python)" -m httplab cost gate "$gate" "$id" --threshold "$threshold" \
        --raw "$RAW_ROOT" --data "$DATA_ROOT")
}

main "$@"
