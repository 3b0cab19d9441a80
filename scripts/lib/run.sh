# scripts/lib/run.sh: the raw run (sourced by lib.sh): its id, meta.json, write-once files, and
# the TLS material of a run (certificate, the clients' OpenSSL config, the negotiated-TLS probe).

# The run id: UTC time and short host name, unique per machine per second.
new_run_id() { echo "$(date -u +%Y%m%dT%H%M%SZ)-$(hostname -s)"; }

tool_version() {
    case $1 in
        wrk)     { wrk -v 2>&1 || true; } | head -n 1 ;;
        h2load)  h2load --version 2>&1 | head -n 1 ;;
        # the lab's rebuild says so on a second line (scripts/setup.sh, setup_h2load); Debian's has one
        h2load_build) h2load --version 2>&1 | sed -n '2{p;q}' | grep . || echo "Debian's (without the lab's changes: it hangs when a client is still connecting as its -D window ends, and SIGINT kills it)" ;;
        # likewise wrk's, on the line after its version (scripts/setup.sh, setup_wrk)
        wrk_build) { wrk -v 2>&1 || true; } | grep '^lab build' || echo "Debian's (without the lab's change: its clock starts before its connections are up)" ;;
        gcc)     gcc --version | head -n 1 ;;
        go)      go version ;;
        rustc)   rustc --version ;;
        node)    node --version ;;
        python)  python3 --version ;;
        openssl) openssl version ;;
        nghttp2) pkg-config --modversion libnghttp2 ;;
        curl)    curl --version | head -n 1 ;;
        oha)     oha --version ;;
        h3load)  "$(h3load_bin)" --version ;;
        gtlsclient) echo "ngtcp2-client $(dpkg-query -W -f '${Version}' ngtcp2-client)" ;;
    esac 2>/dev/null || echo "not found"
}

# this_host_json: the machine the harness runs on, as meta.json's host records it.
this_host_json() {
    jq -cn --arg cpu "$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)" \
        --argjson cores "$(nproc)" --arg kernel "$(uname -sr)" --arg host "$(hostname -s)" \
        '{cpu_model: $cpu, cores: $cores, kernel: $kernel, hostname: $host}'
}

# resume_host_check META: dies where the run META was started on another machine than this one
# (its CPU model, CPU count, kernel or host name differ). The same point moves by half between
# machines of one family (docs/method.md, "The canary"), so a run resumed elsewhere would mix two
# machines' figures in one interval, which no report could tell apart; the canary can compare two
# runs, not mend one. A run older than the record resumes as before.
resume_host_check() {
    local diff
    diff=$(jq -r --argjson now "$(this_host_json)" '.host // {} | to_entries[]
        | select(.key | IN($now | keys[]))
        | select(.value != $now[.key]) | "\(.key) \(.value) (here: \($now[.key]))"' "$1") ||
        die "could not read the run's host from $1"
    [[ -z $diff ]] ||
        die "run $(basename "$(dirname "$1")") was started on another machine than this one: $(paste -sd ';' <<<"$diff" | sed 's/;/; /g'); its points would mix two machines. Resume it there, or start another with --new"
}

# create_run_meta RUN_DIR PROFILE SUITES PARAMS_JSON: writes meta.json once.
create_run_meta() {
    local dir=$1 profile=$2 suites=$3 params=$4 tools='{}' t commit dirty state versions
    # An offline archive's servers were built elsewhere: the toolchains that built them are those
    # it recorded (LAB_BUILD_TOOLS, a JSON object), not asked of this host, which has none.
    local built=" "
    [[ -z ${LAB_BUILD_TOOLS:-} ]] || built+="$(jq -r 'keys | join(" ")' "$LAB_BUILD_TOOLS") "
    for t in wrk wrk_build h2load h2load_build oha h3load gtlsclient gcc go rustc node python openssl nghttp2 curl; do
        [[ $built == *" $t "* ]] && continue
        tools=$(jq --arg k "$t" --arg v "$(tool_version "$t")" '. + {($k): $v}' <<<"$tools")
    done
    [[ -z ${LAB_BUILD_TOOLS:-} ]] || tools=$(jq --slurpfile b "$LAB_BUILD_TOOLS" '. + $b[0]' <<<"$tools")
    if [[ -n ${LAB_SOURCE_COMMIT:-} ]]; then
        # an offline archive has no .git: it names the commit it was packed from (scripts/offline.sh)
        commit=$LAB_SOURCE_COMMIT dirty=${LAB_SOURCE_DIRTY:-false}
    else
        commit=$(git -C "$LAB_ROOT" rev-parse --verify -q HEAD 2>/dev/null || echo none)
        dirty=$( [[ -n $(git -C "$LAB_ROOT" status --porcelain --untracked-files=no 2>/dev/null) ]] && echo true || echo false)
    fi
    mkdir -p "$dir"
    state=$("$(lab_python)" -m httplab host-state --exclude-pid $$ 2>/dev/null) || state=null
    # each server's own version line (its manifest's `version` command)
    # (an offline archive has them from the machine it was built on: its compilers are not here)
    if [[ -n ${LAB_SERVER_VERSIONS:-} ]]; then versions=$(cat "$LAB_SERVER_VERSIONS")
    else versions=$(manifest_tool versions 2>/dev/null) || versions=null; fi
    local hosts
    # the host mode, and in inventory mode every host's facts: a host that cannot be reached stops
    # the run here, before it begins (the reason is on stderr)
    hosts=$(run_hosts_json) || exit 1
    jq -n --argjson hosts "$hosts" --arg run_id "$(basename "$dir")" --arg profile "$profile" --arg start "$(utc_now)" \
        --argjson host_state "$state" --argjson versions "$versions" \
        --arg suites "$suites" --arg scpu "$SERVER_CPUS" --arg ccpu "$CLIENT_CPUS" \
        --argjson cthreads "$CLIENT_THREADS" --argjson params "$params" --argjson tools "$tools" \
        --argjson host "$(this_host_json)" --arg commit "$commit" --argjson dirty "$dirty" \
        '{run_id: $run_id, profile: $profile, start_utc: $start, end_utc: null, complete: false,
          suites: ($suites | split(" ")), server_cpus: $scpu, client_cpus: $ccpu,
          client_threads: $cthreads, params: $params,
          host: $host,
          host_state: $host_state, tools: $tools, servers: $versions, git: {commit: $commit, dirty: $dirty},
          hosts: $hosts}' >"$dir/meta.json.tmp"
    mv "$dir/meta.json.tmp" "$dir/meta.json"
}

# finish_run_meta RUN_DIR COMPLETE: the one update meta.json ever gets: its end. Each step is
# chained, so that a write that fails (a full disk) never renames a half file over meta.json,
# even where the caller's `||` turns set -e off.
finish_run_meta() {
    meta_update "$1" '.end_utc = $finish | .complete = $complete' --arg finish "$(utc_now)" --argjson complete "$2"
}

# meta_update DIR FILTER [JQ_ARG...]: DIR/meta.json rewritten through jq's FILTER (a temporary file
# moved into place; on failure none is left and the old file stays).
meta_update() {
    local f=$1/meta.json filter=$2
    shift 2
    jq "$@" "$filter" "$f" >"$f.tmp" && mv "$f.tmp" "$f" || { rm -f "$f.tmp"; return 1; }
}

# resume_design META: the design settings a resumed run passes on to its parts. A part it started
# recorded its own (meta.json suite_params: scripts/lib/suite.sh, recorded_design); one it has not
# started gets the settings the run was started with as flags (params.given), and takes the rest
# from its suite as a new run would. A run made before params.given passed its params to every part.
# (The slices' length too: sliced.sh reads LAB_SLICE_S.)
resume_design() {
    local key value var pairs
    local -A var_of=([duration_s]=DURATION [warmup_s]=WARMUP [reps]=REPS [latency_every]=LATENCY_EVERY [blocks]=BLOCKS)
    # one line "KEY VALUE" per setting passed on; a setting older runs did not record has its default
    pairs=$(jq -r '.params as $p
        | (if $p | has("given") then $p.given[] else "duration_s", "warmup_s", "reps", "latency_every", "blocks" end)
        | "\(.) \($p[.] // ({latency_every: 1, blocks: "server"}[.]))"' "$1") ||
        die "could not read the run's params from $1"
    unset DURATION WARMUP REPS LATENCY_EVERY BLOCKS
    while read -r key value; do
        [[ -n $key ]] || continue
        var=${var_of[$key]:-}
        [[ -n $var ]] || die "$1: params.given names $key, not a design setting"
        export "$var=$value"
    done <<< "$pairs"
    LAB_SLICE_S=$(jq -r '.params.slice_s // empty' "$1"); [[ -z $LAB_SLICE_S ]] || export LAB_SLICE_S
}

# note_suite_params DIR PART JSON: the design the part runs in (run_params_json) under
# suite_params.<part> of meta.json, which the reports read before params: in the full profile a
# suite may have its own (suite.toml [full]).
note_suite_params() {
    meta_update "$1" '.suite_params = ((.suite_params // {}) + {($p): $v})' --arg p "$2" --argjson v "$3"
}

# note_server_warmups DIR LINES: servers whose points are warmed longer than the run's params say
# (LINES: "SERVER SECONDS" a line; their manifests' min_warmup_s), under
# server_params.<server>.warmup_s of meta.json, which the reports read before params.
note_server_warmups() {
    local add
    add=$(awk 'NF == 2 { printf "%s\"%s\": {\"warmup_s\": %s}", (n++ ? ", " : ""), $1, $2 }' <<<"$2")
    meta_update "$1" '.server_params = ((.server_params // {}) * $add)' --argjson add "{$add}"
}

# write_json_once FILE JSON: raw files are never rewritten; a second write is a no-op.
write_json_once() {
    [[ -f $1 ]] || { printf '%s\n' "$2" >"$1.tmp" && mv "$1.tmp" "$1"; } || { rm -f "$1.tmp"; return 1; }
}

# The room a point needs, with margin (LAB_RAW_MIN_FREE_KB): its raw files are a few to a few
# hundred KiB. Below it a suite stops before a server starts or a point begins, rather than
# stopping halfway through writing one.
RAW_MIN_FREE_KB=${LAB_RAW_MIN_FREE_KB:-16384}

# raw_problem DIR: why raw files cannot be written under DIR (or the nearest folder above it that
# exists), or nothing. Permission bits do not stop root, so "not writable" is mostly a read-only
# mount; access(2) (test -w) reports both.
raw_problem() {
    local d=$1 free
    while [[ ! -d $d ]]; do d=$(dirname "$d"); done
    if [[ ! -w $d ]]; then
        if [[ ,$(findmnt -n -o OPTIONS -T "$d" 2>/dev/null), == *,ro,* ]]; then echo "$d is read-only"
        else echo "$d is not writable by $(id -un)"; fi
        return 0
    fi
    free=$(( $(stat -f -c '%a * %S' "$d") / 1024 ))
    (( free >= RAW_MIN_FREE_KB )) || echo "$d is full: $free KiB free, at least $RAW_MIN_FREE_KB KiB wanted"
}

# ---------------------------------------------------------------- TLS

# make_run_certificate: an RSA-2048 self-signed certificate for this run, under
# build/ (never raw/ or git); its public description goes to raw/. Only servers
# that keep the invoking user read it here (key 0600): h2o and nginx read the
# copies render_conf puts in the runtime directory, where nobody can reach.
#
# Two runs may share a run id (two runs started in the same second, as the test command's parallel
# smoke runs do, each into its own raw/): the pair is made in a folder of this process's own and
# renamed into place whole, so neither ever sees the other's certificate beside its own key.
make_run_certificate() {
    local dir=$BUILD_DIR/certs/$(basename "$RUN_DIR") tmp
    if [[ ! -f $dir/cert.pem ]]; then
        mkdir -p "$BUILD_DIR/certs"
        tmp=$(mktemp -d "$dir.tmp.XXXXXX")
        local san="DNS:localhost,IP:127.0.0.1"
        [[ $SERVER_ADDR == 127.0.0.1 ]] || san+=",IP:$SERVER_ADDR"
        openssl req -x509 -newkey rsa:2048 -nodes -days 7 -subj /CN=localhost \
            -addext "subjectAltName=$san" \
            -keyout "$tmp/key.pem" -out "$tmp/cert.pem" 2>/dev/null
        chmod 0600 "$tmp/key.pem"; chmod 0644 "$tmp/cert.pem"; chmod 0755 "$tmp"
        # (a rename onto a folder that another run made first fails: that one is used)
        mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp"
        [[ -f $dir/cert.pem && -f $dir/key.pem ]] || die "no certificate in $dir (a folder of that name is in the way?)"
    fi
    export LAB_CERT=$dir/cert.pem LAB_KEY=$dir/key.pem
    mkdir -p "$RUN_DIR/$SUITE"
    if [[ ! -f $RUN_DIR/$SUITE/certificate.txt ]]; then
        { openssl x509 -in "$LAB_CERT" -noout -subject -dates -fingerprint -sha256 -ext subjectAltName
          echo "key: RSA 2048, self-signed, made for run $(basename "$RUN_DIR")"; } \
            >"$RUN_DIR/$SUITE/certificate.txt" 2>&1
    fi
}

# make_client_tls_config: wrk, h2load and openssl s_client all take their TLS
# 1.3 cipher order from OpenSSL's config. Left alone they offer AES-256-GCM
# first, which servers that follow the client's order (nginx, h2o, evloop) then
# pick, while Go's crypto/tls picks AES-128-GCM whatever the client's order:
# the comparison would be made on two different ciphers. The lab's clients offer
# TLS 1.3's suites in the order browsers do, AES-128-GCM first, so every server
# negotiates the same cipher with its own default policy. The config used is
# copied to raw/ beside the certificate's description.
make_client_tls_config() {
    # (one file, scripts/lib/client-openssl.cnf, which the client hosts of the other host modes
    # also have: fanout.sh names it on each host)
    # (runtime_copy: runs side by side share build/, so the file is replaced by a rename of this
    # process's own copy, and only when it differs: no run reads another's half-written file)
    local conf=$BUILD_DIR/tls/client-openssl.cnf
    mkdir -p "$BUILD_DIR/tls"
    runtime_copy "$LAB_ROOT/scripts/lib/client-openssl.cnf" "$conf" 0644
    export LAB_CLIENT_OPENSSL_CONF=$conf
    [[ -f $RUN_DIR/$SUITE/client-openssl.cnf ]] || cp "$conf" "$RUN_DIR/$SUITE/client-openssl.cnf"
}

# tls_probe PART: the negotiated TLS version, cipher and ALPN protocol, asked
# with the ALPN the scenario's tool offers, right before the measured run. The
# full report is needed (OpenSSL 3.0's -brief leaves the ALPN result out); only
# its descriptive lines are kept: no certificate dump, session ids or secrets.
# s_client waits for the server's hello as long as it takes (a hung server: for ever), so it
# runs with a load tool's deadline (tool_run); its full output stays out of raw/.
TLS_PROBE_LINES='^(CONNECTED|New, |Protocol *:|Cipher *:|ALPN protocol|No ALPN|Server Temp Key|Peer signature type|Verification|Verify return code|.*errno|.*error)'
tls_probe() {
    local alpn=http/1.1
    [[ $SC_PROTOCOL == h2 ]] && alpn=h2
    tool_run "$TOOL_MARGIN" "$GATE_TMP/s_client.txt" - \
        openssl s_client -connect "$SERVER_ADDR:$SERVER_PORT" -alpn "$alpn" || true
    note_tool_fault "openssl s_client (the TLS probe)" 0
    grep -aE "$TLS_PROBE_LINES" "$GATE_TMP/s_client.txt" >"$1.tls.txt" || true
    rm -f "$GATE_TMP/s_client.txt"
}
