#!/usr/bin/env bash
# compare.sh: run against run, "did my change make it faster?". Every point (suite, scenario,
# server) both runs measured: req/s, CPU-µs per request and P99 latency of B against A, with
# confidence intervals, verdicts against the noise floor and Holm's correction.
#
#   scripts/compare.sh RUN_A RUN_B [--force] [--canary] [--out DIR] [--confidence C] [--skip-setup]
#
# RUN_A (before the change) and RUN_B (after) are run ids under raw/ or run directories. Their
# runs frames come from data/<run_id>/ (built from raw/ first when absent). Runs made on different
# hosts, CPU sets or tool versions are refused unless --force (the report then lists every
# difference). --canary compares runs of two machines through their canaries (scripts/lib/canary.sh;
# both runs must have measured it): a difference in the machine then blocks nothing, and the report
# adds each Δ on equal machines and how much of it the machines' speed explains. Writes reports/compare/<RUN_A>__vs__<RUN_B>/ (or --out DIR): compare.html,
# compare.md (figures in compare_files/), comparisons.parquet/.csv and compare.json; prints the
# comparisons to stdout, regressions and improvements first; relinks reports/index.html.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() { header_usage "${BASH_SOURCE[0]}"; }

# run_notebook DIR_A DIR_B OUT CONFIDENCE FORCE CANARY: notebooks/compare.ipynb executed into OUT/compare.ipynb.
run_notebook() {
    local py
    py=$(lab_python)
    (cd "$LAB_ROOT" && "$(dirname "$py")/papermill" -k httplab --cwd "$LAB_ROOT" \
        notebooks/compare.ipynb "$3/compare.ipynb" -p run_a "$1" -p run_b "$2" -p out_dir "$3" \
        -p confidence "$4" -p force "$5" -p canary "$6" -p raw_root "$RAW_ROOT" -p data_root "$DATA_ROOT" \
        -p reports_root "$REPORTS_ROOT" >/dev/null)
}

main() {
    local args=() force=false canary=false out="" confidence=0.95 skip_setup=false py checked name
    while (( $# )); do
        case $1 in
            --out|--confidence) need_value "$1" "$#" ;;&
            --force)      force=true ;;
            --canary)     canary=true ;;
            --out)        out=$2; shift ;;
            --confidence) confidence=$2; shift ;;
            --skip-setup) skip_setup=true ;;
            -h|--help)    usage; exit 0 ;;
            -*)           usage; die "unknown flag '$1'" ;;
            *)            args+=("$1") ;;
        esac
        shift
    done
    (( ${#args[@]} == 2 )) || { usage; die "compare.sh takes two runs, RUN_A and RUN_B (got ${#args[@]})"; }
    [[ $confidence =~ ^0?\.[0-9]+$ ]] || die "--confidence takes a level like 0.95 (got '$confidence')"
    $skip_setup || "$LAB_ROOT/scripts/setup.sh"
    py=$(lab_python)
    # The refusals (a run missing, another machine, CPU sets or tools without --force, no point in
    # common) come before anything is written; lines: run A's id, B's id, the folder name, A's
    # and B's directories.
    checked=$(cd "$LAB_ROOT" && "$py" -m httplab compare check "${args[0]}" "${args[1]}" \
        --raw "$RAW_ROOT" --data "$DATA_ROOT" --confidence "$confidence" $($force && echo --force) $($canary && echo --canary)) || exit 1
    mapfile -t checked <<<"$checked"
    name=${checked[2]}
    out=${out:-$REPORTS_ROOT/compare/$name}
    mkdir -p "$out"
    out=$(cd "$out" && pwd)
    log "comparing ${checked[1]} (B) against ${checked[0]} (A) → $out"
    run_notebook "${checked[3]}" "${checked[4]}" "$out" "$confidence" "$($force && echo True || echo False)" \
        "$($canary && echo True || echo False)"
    export_report "$out/compare.ipynb" "$out"
    "$py" -m httplab compare summary "$out"
    "$py" -m httplab index "$REPORTS_ROOT" --raw "$RAW_ROOT" --data "$DATA_ROOT" >/dev/null
    log "report: $out/compare.html (and .md); index: $REPORTS_ROOT/index.html"
}

main "$@"
