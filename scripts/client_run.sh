#!/usr/bin/env bash
# scripts/client_run.sh: one load-tool run on one client host, started at an agreed moment (several
# client hosts at once, docs/host-modes.md). It runs where the load is generated: in a client
# network namespace (--hosts netns) or on a client machine of an Ansible inventory (--inventory),
# from that host's own checkout of the lab. It only waits, runs and records; the suite merges the
# hosts' results later.
#
#   client_run.sh --start-at EPOCH --prefix P --host I --addr A --cpus C --limit S
#                 [--h2log OUT] -- CMD [ARG...]
#
# Waits until EPOCH (seconds since 1970, fractions allowed: every host is given the same one, so
# their loads start together however long each took to be reached), then runs CMD pinned to CPUs C
# under GNU time and coreutils' timeout (S seconds, then SIGTERM; SIGKILL 2 s later), with
#   P.stdout.txt, P.stderr.txt   CMD's output
#   P.client.time.txt            its CPU time (GNU time; the client's own cost)
#   P.host.json                  when it was reached, when it was asked to start and when it did
#                                start and end (this host's clock), CMD's exit status, the /proc/stat counters of C
#                                around the run, and the host's identity (name, address, machine id)
# With --h2log OUT, h2load's per-request log (@LOG@ below) is compacted into OUT afterwards
# (httplab.parse.h2log, outside the timed run) and removed.
# Exits with CMD's status (124 when stopped at its deadline, as timeout says).
set -euo pipefail
export LC_ALL=C   # EPOCHREALTIME's decimal point is the locale's

LAB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TIME_FORMAT='user_s=%U sys_s=%S wall_s=%e maxrss_kb=%M exit=%x'
die() { printf 'client_run: %s\n' "$*" >&2; exit 2; }

start_at= prefix= host= addr= cpus= limit= h2log=
while (( $# )); do
    case $1 in
        --start-at|--prefix|--host|--addr|--cpus|--limit|--h2log) (( $# >= 2 )) || die "$1 needs a value" ;;&
        --start-at) start_at=$2; shift ;;
        --prefix)   prefix=$2; shift ;;
        --host)     host=$2; shift ;;
        --addr)     addr=$2; shift ;;
        --cpus)     cpus=$2; shift ;;
        --limit)    limit=$2; shift ;;
        --h2log)    h2log=$2; shift ;;
        --)         shift; break ;;
        *)          die "unknown argument '$1'" ;;
    esac
    shift
done
(( $# )) || die "no command after --"
[[ $start_at =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--start-at takes an epoch in seconds (got '$start_at')"
[[ $host =~ ^[0-9]+$ && -n $prefix && -n $cpus ]] || die "--host N, --prefix and --cpus are required"
[[ $limit =~ ^[1-9][0-9]*$ ]] || die "--limit takes whole seconds ≥ 1 (got '$limit')"

# cpu_lines: the /proc/stat counters of the CPUs of $cpus, as a JSON object {"N": [ticks...]}
# (proc.sh's reader, which every host has in its copy of scripts/, given only this host's CPUs).
source "$LAB_ROOT/scripts/lib/proc.sh"
cpu_lines() { SERVER_CPUS='' CLIENT_CPUS=$cpus proc_stat_json; }

now() { echo "$EPOCHREALTIME"; }
arrived=$(now)   # when this host was reached: start_at minus this is the lead's margin

# The command's placeholders, so that one command line serves every host whatever its paths:
#   @PREFIX@  the --prefix          @LAB@  this host's checkout of the lab (Lua scripts)
#   @LOG@     with --h2log, a temporary file for h2load's per-request log
#   @PAYLOAD:N@  a file of N bytes ('x'), the request body of an upload scenario
scratch=$(mktemp -d "${LAB_LOG_TMP:-/dev/shm}/client_run.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$scratch"' EXIT
log_file=$scratch/h2load.log
args=()
for a in "$@"; do
    a=${a//@PREFIX@/$prefix} a=${a//@LAB@/$LAB_ROOT} a=${a//@LOG@/$log_file}
    if [[ $a =~ @PAYLOAD:([0-9]+)@ ]]; then
        n=${BASH_REMATCH[1]}
        [[ -f $scratch/x$n ]] || head -c "$n" /dev/zero | tr '\0' x >"$scratch/x$n"
        a=${a//@PAYLOAD:$n@/$scratch/x$n}
    fi
    args+=("$a")
done
set -- "${args[@]}"

# The wait: sleep to the agreed moment. A host that arrives late starts at once, and its late start
# is in host.json for the merge to judge.
wait_s=$(awk -v a="$start_at" -v b="$(now)" 'BEGIN { d = a - b; printf "%.6f", (d > 0 ? d : 0) }')
[[ $wait_s == 0.000000 ]] || sleep "$wait_s"

stat0=$(cpu_lines)
started=$(now)
rc=0
# The tool runs in a session of its own, waited for in the background: stopped
# from outside (scripts/ansible/stop.yml, a suite's Ctrl-C) this script ends the whole session, so no
# load outlives the suite on any host.
setsid -w "${LAB_GNU_TIME:-/usr/bin/time}" -o "$prefix.client.time.txt" -f "$TIME_FORMAT" \
    taskset -c "$cpus" timeout -k 2 "$limit" "$@" >"$prefix.stdout.txt" 2>"$prefix.stderr.txt" &
child=$!
trap 'pkill -TERM -s "$child" 2>/dev/null; exit 143' TERM INT HUP   # (timeout is a group of its own, not a session)
wait "$child" || rc=$?
trap - TERM INT HUP
ended=$(now)
stat1=$(cpu_lines)

if [[ -n $h2log ]]; then
    # the lab's environment where the host has one (netns: this machine's), else the system's
    # Python with numpy (a client host of an inventory: scripts/ansible/install.yml)
    # (Debian's python3, whose numpy apt installed, rather than whatever python3 is first on PATH)
    py=$LAB_ROOT/.venv/bin/python
    [[ -x $py ]] || py=/usr/bin/python3
    [[ -x $py ]] || py=python3
    PYTHONPATH=$LAB_ROOT "$py" -m httplab h2log "$log_file" "$h2log" 2>>"$prefix.stderr.txt" || true
fi

jq -n --argjson host "$host" --arg name "$(hostname)${NETNS_NAME:+/$NETNS_NAME}" --arg addr "$addr" \
    --arg machine "$(cat /etc/machine-id 2>/dev/null || hostname)" --arg cpus "$cpus" \
    --argjson clk "$(getconf CLK_TCK)" --argjson start_at "$start_at" --argjson started "$started" \
    --argjson ended "$ended" --argjson rc "$rc" --argjson before "$stat0" --argjson after "$stat1" \
    --argjson arrived "$arrived" \
    '{host: $host, name: $name, addr: $addr, machine: $machine, cpus: $cpus, clk_tck: $clk,
      arrived: $arrived, start_at: $start_at, started: $started, ended: $ended, exit_code: $rc,
      proc_stat_before: $before, proc_stat_after: $after}' >"$prefix.host.json.tmp"
mv "$prefix.host.json.tmp" "$prefix.host.json"
exit "$rc"
