# scripts/lib.sh: the functions every lab script shares. Source it; it runs nothing.
#
# Here: paths, logging, CPU pinning. Then, one concern a file, under lib/: servers.sh
# (the registry read from the manifests, starting and stopping servers), proc.sh
# (/proc accounting), gate.sh (the verify gate), run.sh (the raw run directory and
# its TLS material), measure.sh (one measured point, wrk and h2load), tool_oha.sh (the
# open-model tool oha), tool_h3load.sh (the HTTP/3 tool, the lab's h3load), suite.sh (the suite driver, flags and profiles), plan.sh (the planned duration), suites.sh (the
# suite registry: suites/<name>/ folders and their parts) and report.sh (exporting an
# executed notebook). A suite's part (suites/<name>/<part>.sh) only declares its scenario
# matrix; scripts/bench.sh runs it.

LAB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$LAB_ROOT/build}
RAW_ROOT=${RAW_ROOT:-$LAB_ROOT/raw}
DATA_ROOT=${DATA_ROOT:-$LAB_ROOT/data}
REPORTS_ROOT=${REPORTS_ROOT:-$LAB_ROOT/reports}
LUA_DIR=$LAB_ROOT/scripts/lua
VENV_DIR=${VENV_DIR:-$LAB_ROOT/.venv}
# The address servers listen on and load tools connect to: loopback in the local host mode (the
# netns host mode sets the server host's, scripts/lib/netns.sh). Manifests pass it as {addr}.
SERVER_ADDR=${SERVER_ADDR:-127.0.0.1}
export SERVER_ADDR

# ---------------------------------------------------------------- logging

log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
# die MESSAGE: the message, then exit 1. DIE_MESSAGE keeps it for an EXIT trap (a suite's, which
# records why it stopped: scripts/lib/suite.sh).
die() { DIE_MESSAGE="$*"; printf 'error: %s\n' "$*" >&2; exit 1; }

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

# lab_python: the Python that has the lab's packages (the venv, else a conda env). A benchmark host
# without them (an offline archive, scripts/offline.sh) names a plain python3 in LAB_RUNTIME_PYTHON:
# the verbs a run calls need only the standard library (httplab.__main__.RUNTIME_VERBS).
lab_python() {
    if [[ -n ${LAB_RUNTIME_PYTHON:-} ]]; then
        command -v "$LAB_RUNTIME_PYTHON" || die "LAB_RUNTIME_PYTHON=$LAB_RUNTIME_PYTHON is not a program here"
    elif [[ -x $VENV_DIR/bin/python ]]; then echo "$VENV_DIR/bin/python"
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
# GNU time by path (bash's `time` keyword would shadow it); an offline archive carries its own.
GNU_TIME=${LAB_GNU_TIME:-/usr/bin/time}
on_client() {
    local CLIENT_ARGV
    client_argv
    "${CLIENT_ARGV[@]}" "$@"
}

# client_argv: sets CLIENT_ARGV, the words on_client puts before a command (the sliced blocks hand
# them to the slicer, which starts the tools itself).
client_argv() {
    local host
    CLIENT_ARGV=()
    [[ -n ${CLIENT_TIME_FILE:-} ]] && CLIENT_ARGV=("$GNU_TIME" -o "$CLIENT_TIME_FILE" -f "$CLIENT_TIME_FORMAT")
    read -ra host <<<"$(client_host_prefix)"
    CLIENT_ARGV+=("${host[@]}" taskset -c "$CLIENT_CPUS")
    [[ -z ${LAB_CLIENT_OPENSSL_CONF:-} ]] || CLIENT_ARGV+=(env OPENSSL_CONF="$LAB_CLIENT_OPENSSL_CONF")
    return 0
}

# ---------------------------------------------------------------- hosts
# The host mode (--hosts): local, this machine (the default), or netns, a server host and a client
# host as network namespaces (scripts/lib/netns.sh sets SERVER_NETNS and CLIENT_NETNS). A command
# prefixed with a host's prefix runs where that host's network is: the same process (ip netns exec
# execs it), so a PID taken from `prefix... cmd &` is the command's.
server_host_prefix() { [[ -z ${SERVER_NETNS:-} ]] || echo "ip netns exec $SERVER_NETNS"; }
client_host_prefix() { [[ -z ${CLIENT_NETNS:-} ]] || echo "ip netns exec $CLIENT_NETNS"; }
# in_client_host CMD...: CMD on the client host's network, unpinned (probes, not load).
in_client_host() {
    local host
    read -ra host <<<"$(client_host_prefix)"
    "${host[@]}" "$@"
}

# ---------------------------------------------------------------- the rest, by concern

for _lib in json servers proc gate run measure fanout tool_oha tool_h3load hosts canary suite sliced plan suites report; do source "$LAB_ROOT/scripts/lib/$_lib.sh"; done
unset _lib
