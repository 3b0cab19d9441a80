#!/usr/bin/env bash
# setup.sh: installs what the lab needs, idempotently; fast when all is present.
#   - Debian packages with apt: the lab's (load tools, build tools, chromium for the
#     browser test of the reports) and those the server manifests list (servers/**/lab.toml `apt`);
#   - the Python environment from environment.yml: a conda env when conda is on
#     PATH and LAB_USE_CONDA=1, else .venv (uv installs the pinned packages); the lab's package editable;
#   - the Jupyter kernel "httplab" that the notebooks name;
#   - h2spec (HTTP/2 conformance tests) into build/tools;
#   - h2load and wrk rebuilt from Debian's source with the lab's changes (scripts/patches/), once per machine;
#   - oha, the open-model (constant request rate) load generator, once per machine.
# Without root or apt it stops and names what is missing.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# chromium: tests/browser opens the exported reports in it headless (through Playwright, which
# is pointed at /usr/bin/chromium: no `playwright install` download).
# openssh: the inventory host mode reaches its hosts with ssh (Ansible); its test runs sshd in
# network namespaces (the packaged sshd service is kept from starting, as the servers' are).
# python3-numpy, python3-pandas: what a client host of an inventory needs for the h2load log
# compactor (scripts/ansible/install.yml); here too, so that the namespaces standing in for
# client hosts (which reach no mirror) have them.
# ngtcp2-client: ngtcp2's example HTTP/3 client (gtlsclient), the harness's probe of a server's
# HTTP/3 mode (Debian's curl has none).
# cmake, libev-dev, libc-ares-dev, libjemalloc-dev, libssl-dev, zlib1g-dev: what h2load's rebuild
# needs; libluajit-5.1-dev, luajit, pkg-config: wrk's (debian_rebuild below).
LAB_APT_PACKAGES=(wrk nghttp2-client build-essential jq curl ca-certificates time xz-utils strace iproute2 chromium
                  linux-perf valgrind openssh-client openssh-server python3-numpy python3-pandas ngtcp2-client
                  cmake libev-dev libc-ares-dev libjemalloc-dev libssl-dev zlib1g-dev libluajit-5.1-dev luajit pkg-config)
# Toolchains that come with the machine image rather than apt (Debian's Go is too old).
TOOLCHAINS=(gcc g++ make go cargo node npm python3)

# server_manifests: checks that the manifest reader can run here (Python 3.11's tomllib, from
# the machine's python3: the lab's environment does not exist yet), then reads the packages
# and services the servers need.
server_manifests() {
    python3 -c 'import tomllib' 2>/dev/null ||
        die "python3 with tomllib (Python ≥ 3.11) is needed to read the server manifests (found: $(python3 --version 2>&1))"
    manifest_tool validate >/dev/null || die "the server manifests are not usable (above)"
    mapfile -t SERVER_APT < <(manifest_tool apt)
    mapfile -t SERVER_SERVICES < <(manifest_tool services)
    APT_PACKAGES=("${LAB_APT_PACKAGES[@]}" "${SERVER_APT[@]}")
}

missing_apt() {
    local p
    for p in "${APT_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
    done
}

# Debian starts packaged servers (nginx, h2o) as services on install (port 80); the lab
# starts its own instances, so keep the packaged services (manifests' `services`) from
# starting, and stop any that did.
install_apt() {
    local missing=("$@") blocker=/usr/sbin/policy-rc.d ours=false
    if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
        die "missing Debian packages: ${missing[*]}; install them as root (apt-get install ${missing[*]})"
    fi
    log "installing with apt: ${missing[*]}"
    if [[ ! -e $blocker ]]; then printf '#!/bin/sh\nexit 101\n' >"$blocker"; chmod +x "$blocker"; ours=true; fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    $ours && rm -f "$blocker"
    local svc
    for svc in "${SERVER_SERVICES[@]}" ssh; do service "$svc" stop >/dev/null 2>&1 || true; done
}

check_toolchains() {
    local t missing=()
    for t in "${TOOLCHAINS[@]}"; do command -v "$t" >/dev/null || missing+=("$t"); done
    (( ${#missing[@]} == 0 )) || die "missing toolchains: ${missing[*]} (Go ≥ 1.26, Rust ≥ 1.80, Node 20, gcc/g++, make and Python 3.11 are expected on the machine)"
}

# The pip names and pins of environment.yml's conda dependencies.
pip_requirements() {
    awk '/^dependencies:/ { on = 1; next }
         on && /^  - pip:/ { exit }
         on && /^  - / { sub(/^  - /, ""); if ($0 ~ /^(python|pip)([=<> ]|$)/) next; sub(/=/, "=="); print }' \
        "$LAB_ROOT/environment.yml"
}

# A stamp of the inputs, so a second run with nothing changed takes no time. VENV_FORM names how
# the venv is made beyond its package list: a change to it (the bytecode below) redoes the install
# of an existing venv once.
VENV_FORM=bytecode
env_stamp() { { cat "$LAB_ROOT/environment.yml" "$LAB_ROOT/pyproject.toml"; echo "$VENV_FORM"; } | sha256sum | cut -d' ' -f1; }

UV_VERSION=0.13.9     # the venv's installer (PyPI)

setup_python() {
    local stamp=$VENV_DIR/.lab-stamp
    if [[ -f $stamp && $(cat "$stamp") == "$(env_stamp)" ]]; then return 0; fi
    if [[ ${LAB_USE_CONDA:-0} == 1 ]] && command -v conda >/dev/null; then
        log "conda: creating/updating the httplab environment"
        conda env update -q -n httplab -f "$LAB_ROOT/environment.yml" --prune
        VENV_DIR=$(conda run -n httplab python -c 'import sys; print(sys.prefix)')
    else
        [[ -x $VENV_DIR/bin/python ]] || python3 -m venv "$VENV_DIR"
        # uv installs the same pinned packages as pip would, resolving and unpacking in parallel
        # (about 10 s on the lab machine where pip took 45: a fresh clone's test command sets up
        # each time)
        log "uv: installing environment.yml's packages into $VENV_DIR"
        "$VENV_DIR/bin/pip" install -q "uv==$UV_VERSION"
        # --compile-bytecode: every module's .pyc written now, once. uv leaves that to the first
        # import, which does not write it where PYTHONDONTWRITEBYTECODE is set (as on the lab's
        # machines): every Python process then compiled pandas, matplotlib and scipy from source
        # again, 1.9 s of the 2.6 s a report's kernel took to import its modules, and 3.3 s of the
        # 7 s that building reports/index.html took. (pip and conda compile at install already.)
        "$VENV_DIR/bin/uv" pip install -q --compile-bytecode --python "$VENV_DIR/bin/python" $(pip_requirements)
    fi
    if [[ -x $VENV_DIR/bin/uv ]]; then
        "$VENV_DIR/bin/uv" pip install -q --python "$VENV_DIR/bin/python" -e "$LAB_ROOT"
    else
        "$VENV_DIR/bin/pip" install -q -e "$LAB_ROOT"
    fi
    "$VENV_DIR/bin/python" -m ipykernel install --sys-prefix --name httplab \
        --display-name "Python (httplab)" >/dev/null
    env_stamp >"$VENV_DIR/.lab-stamp"
}

# setup_lab_bytecode: the lab's own package compiled as well (on every setup: its sources change
# between commits; compileall rewrites only the stale files, and with nothing stale it takes a
# fraction of a second). A stale .pyc is never used: Python compares it with its source first.
setup_lab_bytecode() {
    "$(lab_python)" -m compileall -q "$LAB_ROOT/httplab" >/dev/null ||
        log "note: compiling $LAB_ROOT/httplab to bytecode failed; it is compiled on each import instead"
}

# h2spec, the HTTP/2 conformance suite the tests run, from the Go module proxy
# (pinned), into build/tools.
H2SPEC=github.com/summerwind/h2spec/cmd/h2spec@v2.2.1+incompatible
setup_h2spec() {
    [[ -x $BUILD_DIR/tools/h2spec ]] && return 0
    log "go install $H2SPEC"
    GOBIN=$BUILD_DIR/tools go install "$H2SPEC"
}

# oha: sends requests at a fixed rate on a schedule of its own and, with
# --latency-correction, times each from its intended send time (no coordinated
# omission). Chosen over vegeta by measurement (docs/suites.md, latency: on one client core
# vegeta's HTTP/1.1 rate collapses at 25k req/s, oha holds 75k). Not in Debian 12:
# built from crates.io, pinned and --locked, once per machine (a few minutes) into
# /usr/local as root, else ~/.cargo.
OHA_VERSION=1.16.0
setup_oha() {
    local root=/usr/local
    [[ $(id -u) == 0 ]] || root=$HOME/.cargo
    [[ $("$root/bin/oha" --version 2>/dev/null) == "oha $OHA_VERSION" ]] && return 0
    log "cargo install oha $OHA_VERSION into $root (once per machine, a few minutes)"
    cargo install -q --locked --root "$root" oha --version "$OHA_VERSION"
}

# The load tools the lab patches, h2load and wrk, are rebuilt from the very source of Debian 12's
# packages: fetched from Debian's pool and pinned by SHA-256, Debian's own patches applied as its
# series lists them, built with Debian's flags (dpkg-buildflags), then the lab's patch
# (scripts/patches/<tool>-lab.patch, whose header says what it changes and why). Each is built
# once per machine into /usr/local/bin as root (ahead of /usr/bin on PATH), else ~/.local/bin; a
# stamp of the sources and the patch says when it must be rebuilt. Where the source cannot be
# fetched, the runs keep Debian's binary and meta.json says so (tools.<tool>_build,
# scripts/lib/run.sh).
#
# debian_rebuild TOOL DIR POOL BUILD ORIG DEBIAN: TOOL from ORIG (the upstream tarball, which unpacks
# into DIR) and DEBIAN (Debian's tarball of its packaging), each "FILE SHA256", fetched from POOL;
# BUILD DEST is run in DIR once it is patched and leaves the binary at DEST.
debian_rebuild() {
    local tool=$1 dir=$2 pool=$3 build=$4 root=/usr/local src=$BUILD_DIR/$1-src f sum stamp
    local patch=$LAB_ROOT/scripts/patches/$1-lab.patch
    shift 4
    [[ $(id -u) == 0 ]] || root=$HOME/.local
    stamp=$({ printf '%s\n' "$@"; cat "$patch"; } | sha256sum | cut -d' ' -f1)
    [[ -x $root/bin/$tool && $(cat "$root/share/httplab/$tool.stamp" 2>/dev/null) == "$stamp" ]] && return 0
    log "building $tool from Debian's source ($dir) with the lab's changes into $root/bin (once per machine)"
    rm -rf "$src"; mkdir -p "$src"
    for f in "$@"; do
        read -r f sum <<<"$f"
        if ! curl -fsS --retry 2 -o "$src/$f" "$pool/$f" ||
           [[ $(sha256sum "$src/$f" | cut -d' ' -f1) != "$sum" ]]; then
            log "warning: could not fetch $pool/$f with its pinned SHA-256: keeping Debian's $tool, without the lab's changes ($patch)"
            rm -rf "$src"; return 0
        fi
    done
    # (each step ends the subshell on failure itself: set -e does not act left of ||)
    (   cd "$src/" || exit 1
        tar xf "${1%% *}" && cd "$dir" && tar xf "../${2%% *}" || exit 1
        while read -r f; do
            [[ -z $f || $f == \#* ]] || patch -s -p1 <"debian/patches/$f" || exit 1
        done <debian/patches/series
        patch -s -p1 <"$patch" || exit 1
        "$build" "$root/bin/$tool" || exit 1
    ) || die "building $tool failed (its log above; the source is in $src)"
    mkdir -p "$root/share/httplab"; printf '%s\n' "$stamp" >"$root/share/httplab/$tool.stamp"
    rm -rf "$src"
    [[ $(command -v "$tool") == "$root/bin/$tool" ]] ||
        log "warning: $root/bin is not ahead of $(dirname "$(command -v "$tool")") on PATH: the runs would use Debian's $tool"
}

# h2load (scripts/patches/h2load-lab.patch): Debian 12's never exits when a client is still
# connecting at the end of its -D window, which a TLS point on a loaded machine meets; SIGINT ends
# a -D run as its duration's end would, which the interleaved slices need (scripts/lib/sliced.sh);
# and --lab-connect-wait starts the clock once every client has connected, saying so on stderr and
# snapshotting the counters the window is read from (scripts/lib/measure.sh, docs/method.md).
# jemalloc as in Debian's build; the binary links the system's libnghttp2. Half a minute.
NGHTTP2_DEB=1.52.0-1+deb12u3
build_h2load() {
    mkdir -p _build && cd _build || return 1
    export CFLAGS="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
    export CXXFLAGS="$(dpkg-buildflags --get CXXFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
    export LDFLAGS="$(dpkg-buildflags --get LDFLAGS)"
    cmake .. -DCMAKE_BUILD_TYPE=None -DENABLE_APP=ON -DENABLE_HTTP3=OFF -DENABLE_DOC=OFF \
        -DENABLE_EXAMPLES=OFF -DENABLE_HPACK_TOOLS=OFF -DENABLE_FAILMALLOC=OFF -DENABLE_SHARED_LIB=OFF \
        -DENABLE_STATIC_LIB=ON -DWITH_JEMALLOC=ON -DWITH_LIBXML2=OFF -DWITH_MRUBY=OFF \
        -DWITH_NEVERBLEED=OFF -DWITH_LIBBPF=OFF >cmake.log 2>&1 || { tail -20 cmake.log >&2; return 1; }
    make -j"$(nproc)" h2load >make.log 2>&1 || { tail -20 make.log >&2; return 1; }
    install -D -m 0755 src/h2load "$1"
}
setup_h2load() {
    debian_rebuild h2load nghttp2-1.52.0 http://deb.debian.org/debian/pool/main/n/nghttp2 build_h2load \
        "nghttp2_1.52.0.orig.tar.gz 6b71561a9950b4a90fa36aa3160763f1437f3730d7a12434e416aa3f4ab145e0" \
        "nghttp2_$NGHTTP2_DEB.debian.tar.xz 57aee32be437d31753cb36e6a518a48693f129cb884c17b0dcf323426331001d"
}

# wrk (scripts/patches/wrk-lab.patch): --lab-connect-wait starts the clock once every connection
# has connected, as h2load's, says so on stderr and snapshots the counters the window is read from.
# Debian's flags with its hardening=+all, LuaJIT and OpenSSL from the
# system as in Debian's rules; VER as Debian's binary package names itself (4.1.0-3+b2 is a rebuild
# of the 4.1.0-3 source), so the first line of `wrk -v` is unchanged. A few seconds.
WRK_DEB=4.1.0-3
build_wrk() {
    export DEB_BUILD_MAINT_OPTIONS=hardening=+all
    CFLAGS="$(dpkg-buildflags --get CFLAGS)" CPPFLAGS="$(dpkg-buildflags --get CPPFLAGS)" \
        LDFLAGS="$(dpkg-buildflags --get LDFLAGS)" make -j"$(nproc)" WITH_LUAJIT=/usr WITH_OPENSSL=/usr \
        VER="debian/$WRK_DEB+b2" >make.log 2>&1 || { tail -20 make.log >&2; return 1; }
    install -D -m 0755 wrk "$1"
}
setup_wrk() {
    debian_rebuild wrk wrk-4.1.0 http://deb.debian.org/debian/pool/main/w/wrk build_wrk \
        "wrk_4.1.0.orig.tar.gz d8f1ba8b70ae5e10aef63ef4d5b6520bc0da103f7f1c59c79f50e2efd6810f8f" \
        "wrk_$WRK_DEB.debian.tar.xz 29a120ffc5789cbdc2afebe02223c56aee38c6e1c6f16901736617d51301f2bd"
}

# inferno: folds perf's stacks and draws them as a flame graph (scripts/profile_evloop.sh,
# the evidence kept for changes to the C server's hot path). Not in Debian 12; from
# crates.io like oha (under a minute).
INFERNO_VERSION=0.12.3
setup_inferno() {
    local root=/usr/local
    [[ $(id -u) == 0 ]] || root=$HOME/.cargo
    # (its binaries have no --version: cargo's own record of what it installed)
    [[ -x $root/bin/inferno-flamegraph ]] &&
        grep -q "^\"inferno $INFERNO_VERSION " "$root/.crates.toml" 2>/dev/null && return 0
    log "cargo install inferno $INFERNO_VERSION into $root (once per machine)"
    cargo install -q --locked --root "$root" inferno --version "$INFERNO_VERSION"
}

main() {
    local missing
    server_manifests
    mapfile -t missing < <(missing_apt)
    (( ${#missing[@]} == 0 )) || install_apt "${missing[@]}"
    check_toolchains
    setup_python
    setup_lab_bytecode
    setup_h2spec
    setup_h2load
    setup_wrk
    setup_oha
    setup_inferno
    log "setup: system packages, Python env ($VENV_DIR), the httplab kernel, h2spec, h2load, wrk, oha and inferno are ready"
}

main "$@"
