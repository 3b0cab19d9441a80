# scripts/lib/netns.sh: the netns host mode's hosts, sourced after lib.sh. One machine
# becomes a "server host" and one or more "client hosts": network namespaces with their own TCP/IP
# stacks, joined by veth pairs through a bridge in the server host, so every request crosses a real
# TCP path between two stacks instead of loopback. Processes still share this kernel's CPUs (the CPU
# sets pin them apart) and its PID space (the server's CPU is read from /proc as in local mode).
#
#   server host  <tag>-srv   bridge labbr0 10.231.0.1/24 (SERVER_ADDR)
#   client host  <tag>-cliN  veth eth0     10.231.0.(10+N)/24, N = 1, 2, ...
#
# The tag is per checkout (a hash of BUILD_DIR, as the runtime dir), so two checkouts never share
# a namespace and a rerun removes what a killed run left. NETNS_RATE (e.g. 1gbit) shapes both
# directions of every client's link with tc's tbf; empty: unshaped. NETNS_RTT_MS adds that round-
# trip time with netem, which is absent from some kernels, this one's included:
# netns_netem_available says which, and --rtt is refused where it is absent.

NETNS_NET=10.231.0
NETNS_SERVER_ADDR=$NETNS_NET.1

# netns_tag: the namespaces' name prefix for this checkout ("hl" and 8 hex digits: names stay short).
netns_tag() { printf 'hl%s' "$(printf '%s' "$BUILD_DIR" | sha256sum | cut -c1-8)"; }
netns_server() { printf '%s-srv' "$(netns_tag)"; }
netns_client() { printf '%s-cli%s' "$(netns_tag)" "$1"; }
# netns_client_addr N: client host N's address.
netns_client_addr() { printf '%s.%s' "$NETNS_NET" "$((10 + $1))"; }

# netns_list: this checkout's namespaces, one a line.
netns_list() { ip netns list 2>/dev/null | awk '{ print $1 }' | grep -E "^$(netns_tag)-" || true; }

# netns_down: removes this checkout's namespaces (their veths and bridge go with them). Idempotent;
# safe from a trap.
netns_down() {
    local ns
    for ns in $(netns_list); do ip netns del "$ns" 2>/dev/null || true; done
}

# netns_up CLIENTS: the server host and CLIENTS client hosts (1 by default), after removing any
# left from an earlier run. Dies with the reason when namespaces cannot be made here (not root, no
# `ip`).
netns_up() {
    local clients=${1:-1} srv i cli veth
    (( EUID == 0 )) || die "--hosts netns needs root (network namespaces and veth pairs)"
    command -v ip >/dev/null || die "--hosts netns needs iproute2 ('ip'): run scripts/setup.sh"
    (( clients >= 1 && clients <= 200 )) || die "netns: 1..200 client hosts (got $clients)"
    netns_down
    srv=$(netns_server)
    ip netns add "$srv" || die "netns: cannot create namespace $srv"
    ip -n "$srv" link set lo up
    ip -n "$srv" link add labbr0 type bridge
    ip -n "$srv" addr add "$NETNS_SERVER_ADDR/24" dev labbr0
    ip -n "$srv" link set labbr0 up
    for (( i = 1; i <= clients; i++ )); do
        cli=$(netns_client "$i") veth=labv$i
        ip netns add "$cli" || die "netns: cannot create namespace $cli"
        ip -n "$cli" link set lo up
        ip -n "$srv" link add "$veth" type veth peer name eth0 netns "$cli"
        ip -n "$srv" link set "$veth" master labbr0 up
        ip -n "$cli" addr add "$(netns_client_addr "$i")/24" dev eth0
        ip -n "$cli" link set eth0 up
        if [[ -n ${NETNS_RTT_MS:-} ]]; then
            netns_delay "$cli" eth0
            netns_delay "$srv" "$veth"
        elif [[ -n ${NETNS_RATE:-} ]]; then
            netns_shape "$cli" eth0 "$NETNS_RATE"
            netns_shape "$srv" "$veth" "$NETNS_RATE"
        fi
    done
    for (( i = 1; i <= clients; i++ )); do netns_wait_forwarding "$i"; done
    SERVER_ADDR=$NETNS_SERVER_ADDR
    export SERVER_ADDR
}

# netns_shape NS DEV RATE: tbf on DEV's egress (RATE as tc takes it: 1gbit, 100mbit).
netns_shape() {
    ip netns exec "$1" tc qdisc replace dev "$2" root tbf rate "$3" burst 256kb latency 50ms \
        || die "netns: tc tbf rate $3 on $2 in $1 failed (is the rate valid?)"
}

# netns_delay NS DEV: netem on DEV's egress, half of NETNS_RTT_MS each way (so a round trip
# between the hosts gains NETNS_RTT_MS), at NETNS_RATE when set (netem's own rate: tbf and netem
# are not stacked). Only where netns_netem_available: the lab never fakes delay in user space.
netns_delay() {
    local half rate=()
    half=$(awk -v r="$NETNS_RTT_MS" 'BEGIN { printf "%.3f", r / 2 }')
    [[ -z ${NETNS_RATE:-} ]] || rate=(rate "$NETNS_RATE")
    ip netns exec "$1" tc qdisc replace dev "$2" root netem delay "${half}ms" limit 100000 "${rate[@]}" \
        || die "netns: tc netem delay ${half}ms on $2 in $1 failed"
}

# check_rtt MS: dies unless MS is a round-trip time the netns mode can add on this kernel.
check_rtt() {
    [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--rtt takes milliseconds, e.g. 10 (got '$1')"
    netns_netem_available || die "--rtt $1: this kernel has no netem qdisc ('tc qdisc add ... netem delay' fails), so no delay can be added between the hosts; the lab does not fake it in user space. Run on a kernel with netem (sch_netem) for an RTT sweep."
}

# netns_wait_forwarding N: until client host N's port on the bridge forwards (at once without STP,
# which a bridge made by ip has off; checked rather than assumed).
netns_wait_forwarding() {
    local i
    for i in $(seq 50); do
        bridge -n "$(netns_server)" link show dev "labv$1" 2>/dev/null | grep -q 'state forwarding' && return 0
        sleep 0.1
    done
    die "netns: client host $1's link to the server host does not forward"
}

# on_server_host CMD...: CMD in the server host (its namespace).
on_server_host() { ip netns exec "$(netns_server)" "$@"; }
# on_client_host N CMD...: CMD in client host N.
on_client_host() { local n=$1; shift; ip netns exec "$(netns_client "$n")" "$@"; }

# netns_netem_available: true when this kernel has the netem qdisc (delay), tried in a throwaway
# namespace so nothing of the host is touched.
netns_netem_available() {
    local ns ok=1
    ns="$(netns_tag)-probe"
    ip netns add "$ns" 2>/dev/null || return 1
    ip -n "$ns" link set lo up
    ip netns exec "$ns" tc qdisc add dev lo root netem delay 1ms >/dev/null 2>&1 && ok=0
    ip netns del "$ns" 2>/dev/null || true
    return "$ok"
}
