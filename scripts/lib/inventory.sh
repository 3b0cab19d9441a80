# scripts/lib/inventory.sh: the inventory host mode (--inventory FILE), sourced after lib.sh.
# Real machines named in an Ansible inventory: group `server` holds one host, the machine
# the lab runs on (the controller: it starts the servers and reads their cost from its own /proc),
# group `clients` one or more load-generating hosts. Ansible installs the client side on every
# client host (scripts/ansible/install.yml), gathers every host's facts (facts.yml), and runs each
# point's load on all client hosts at once (load.yml through scripts/ansible/run_on_client.sh).
#
# Host variables the lab reads:
#   lab_addr    the address the others reach the host at (default: ansible_host, else its name);
#               the server's is where the servers listen and the load tools connect
#   lab_dir     where the lab's client side goes on a client host (default /var/tmp/httplab-USER)
#   lab_cpus    the CPUs a client host's load tool is pinned to (default: all of them)
#   lab_become  true: become root (sudo) on the host for apt (default: false: log in as root)

INVENTORY_CLIENTS=()

# ansible_env: what every Ansible call here runs with: plain output, no retry files, facts only
# where asked for, pipelined modules (fewer ssh round trips per task).
ansible_env() {
    export ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=0 ANSIBLE_GATHERING=explicit ANSIBLE_PIPELINING=1
    export ANSIBLE_LOCALHOST_WARNING=0 ANSIBLE_INVENTORY_UNPARSED_WARNING=0 ANSIBLE_DEPRECATION_WARNINGS=0
    export ANSIBLE_PYTHON_INTERPRETER=${ANSIBLE_PYTHON_INTERPRETER:-auto_silent}
}

# ansible_tool NAME: the path of an Ansible command (the lab's environment has ansible-core).
ansible_tool() {
    if [[ -x $VENV_DIR/bin/$1 ]]; then echo "$VENV_DIR/bin/$1"
    elif command -v "$1" >/dev/null; then command -v "$1"
    else die "--inventory needs Ansible ($1): run scripts/setup.sh"
    fi
}

# inventory_playbook PLAYBOOK ARGS...: one of scripts/ansible/'s playbooks on LAB_INVENTORY.
inventory_playbook() {
    ansible_env
    "$(ansible_tool ansible-playbook)" -i "$LAB_INVENTORY" "$LAB_ROOT/scripts/ansible/$1" "${@:2}"
}

# ansible_failure OUTPUT: the gist of a failed playbook's output: each failed host's message
# (shortened) and the recap, not pages of JSON.
ansible_failure() {
    grep -E '^(fatal|failed):|^[^ ]+ +: ok=|UNREACHABLE' <<<"$1" |
        sed -E 's/^(fatal: \[[^]]*\]: [A-Z!]+ => ).*"msg": "([^"]{0,300}).*/\1\2/' | cut -c1-400
}

# inventory_read FILE: reads and checks the inventory (ansible-inventory --list); sets
# LAB_INVENTORY (its absolute path), INVENTORY_JSON, INVENTORY_SERVER, INVENTORY_CLIENTS,
# CLIENT_HOSTS (their number) and SERVER_ADDR. Dies naming what does not fit.
inventory_read() {
    local file=$1 json n srv conn addr
    [[ -f $file && -r $file ]] || die "--inventory $file: no such readable file"
    LAB_INVENTORY=$(cd "$(dirname "$file")" && pwd)/$(basename "$file")
    ansible_env
    local err
    err=$(mktemp)
    json=$("$(ansible_tool ansible-inventory)" -i "$LAB_INVENTORY" --list 2>"$err") ||
        { err=$(tail -n 3 "$err"; rm -f "$err"); die "--inventory $file: Ansible cannot read it: $err"; }
    rm -f "$err"
    n=$(jq '.server.hosts // [] | length' <<<"$json")
    (( n == 1 )) || die "--inventory $file: group 'server' must hold exactly one host, the machine the lab runs on (it holds $n)"
    srv=$(jq -r '.server.hosts[0]' <<<"$json")
    mapfile -t INVENTORY_CLIENTS < <(jq -r '.clients.hosts // [] | .[]' <<<"$json")
    (( ${#INVENTORY_CLIENTS[@]} >= 1 )) || die "--inventory $file: group 'clients' holds no host (one or more load-generating hosts)"
    (( ${#INVENTORY_CLIENTS[@]} <= 8 )) || die "--inventory $file: at most 8 client hosts (it has ${#INVENTORY_CLIENTS[@]})"
    conn=$(jq -r --arg h "$srv" '._meta.hostvars[$h].ansible_connection // ""' <<<"$json")
    addr=$(inventory_addr "$json" "$srv")
    # The servers run here and their cost is read from this machine's /proc: the server host must
    # be this machine, or the figures would be of the wrong one.
    if [[ $conn != local ]] && ! ip -o addr show 2>/dev/null | awk '{ print $4 }' | grep -q "^$addr/"; then
        die "--inventory $file: the server host '$srv' ($addr) is not this machine; run the lab on the server host (give it ansible_connection=local, or an address of this machine as lab_addr)"
    fi
    INVENTORY_JSON=$json INVENTORY_SERVER=$srv
    CLIENT_HOSTS=${#INVENTORY_CLIENTS[@]}
    SERVER_ADDR=$addr
    export LAB_INVENTORY SERVER_ADDR CLIENT_HOSTS
}

# inventory_addr JSON HOST: the host's lab_addr, else ansible_host, else its name.
inventory_addr() {
    jq -r --arg h "$2" '._meta.hostvars[$h] as $v | $v.lab_addr // $v.ansible_host // $h' <<<"$1"
}

# inventory_up: the client side installed on every client host and every host's facts gathered
# (into INVENTORY_FACTS, a file); dies with Ansible's own words when a host cannot be reached.
inventory_up() {
    local work=$BUILD_DIR/inventory out
    mkdir -p "$work"
    # The client side is this checkout's code as it is now (uncommitted changes too): a tarball of
    # what client_run.sh needs.
    tar -czf "$work/lab-client.tgz" -C "$LAB_ROOT" --exclude=__pycache__ scripts httplab
    log "inventory: installing the lab's client side on ${INVENTORY_CLIENTS[*]}"
    out=$(inventory_playbook install.yml -e "lab_tarball=$work/lab-client.tgz" 2>&1) ||
        die "inventory: installing the client side failed:"$'\n'"$(ansible_failure "$out")"
    INVENTORY_FACTS=$work/facts.json
    inventory_facts_json >"$INVENTORY_FACTS"
}

# inventory_facts_json: every host's facts as a JSON list (facts.yml), for meta.json.
inventory_facts_json() {
    local tmp out
    tmp=$(mktemp)
    out=$(inventory_playbook facts.yml -e "lab_facts_out=$tmp" 2>&1) ||
        { rm -f "$tmp"; die "inventory: gathering the hosts' facts failed:"$'\n'"$(ansible_failure "$out")"; }
    cat "$tmp"
    rm -f "$tmp"
}

# inventory_down: ends any load of this lab still running on the client hosts (stop.yml), when the
# suite stopped while one was under way; quiet, and never fatal (a host may be gone).
inventory_down() {
    [[ -n ${INVENTORY_JSON:-} && -n ${INVENTORY_STOP_NEEDED:-} ]] || return 0
    inventory_playbook stop.yml >/dev/null 2>&1 || log "inventory: could not reach every client host to stop its load"
}

client_addr_inventory() { inventory_addr "$INVENTORY_JSON" "${INVENTORY_CLIENTS[$1 - 1]}"; }
# A client host's load CPUs: its lab_cpus, else all of its CPUs (from its facts).
client_cpus_inventory() {
    local h=${INVENTORY_CLIENTS[$1 - 1]} cpus cores
    cpus=$(jq -r --arg h "$h" '._meta.hostvars[$h].lab_cpus // ""' <<<"$INVENTORY_JSON")
    if [[ -z $cpus ]]; then
        cores=$(jq -r --arg h "$h" '[.[] | select(.name == $h)][0].cores // 1' "$INVENTORY_FACTS")
        cpus="0-$(( cores - 1 ))"
    fi
    echo "$cpus"
}
client_launcher_inventory() { LAUNCH=("$LAB_ROOT/scripts/ansible/run_on_client.sh" "${INVENTORY_CLIENTS[$1 - 1]}"); }
