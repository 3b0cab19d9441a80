#!/usr/bin/env bash
# build.sh [--asan]: builds every server of the lab into build/ (BUILD_DIR overrides).
# --asan also builds the C server with AddressSanitizer and UBSan for the tests.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The sizes GET /echo?size=N is loaded with; nginx serves them from files.
ECHO_SIZES=(64 256 1024 4096)

build_c() {
    make -s -C "$LAB_ROOT/servers/evloop" BUILD="$BUILD_DIR"
    make -s -C "$LAB_ROOT/servers/floor" BUILD="$BUILD_DIR"
}

build_go() {
    (cd "$LAB_ROOT/servers/go" && go build -o "$BUILD_DIR/bench/" ./cmd/...)
}

# The five-language shoot-out's servers (stdlib and production tiers); each
# folder's Makefile is quick when nothing changed and uses its lock file.
build_languages() {
    local lang
    for lang in rust cpp node python; do
        make -s -C "$LAB_ROOT/servers/$lang" BUILD="$BUILD_DIR"
    done
}

# The files h2o (/ping) and nginx (/echo?size=N) serve. Both read them as nobody,
# which cannot enter a checkout in a private directory: render_conf serves a copy
# made in the runtime directory (runtime_dir in lib.sh), not these.
build_www() {
    local n dir=$BUILD_DIR/www/echo
    mkdir -p "$dir"
    printf pong >"$BUILD_DIR/www/ping"
    for n in "${ECHO_SIZES[@]}"; do
        [[ -f $dir/$n ]] || head -c "$n" /dev/zero | tr '\0' x >"$dir/$n"
    done
    chmod -R a+rX "$BUILD_DIR/www"
}

main() {
    local asan=false
    [[ ${1:-} == --asan ]] && asan=true
    mkdir -p "$BUILD_DIR/bench"
    build_c
    build_go
    build_languages
    build_www
    if $asan; then make -s -C "$LAB_ROOT/servers/evloop" BUILD="$BUILD_DIR" asan; fi
    log "built: $(ls "$BUILD_DIR/bench" | tr '\n' ' ')"
}

main "$@"
