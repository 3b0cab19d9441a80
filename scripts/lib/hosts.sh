# scripts/lib/hosts.sh: the host modes (--hosts), sourced by lib.sh. A suite makes its
# hosts when it starts (hosts_up) and removes them however it ends (hosts_down, from its EXIT trap).
#   local  this machine: server and load tool on their CPU sets, over loopback (the default)
#   netns  a server host and a client host as network namespaces joined by a veth pair through a
#          bridge (scripts/lib/netns.sh): every request crosses a real TCP path between two stacks;
#          --netns-rate RATE shapes the link with tc's tbf; --clients N: N client hosts
#   inventory  real machines from an Ansible inventory (--inventory FILE; scripts/lib/inventory.sh):
#          the servers here, the load from every client host of the inventory at once
# The mode and each host's facts are written to <suite>/hosts.json (once, as every raw file).

HOST_MODES=(local netns inventory)

# check_host_mode MODE: dies unless MODE is a host mode this lab has.
check_host_mode() {
    [[ " ${HOST_MODES[*]} " == *" $1 "* ]] || die "--hosts takes one of: ${HOST_MODES[*]} (got '$1')"
}

# check_client_hosts: dies unless CLIENT_HOSTS (--clients) fits the host mode and the suite's tool.
check_client_hosts() {
    [[ $CLIENT_HOSTS =~ ^[1-9][0-9]*$ ]] || die "--clients takes a number ≥ 1 (got '$CLIENT_HOSTS')"
    [[ ${HOSTS:-local} != inventory || -z ${SUITE_TOOL:-} ]] ||
        die "suite $SUITE loads with $SUITE_TOOL, which the inventory's client hosts do not get (it is built from crates.io, not a Debian package): run it with --hosts local or netns"
    (( CLIENT_HOSTS == 1 )) && return 0
    [[ ${HOSTS:-local} != local ]] ||
        die "--clients $CLIENT_HOSTS: the local host mode has one client (this machine); use --hosts netns"
    (( CLIENT_HOSTS <= 8 )) || die "--clients: at most 8 client hosts (got $CLIENT_HOSTS)"
    [[ -z ${SUITE_TOOL:-} ]] ||
        die "--clients $CLIENT_HOSTS: suite $SUITE loads with $SUITE_TOOL at a set request rate, which is not split over client hosts; run it with one client host"
}

# hosts_read: what the host mode needs before a suite is planned (the inventory: its client hosts
# are the point's client hosts). Dies naming what does not fit.
hosts_read() {
    if [[ ${HOSTS:-local} == inventory ]]; then
        [[ -n ${INVENTORY_FILE:-} ]] || die "--hosts inventory needs --inventory FILE (an Ansible inventory)"
        local asked=$CLIENT_HOSTS
        source "$LAB_ROOT/scripts/lib/inventory.sh"
        inventory_read "$INVENTORY_FILE"
        [[ -z ${CLIENTS_GIVEN:-} || $asked == "$CLIENT_HOSTS" ]] ||
            die "--clients $asked: the inventory $INVENTORY_FILE has $CLIENT_HOSTS client host(s); its hosts are the clients"
    elif [[ -n ${INVENTORY_FILE:-} ]]; then
        die "--inventory is the inventory host mode; it does not go with --hosts ${HOSTS:-local}"
    fi
    if [[ -n ${NETNS_RTT_MS:-} ]]; then
        [[ ${HOSTS:-local} == netns ]] || die "--rtt adds delay between network namespaces: it needs --hosts netns"
        source "$LAB_ROOT/scripts/lib/netns.sh"
        check_rtt "$NETNS_RTT_MS"
    fi
}

# hosts_up: the hosts of HOSTS (default local); sets SERVER_ADDR, and SERVER_NETNS / CLIENT_NETNS
# in netns mode.
hosts_up() {
    case ${HOSTS:-local} in
        local) ;;
        netns)
            source "$LAB_ROOT/scripts/lib/netns.sh"
            [[ -z ${NETNS_RTT_MS:-} ]] || check_rtt "$NETNS_RTT_MS"
            netns_up "$CLIENT_HOSTS"
            # probes and the verify gate run in the first client host; the load in all of them
            SERVER_NETNS=$(netns_server) CLIENT_NETNS=$(netns_client 1)
            export SERVER_NETNS CLIENT_NETNS
            ;;
        # the servers, probes and verify gate run here; the load on the client hosts (fanout.sh)
        inventory) inventory_up ;;
    esac
    [[ -z ${RUN_DIR:-} || -z ${SUITE:-} ]] || write_json_once "$RUN_DIR/$SUITE/hosts.json" "$(hosts_json)"
}

# run_hosts_json: the run's hosts for meta.json: the mode and the number of client hosts; in
# inventory mode the inventory and every host's facts (gathered now: scripts/ansible/facts.yml).
run_hosts_json() {
    local facts=null
    if [[ ${HOSTS:-local} == inventory ]]; then
        facts=$(inventory_facts_json) || return 1   # (it said why)
    fi
    jq -n --arg mode "${HOSTS:-local}" --argjson n "$CLIENT_HOSTS" --arg inv "${LAB_INVENTORY:-}" \
        --argjson facts "$facts" \
        '{mode: $mode, client_hosts: $n} + (if $inv == "" then {} else {inventory: $inv} end)
         + (if $facts == null then {} else {facts: $facts} end)'
}

# hosts_down: removes what hosts_up made (safe to call twice, and from a trap).
hosts_down() {
    case ${HOSTS:-local} in
        netns)
            declare -F netns_down >/dev/null && netns_down
            unset SERVER_NETNS CLIENT_NETNS
            ;;
        # a load still running on a client host (the suite was stopped mid-point) is ended there
        inventory) declare -F inventory_down >/dev/null && inventory_down ;;
    esac
    return 0
}

# hosts_json: the mode, the address the load tools connect to, and per host its role, network
# namespace (none in local mode), address and CPU set; in inventory mode each host's name and facts.
hosts_json() {
    local netem=null rate=${NETNS_RATE:-} i clients=() facts=null
    if [[ ${HOSTS:-local} == netns ]]; then
        netem=false; netns_netem_available && netem=true
    fi
    [[ ${HOSTS:-local} != inventory ]] || facts=$(cat "$INVENTORY_FACTS")
    for (( i = 1; i <= CLIENT_HOSTS; i++ )); do
        clients+=("$(jq -n --arg ns "$( [[ ${HOSTS:-local} == netns ]] && netns_client "$i")" \
            --arg addr "$(client_addr "$i")" --arg cpus "$(client_cpus "$i")" \
            --arg name "$( [[ ${HOSTS:-local} == inventory ]] && echo "${INVENTORY_CLIENTS[$i - 1]}")" \
            '{role: "client", netns: (if $ns == "" then null else $ns end), addr: $addr, cpus: $cpus}
             + (if $name == "" then {} else {name: $name} end)')")
    done
    jq -n --arg mode "${HOSTS:-local}" --arg addr "$SERVER_ADDR" --arg sns "${SERVER_NETNS:-}" \
        --arg scpu "$SERVER_CPUS" --arg rate "$rate" --argjson netem "$netem" --arg kernel "$(uname -r)" \
        --argjson clients "$(printf '%s\n' "${clients[@]}" | jq -s .)" --argjson facts "$facts" \
        --arg sname "${INVENTORY_SERVER:-}" --arg rtt "${NETNS_RTT_MS:-}" \
        '{mode: $mode, server_addr: $addr, rate: (if $rate == "" then null else $rate end),
          netem_available: $netem, kernel: $kernel, rtt_ms: (if $rtt == "" then null else ($rtt | tonumber) end),
          hosts: ([{role: "server", netns: (if $sns == "" then null else $sns end), addr: $addr, cpus: $scpu}
                   + (if $sname == "" then {} else {name: $sname} end)] + $clients)}
         | if $facts == null then . else
             .hosts |= map(. as $h | . + (([$facts[] | select(.name == $h.name)][0] // {})
                                          | {cpu_model, cores, memory_mb, kernel, distro, machine_id, tools}))
           end'
}
