# scripts/lib/fanout.sh: one load-tool run spread over several client hosts at once (--clients
# N in netns mode, every client host of an inventory; docs/host-modes.md). Sourced by lib.sh.
#
# Each host gets an equal share of the point's connections (the first ones one more when they do
# not divide) and runs the same command through scripts/client_run.sh, which waits for one agreed
# start time so that the loads overlap, and records per host, under the point's part prefix P:
#   P.h<I>.stdout.txt, .stderr.txt, .client.time.txt, .host.json   (and the tool's own files)
# Nothing is merged here: httplab (parse/merge) sums the hosts' counts and histograms.
#
# How a host is reached is the host mode's launcher: client_launcher_<mode> I sets LAUNCH, a command
# that, given client_run.sh's arguments, runs it on client host I and leaves its P.h<I>.* files here.

CLIENT_HOSTS=${CLIENT_HOSTS:-1}

# multi_client: this suite's points are loaded through client_run.sh, with per-host files: from
# more than one client host, or from the hosts of an inventory (always elsewhere than here).
multi_client() { (( CLIENT_HOSTS > 1 )) || [[ ${HOSTS:-local} == inventory ]]; }
# client_layout: how scenario.json names the point's client files: "per_host" (P.h<I>.*) or
# "single" (P.*).
client_layout() { multi_client && echo per_host || echo single; }

# client_share TOTAL I N: host I's share of TOTAL connections over N hosts.
client_share() { echo $(( $1 / $3 + ($2 <= $1 % $3 ? 1 : 0) )); }

# fanout_lead: seconds between deciding the start time and the start: enough for every launcher to
# reach its host (a namespace: at once; a machine through Ansible: connection and module start-up,
# about 1.5 s on the netns stand-ins; each host.json's start_at − arrived is the margin it left).
fanout_lead() { echo "${LAB_START_LEAD:-$( [[ ${HOSTS:-local} == inventory ]] && echo 5 || echo 0.5)}"; }

# fanout_run LIMIT PREFIX SUFFIX BUILDER [h2log]: BUILDER CONNS sets TOOL_CMD, the tool's command
# for a host's share (with client_run.sh's placeholders: @PREFIX@, @LAB@, @LOG@, @PAYLOAD:N@); it
# runs on every client host at once, each ended at LIMIT seconds, host I's files named
# PREFIX.h<I>SUFFIX.*. With "h2log", each host compacts its h2load log into PREFIX.h<I>SUFFIX.h2log.json. Sets TOOL_END as tool_run does, from the worst host
# (a deadline or a signal on any host is the run's), and returns the first non-zero status.
fanout_run() {
    local limit=$1 prefix=$2 suffix=$3 builder=$4 h2log=${5:-} i n=$CLIENT_HOSTS start_at rc=0 r outer
    local -a pids=() extra
    start_at=$(awk -v t="$EPOCHREALTIME" -v l="$(fanout_lead)" 'BEGIN { printf "%.6f", t + l }')
    outer=$(( limit + ${LAB_START_LEAD_MAX:-30} ))
    TOOL_FILES="$prefix.h*$suffix.stdout.txt, $prefix.h*$suffix.stderr.txt"
    for (( i = 1; i <= n; i++ )); do
        "$builder" "$(client_share "$SC_CONNS" "$i" "$n")"
        # the TLS suite's client OpenSSL config (on_client's), from each host's own copy of the lab
        [[ -z ${LAB_CLIENT_OPENSSL_CONF:-} ]] ||
            TOOL_CMD=(env OPENSSL_CONF=@LAB@/scripts/lib/client-openssl.cnf "${TOOL_CMD[@]}")
        extra=()
        [[ -z $h2log ]] || extra=(--h2log "$prefix.h$i$suffix.h2log.json")
        # The launcher has its own deadline: a host that cannot be reached must not hang the suite.
        "client_launcher_${HOSTS:-local}" "$i"
        timeout -k "$TOOL_KILL_AFTER" "$outer" "${LAUNCH[@]}" \
            --start-at "$start_at" --prefix "$prefix.h$i$suffix" --host "$i" --addr "$(client_addr "$i")" \
            --cpus "$(client_cpus "$i")" --limit "$limit" "${extra[@]}" -- "${TOOL_CMD[@]}" &
        pids+=("$!")
    done
    TOOL_PID="${pids[*]}"
    INVENTORY_STOP_NEEDED=1   # until every host is done: a suite stopped now stops the hosts' loads
    TOOL_END=ok
    for i in "${!pids[@]}"; do
        r=0
        wait "${pids[$i]}" || r=$?
        (( r == 0 )) && continue
        (( rc == 0 )) && rc=$r
        if (( r == 124 )); then TOOL_END=deadline
        elif [[ $TOOL_END != deadline ]] && (( r > 128 )); then TOOL_END="signal $(( r - 128 ))"
        elif [[ $TOOL_END == ok ]]; then TOOL_END="exit $r"
        fi
    done
    TOOL_PID= INVENTORY_STOP_NEEDED=
    # A host that left no record did not run the load (unreachable, a launcher that failed): the
    # point measured less than it says, so it is a fault, not a failed run (note_tool_fault).
    for (( i = 1; i <= n; i++ )); do
        [[ -f $prefix.h$i$suffix.host.json ]] || { TOOL_END="lost $i $(( rc ))"; break; }
    done
    return "$rc"
}

# client_addr I / client_cpus I: client host I's address and load CPUs, as the host mode has them.
client_addr() { "client_addr_${HOSTS:-local}" "$1"; }
client_cpus() { "client_cpus_${HOSTS:-local}" "$1"; }

client_addr_local() { echo 127.0.0.1; }
client_cpus_local() { echo "$CLIENT_CPUS"; }
client_launcher_local() { LAUNCH=("$LAB_ROOT/scripts/client_run.sh"); }

client_addr_netns() { netns_client_addr "$1"; }
# Every client namespace shares this machine's client CPUs: on real machines each host has its own.
client_cpus_netns() { echo "$CLIENT_CPUS"; }
client_launcher_netns() {
    LAUNCH=(env NETNS_NAME="$(netns_client "$1")" ip netns exec "$(netns_client "$1")" "$LAB_ROOT/scripts/client_run.sh")
}
