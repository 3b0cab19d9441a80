# scripts/lib/proc.sh: /proc accounting (sourced by lib.sh): a server tree's pids, CPU ticks and
# memory, the peak-RSS window, the pinned cores' /proc/stat and the end-of-load snapshot.

# The kernel's clock ticks per second, in which /proc counts CPU time (read once).
CLK_TCK=$(getconf CLK_TCK)

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

# ---------------------------------------------------------------- process state, ending a tree

# proc_state PID: the state letter of /proc/PID/stat (R, S, D, T, t, Z...), nothing when PID is gone.
proc_state() {
    local stat
    stat=$(cat /proc/"$1"/stat 2>/dev/null) || return 0
    stat=${stat##*) }
    echo "${stat%% *}"
}

# state_name LETTER: what a /proc state letter means, for messages.
state_name() {
    case $1 in
        R) echo running ;;  S) echo sleeping ;;  D) echo "in uninterruptible sleep" ;;
        T) echo stopped ;;  t) echo "stopped by a debugger" ;;  Z) echo "a zombie" ;;
        *) echo "state $1" ;;
    esac
}

# exit_note STATUS: how a process ended, from the status bash reports (128 + N for signal N).
exit_note() {
    if (( $1 > 128 && $1 < 128 + 65 )); then echo "killed by signal $(( $1 - 128 )) ($(kill -l "$(( $1 - 128 ))"))"
    else echo "exited with status $1"; fi
}

# any_running PID...: true while one of the processes exists and is not a zombie (kill -0 also
# succeeds for a zombie, which is already dead and waits only to be reaped).
any_running() {
    local pid state
    for pid in "$@"; do
        state=$(proc_state "$pid")
        [[ -n $state && $state != Z ]] && return 0
    done
    return 1
}

# end_tree GRACE PID: ends PID and all its descendants: SIGTERM and SIGCONT to every process of
# the tree (a stopped process acts on no signal but SIGKILL until it runs again), SIGKILL to
# whatever is left of it after GRACE seconds. The whole tree, because children do not always die
# with their parent: nginx's workers outlive a killed master, and a load tool outlives the shell
# and the timeout that ran it.
end_tree() {
    local grace=$1 pids i
    mapfile -t pids < <(tree_pids "$2")
    (( ${#pids[@]} )) || return 0
    kill -TERM "${pids[@]}" 2>/dev/null || true
    kill -CONT "${pids[@]}" 2>/dev/null || true
    for (( i = 0; i < grace * 20; i++ )); do
        any_running "${pids[@]}" || return 0
        sleep 0.05
    done
    kill -KILL "${pids[@]}" 2>/dev/null || true
}

# leftover_processes: the processes a test run may have started and must have
# stopped, one "pid cmdline" line each: anything running a binary under the
# checkout or BUILD_DIR, any load tool, probe or conformance checker (wrk, h2load,
# h2spec, oha, gtlsclient), ngtcp2's example server (gtlsserver: a packaged binary whose command
# line names no runtime directory), and servers started from this checkout's runtime directory
# (h2o, nginx). The caller and its ancestors are left out.
leftover_processes() {
    local ancestors=" " p=$$ exe cmd rt="" stat rest
    while [[ $p -gt 1 ]]; do
        ancestors+="$p "
        # after the ")" that ends the command name (which may hold spaces): state, ppid
        stat=$(cat "/proc/$p/stat" 2>/dev/null) || break
        rest=${stat##*) }; rest=${rest#* }; p=${rest%% *}
    done
    runtime_dir 2>/dev/null && rt=$LAB_RUNTIME_DIR
    for d in /proc/[0-9]*; do
        p=${d#/proc/}
        [[ $ancestors == *" $p "* ]] && continue
        exe=$(readlink "$d/exe" 2>/dev/null) || continue
        cmd=$(tr '\0' ' ' < "$d/cmdline" 2>/dev/null) || continue
        if [[ $exe == "$LAB_ROOT"/* || $exe == "$BUILD_DIR"/* ||
              ${exe##*/} =~ ^(wrk|h2load|h2spec|oha|gtlsclient|gtlsserver)$ ||
              ( -n $rt && $cmd == *"$rt"* ) ]]; then
            printf '%s %s\n' "$p" "${cmd:0:200}"
        fi
    done
}
