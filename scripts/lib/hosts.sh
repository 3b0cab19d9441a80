# scripts/lib/hosts.sh: the host modes (--hosts; issue 19), sourced by lib.sh. A suite makes its
# hosts when it starts (hosts_up) and removes them however it ends (hosts_down, from its EXIT trap).
#   local  this machine: server and load tool on their CPU sets, over loopback (the default)
#   netns  a server host and a client host as network namespaces joined by a veth pair through a
#          bridge (scripts/lib/netns.sh): every request crosses a real TCP path between two stacks;
#          --netns-rate RATE shapes the link with tc's tbf
# The mode and each host's facts are written to <suite>/hosts.json (once, as every raw file).

HOST_MODES=(local netns)

# check_host_mode MODE: dies unless MODE is a host mode this lab has.
check_host_mode() {
    [[ " ${HOST_MODES[*]} " == *" $1 "* ]] || die "--hosts takes one of: ${HOST_MODES[*]} (got '$1')"
}

# hosts_up: the hosts of HOSTS (default local); sets SERVER_ADDR, and SERVER_NETNS / CLIENT_NETNS
# in netns mode.
hosts_up() {
    case ${HOSTS:-local} in
        local) ;;
        netns)
            source "$LAB_ROOT/scripts/lib/netns.sh"
            netns_up 1
            SERVER_NETNS=$(netns_server) CLIENT_NETNS=$(netns_client 1)
            export SERVER_NETNS CLIENT_NETNS
            ;;
    esac
    [[ -z ${RUN_DIR:-} || -z ${SUITE:-} ]] || write_json_once "$RUN_DIR/$SUITE/hosts.json" "$(hosts_json)"
}

# hosts_down: removes what hosts_up made (safe to call twice, and from a trap).
hosts_down() {
    [[ ${HOSTS:-local} == netns ]] || return 0
    declare -F netns_down >/dev/null && netns_down
    unset SERVER_NETNS CLIENT_NETNS
}

# hosts_json: the mode, the address the load tools connect to, and per host its role, network
# namespace (none in local mode), address and CPU set.
hosts_json() {
    local netem=null rate=${NETNS_RATE:-}
    if [[ ${HOSTS:-local} == netns ]]; then
        netem=false; netns_netem_available && netem=true
    fi
    jq -n --arg mode "${HOSTS:-local}" --arg addr "$SERVER_ADDR" --arg sns "${SERVER_NETNS:-}" \
        --arg cns "${CLIENT_NETNS:-}" --arg scpu "$SERVER_CPUS" --arg ccpu "$CLIENT_CPUS" \
        --arg caddr "$( [[ ${HOSTS:-local} == netns ]] && netns_client_addr 1 || echo 127.0.0.1)" \
        --arg rate "$rate" --argjson netem "$netem" --arg kernel "$(uname -r)" \
        '{mode: $mode, server_addr: $addr, rate: (if $rate == "" then null else $rate end),
          netem_available: $netem, kernel: $kernel,
          hosts: [{role: "server", netns: (if $sns == "" then null else $sns end), addr: $addr, cpus: $scpu},
                  {role: "client", netns: (if $cns == "" then null else $cns end), addr: $caddr, cpus: $ccpu}]}'
}
