#!/usr/bin/env bash
# build.sh [--servers a,b]: builds the lab's servers into build/ (BUILD_DIR overrides):
# each manifest's (servers/**/lab.toml) `build` command, run in its folder; a command
# two variants share (one Makefile for both) runs once. Then the lab's own load tool,
# h3load (tools/h3load: HTTP/3), into build/tools, and the static files the servers
# with a config template serve (build/www).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The sizes GET /echo?size=N is loaded with; a static-file server serves them from files.
ECHO_SIZES=(64 256 1024 4096)

# The files static-file servers serve (/ping, /echo?size=N). They read them as nobody,
# which cannot enter a checkout in a private directory: runtime_files (lib/servers.sh)
# serves a copy made in the runtime directory, not these.
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
    local servers=()
    while (( $# )); do
        case $1 in
            --servers) need_value "$1" "$#" "a comma list of servers"; IFS=, read -ra servers <<<"$2"; shift ;;
            -h|--help) header_usage "$0"; exit 0 ;;
            *)         header_usage "$0"; die "unknown flag '$1'" ;;
        esac
        shift
    done
    load_servers
    local s; for s in "${servers[@]}"; do known_server "$s" || die "unknown server '$s' (known: ${LAB_SERVERS[*]})"; done
    mkdir -p "$BUILD_DIR/bench"
    run_jobs builds "${servers[@]}"
    log "build h3load (tools/h3load)"
    make -s -C "$LAB_ROOT/tools/h3load" BUILD="$BUILD_DIR" || die "h3load (tools/h3load) did not build (above)"
    build_www
    log "built: $(ls "$BUILD_DIR/bench" | tr '\n' ' ')"
}

main "$@"
