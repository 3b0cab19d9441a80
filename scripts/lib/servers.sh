# scripts/lib/servers.sh: the server registry and server control (sourced by lib.sh).
#
# The scripts know no server by name: every server is a manifest, servers/**/lab.toml,
# read through httplab.lab.manifest (one reader for the shell and the package). Suites
# declare the route kinds their scenarios need; manifests declare what each server
# serves per protocol and how to start it per mode; suite_servers matches the two.

# LAB_SERVERS_DIR, when set, points the shell and the package (notebooks) alike at another
# folder of manifests (the add-a-server test uses a temporary copy of servers/).
SERVERS_ROOT=${LAB_SERVERS_DIR:-$LAB_ROOT/servers}

# manifest_tool ARGS...: the manifest reader. It needs only Python's standard library
# (3.11, for tomllib), so setup.sh can call it before the lab's environment exists.
manifest_tool() {
    local py=python3
    [[ -x $VENV_DIR/bin/python ]] && py=$VENV_DIR/bin/python
    PYTHONPATH=$LAB_ROOT${PYTHONPATH:+:$PYTHONPATH} "$py" -m httplab manifest --build "$BUILD_DIR" "$@"
}

# load_servers: reads every manifest once per process into LAB_SERVERS (display order) and the
# associative arrays SERVER_CAPS ("h1:ping h2:echo_get ..."), SERVER_MODES, SERVER_TIER,
# SERVER_READY, SERVER_READY_TIMEOUT, SERVER_CONFIG and SERVER_MANIFEST. A manifest with a
# mistake stops here, its file and field named. What it read is kept in LAB_SERVERS_DECL, which
# run_all.sh exports once the build is done: the bench.sh of each part (and its count of points)
# then reads no manifest again (the reader is a Python process of about 0.6 s here, twice per part).
load_servers() {
    [[ -n ${LAB_SERVERS_LOADED:-} ]] && return 0
    if [[ -z ${LAB_SERVERS_DECL:-} ]]; then
        LAB_SERVERS_DECL=$(manifest_tool shell) || die "the server manifests under $SERVERS_ROOT are not usable (above)"
    fi
    eval "$LAB_SERVERS_DECL"
    LAB_SERVERS_LOADED=1
}

# An A/A copy ("evloop~aa") is a second, independent instance of a server: started
# fresh in its own slot of each rep's order and loaded with the suite's headline
# scenarios only (HEADLINE_SCENARIOS). Its difference from the original is what two
# identical servers show in this run: the noise floor every other Δ is read against.
AA_SUFFIX="~aa"
# A server pinned to n cores by the scaling suite is named <server>@<n> (cores_of: n; none: empty).
base_server() { local b=${1%"$AA_SUFFIX"}; echo "${b%@*}"; }
cores_of() { [[ $1 == *@* ]] && echo "${1##*@}" || true; }
is_aa_copy() { [[ $1 == *"$AA_SUFFIX" ]]; }

known_server() { load_servers; [[ -n ${SERVER_CAPS[$(base_server "$1")]+set} ]]; }

# server_caps NAME: what NAME serves, "<protocol>:<route kind>" (protocol h1 or h2).
server_caps() { known_server "$1" || return 1; echo "${SERVER_CAPS[$(base_server "$1")]}"; }
server_serves() { [[ " $(server_caps "$1") " == *" $2 "* ]]; }
server_has_mode() { known_server "$1" && [[ " ${SERVER_MODES[$(base_server "$1")]} " == *" $2 "* ]]; }
server_tier() { known_server "$1" && echo "${SERVER_TIER[$(base_server "$1")]}"; }

# suite_servers: the servers a suite runs when --servers does not say: every server that
# starts in the suite's SERVER_MODE and serves at least one of its scenarios, in display order
# (only those in SUITE_DEFAULT_SERVERS when the suite sets it).
suite_servers() {
    local server line
    load_servers
    SUITE_SERVERS=()
    for server in "${LAB_SERVERS[@]}"; do
        server_has_mode "$server" "$SERVER_MODE" || continue
        # a suite may name the servers it runs by default (the latency suite: four of them)
        [[ -z ${SUITE_DEFAULT_SERVERS:-} || " $SUITE_DEFAULT_SERVERS " == *" $server "* ]] || continue
        for line in "${SCENARIOS[@]}"; do
            parse_scenario "$line"
            if server_serves "$server" "$SC_PROTOCOL:$SC_KIND"; then SUITE_SERVERS+=("$server"); break; fi
        done
    done
}

# run_jobs KIND [NAME...]: the manifests' KIND (builds or tests) commands, each in its folder;
# the first that fails stops with its servers and command named.
run_jobs() {
    local kind=$1 jobs dir cmd names
    shift
    jobs=$(mktemp)
    manifest_tool "$kind" "$@" >"$jobs" || { rm -f "$jobs"; die "cannot read the manifests' $kind (above)"; }
    while IFS= read -r -d '' dir && IFS= read -r -d '' cmd && IFS= read -r -d '' names; do
        log "${kind%s} $names"
        (cd "$dir" && bash -c "$cmd") || { rm -f "$jobs"; die "${kind%s} of $names failed: $cmd (in $dir)"; }
    done <"$jobs"
    rm -f "$jobs"
}

# A fixed port per server, so a server that lingers never answers for another
# (an A/A copy gets its own, after all the originals'; so does each <server>@<n>).
server_port() {
    local i base offset=0
    load_servers
    base=$(base_server "$1")
    is_aa_copy "$1" && offset=${#LAB_SERVERS[@]}
    [[ -n $(cores_of "$1") ]] && offset=$(( ($(cores_of "$1") + 1) * ${#LAB_SERVERS[@]} ))
    for i in "${!LAB_SERVERS[@]}"; do
        [[ ${LAB_SERVERS[$i]} == "$base" ]] && { echo $(( ${LAB_PORT_BASE:-18080} + offset + i )); return; }
    done
    die "unknown server '$1' (known: ${LAB_SERVERS[*]})"
}

# takes_cert MODE: whether MODE's start command gets the certificate and key (tls, h3: the
# registry's list, LAB_CERT_MODES, so the shell and the manifest reader cannot disagree).
takes_cert() { load_servers; [[ " ${LAB_CERT_MODES[*]} " == *" $1 "* ]]; }

# server_command NAME PORT MODE: fills the array SERVER_CMD with the manifest's start command
# for MODE, for as many cores as SERVER_CPUS names (h1: HTTP/1.1; h2c: cleartext HTTP/2 by prior knowledge; tls: ALPN h2 and http/1.1;
# h3: HTTP/3 over QUIC on UDP; tls and h3 need LAB_CERT and LAB_KEY), placeholders filled in. A server with a config template gets
# it rendered first, in the runtime directory (runtime_files).
server_command() {
    local name=$1 port=$2 mode=${3:-h1} args out
    known_server "$name" || die "unknown server '$name' (known: ${LAB_SERVERS[*]})"
    # {cores}: the server uses as many cores as it is pinned to (its manifest's [cores] says how)
    args=(command "$name" "$mode" --port "$port" --cores "$(cpu_count "${SERVER_CPUS:?}")")
    if takes_cert "$mode"; then
        [[ -n ${LAB_CERT:-} && -n ${LAB_KEY:-} ]] || die "$mode mode needs LAB_CERT and LAB_KEY"
        args+=(--cert "$LAB_CERT" --key "$LAB_KEY")
    fi
    if [[ -n ${SERVER_CONFIG[$name]} ]]; then
        runtime_files "$name" "$port" "$mode"
        args+=(--conf-dir "$CONF_DIR" --www "$LAB_RUNTIME_DIR/www")
        takes_cert "$mode" && args+=(--cert "$CONF_DIR/cert.pem" --key "$CONF_DIR/key.pem")
    fi
    out=$(manifest_tool "${args[@]}") || die "cannot start $name in mode $mode (above)"
    eval "SERVER_CMD=($out)"
}

# runtime_dir: sets LAB_RUNTIME_DIR, where servers with a config template find their files.
# Such servers (nginx, h2o) run their workers as nobody, and nobody cannot enter a checkout in
# a private directory (mode 0700, as home directories and `mktemp -d` are): they answered 403
# and 404 on every file under build/. So everything they open (config, prefix and temp paths,
# the www files, the certificate) goes to /run/httplab/<hash> (as root; else
# /tmp/httplab-<uid>/<hash>), <hash> a short hash of BUILD_DIR's path, so two checkouts never
# share one. Every level is 0755, ours and not a symlink (a name someone else made first is refused).
runtime_dir() {
    local root=/tmp/httplab-$(id -u) d
    [[ -d /run && -w /run ]] && root=/run/httplab
    LAB_RUNTIME_DIR=$root/$(realpath -m "$BUILD_DIR" | sha256sum | cut -c1-12)
    for d in "$root" "$LAB_RUNTIME_DIR"; do
        mkdir -p "$d"
        [[ ! -L $d && -O $d ]] || die "$d is not a directory of ours; remove it or run as its owner"
        chmod 0755 "$d"
    done
}

# runtime_copy SRC DEST MODE: DEST becomes a copy of SRC with MODE, replaced by
# a rename only when it differs (a running server never reads a half file).
runtime_copy() {
    cmp -s "$1" "$2" && [[ $(stat -c %a "$2") == "${3#0}" ]] && return 0
    install -m "$3" "$1" "$2.tmp.$$" && mv -f "$2.tmp.$$" "$2"
}

# runtime_files NAME PORT MODE: CONF_DIR (the runtime directory's folder for this start), a
# copy of build/www beside it and, for tls, copies of the certificate (0644: h2o's OCSP
# updater reads it as nobody) and key (0600: servers load it as root, before dropping
# privileges). The manifest reader then renders the config template into CONF_DIR.
runtime_files() {
    local name=$1 port=$2 mode=$3 f
    [[ -f $BUILD_DIR/www/ping ]] || die "$BUILD_DIR/www is missing; run scripts/build.sh"
    runtime_dir
    CONF_DIR=$LAB_RUNTIME_DIR/run/$name-$port-$mode
    mkdir -p "$CONF_DIR" "$LAB_RUNTIME_DIR/www"
    chmod 0755 "$LAB_RUNTIME_DIR/run" "$CONF_DIR" "$LAB_RUNTIME_DIR/www"
    while IFS= read -r f; do
        [[ -d $BUILD_DIR/www/$f ]] && { mkdir -p "$LAB_RUNTIME_DIR/www/$f"; chmod 0755 "$LAB_RUNTIME_DIR/www/$f"; continue; }
        runtime_copy "$BUILD_DIR/www/$f" "$LAB_RUNTIME_DIR/www/$f" 0644
    done < <(cd "$BUILD_DIR/www" && find . -mindepth 1 -printf '%P\n' | sort)
    if [[ $mode == tls ]]; then
        runtime_copy "$LAB_CERT" "$CONF_DIR/cert.pem" 0644
        runtime_copy "$LAB_KEY" "$CONF_DIR/key.pem" 0600
    fi
}

# ---------------------------------------------------------------- start and stop

# port_open PORT: true when something accepts connections on SERVER_ADDR:PORT.
port_open() {
    if [[ -n ${CLIENT_NETNS:-} ]]; then
        in_client_host bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$SERVER_ADDR" "$1" 2>/dev/null
    else
        (exec 3<>"/dev/tcp/$SERVER_ADDR/$1") 2>/dev/null
    fi
}

# udp_bound PORT: true when a UDP socket is bound to PORT on the server host. HTTP/3 listens on
# UDP, where nothing accepts a connection, so its port is "open" once the server has bound it.
udp_bound() {
    local host
    read -ra host <<<"$(server_host_prefix)"
    [[ -n $("${host[@]}" ss -Hlun "sport = :$1" 2>/dev/null) ]]
}

# listening MODE PORT: the server's port is taken in MODE (TCP accepts; for h3, UDP is bound).
listening() { if [[ $1 == h3 ]]; then udp_bound "$2"; else port_open "$2"; fi; }

# h3_get URL SECONDS RUNNER [ARG...]: one request for URL over HTTP/3, and its response's header
# lines (":status: 200", "content-length: 4", ...) on stdout; nothing when no answer came within
# SECONDS. ARGs go to the client (-m METHOD, -d FILE, --download=DIR). RUNNER runs it:
# in_client_host, or on_client, which also pins it to the client CPUs. The client is ngtcp2's
# example client on GnuTLS (gtlsclient, Debian's ngtcp2-client): Debian's curl has no HTTP/3, and
# oha's HTTP/3 client waits for the server's idle timeout (30 s with quic-go) before it exits.
# gtlsclient prints each response header as "http: stream 0x0 [:status: 200]" and closes the
# connection once its stream is done.
h3_get() {
    local url=$1 limit=$2 runner=$3 hostport host
    shift 3
    hostport=${url#https://}; hostport=${hostport%%/*}
    host=${hostport%:*}; host=${host#[}; host=${host%]}
    "$runner" timeout "$limit" gtlsclient --no-quic-dump --no-http-dump --exit-on-all-streams-close \
        --timeout="${limit}s" "$@" "$host" "${hostport##*:}" "$url" 2>&1 |
        sed -n 's/^http: stream 0x0 \[\(.*\)\]$/\1/p'
}

# h3_status URL [SECONDS [RUNNER]]: the status code of a GET of URL over HTTP/3 (h3_get), or
# nothing when no answer came within SECONDS (default 1; RUNNER default in_client_host).
h3_status() {
    h3_get "$1" "${2:-1}" "${3:-in_client_host}" | sed -n 's/^:status: //p' | head -n 1
}

# server_ready NAME PORT MODE: the manifest's readiness check: the port accepts ("port"; for h3,
# the UDP port is bound), or a GET of the given path answers 2xx over the mode's protocol.
server_ready() {
    local ready=${SERVER_READY[$(base_server "$1")]} code args=(-s -o /dev/null -w '%{http_code}' --max-time 1)
    listening "$3" "$2" || return 1
    [[ $ready == port ]] && return 0
    if [[ $3 == h3 ]]; then
        code=$(h3_status "https://$SERVER_ADDR:$2$ready") || true
        [[ $code == 2?? ]]
        return
    fi
    case $3 in
        h2c) args+=(--http2-prior-knowledge "http://$SERVER_ADDR:$2$ready") ;;
        tls) args+=(--insecure "https://$SERVER_ADDR:$2$ready") ;;
        *)   args+=(--http1.1 "http://$SERVER_ADDR:$2$ready") ;;
    esac
    code=$(in_client_host curl "${args[@]}" 2>/dev/null) || return 1
    [[ $code == 2?? ]]
}

# await_ready NAME MODE SECONDS LOGFILE: waits until the server just started (SERVER_PID) passes its
# manifest's readiness check on SERVER_PORT (returns 0) or SECONDS pass (returns 1); dies, quoting
# LOGFILE, when the server exits first. The one wait of start_server and lib/cost.sh.
await_ready() {
    local name=$1 mode=$2 limit=$3 logfile=$4 deadline
    deadline=$(awk -v t="$limit" -v n="$(date +%s.%N)" 'BEGIN { printf "%.3f", n + t }')
    while awk -v d="$deadline" -v n="$(date +%s.%N)" 'BEGIN { exit !(n < d) }'; do
        kill -0 "$SERVER_PID" 2>/dev/null || { wait "$SERVER_PID" 2>/dev/null || true
            die "$name exited while starting; its log ($logfile) says: $(tail -n 5 "$logfile")"; }
        server_ready "$name" "$SERVER_PORT" "$mode" && return 0
        sleep 0.05
    done
    return 1
}

# start_server NAME LOGFILE: (appends to LOGFILE) starts NAME pinned to SERVER_CPUS through serve.sh
# (which execs, so the PID is the server's), waits until it is ready (its manifest's `ready`,
# within its `ready_timeout_s`). Sets SERVER_PID and SERVER_PORT.
start_server() {
    local name=$1 logfile=$2 mode=${SERVER_MODE:-h1} host
    load_servers
    read -ra host <<<"$(server_host_prefix)"
    SERVER_PORT=$(server_port "$name")
    listening "$mode" "$SERVER_PORT" && die "port $SERVER_PORT is already in use; is an old server still running?"
    "${host[@]}" "$LAB_ROOT/scripts/serve.sh" "$(base_server "$name")" "$SERVER_PORT" --mode "$mode" >>"$logfile" 2>&1 &
    SERVER_PID=$!
    if await_ready "$name" "$mode" "${SERVER_READY_TIMEOUT[$(base_server "$name")]}" "$logfile"; then
        SERVER_RSS_START=$(mem_kb VmRSS $(tree_pids "$SERVER_PID"))
        return 0
    fi
    stop_server
    die "$name was not ready on port $SERVER_PORT within ${SERVER_READY_TIMEOUT[$(base_server "$name")]} s (its manifest's ready = ${SERVER_READY[$(base_server "$name")]}; log: $logfile)"
}

# stop_server: SIGTERM to the server's process tree, SIGKILL to what is left of it after 5 s
# (end_tree: also a stopped or hung server, and children that outlive their parent).
stop_server() {
    [[ -n ${SERVER_PID:-} ]] || return 0
    end_tree 5 "$SERVER_PID"
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=
}

server_alive() { [[ -n ${SERVER_PID:-} ]] && kill -0 "$SERVER_PID" 2>/dev/null; }

# How long a server may take to answer one request after a point before it counts as hung
# (LAB_PROBE_TIMEOUT, seconds). Generous: a false alarm stops a suite.
PROBE_TIMEOUT=${LAB_PROBE_TIMEOUT:-10}

# server_answers SECONDS: the server answers a request for the scenario's URL (SC_URL; any
# status) within SECONDS, over the scenario's protocol (curl; for h3, ngtcp2's client).
server_answers() {
    local code args=(-s -o /dev/null -w '%{http_code}' --max-time "$1")
    if [[ ${SC_PROTOCOL:-h1} == h3 ]]; then
        code=$(h3_status "$SC_URL" "$1" on_client) || true
        [[ $code =~ ^[1-5][0-9][0-9]$ ]]
        return
    fi
    case ${SC_PROTOCOL:-h1}:${TLS:-false} in
        h1:*)     args+=(--http1.1) ;;
        h2:false) args+=(--http2-prior-knowledge) ;;
        h2:true)  args+=(--http2) ;;
    esac
    [[ ${TLS:-false} == true ]] && args+=(--insecure)   # the run's self-signed certificate
    code=$(on_client curl "${args[@]}" "$SC_URL" 2>/dev/null) || true
    [[ $code =~ ^[1-5][0-9][0-9]$ ]]
}

# server_check: after a point, the server still runs and still answers; else SERVER_TROUBLE says
# what became of it ("died", "stopped answering") and SERVER_TROUBLE_DETAIL how. kill -0 alone
# cannot tell: it succeeds for a zombie and for a server that hangs (stopped, deadlocked,
# spinning), and the kernel completes TCP handshakes from the listen backlog of a stopped
# process, so only an answer counts. Not in a subshell: it reaps a dead server for its status.
server_check() {
    local state code
    SERVER_TROUBLE= SERVER_TROUBLE_DETAIL=
    state=$(proc_state "${SERVER_PID:-0}")
    if [[ -n $state && $state != Z ]] && server_answers "$PROBE_TIMEOUT"; then return 0; fi
    state=$(proc_state "${SERVER_PID:-0}")      # again: it may have died while it was asked
    if [[ -z $state || $state == Z ]]; then
        wait "$SERVER_PID" 2>/dev/null && code=0 || code=$?
        SERVER_TROUBLE=died SERVER_TROUBLE_DETAIL=$(exit_note "$code")
    else
        SERVER_TROUBLE="stopped answering"
        SERVER_TROUBLE_DETAIL="no answer from $SC_URL within $PROBE_TIMEOUT s; process $SERVER_PID is in state $state ($(state_name "$state"))"
    fi
    return 1
}
