#!/usr/bin/env bash
# inventory_netns.sh: stand-in machines for the inventory host mode on this one machine:
# a server host and N client hosts as network namespaces (scripts/lib/netns.sh), an sshd in each
# client host with keys made for the purpose, and an Ansible inventory naming them. The lab then
# runs in the server host exactly as on real machines: Ansible reaches the client hosts over ssh,
# installs the client side, runs the load on all of them at once and fetches the outputs.
# scripts/test.sh uses it so that CI exercises the Ansible path without any other machine.
#
#   scripts/inventory_netns.sh up DIR [N]   N client hosts (default 2); writes DIR/inventory.ini,
#                                           and prints the command prefix that enters the server host
#   scripts/inventory_netns.sh down DIR     stops the sshds and removes the namespaces
#
# Then, for example:
#   ip netns exec "$(scripts/inventory_netns.sh server-netns)" \
#       scripts/run_all.sh --inventory DIR/inventory.ini --quick --suites http1
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$LAB_ROOT/scripts/lib/netns.sh"

usage() { header_usage "$0"; exit 2; }

# A tag of its own, so that these namespaces never collide with a suite's --hosts netns ones.
netns_tag() { printf 'hi%s' "$(printf '%s' "$BUILD_DIR" | sha256sum | cut -c1-8)"; }

up() {
    local dir=$1 n=${2:-2} i ns addr
    [[ $n =~ ^[1-8]$ ]] || die "1..8 client hosts (got '$n')"
    command -v /usr/sbin/sshd >/dev/null || die "no sshd: run scripts/setup.sh (openssh-server)"
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    chmod 700 "$dir"
    down "$dir"
    netns_up "$n"
    default_cpu_sets
    rm -f "$dir/ssh_host_key" "$dir/ssh_host_key.pub" "$dir/id_lab" "$dir/id_lab.pub"
    mkdir -p "$(control_dir "$dir")" && chmod 700 "$(control_dir "$dir")"
    ssh-keygen -q -t ed25519 -N '' -C "httplab host key" -f "$dir/ssh_host_key"
    ssh-keygen -q -t ed25519 -N '' -C "httplab controller" -f "$dir/id_lab"
    cp "$dir/id_lab.pub" "$dir/authorized_keys"
    mkdir -p /run/sshd    # sshd's privilege-separation directory
    {
        echo "# made by scripts/inventory_netns.sh: this machine's network namespaces as hosts"
        echo "[server]"
        # (Ansible's own Python for the local host: the machine's python3 may be any pyenv shim)
        echo "labserver ansible_connection=local ansible_python_interpreter=\"{{ ansible_playbook_python }}\" lab_addr=$NETNS_SERVER_ADDR"
        echo "[clients]"
    } >"$dir/inventory.ini"
    for (( i = 1; i <= n; i++ )); do
        ns=$(netns_client "$i") addr=$(netns_client_addr "$i")
        cat >"$dir/sshd_config.$i" <<EOF
ListenAddress $addr
HostKey $dir/ssh_host_key
PidFile $dir/sshd.$i.pid
AuthorizedKeysFile $dir/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
Subsystem sftp internal-sftp
EOF
        ip netns exec "$ns" /usr/sbin/sshd -f "$dir/sshd_config.$i" -E "$dir/sshd.$i.log" ||
            die "sshd would not start in $ns (see $dir/sshd.$i.log)"
        # every stand-in client shares this machine's CPUs: keep their load off the server's
        echo "client$i ansible_host=$addr lab_dir=$dir/client$i lab_cpus=$CLIENT_CPUS" >>"$dir/inventory.ini"
    done
    cat >>"$dir/inventory.ini" <<EOF
[clients:vars]
ansible_user=root
ansible_ssh_private_key_file=$dir/id_lab
ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o ControlMaster=auto -o ControlPersist=60s -o ControlPath=$(control_dir "$dir")/%C'
ansible_python_interpreter=/usr/bin/python3
EOF
    for (( i = 1; i <= n; i++ )); do wait_sshd "$(netns_client_addr "$i")"; done
    log "inventory: $dir/inventory.ini (server host $(netns_server), ${n} client host(s) with sshd)"
    echo "ip netns exec $(netns_server)"
}

# wait_sshd ADDR: until the sshd at ADDR answers, seen from the server host.
wait_sshd() {
    local i
    for i in $(seq 50); do
        on_server_host bash -c 'exec 3<>"/dev/tcp/$0/22"' "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    die "the sshd at $1 does not answer"
}

# control_dir DIR: where ssh keeps its connections to DIR's stand-ins (short: a socket's path has
# a limit of about 100 bytes).
control_dir() { printf '/tmp/httplab-ssh-%s' "$(printf '%s' "$1" | sha256sum | cut -c1-10)"; }

down() {
    local dir=$1 pid f
    # Ansible's ssh connections to these hosts (kept open 60 s to be reused) end with them: their
    # sockets are these stand-ins' own, so stand-ins made again later never reach through old ones.
    for f in "$(control_dir "$dir")"/*; do
        [[ -S $f ]] && ssh -o ControlPath="$f" -O exit lab-stand-in >/dev/null 2>&1 || true
        rm -f "$f"
    done
    rmdir "$(control_dir "$dir")" 2>/dev/null || true
    for f in "$dir"/sshd.*.pid; do
        [[ -f $f ]] || continue
        pid=$(cat "$f")
        kill "$pid" 2>/dev/null || true
        rm -f "$f"
    done
    netns_down
}

case ${1:-} in
    up)           (( $# >= 2 )) || usage; up "$2" "${3:-2}" ;;
    down)         (( $# == 2 )) || usage; down "$2" ;;
    server-netns) netns_server; echo ;;
    *)            usage ;;
esac
