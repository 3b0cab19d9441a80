#!/usr/bin/env bash
# offline.sh: the lab on a benchmark host with no network (docs/host-modes.md, "Offline benchmark
# hosts"). On this machine, set up and built:
#
#   scripts/offline.sh pack [--servers a,b] [--modes h1,...] [--without prog,...] [OUT]
#                                      one archive with what a run needs (default
#                                      build/offline/httplab-offline-<git short rev>.tar.xz); the
#                                      flags make a smaller one: only those servers (manifest
#                                      names), only the programs of those start modes, without
#                                      those tools (e.g. oha, which only the latency suites call)
#   scripts/offline.sh import RUN_DIR  a run made on the host (httplab-offline/raw/<run_id>, brought
#                                      home) into raw/, packed; then
#                                      scripts/run_all.sh --reports-only --run-id <run_id>
#
# On the host: tar xJf httplab-offline-<rev>.tar.xz && httplab-offline/run.sh [run_all.sh flags]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$LAB_ROOT/scripts/lib/offline.sh"

main() {
    local verb=${1:-} out id
    case $verb in
        pack)
            shift
            out=
            while (( $# )); do
                case $1 in
                    --servers) need_value "$1" "$#" "server names, comma-separated"; export OFFLINE_SERVERS=$2; shift 2 ;;
                    --modes)   need_value "$1" "$#" "start modes, comma-separated"; export OFFLINE_MODES=$2; shift 2 ;;
                    --without) need_value "$1" "$#" "programs, comma-separated"; export OFFLINE_WITHOUT=$2; shift 2 ;;
                    -*) die "pack: unknown flag $1 (--servers, --modes, --without)" ;;
                    *) [[ -z $out ]] || die "pack: one output path only"; out=$1; shift ;;
                esac
            done
            out=${out:-$BUILD_DIR/offline/httplab-offline-$(git -C "$LAB_ROOT" rev-parse --short HEAD).tar.xz}
            trap 'rm -rf "${OFFLINE_STAGE:-}"' EXIT
            out=$(offline_pack "$out")
            log "offline archive: $out ($(( $(stat -c %s "$out") / 1024 )) KiB, ${SECONDS}s; its MANIFEST lists what it holds)"
            echo "$out" ;;
        import)
            need_value import "$#" "a run folder made by an offline archive's run.sh"
            id=$(offline_import "$2")
            log "imported run $id into $RAW_ROOT; its reports: scripts/run_all.sh --reports-only --run-id $id"
            echo "$id" ;;
        -h|--help) header_usage "${BASH_SOURCE[0]}" ;;
        *) header_usage "${BASH_SOURCE[0]}"; die "name a verb: pack or import" ;;
    esac
}

main "$@"
