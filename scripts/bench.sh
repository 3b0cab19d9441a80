#!/usr/bin/env bash
# bench.sh: one part of a suite (suites/<suite>/<part>.sh), rep after rep, into a raw run.
#
#   scripts/bench.sh PART [--run-dir DIR] [--quick] [...]     (PART --help: every flag)
#
# run_all.sh calls it for each part of the suites it runs; run it alone to measure one part into a
# new run, or into --run-dir of an existing one.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

main() {
    local part=${1:-} suite
    [[ -n $part && $part != -* ]] || { header_usage "${BASH_SOURCE[0]}"; die "name a part: $(lab_parts | paste -sd' ')"; }
    shift
    suite=$(part_suite "$part")
    [[ -n $suite ]] || die "unknown part '$part' (known: $(lab_parts | paste -sd' '))"
    SUITE_DIR=$SUITES_DIR/$suite
    # shellcheck source=/dev/null
    source "$SUITE_DIR/$part.sh"
    [[ ${SUITE:-} == "$part" ]] || die "$SUITE_DIR/$part.sh must set SUITE=$part (it sets '${SUITE:-}')"
    parse_suite_flags "$@"
    # A TLS part needs the run's certificate and the load tools' TLS settings (not when run_all.sh
    # only counts the points).
    if [[ $TLS == true && -z ${LAB_COUNT_POINTS:-} ]]; then
        make_run_certificate
        make_client_tls_config
    fi
    suite_run
}

main "$@"
