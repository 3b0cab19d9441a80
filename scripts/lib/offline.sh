# scripts/lib/offline.sh: the offline archive (sourced by scripts/offline.sh after lib.sh): what a
# benchmark host with no network needs to run the suites, packed on a machine where the lab is set
# up and built (docs/host-modes.md, "Offline benchmark hosts").
#
# The archive's folder mirrors the checkout (scripts/, servers/, suites/, httplab/, build/), so the
# scripts find everything where they always do; beside it:
#   tools/bin/       a wrapper per carried program (load tools, nginx, h2o, jq, curl, openssl, GNU
#                    time), put first on PATH by run.sh
#   tools/libexec/   the carried programs' ELF files, the built servers' too
#   tools/lib/       their shared libraries but the glibc family, which the host provides
#   tools/share/     h2o's share folder (its mruby bootstrap), OpenSSL's default config
# build/bench/ holds wrappers with the servers' names, so the manifests' start commands
# ({build}/bench/NAME) run them unchanged. A wrapper sets LD_LIBRARY_PATH for its program alone
# and execs it (the PID the harness measures is the program's).

# The system programs a run calls that a bare host may lack: the load tools, the reference servers,
# and the shell's helpers (jq everywhere, curl for the verify gate and the health probes, openssl for
# the run's certificate and the TLS probe, GNU time for the client's CPU time; for HTTP/3, ngtcp2's
# client gtlsclient, the gate's and the probes' client, and its example server gtlsserver, a
# reference). coreutils, grep, sed, gawk or mawk, util-linux (taskset, setsid, findmnt) and procps
# are taken from the host; iproute2 (ip, tc) only for --hosts netns, which the archive does not serve.
OFFLINE_PROGRAMS=(wrk h2load oha jq curl openssl nginx h2o time gtlsclient gtlsserver)
# The toolchains that built the carried servers (meta.json's tools: gcc, go, ...), recorded at
# pack time: the host has none of them; and gtlsclient, whose version only its package says.
OFFLINE_BUILD_TOOLS=(gcc go rustc node nghttp2 gtlsclient)
# Where setup.sh installs oha (cargo), which is not on every PATH.
OFFLINE_PATH_EXTRA=/usr/local/bin:$HOME/.cargo/bin

# glibc and its parts come from the host: carrying them would mean carrying the dynamic loader too.
OFFLINE_GLIBC_RE='^(libc|libm|libmvec|libpthread|libdl|librt|libresolv|libutil|libanl|libnsl|libnss_[a-z]+|libthread_db|libBrokenLocale|ld-linux[-a-z0-9_.]*)\.so'

# What a pack takes (scripts/offline.sh pack's flags; empty: everything). A smaller archive for a
# host that runs a few suites, or a transfer with a size limit:
#   OFFLINE_SERVERS   servers by manifest name (comma-separated)
#   OFFLINE_MODES     their start modes (h1, h2c, tls, ...): only those modes' programs are carried,
#                     so a suite in another mode finds the server unstartable and stops, saying so
#   OFFLINE_WITHOUT   programs of OFFLINE_PROGRAMS left out (e.g. oha, which only the latency
#                     suites call)

# offline_programs: OFFLINE_PROGRAMS less OFFLINE_WITHOUT, one a line.
offline_programs() {
    local p
    for p in "${OFFLINE_PROGRAMS[@]}"; do
        [[ ,${OFFLINE_WITHOUT:-}, == *",$p,"* ]] || echo "$p"
    done
}

# offline_manifests: every server manifest of the checkout, sorted.
offline_manifests() { find "$SERVERS_ROOT" -name lab.toml -not -path '*/node_modules/*' | sort; }

# offline_which NAME: the program's path (GNU time by LAB_GNU_TIME's path: `time` is a keyword).
offline_which() {
    if [[ $1 == time ]]; then echo "$GNU_TIME"; return; fi
    PATH=$PATH:$OFFLINE_PATH_EXTRA command -v "$1" || die "$1 is not installed here; run scripts/setup.sh"
}

# offline_wrapper DEST: a wrapper that runs tools/libexec/<its own name> with tools/lib. DEST is two
# folders below the archive's root (tools/bin or build/bench), which is how it finds the root.
offline_wrapper() {
    cat >"$1" <<'EOF'
#!/bin/sh
# The offline archive's wrapper: runs the carried program of this name with the carried libraries.
root=$(cd "${0%/*}/../.." && pwd -P)
name=${0##*/}
case $name in
    h2o)     H2O_ROOT=$root/tools/share/h2o-root; export H2O_ROOT ;;            # its mruby bootstrap
    openssl) OPENSSL_CONF=${OPENSSL_CONF:-$root/tools/share/openssl.cnf}; export OPENSSL_CONF ;;
esac
LD_LIBRARY_PATH=$root/tools/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec "$root/tools/libexec/$name" "$@"
EOF
    chmod 0755 "$1"
}

# offline_carry ELF DEST_ROOT WRAPPER_DIR: the program into tools/libexec, its wrapper into
# WRAPPER_DIR, and each shared library it loads (ldd: the whole closure) but glibc's into tools/lib.
offline_carry() {
    local elf=$1 root=$2 wdir=$3 name lib path
    name=$(basename "$elf")
    cp -L "$elf" "$root/tools/libexec/$name"
    offline_wrapper "$root/$wdir/$name"
    # (a static binary has no libraries: ldd says so and fails)
    while read -r lib path; do
        [[ $lib =~ $OFFLINE_GLIBC_RE || -e $root/tools/lib/$lib ]] && continue
        cp -L "$path" "$root/tools/lib/$lib"
    done < <(ldd "$elf" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }')
}

# offline_glibc_needed DIR: the newest GLIBC_x.y symbol version any ELF file under DIR asks for.
offline_glibc_needed() {
    find "$1" -type f -print0 | xargs -0 objdump -T 2>/dev/null |
        grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -n 1
}

# offline_manifest_programs TOML: the manifest's name on the first line, then the program of each
# start command of the modes in OFFLINE_MODES (all modes when it is empty), one a line (tomllib: the
# manifest reader's own parser; the shell's manifest reader has no verb for this).
offline_manifest_programs() {
    OFFLINE_MODES=${OFFLINE_MODES:-} python3 - "$1" <<'EOF'
import os, sys, tomllib
with open(sys.argv[1], "rb") as f:
    manifest = tomllib.load(f)
modes = [m for m in os.environ["OFFLINE_MODES"].split(",") if m]
print(manifest.get("name", ""))
for mode, cmd in manifest.get("start", {}).items():
    if not modes or mode in modes:
        print(cmd.split()[0])
EOF
}

# offline_server_wanted TOML: true when the manifest's server is one of OFFLINE_SERVERS (every
# server when it is empty) and has a start command in the modes packed.
offline_server_wanted() {
    local name progs
    { read -r name; progs=$(cat); } < <(offline_manifest_programs "$1")
    [[ -n $progs ]] || return 1
    [[ -z ${OFFLINE_SERVERS:-} || ,$OFFLINE_SERVERS, == *",$name,"* ]]
}

# offline_server_built TOML ROOT: each built server program (build/bench/NAME) the manifest's
# start commands of the modes packed run, carried into the archive at ROOT.
offline_server_built() {
    local prog elf
    while read -r prog; do
        [[ $prog == "{build}/bench/"* ]] || continue
        elf=$BUILD_DIR/bench/${prog#"{build}/bench/"}
        [[ -f $elf && -x $elf ]] || continue         # not built here: offline_server_carried says no
        [[ -e $2/build/bench/$(basename "$elf") ]] || offline_carry "$elf" "$2" build/bench
    done < <(offline_manifest_programs "$1" | tail -n +2)
}

# offline_server_carried TOML ROOT: true when every start command of the modes packed runs a
# program the archive at ROOT has (a built server in build/bench, or a carried program); the others
# (the Node.js and Python servers, which need their runtimes) stay out, and so out of every suite.
offline_server_carried() {
    local prog
    while read -r prog; do
        case $prog in
            "{build}/bench/"*) [[ -x $2/build/bench/${prog#"{build}/bench/"} ]] || return 1 ;;
            */*|"{"*)          return 1 ;;
            *)                 [[ -x $2/tools/bin/$prog ]] || return 1 ;;
        esac
    done < <(offline_manifest_programs "$1" | tail -n +2)
}

# offline_tracked DEST PATH...: the tracked files under PATHs (as they are in the working tree,
# like a run from this checkout) copied into DEST.
offline_tracked() {
    local dest=$1
    shift
    (cd "$LAB_ROOT" && git ls-files -z -- "$@" | xargs -0 cp --parents -t "$dest")
}

# offline_stage ROOT: the archive's folder, everything but MANIFEST.
offline_stage() {
    local root=$1 prog elf toml rel
    mkdir -p "$root"/tools/{bin,libexec,lib,share} "$root/build/bench"
    for prog in $(offline_programs); do
        elf=$(offline_which "$prog")
        offline_carry "$elf" "$root" tools/bin
    done
    while IFS= read -r toml; do
        if offline_server_wanted "$toml"; then offline_server_built "$toml" "$root"; fi
    done < <(offline_manifests)
    # the machine's canary (scripts/lib/canary.sh) runs in every suite, whichever servers are packed
    [[ ! -x $BUILD_DIR/bench/canary || -e $root/build/bench/canary ]] || offline_carry "$BUILD_DIR/bench/canary" "$root" build/bench
    # the lab's HTTP/3 load tool, where the h3 suite looks for it (build/tools/h3load)
    if [[ -x $BUILD_DIR/tools/h3load ]]; then
        mkdir -p "$root/build/tools"
        offline_carry "$BUILD_DIR/tools/h3load" "$root" build/tools
    fi
    cp -r "$BUILD_DIR/www" "$root/build/www"
    # h2o finds its share/h2o under H2O_ROOT; OpenSSL's CLI reads a config by default
    mkdir -p "$root/tools/share/h2o-root/share"
    cp -r /usr/share/h2o "$root/tools/share/h2o-root/share/h2o"
    cp -L /usr/lib/ssl/openssl.cnf "$root/tools/share/openssl.cnf"
    offline_tracked "$root" scripts suites httplab/__init__.py httplab/__main__.py httplab/lab httplab/parse \
        httplab/tidy/__init__.py httplab/tidy/rawpack.py httplab/tidy/rawhist.py
    # the manifests (and config templates) of the servers the archive can start
    while IFS= read -r toml; do
        rel=${toml#"$LAB_ROOT"/}
        offline_server_wanted "$toml" && offline_server_carried "$toml" "$root" || continue
        offline_tracked "$root" "$rel" "$(dirname "$rel")/*.in"
    done < <(offline_manifests)
    cp "$LAB_ROOT/scripts/lib/offline-run.sh" "$root/run.sh"
    chmod 0755 "$root/run.sh"
    manifest_tool versions >"$root/server-versions.json"
    # the toolchains that built the servers, for the run's meta.json (the host has none)
    local t built='{}'
    for t in "${OFFLINE_BUILD_TOOLS[@]}"; do
        built=$(jq --arg k "$t" --arg v "$(tool_version "$t")" '. + {($k): $v}' <<<"$built")
    done
    echo "$built" >"$root/build-tools.json"
    {
        echo "LAB_SOURCE_COMMIT=$(git -C "$LAB_ROOT" rev-parse HEAD)"
        echo "LAB_SOURCE_DIRTY=$( [[ -n $(git -C "$LAB_ROOT" status --porcelain --untracked-files=no) ]] && echo true || echo false)"
        echo "OFFLINE_GLIBC_NEEDED=$(offline_glibc_needed "$root/tools")"
        echo "OFFLINE_PYTHON_NEEDED=3.11"
    } >"$root/offline.env"
}

# offline_manifest ROOT: MANIFEST, what the archive holds and what the host needs.
offline_manifest() {
    local root=$1 prog toml
    # shellcheck source=/dev/null
    source "$root/offline.env"
    {
        echo "httplab offline archive"
        echo "source: git $LAB_SOURCE_COMMIT$( [[ $LAB_SOURCE_DIRTY == true ]] && echo ' (with uncommitted changes)'), packed $(utc_now) on $(hostname -s)"
        echo "host needs: Linux $(uname -m), glibc >= $OFFLINE_GLIBC_NEEDED, python3 >= $OFFLINE_PYTHON_NEEDED (standard library only), bash, coreutils, grep, sed, awk, util-linux, procps"
        echo "run: httplab-offline/run.sh [run_all.sh flags]   (raw/<run_id> is written in httplab-offline/raw, or RAW_ROOT)"
        echo "packed for: servers ${OFFLINE_SERVERS:-all}; modes ${OFFLINE_MODES:-all}; programs left out: ${OFFLINE_WITHOUT:-none}"
        echo
        echo "servers (manifests carried):"
        for toml in $(cd "$root" && find servers -name lab.toml | sort); do echo "  $toml"; done
        echo
        echo "programs (tools/bin, with their versions):"
        for prog in $(offline_programs); do
            printf '  %-8s %s\n' "$prog" "$(offline_version "$root" "$prog")"
        done
        echo
        echo "sizes (unpacked, KiB):"
        (cd "$root" && du -sk build/bench tools/libexec tools/lib tools/share scripts suites servers httplab | sed 's/^/  /')
        echo
        echo "shared libraries (tools/lib; the host gives glibc's):"
        (cd "$root/tools/lib" && ls | sed 's/^/  /')
    } >"$root/MANIFEST"
}

# offline_version ROOT PROG: the carried program's version line, run through its wrapper.
offline_version() {
    local w=$1/tools/bin/$2
    case $2 in
        wrk)   { "$w" -v 2>&1 || true; } | head -n 1 ;;
        time)  "$w" --version 2>&1 | head -n 1 ;;
        nginx) "$w" -v 2>&1 ;;
        jq|oha) "$w" --version ;;
        openssl) "$w" version ;;
        # (ngtcp2's examples have no --version: their package's, asked here at pack time)
        gtlsclient) echo "ngtcp2-client $(dpkg-query -W -f '${Version}' ngtcp2-client)" ;;
        gtlsserver) echo "ngtcp2-server $(dpkg-query -W -f '${Version}' ngtcp2-server)" ;;
        *)     "$w" --version 2>&1 | head -n 1 ;;
    esac
}

# offline_pack OUT: stages the archive in a temporary folder, writes OUT (tar.xz, one top folder
# httplab-offline/, owners and times fixed) and prints its path.
# The caller removes OFFLINE_STAGE (offline.sh's EXIT trap), also when a step fails.
offline_pack() {
    local out=$1 stage
    OFFLINE_STAGE=$(mktemp -d) stage=$OFFLINE_STAGE
    offline_stage "$stage/httplab-offline"
    offline_manifest "$stage/httplab-offline"
    mkdir -p "$(dirname "$out")"
    tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - httplab-offline |
        xz -T0 -6 >"$out.tmp"
    mv "$out.tmp" "$out"
    echo "$out"
}

# offline_import RUN_DIR: a run made on an offline host (httplab-offline/raw/<run_id>) copied into
# RAW_ROOT and packed as run_all.sh packs a run at home; prints the run id.
offline_import() {
    local src=${1%/} id
    [[ -f $src/meta.json ]] || die "$src is not a raw run (no meta.json)"
    id=$(basename "$src")
    [[ ! -e $RAW_ROOT/$id ]] || die "$RAW_ROOT/$id exists already; nothing was copied"
    mkdir -p "$RAW_ROOT"
    cp -a "$src" "$RAW_ROOT/$id.tmp"
    mv "$RAW_ROOT/$id.tmp" "$RAW_ROOT/$id"
    "$(lab_python)" -m httplab pack pack "$RAW_ROOT/$id" >&2
    echo "$id"
}
