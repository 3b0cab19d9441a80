# scripts/lib.sh: the functions every lab script shares. Source it; it runs nothing.
#
# Sections: paths and logging; CPU pinning; the servers (lib/servers.sh: the
# registry read from the manifests, starting and stopping); /proc accounting; the
# verify gate; the raw run directory; measuring one point; the suite driver. Suites (bench_*.sh) only declare their
# scenario matrix and call suite_run.

LAB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$LAB_ROOT/build}
RAW_ROOT=${RAW_ROOT:-$LAB_ROOT/raw}
DATA_ROOT=${DATA_ROOT:-$LAB_ROOT/data}
REPORTS_ROOT=${REPORTS_ROOT:-$LAB_ROOT/reports}
LUA_DIR=$LAB_ROOT/scripts/lua
VENV_DIR=${VENV_DIR:-$LAB_ROOT/.venv}

# ---------------------------------------------------------------- logging

log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# need_value FLAG ARGC [WHAT]: dies unless the flag has a value after it (ARGC = "$#" where the flag
# is $1), naming what it takes.
need_value() { (( $2 >= 2 )) || die "$1 needs a value${3:+: $3}"; }

# header_usage FILE: the comment block at the top of FILE (after the #! line), without the '#'.
header_usage() { awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$1" >&2; }

# check_count FLAG VALUE MIN: dies unless VALUE is a whole number ≥ MIN.
check_count() {
    [[ $2 =~ ^[0-9]+$ ]] && (( $2 >= $3 )) || die "$1 takes a whole number ≥ $3 (got '$2')"
}
utc_now() { date -u +%Y-%m-%dT%H:%M:%SZ; }

# lab_python: the Python that has the lab's packages (the venv, else a conda env).
lab_python() {
    if [[ -x $VENV_DIR/bin/python ]]; then echo "$VENV_DIR/bin/python"
    elif [[ -n ${CONDA_PREFIX:-} && -x $CONDA_PREFIX/bin/python ]]; then echo "$CONDA_PREFIX/bin/python"
    else die "no lab Python environment: run scripts/setup.sh"
    fi
}

# ---------------------------------------------------------------- CPU pinning

# The server gets SERVER_CPUS and the load generator CLIENT_CPUS, disjoint: by
# default the first and the second half of the cores. With both on one core we
# would measure contention, not servers.
default_cpu_sets() {
    local n half
    n=$(nproc)
    (( n >= 2 )) || die "the lab needs at least 2 cores to pin server and load generator apart (found $n)"
    half=$(( n / 2 ))
    SERVER_CPUS=${SERVER_CPUS:-$( (( half == 1 )) && echo 0 || echo "0-$((half - 1))")}
    CLIENT_CPUS=${CLIENT_CPUS:-$( (( n - half == 1 )) && echo "$half" || echo "$half-$((n - 1))")}
    CLIENT_THREADS=$(cpu_count "$CLIENT_CPUS")
    export SERVER_CPUS CLIENT_CPUS CLIENT_THREADS
}

# cpu_count LIST: how many CPUs a taskset list such as "0-3,6" names.
cpu_count() {
    local total=0 part lo hi
    IFS=, read -ra parts <<<"$1"
    for part in "${parts[@]}"; do
        if [[ $part == *-* ]]; then lo=${part%-*}; hi=${part#*-}; total=$(( total + hi - lo + 1 ))
        else total=$(( total + 1 )); fi
    done
    echo "$total"
}

# on_client CMD...: runs CMD on the client CPUs. In the TLS suite the load tools
# (and the probe) read the lab's client OpenSSL config (make_client_tls_config).
# Inside a measured window (CLIENT_TIME_FILE set) the tool runs under GNU time,
# which writes its CPU time (from getrusage) to that file: the client's own cost.
CLIENT_TIME_FORMAT='user_s=%U sys_s=%S wall_s=%e maxrss_kb=%M exit=%x'
on_client() {
    local timer=()
    [[ -n ${CLIENT_TIME_FILE:-} ]] && timer=(/usr/bin/time -o "$CLIENT_TIME_FILE" -f "$CLIENT_TIME_FORMAT")
    if [[ -n ${LAB_CLIENT_OPENSSL_CONF:-} ]]; then
        "${timer[@]}" taskset -c "$CLIENT_CPUS" env OPENSSL_CONF="$LAB_CLIENT_OPENSSL_CONF" "$@"
    else
        "${timer[@]}" taskset -c "$CLIENT_CPUS" "$@"
    fi
}

# ---------------------------------------------------------------- servers

source "$LAB_ROOT/scripts/lib/servers.sh"

# ---------------------------------------------------------------- /proc accounting

# tree_pids PID: PID and all its descendants (nginx's worker, Node's cluster...).
tree_pids() {
    local pid=$1 child
    [[ -d /proc/$pid ]] || return 0
    echo "$pid"
    for child in $(cat /proc/"$pid"/task/*/children 2>/dev/null); do tree_pids "$child"; done
}

# cpu_ticks PID...: utime + stime (clock ticks) summed over the processes.
# Fields are counted after the ")" that closes the command name, which may hold spaces.
cpu_ticks() {
    local total=0 pid stat rest
    for pid in "$@"; do
        stat=$(cat /proc/"$pid"/stat 2>/dev/null) || continue
        rest=${stat##*) }
        read -r -a f <<<"$rest"
        total=$(( total + f[11] + f[12] ))
    done
    echo "$total"
}

# mem_kb FIELD PID...: a /proc/PID/status field (VmRSS, VmHWM) summed, in kB.
mem_kb() {
    local field=$1 total=0 pid v
    shift
    for pid in "$@"; do
        v=$(awk -v k="$field:" '$1 == k { print $2 }' /proc/"$pid"/status 2>/dev/null)
        total=$(( total + ${v:-0} ))
    done
    echo "$total"
}

# reset_peak_rss PID...: makes each process's VmHWM start again from its current
# RSS (Linux: 5 > /proc/PID/clear_refs), so the peak read after a window is the
# peak of that window, not of everything the process did since it started.
# Prints the method: clear_refs, or sampled when the kernel refused (then
# rss_sampler_start samples VmRSS through the window instead).
reset_peak_rss() {
    local pid
    [[ ${LAB_FORCE_RSS_SAMPLING:-0} == 1 ]] && { echo sampled; return 0; }  # tests of the fallback
    for pid in "$@"; do
        { echo 5 >"/proc/$pid/clear_refs"; } 2>/dev/null || { echo sampled; return 0; }
    done
    echo clear_refs
}

# rss_sampler_start FILE PID...: the fallback: the tree's summed VmRSS every 20 ms
# into FILE (one number a line), on the client CPUs; rss_sampler_stop ends it.
rss_sampler_start() {
    local file=$1
    shift
    ( while :; do mem_kb VmRSS "$@"; sleep 0.02; done ) >"$file" 2>/dev/null &
    RSS_SAMPLER_PID=$!
    taskset -pc "$CLIENT_CPUS" "$RSS_SAMPLER_PID" >/dev/null 2>&1 || true
}
rss_sampler_stop() {
    [[ -n ${RSS_SAMPLER_PID:-} ]] || return 0
    kill "$RSS_SAMPLER_PID" 2>/dev/null || true
    wait "$RSS_SAMPLER_PID" 2>/dev/null || true
    RSS_SAMPLER_PID=
}

# cpu_list_expand LIST: the CPU numbers of a taskset list ("0-2,5" -> "0 1 2 5").
cpu_list_expand() {
    local part out=()
    IFS=, read -ra parts <<<"$1"
    for part in "${parts[@]}"; do
        if [[ $part == *-* ]]; then out+=($(seq "${part%-*}" "${part#*-}")); else out+=("$part"); fi
    done
    echo "${out[*]}"
}

# proc_stat_json: the /proc/stat counters (user nice system idle iowait irq softirq
# steal ..., in clock ticks) of the pinned CPUs as a JSON object {"0": [...], ...}.
# Read around each measured window: the client and server cores' busy fraction,
# CPU steal, and the CPU time of anything else that ran on them come from these.
# proc_stat_json [FILE]: from /proc/stat, or from FILE holding copies of its lines
# (the end-of-load snapshot, snapshot_* below).
proc_stat_json() {
    awk -v cpus=" $(cpu_list_expand "$SERVER_CPUS") $(cpu_list_expand "$CLIENT_CPUS") " '
        $1 ~ /^cpu[0-9]+$/ && index(cpus, " " substr($1, 4) " ") {
            printf "%s\"%s\": [", (n++ ? ", " : "{"), substr($1, 4)
            for (i = 2; i <= NF; i++) printf "%s%s", (i > 2 ? ", " : ""), $i
            printf "]"
        }
        END { print (n ? "}" : "{}") }' "${1:-/proc/stat}"
}

# The end-of-load snapshot (report.lua's done() writes it the moment wrk's load
# ends, before its histogram dump): lines "uptime S IDLE", the cpuN lines of
# /proc/stat, "self <wrk's /proc/self/stat>" and "pid PID <its /proc/PID/stat>".
# snapshot_uptime FILE: the seconds of /proc/uptime when it was taken.
snapshot_uptime() { awk '$1 == "uptime" { print $2; exit }' "$1"; }

# snapshot_ticks FILE KIND: utime + stime summed over the "pid" lines (KIND=pid)
# or of the "self" line (KIND=self); fields counted after the last ")".
snapshot_ticks() {
    awk -v kind="$2" '$1 == kind {
            rest = $0; sub(/.*\) /, "", rest); split(rest, f, " ")
            total += f[12] + f[13]
        }
        END { print total + 0 }' "$1"
}

# ---------------------------------------------------------------- verify gate

# payload_file N: a file of N 'x' bytes (the echo body), made once per run.
payload_file() {
    local f=$PAYLOAD_DIR/x$1
    [[ -f $f ]] || head -c "$1" /dev/zero | tr '\0' x >"$f"
    echo "$f"
}

# gate_check BASE_URL METHOD PATH EXPECTED_BODY_FILE [REQUEST_BODY_FILE [bytes|json]]
# One request over the scenario's protocol (SC_PROTOCOL h1|h2, TLS true|false);
# prints one PASS/FAIL line. Fails when the response did not come over that
# protocol, the status is not 200, Content-Length is wrong (or, over HTTP/1.1,
# missing), or the body differs from the expected bytes (or, in json mode, does
# not parse to the same JSON value: whitespace and key order may differ).
gate_check() {
    local base=$1 method=$2 path=$3 expect=$4 send=${5:-} compare=${6:-bytes} out code version cl want
    local body=$GATE_TMP/body headers=$GATE_TMP/headers want_version
    local args=(-sS --max-time 10 -o "$body" -D "$headers" -w '%{http_code} %{http_version}' -X "$method")
    case $SC_PROTOCOL:$TLS in
        h1:*)       args+=(--http1.1); want_version=1.1 ;;
        h2:false)   args+=(--http2-prior-knowledge); want_version=2 ;;
        h2:true)    args+=(--http2); want_version=2 ;;
    esac
    [[ $TLS == true ]] && args+=(--insecure)
    if [[ -n $send && $compare == json ]]; then args+=(--data-binary "@$send" -H 'Content-Type: application/json')
    elif [[ -n $send ]]; then args+=(--data-binary "@$send" -H 'Content-Type: application/octet-stream'); fi
    out=$(on_client curl "${args[@]}" "$base$path" 2>&1) || { echo "FAIL $method $path: curl: $out"; return 1; }
    read -r code version <<<"$out"
    want=$(stat -c %s "$body")
    [[ $compare == bytes ]] && want=$(stat -c %s "$expect")
    cl=$(awk 'tolower($1) == "content-length:" { gsub("\r", "", $2); print $2 }' "$headers")
    if [[ $version != "$want_version" ]]; then echo "FAIL $method $path: answered over HTTP/$version, not HTTP/$want_version"; return 1; fi
    if [[ $code != 200 ]]; then echo "FAIL $method $path: status $code"; return 1; fi
    if [[ -z $cl && $SC_PROTOCOL == h1 ]]; then echo "FAIL $method $path: no Content-Length"; return 1; fi
    if [[ -n $cl && $cl != "$want" ]]; then echo "FAIL $method $path: Content-Length $cl, want $want"; return 1; fi
    if [[ $compare == json ]]; then
        if [[ $(jq -cS . "$body" 2>/dev/null) != "$(jq -cS . "$expect")" ]]; then
            echo "FAIL $method $path: JSON differs from $(jq -cS . "$expect"): $(head -c 300 "$body")"; return 1
        fi
        echo "PASS $method $path: HTTP/$version 200, Content-Length ${cl:-absent}, JSON equal"
        return 0
    fi
    if ! cmp -s "$body" "$expect"; then echo "FAIL $method $path: body differs from the expected $want bytes"; return 1; fi
    echo "PASS $method $path: HTTP/$version 200, Content-Length ${cl:-absent}, body exact ($want bytes)"
}

# ---------------------------------------------------------------- the raw run

# The run id: UTC time and short host name, unique per machine per second.
new_run_id() { echo "$(date -u +%Y%m%dT%H%M%SZ)-$(hostname -s)"; }

tool_version() {
    case $1 in
        wrk)     { wrk -v 2>&1 || true; } | head -n 1 ;;
        h2load)  h2load --version 2>&1 | head -n 1 ;;
        gcc)     gcc --version | head -n 1 ;;
        go)      go version ;;
        rustc)   rustc --version ;;
        node)    node --version ;;
        python)  python3 --version ;;
        openssl) openssl version ;;
        nghttp2) pkg-config --modversion libnghttp2 ;;
        curl)    curl --version | head -n 1 ;;
    esac 2>/dev/null || echo "not found"
}

# create_run_meta RUN_DIR PROFILE SUITES PARAMS_JSON: writes meta.json once.
create_run_meta() {
    local dir=$1 profile=$2 suites=$3 params=$4 tools='{}' t commit dirty state versions
    for t in wrk h2load gcc go rustc node python openssl nghttp2 curl; do
        tools=$(jq --arg k "$t" --arg v "$(tool_version "$t")" '. + {($k): $v}' <<<"$tools")
    done
    commit=$(git -C "$LAB_ROOT" rev-parse --verify -q HEAD 2>/dev/null || echo none)
    dirty=$( [[ -n $(git -C "$LAB_ROOT" status --porcelain --untracked-files=no 2>/dev/null) ]] && echo true || echo false)
    mkdir -p "$dir"
    state=$("$(lab_python)" -m httplab.parse.hoststate --exclude-pid $$ 2>/dev/null) || state=null
    # each server's own version line (its manifest's `version` command)
    versions=$(manifest_tool versions 2>/dev/null) || versions=null
    jq -n --arg run_id "$(basename "$dir")" --arg profile "$profile" --arg start "$(utc_now)" \
        --argjson host_state "$state" --argjson versions "$versions" \
        --arg suites "$suites" --arg scpu "$SERVER_CPUS" --arg ccpu "$CLIENT_CPUS" \
        --argjson cthreads "$CLIENT_THREADS" --argjson params "$params" --argjson tools "$tools" \
        --arg cpu "$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)" \
        --argjson cores "$(nproc)" --arg kernel "$(uname -sr)" --arg host "$(hostname -s)" \
        --arg commit "$commit" --argjson dirty "$dirty" \
        '{run_id: $run_id, profile: $profile, start_utc: $start, end_utc: null, complete: false,
          suites: ($suites | split(" ")), server_cpus: $scpu, client_cpus: $ccpu,
          client_threads: $cthreads, params: $params,
          host: {cpu_model: $cpu, cores: $cores, kernel: $kernel, hostname: $host},
          host_state: $host_state, tools: $tools, servers: $versions, git: {commit: $commit, dirty: $dirty}}' >"$dir/meta.json.tmp"
    mv "$dir/meta.json.tmp" "$dir/meta.json"
}

# finish_run_meta RUN_DIR COMPLETE: the one update meta.json ever gets: its end.
finish_run_meta() {
    jq --arg finish "$(utc_now)" --argjson complete "$2" '.end_utc = $finish | .complete = $complete' \
        "$1/meta.json" >"$1/meta.json.tmp"
    mv "$1/meta.json.tmp" "$1/meta.json"
}

# write_json_once FILE JSON: raw files are never rewritten; a second write is a no-op.
write_json_once() { [[ -f $1 ]] || { printf '%s\n' "$2" >"$1.tmp" && mv "$1.tmp" "$1"; }; }

# ---------------------------------------------------------------- TLS

# make_run_certificate: an RSA-2048 self-signed certificate for this run, under
# build/ (never raw/ or git); its public description goes to raw/. Only servers
# that keep the invoking user read it here (key 0600): h2o and nginx read the
# copies render_conf puts in the runtime directory, where nobody can reach.
make_run_certificate() {
    local dir=$BUILD_DIR/certs/$(basename "$RUN_DIR")
    if [[ ! -f $dir/cert.pem ]]; then
        mkdir -p "$dir"
        openssl req -x509 -newkey rsa:2048 -nodes -days 7 -subj /CN=localhost \
            -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
            -keyout "$dir/key.pem" -out "$dir/cert.pem" 2>/dev/null
        chmod 0600 "$dir/key.pem"; chmod 0644 "$dir/cert.pem"
    fi
    export LAB_CERT=$dir/cert.pem LAB_KEY=$dir/key.pem
    mkdir -p "$RUN_DIR/$SUITE"
    if [[ ! -f $RUN_DIR/$SUITE/certificate.txt ]]; then
        { openssl x509 -in "$LAB_CERT" -noout -subject -dates -fingerprint -sha256 -ext subjectAltName
          echo "key: RSA 2048, self-signed, made for run $(basename "$RUN_DIR")"; } \
            >"$RUN_DIR/$SUITE/certificate.txt" 2>&1
    fi
}

# make_client_tls_config: wrk, h2load and openssl s_client all take their TLS
# 1.3 cipher order from OpenSSL's config. Left alone they offer AES-256-GCM
# first, which servers that follow the client's order (nginx, h2o, evloop) then
# pick, while Go's crypto/tls picks AES-128-GCM whatever the client's order:
# the comparison would be made on two different ciphers. The lab's clients offer
# TLS 1.3's suites in the order browsers do, AES-128-GCM first, so every server
# negotiates the same cipher with its own default policy. The config used is
# copied to raw/ beside the certificate's description.
make_client_tls_config() {
    local conf=$BUILD_DIR/tls/client-openssl.cnf
    mkdir -p "$BUILD_DIR/tls"
    cat >"$conf.tmp" <<'CNF'
# OpenSSL config for the lab's load generators (OPENSSL_CONF), TLS suite only.
openssl_conf = lab_client_conf
[lab_client_conf]
ssl_conf = lab_client_ssl
[lab_client_ssl]
system_default = lab_client_defaults
[lab_client_defaults]
MinProtocol = TLSv1.2
Ciphersuites = TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256
CNF
    mv "$conf.tmp" "$conf"
    export LAB_CLIENT_OPENSSL_CONF=$conf
    [[ -f $RUN_DIR/$SUITE/client-openssl.cnf ]] || cp "$conf" "$RUN_DIR/$SUITE/client-openssl.cnf"
}

# tls_probe PART: the negotiated TLS version, cipher and ALPN protocol, asked
# with the ALPN the scenario's tool offers, right before the measured run. The
# full report is needed (OpenSSL 3.0's -brief leaves the ALPN result out); only
# its descriptive lines are kept: no certificate dump, session ids or secrets.
TLS_PROBE_LINES='^(CONNECTED|New, |Protocol *:|Cipher *:|ALPN protocol|No ALPN|Server Temp Key|Peer signature type|Verification|Verify return code|.*errno|.*error)'
tls_probe() {
    local alpn=http/1.1
    [[ $SC_PROTOCOL == h2 ]] && alpn=h2
    { on_client openssl s_client -connect "127.0.0.1:$SERVER_PORT" -alpn "$alpn" </dev/null 2>&1 || true; } |
        grep -aE "$TLS_PROBE_LINES" >"$1.tls.txt" || true
}

# ---------------------------------------------------------------- one measured point

# point_done DIR REP: the run.json of a point is written last, so it marks it finished.
point_done() { [[ -f $1/r$2.run.json ]]; }

# measure_point DIR REP TOOL: warm-up, then one measured run of TOOL (wrk or
# h2load) with, read around it: the server tree's CPU ticks and its RSS (after
# warm-up; the window's own peak, the high-water mark having been reset just
# before), the pinned cores' /proc/stat counters, and the tool's own CPU time;
# then the tool's optional after-step (outside the window). Everything the tools
# wrote is kept; files land under their final names only when the point is
# complete. The functions <tool>_warmup, <tool>_measure and <tool>_after take DIR,
# REP and the part-file prefix; the scenario fields come from the SC_* variables.
measure_point() {
    local dir=$1 rep=$2 tool=$3 part="$1/.r$2" pids t0 t1 w0 w1 rc=0 start alive f
    local rss_warm peak_method stat0 stat1 hwm up0 tool_wall window_end client_ticks wall
    "${tool}_warmup" "$dir" "$rep"
    [[ $TLS == true ]] && tls_probe "$part"
    mapfile -t pids < <(tree_pids "$SERVER_PID")
    rss_warm=$(mem_kb VmRSS "${pids[@]}")
    peak_method=$(reset_peak_rss "${pids[@]}")
    [[ $peak_method == sampled ]] && rss_sampler_start "$part.rss.samples" "${pids[@]}"
    start=$(utc_now)
    stat0=$(proc_stat_json)
    t0=$(cpu_ticks "${pids[@]}")
    read -r up0 _ </proc/uptime
    w0=$(date +%s.%N)
    SNAPSHOT_PIDS="${pids[*]}" CLIENT_TIME_FILE="$part.client.time.txt" \
        "${tool}_measure" "$dir" "$rep" "$part" || rc=$?
    w1=$(date +%s.%N)
    tool_wall=$(awk -v a="$w0" -v b="$w1" 'BEGIN { printf "%.6f", b - a }')
    mapfile -t pids < <(tree_pids "$SERVER_PID")
    if [[ -s $part.end.snapshot ]]; then
        # The window ends where the load ended (the tool's snapshot), not where
        # the tool exited after its own post-processing.
        window_end=load_end
        t1=$(snapshot_ticks "$part.end.snapshot" pid)
        stat1=$(proc_stat_json "$part.end.snapshot")
        client_ticks=$(snapshot_ticks "$part.end.snapshot" self)
        wall=$(awk -v a="$up0" -v b="$(snapshot_uptime "$part.end.snapshot")" 'BEGIN { printf "%.6f", b - a }')
    else
        window_end=tool_exit
        t1=$(cpu_ticks "${pids[@]}")
        stat1=$(proc_stat_json)
        client_ticks=null
        wall=$tool_wall
    fi
    rss_sampler_stop
    if [[ $peak_method == sampled ]]; then
        hwm=$(sort -n "$part.rss.samples" | tail -n 1)
    else
        hwm=$(mem_kb VmHWM "${pids[@]}")
    fi
    server_alive && alive=true || alive=false
    LAT_EXIT_CODE=null
    if declare -F "${tool}_after" >/dev/null; then "${tool}_after" "$dir" "$rep" "$part"; fi
    jq -n --argjson pids "$(printf '%s\n' "${pids[@]}" | jq -s .)" --argjson clk "$(getconf CLK_TCK)" \
        --argjson t0 "$t0" --argjson t1 "$t1" --argjson wall "$wall" \
        --argjson tool_wall "$tool_wall" --arg window_end "$window_end" \
        --argjson rss "$(mem_kb VmRSS "${pids[@]}")" --argjson hwm "${hwm:-null}" \
        --argjson rss_start "${SERVER_RSS_START:-null}" --argjson rss_warm "$rss_warm" \
        --arg method "$peak_method" --argjson alive "$alive" \
        '{pids: $pids, clk_tck: $clk, cpu_ticks_before: $t0, cpu_ticks_after: $t1, wall_s: $wall,
          tool_wall_s: $tool_wall, window_end: $window_end,
          rss_start_kb: $rss_start, rss_warm_kb: $rss_warm, rss_peak_kb: $hwm,
          rss_peak_method: $method, rss_kb: $rss, server_alive: $alive}' >"$part.server.json"
    jq -n --argjson clk "$(getconf CLK_TCK)" --arg scpu "$SERVER_CPUS" --arg ccpu "$CLIENT_CPUS" \
        --argjson before "$stat0" --argjson after "$stat1" --argjson cticks "$client_ticks" \
        --arg window_end "$window_end" \
        '{clk_tck: $clk, server_cpus: $scpu, client_cpus: $ccpu, window_end: $window_end,
          client_cpu_ticks: $cticks,
          fields: ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice"],
          proc_stat_before: $before, proc_stat_after: $after}' >"$part.cpu.json"
    for f in "$part".*; do mv "$f" "$dir/r$rep.${f##*/.r$rep.}"; done
    jq -n --argjson rep "$rep" --arg start "$start" --arg finish "$(utc_now)" --argjson rc "$rc" \
        --arg cmd "$LAST_TOOL_CMD" --argjson alive "$alive" --argjson latrc "$LAT_EXIT_CODE" \
        --argjson pos "${POINT_POSITION:-null}" \
        '{rep: $rep, start_utc: $start, end_utc: $finish, exit_code: $rc, cmd: $cmd, server_alive: $alive,
          position: $pos}
         + (if $latrc == null then {} else {lat_exit_code: $latrc} end)' \
        >"$dir/.run.json.tmp"
    mv "$dir/.run.json.tmp" "$dir/r$rep.run.json"
}

# wrk: one thread per client CPU; the Lua script sets the method/body/pipelining
# and its done() hook writes the JSON with the whole latency histogram.
wrk_args() {
    WRK_ARGS=(-t "$CLIENT_THREADS" -c "$SC_CONNS" --timeout "${WRK_TIMEOUT:-2s}" -s "$LUA_DIR/$SC_LUA" "$SC_URL")
}

wrk_env() {
    echo "WRK_LUA_DIR=$LUA_DIR BODY_SIZE=$SC_SIZE PIPELINE_DEPTH=$SC_DEPTH"
}

wrk_warmup() {
    (( WARMUP > 0 )) || return 0
    wrk_args
    on_client env $(wrk_env) WRK_JSON=/dev/null wrk -d "${WARMUP}s" "${WRK_ARGS[@]}" >/dev/null 2>&1 || true
}

wrk_measure() {
    local part=$3
    wrk_args
    LAST_TOOL_CMD="$(wrk_env) wrk -d ${DURATION}s ${WRK_ARGS[*]}"
    on_client env $(wrk_env) WRK_JSON="$part.wrk.json" WRK_END_SNAPSHOT="$part.end.snapshot" \
        WRK_SNAPSHOT_PIDS="$SNAPSHOT_PIDS" wrk -d "${DURATION}s" "${WRK_ARGS[@]}" \
        >"$part.stdout.txt" 2>"$part.stderr.txt"
}

# h2load: one thread per client CPU, -m streams per connection, -D seconds.
# The warm-up is a separate unrecorded run, as for wrk, not h2load's own
# --warm-up-time: that would put the warm-up inside the window over which the
# server's CPU time is read, while h2load counts only the measured requests.
h2load_args() {
    H2_ARGS=(-t "$CLIENT_THREADS" -c "$SC_CONNS" -m "$SC_DEPTH" -D "$1")
    [[ $SC_KIND == echo_post ]] && H2_ARGS+=(-d "$(payload_file "$SC_SIZE")")
    H2_ARGS+=("$SC_URL")
}

lat_duration() { echo $(( DURATION >= 2 ? DURATION / 2 : 1 )); }

h2load_warmup() {
    (( WARMUP > 0 )) || return 0
    h2load_args "$WARMUP"
    on_client h2load "${H2_ARGS[@]}" >/dev/null 2>&1 || true
}

# The throughput run: no per-request log, because writing it slows h2load
# measurably (about 15 % at 400k req/s here).
h2load_measure() {
    local part=$3
    h2load_args "$DURATION"
    LAST_TOOL_CMD="h2load ${H2_ARGS[*]}"
    on_client h2load "${H2_ARGS[@]}" >"$part.stdout.txt" 2>"$part.stderr.txt"
}

# The latency run: the same load with --log-file (one line per request), reduced
# at once to a compact histogram by httplab.parse.h2log; the log itself is not kept
# (tens of MB per run). Half the measured duration, rounded down (at least 1 s),
# gives ≥ 10^4 samples at these rates and keeps the suite's time in bounds.
h2load_after() {
    local part=$3 log
    log=$(mktemp "${LAB_LOG_TMP:-/dev/shm}/h2load.XXXXXX.log" 2>/dev/null || mktemp)
    h2load_args "$(lat_duration)"
    LAT_EXIT_CODE=0
    on_client h2load --log-file="$log" "${H2_ARGS[@]}" >"$part.lat.stdout.txt" 2>"$part.lat.stderr.txt" ||
        LAT_EXIT_CODE=$?
    on_client "$(lab_python)" -m httplab.parse.h2log "$log" "$part.lat.h2log.json" 2>>"$part.lat.stderr.txt" || true
    rm -f "$log"
}

# ---------------------------------------------------------------- the suite driver

# A suite declares SUITE, PROTOCOL (h1|h2, the default of its scenarios), TLS,
# SCHEME, SERVER_MODE (h1|h2c|tls) and SCENARIOS: one line per scenario, "id kind
# method route size connections depth lua", where kind is a route kind (the
# manifests' `serves`, httplab.parse.manifest.ROUTE_KINDS), optionally prefixed with
# its protocol ("h2:ping") when a suite mixes them; its servers are those whose
# manifests start in SERVER_MODE and serve one of its kinds (suite_servers); size is the payload, depth the pipeline depth over
# HTTP/1.1 or the concurrent streams per connection over HTTP/2, and lua wrk's
# script ("-" for h2load). HTTP/1.1 is loaded with wrk, HTTP/2 with h2load.
# suite_run then runs rep after rep; within a rep each server (started fresh, gated,
# then loaded with every scenario it serves) in an order that alternates with the
# rep, so slow drift of the machine hits every server alike.

parse_scenario() {
    read -r SC_ID SC_KIND SC_METHOD SC_ROUTE SC_SIZE SC_CONNS SC_DEPTH SC_LUA <<<"$1"
    SC_PROTOCOL=${PROTOCOL:-}
    if [[ $SC_KIND == *:* ]]; then SC_PROTOCOL=${SC_KIND%%:*} SC_KIND=${SC_KIND#*:}; fi
    case $SC_PROTOCOL in
        h1) SC_TOOL=wrk ;;
        h2) SC_TOOL=h2load ;;
        *)  die "scenario $SC_ID: unknown protocol '$SC_PROTOCOL' (h1, h2)" ;;
    esac
}

scenario_dir() { echo "$RUN_DIR/$SUITE/$1/$SC_ID"; }

# headline_scenario: the parsed scenario is one of the suite's HEADLINE_SCENARIOS
# (the seed's first table), the ones the A/A copy runs.
headline_scenario() { [[ ",${HEADLINE_SCENARIOS:-}," == *",$SC_ID,"* ]]; }

# add_aa_copy: with AA=1, the A/A copy of AA_BASE joins the suite's servers when AA_BASE is
# among them and a headline scenario is selected. AA_BASE defaults to the suite's first server
# of tier "contestant" (its manifest's tier): the one every report's Δs are about.
add_aa_copy() {
    local base=${AA_BASE:-} line s
    if [[ -z $base ]]; then
        for s in "${SUITE_SERVERS[@]}"; do [[ $(server_tier "$s") == contestant ]] && { base=$s; break; }; done
    fi
    [[ ${AA:-0} == 1 && -n $base && " ${SUITE_SERVERS[*]} " == *" $base "* ]] || return 0
    for line in "${SCENARIOS[@]}"; do
        parse_scenario "$line"
        if scenario_selected && headline_scenario; then SUITE_SERVERS+=("$base$AA_SUFFIX"); return 0; fi
    done
}

# suite_order: each rep's order of the servers, from a seeded random Latin square
# (httplab.tidy.order): every server takes every position about equally often over the
# reps, so a position effect (the first server after a pause, the last one on a
# warm machine) cannot favour one of them, and can be tested from the tidy data.
# Written once to <suite>/order.json with its seed; a resumed suite reads it back.
# Sets REP_ORDERS (one line of server names per rep) and ORDER_SEED.
suite_order() {
    local file=$RUN_DIR/$SUITE/order.json seed
    if [[ ! -f $file ]]; then
        seed=${ORDER_SEED:-$(printf '%s' "$(basename "$RUN_DIR")/$SUITE" | cksum | cut -d' ' -f1)}
        "$(lab_python)" -m httplab.tidy.order --seed "$seed" --reps "$REPS" --suite "$SUITE" \
            -- "${SUITE_SERVERS[@]}" >"$file.tmp"
        mv "$file.tmp" "$file"
    fi
    local want have
    want=$(printf '%s\n' "${SUITE_SERVERS[@]}" | sort | tr '\n' ' ')
    have=$(jq -r '.servers[]' "$file" | sort | tr '\n' ' ')
    [[ $want == "$have" && $(jq -r '.orders | length' "$file") -ge $REPS ]] ||
        die "$file was made for servers [$have] and $(jq -r '.orders | length' "$file") reps; this suite runs [$want] and $REPS reps: resume with the same flags, or start a new run (--new)"
    ORDER_SEED=$(jq -r .seed "$file")
    mapfile -t REP_ORDERS < <(jq -r '.orders[] | join(" ")' "$file")
}

# host_state WHEN: the host's state (CPU model and flags, governor, boost, SMT, THP,
# ASLR, kernel, load, the busiest other processes) into <suite>/host.WHEN.json,
# once; the report warns when it moved between start and end.
host_state() {
    local file=$RUN_DIR/$SUITE/host.$1.json
    [[ -f $file ]] && return 0
    on_client "$(lab_python)" -m httplab.parse.hoststate --exclude-pid $$ >"$file.tmp" 2>/dev/null &&
        mv "$file.tmp" "$file" || { rm -f "$file.tmp"; log "note: host state ($1) could not be read"; }
}

# scenario_selected: --scenarios takes a comma-separated list of globs.
scenario_selected() {
    local pat
    [[ -z ${SCENARIO_FILTER:-} ]] && return 0
    IFS=, read -ra pats <<<"$SCENARIO_FILTER"
    for pat in "${pats[@]}"; do [[ $SC_ID == $pat ]] && return 0; done
    return 1
}

# todo_for SERVER REP: the scenario lines SERVER still has to run in REP.
todo_for() {
    local server=$1 rep=$2 line
    for line in "${SCENARIOS[@]}"; do
        parse_scenario "$line"
        scenario_selected || continue
        server_serves "$server" "$SC_PROTOCOL:$SC_KIND" || continue
        is_aa_copy "$server" && ! headline_scenario && continue
        point_done "$(scenario_dir "$server")" "$rep" || echo "$line"
    done
}

write_scenario_json() {
    local dir=$1 server=$2
    mkdir -p "$dir"
    write_json_once "$dir/scenario.json" "$(jq -n --arg suite "$SUITE" --arg proto "$SC_PROTOCOL" \
        --argjson tls "$TLS" --arg server "$server" --arg id "$SC_ID" --arg route "$SC_ROUTE" \
        --arg method "$SC_METHOD" --argjson size "$SC_SIZE" --argjson conns "$SC_CONNS" \
        --argjson streams "$( [[ $SC_PROTOCOL == h2 ]] && echo "$SC_DEPTH" || echo 1)" \
        --argjson pipe "$( [[ $SC_PROTOCOL == h1 ]] && echo "$SC_DEPTH" || echo 1)" \
        --argjson threads "$CLIENT_THREADS" --argjson dur "$DURATION" --argjson warm "$WARMUP" \
        --argjson latdur "$( [[ $SC_TOOL == h2load ]] && lat_duration || echo null)" \
        --arg tool "$SC_TOOL" --arg url "$SC_URL" \
        '{suite: $suite, protocol: $proto, tls: $tls, server: $server, scenario: $id, route: $route,
          method: $method, size_bytes: $size, connections: $conns, streams: $streams,
          pipeline: $pipe, client_threads: $threads, duration_s: $dur, warmup_s: $warm,
          latency_run_duration_s: $latdur,
          tool: $tool, url: $url}')"
}

# The request body of the shoot-out's POST (scripts/lua/post_json.lua sends the same).
POST_JSON_BODY='{"name":"benchmark","value":42,"tags":["a","b"]}'

# make_gate_payloads: the expected bodies the gate compares with, made once.
make_gate_payloads() {
    mkdir -p "$PAYLOAD_DIR"
    printf pong >"$PAYLOAD_DIR/pong"
    printf 'Hello, World!' >"$PAYLOAD_DIR/hello"
    printf 'foo=bar\n' >"$PAYLOAD_DIR/query_foo_bar"
    printf '{"message":"Hello, World!","query":{"json":"true"}}' >"$PAYLOAD_DIR/json_true"
    printf '%s' "$POST_JSON_BODY" >"$PAYLOAD_DIR/post_json_body"
    printf '{"received":%s,"bytes":%d}' "$POST_JSON_BODY" "${#POST_JSON_BODY}" >"$PAYLOAD_DIR/post_json_reply"
}

# gate_expectation: for the parsed scenario, the path to request, the body to send
# (GATE_SEND, maybe empty), the expected reply (GATE_EXPECT) and how to compare
# (GATE_COMPARE: bytes, or json for parsed-JSON equality).
gate_expectation() {
    GATE_PATH=$SC_ROUTE GATE_SEND= GATE_COMPARE=bytes
    case $SC_KIND in
        ping|pipeline)   GATE_EXPECT=$PAYLOAD_DIR/pong ;;
        echo_get)        GATE_EXPECT=$(payload_file "$SC_SIZE"); GATE_PATH+="?size=$SC_SIZE" ;;
        echo_post)       GATE_SEND=$(payload_file "$SC_SIZE"); GATE_EXPECT=$GATE_SEND ;;
        root|root_close) GATE_EXPECT=$PAYLOAD_DIR/hello ;;
        query)           GATE_EXPECT=$PAYLOAD_DIR/query_foo_bar ;;
        json)            GATE_EXPECT=$PAYLOAD_DIR/json_true; GATE_COMPARE=json ;;
        post_json)       GATE_SEND=$PAYLOAD_DIR/post_json_body; GATE_EXPECT=$PAYLOAD_DIR/post_json_reply
                         GATE_COMPARE=json ;;
        *)               die "no verify-gate expectation for scenario kind '$SC_KIND'" ;;
    esac
}

# gate SERVER REP: every route the suite will hit on SERVER, over each protocol it
# uses, before any load.
gate() {
    local server=$1 rep=$2 out line ok=0 key base="$SCHEME://127.0.0.1:$SERVER_PORT"
    local -A seen=()
    out=$RUN_DIR/$SUITE/$server/verify.r$rep.txt
    [[ -f $out ]] && out=$RUN_DIR/$SUITE/$server/verify.r$rep.resumed-$(date +%s).txt
    mkdir -p "$(dirname "$out")"
    {
        echo "# verify gate: $SUITE $server rep $rep $(utc_now) $base"
        while read -r line; do
            [[ -n $line ]] || continue
            parse_scenario "$line"
            gate_expectation
            key="$SC_PROTOCOL $SC_METHOD $GATE_PATH $GATE_SEND"
            [[ -n ${seen[$key]:-} ]] && continue
            seen[$key]=1
            gate_check "$base" "$SC_METHOD" "$GATE_PATH" "$GATE_EXPECT" "$GATE_SEND" "$GATE_COMPARE" || ok=1
        done < <(todo_for "$server" "$rep")
    } >"$out.tmp"
    mv "$out.tmp" "$out"
    return $ok
}

# eta_text T0 DONE LEFT: "ETA 3m05s" from the pace since T0 over DONE measured points.
eta_text() {
    local t
    (( $2 > 0 )) || return 0
    t=$(( ($(date +%s) - $1) * $3 / $2 ))
    printf 'ETA %dm%02ds' $(( t / 60 )) $(( t % 60 ))
}

# progress DONE SKIPPED TOTAL LABEL: one line for the suite (points measured and skipped of its
# total, with an ETA from its pace) and, under run_all.sh, for the whole run: RUN_PROGRESS_FILE holds
# the run's measured and skipped points before this suite, RUN_TOTAL and RUN_T0 the run's total and
# start. Points skipped by a failed verify gate count as skipped, not done, so the ETA stays honest.
progress() {
    local done=$1 skipped=$2 total=$3 label=$4 line run_done run_skipped
    line="[$SUITE $done/$total$( (( skipped )) && echo ", $skipped skipped")] $label $(eta_text "$SUITE_T0" "$done" "$(( total - done - skipped ))")"
    if [[ -n ${RUN_PROGRESS_FILE:-} && -n ${RUN_TOTAL:-} ]]; then
        run_done=$(( RUN_BASE_DONE + done )) run_skipped=$(( RUN_BASE_SKIPPED + skipped ))
        echo "$run_done $run_skipped" >"$RUN_PROGRESS_FILE"
        line+=" | run $run_done/$RUN_TOTAL$( (( run_skipped )) && echo ", $run_skipped skipped"), $(( ($(date +%s) - RUN_T0) / 60 ))m elapsed, $(eta_text "$RUN_T0" "$run_done" "$(( RUN_TOTAL - run_done - run_skipped ))")"
    fi
    log "$line"
}

# abort_suite MESSAGE: a server died or misbehaved; the finished raw files stay.
abort_suite() {
    write_json_once "$RUN_DIR/$SUITE/suite.aborted.$(date +%s).json" \
        "$(jq -n --arg s "$SUITE" --arg m "$1" --arg t "$(utc_now)" '{suite: $s, status: "aborted", message: $m, end_utc: $t}')"
    stop_server
    log "suite $SUITE stopped: $1"
    log "finished points are kept under $RUN_DIR/$SUITE; rerun the same command to resume"
    return 1
}

# suite_points: the number of points suite_run would measure now (0 for a complete suite).
suite_points() {
    local rep server total=0
    [[ -f $RUN_DIR/$SUITE/suite.json ]] && { echo 0; return 0; }
    for (( rep = 1; rep <= REPS; rep++ )); do
        for server in "${SUITE_SERVERS[@]}"; do
            total=$(( total + $(todo_for "$server" "$rep" | grep -c . || true) ))
        done
    done
    echo "$total"
}

# suite_run: the suite's points, rep by rep. With LAB_COUNT_POINTS=1 it only prints how many points
# it would measure (run_all.sh adds them up for the run's progress line) and touches nothing.
suite_run() {
    local rep server line total=0 done=0 skipped=0 i order
    if [[ -n ${LAB_COUNT_POINTS:-} ]]; then suite_points; return 0; fi
    if [[ -f $RUN_DIR/$SUITE/suite.json ]]; then
        log "suite $SUITE of $(basename "$RUN_DIR") is already complete; nothing to do"
        return 0
    fi
    PAYLOAD_DIR=$BUILD_DIR/payload GATE_TMP=$(mktemp -d)
    mkdir -p "$RUN_DIR/$SUITE"
    make_gate_payloads
    trap 'rss_sampler_stop; stop_server; rm -rf "$GATE_TMP"' EXIT
    trap 'exit 130' INT TERM
    if [[ -n ${RUN_PROGRESS_FILE:-} ]]; then
        read -r RUN_BASE_DONE RUN_BASE_SKIPPED <"$RUN_PROGRESS_FILE" || RUN_BASE_DONE=0 RUN_BASE_SKIPPED=0
    fi
    # Checked here, in this shell: a mistake found inside todo_for's process
    # substitution would be lost and the suite would look complete.
    local selected=0
    for line in "${SCENARIOS[@]}"; do
        parse_scenario "$line"
        scenario_selected || continue
        for server in "${SUITE_SERVERS[@]}"; do
            server_serves "$server" "$SC_PROTOCOL:$SC_KIND" && selected=$(( selected + 1 ))
        done
    done
    if (( selected == 0 )); then
        log "suite $SUITE: nothing selected (--scenarios '${SCENARIO_FILTER:-}', servers ${SUITE_SERVERS[*]}); skipped"
        return 0
    fi
    total=$(suite_points)
    log "suite $SUITE: $total points to run (${REPS} reps, ${DURATION}s + ${WARMUP}s warm-up each), server CPUs $SERVER_CPUS, client CPUs $CLIENT_CPUS"
    suite_order
    host_state start
    SUITE_T0=$(date +%s)
    for (( rep = 1; rep <= REPS; rep++ )); do
        read -ra order <<<"${REP_ORDERS[rep - 1]}"
        for i in "${!order[@]}"; do
            server=${order[$i]} POINT_POSITION=$(( i + 1 ))
            mapfile -t todo < <(todo_for "$server" "$rep")
            (( ${#todo[@]} )) || continue
            mkdir -p "$RUN_DIR/$SUITE/$server"
            start_server "$server" "$RUN_DIR/$SUITE/$server/server.r$rep.log"
            if ! gate "$server" "$rep"; then
                log "$server failed the verify gate in rep $rep (see $RUN_DIR/$SUITE/$server/verify.r$rep*.txt); not loading it"
                stop_server
                skipped=$(( skipped + ${#todo[@]} ))
                progress "$done" "$skipped" "$total" "$server r$rep skipped (verify gate)"
                continue
            fi
            for line in "${todo[@]}"; do
                parse_scenario "$line"
                SC_URL="$SCHEME://127.0.0.1:$SERVER_PORT$SC_ROUTE"
                [[ $SC_KIND == echo_get ]] && SC_URL+="?size=$SC_SIZE"
                write_scenario_json "$(scenario_dir "$server")" "$server"
                measure_point "$(scenario_dir "$server")" "$rep" "$SC_TOOL"
                done=$(( done + 1 ))
                progress "$done" "$skipped" "$total" "$server $SC_ID r$rep"
                server_alive || { abort_suite "$server died during $SC_ID (rep $rep); its log: $RUN_DIR/$SUITE/$server/server.r$rep.log"; return 1; }
            done
            stop_server
        done
    done
    host_state end
    write_json_once "$RUN_DIR/$SUITE/suite.json" \
        "$(jq -n --arg s "$SUITE" --arg t "$(utc_now)" '{suite: $s, status: "complete", message: "", end_utc: $t}')"
    log "suite $SUITE complete in $(( $(date +%s) - SUITE_T0 ))s"
}

# ---------------------------------------------------------------- profiles and flags

# run_params_json: the profile's parameters as meta.json records them.
run_params_json() {
    jq -n --argjson d "$DURATION" --argjson w "$WARMUP" --argjson r "$REPS" --argjson aa "${AA:-0}" \
        --argjson lat "$(lat_duration)" \
        '{duration_s: $d, warmup_s: $w, reps: $r, aa: $aa, latency_run_s: $lat}'
}

# apply_profile NAME: durations and reps. Flags given after it override.
apply_profile() {
    case $1 in
        quick) DURATION=${DURATION:-1} WARMUP=${WARMUP:-1} REPS=${REPS:-1} AA=${AA:-0} ;;
        full)  DURATION=${DURATION:-3} WARMUP=${WARMUP:-1} REPS=${REPS:-5} AA=${AA:-1} ;;
        *)     die "unknown profile '$1' (quick, full)" ;;
    esac
    PROFILE=$1
}

# parse_suite_flags "$@": the flags every bench_*.sh takes.
suite_usage() {
    cat >&2 <<EOF
usage: $(basename "$0") [--run-dir DIR] [--quick] [--duration S] [--warmup S] [--reps N]
                        [--servers a,b] [--scenarios glob,glob]
  --run-dir DIR   raw/<run_id> to write into (default: a new run under raw/)
  --quick         the quick profile (1 s runs, 1 rep, the suite's QUICK_SCENARIOS unless
                  --scenarios is given); default: full (3 s runs, 5 reps, every scenario)
  --duration S    seconds per measured run (whole seconds)
  --warmup S      seconds of unrecorded warm-up before each measured run
  --reps N        repetitions of every point
  --servers LIST  servers to run (default: every server whose manifest starts in mode
                  $SERVER_MODE and serves a route of this suite: ${SUITE_SERVERS[*]})
  --scenarios L   only scenario ids matching these globs (e.g. 'get_ping_*')
  --aa, --no-aa   with / without the A/A copy of the contestant on the headline scenarios
                  (${HEADLINE_SCENARIOS:-none}); default: with in the full profile
  --order-seed N  the seed of the servers' random order (default: from the run id and suite)
EOF
}

parse_suite_flags() {
    local profile=full servers=""
    suite_servers
    while (( $# )); do
        case $1 in
            --run-dir|--duration|--warmup|--reps|--servers|--scenarios|--order-seed)
                need_value "$1" "$#" ;;&
            --run-dir)   RUN_DIR=$2; shift ;;
            --quick)     profile=quick ;;
            --duration)  DURATION=$2; shift ;;
            --warmup)    WARMUP=$2; shift ;;
            --reps)      REPS=$2; shift ;;
            --servers)   servers=$2; shift ;;
            --scenarios) SCENARIO_FILTER=$2; shift ;;
            --aa)        AA=1 ;;
            --no-aa)     AA=0 ;;
            --order-seed) ORDER_SEED=$2; shift ;;
            -h|--help)   suite_usage; exit 0 ;;
            *)           suite_usage; die "unknown flag '$1'" ;;
        esac
        shift
    done
    apply_profile "$profile"
    # The quick profile checks the pipeline, not the servers: a few points per suite.
    [[ $profile == quick && -z ${SCENARIO_FILTER:-} ]] && SCENARIO_FILTER=${QUICK_SCENARIOS:-}
    [[ $DURATION =~ ^[1-9][0-9]*$ ]] || die "--duration takes whole seconds ≥ 1 (got '$DURATION')"
    [[ $WARMUP =~ ^[0-9]+$ ]] || die "--warmup takes whole seconds (got '$WARMUP')"
    [[ $REPS =~ ^[1-9][0-9]*$ ]] || die "--reps takes a number ≥ 1 (got '$REPS')"
    if [[ -n $servers ]]; then
        IFS=, read -ra SUITE_SERVERS <<<"$servers"
        local s; for s in "${SUITE_SERVERS[@]}"; do check_suite_server "$s"; done
    fi
    [[ -z ${ORDER_SEED:-} || $ORDER_SEED =~ ^[0-9]+$ ]] || die "--order-seed takes a number (got '$ORDER_SEED')"
    add_aa_copy
    default_cpu_sets
    if [[ -z ${RUN_DIR:-} ]]; then
        RUN_DIR=$RAW_ROOT/$(new_run_id)
    fi
    if [[ ! -f $RUN_DIR/meta.json ]]; then
        create_run_meta "$RUN_DIR" "$PROFILE" "$SUITE" "$(run_params_json)"
    fi
    export RUN_DIR
}
