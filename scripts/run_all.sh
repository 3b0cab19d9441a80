#!/usr/bin/env bash
# run_all.sh: the lab's main job. setup → build → every suite → pack raw/ →
# papermill → nbconvert → reports/index.html.
#
#   scripts/run_all.sh [--quick] [--suites http1,...] [--run-id ID | --new]
#                      [--duration S] [--warmup S] [--reps N] [--skip-setup]
#                      [--servers a,b] [--scenarios glob,glob] [--aa | --no-aa]
#                      [--order-seed N]
#   scripts/run_all.sh --reports-only --run-id ID   (notebooks and exports of a run again)
#
# An interrupted run resumes: rerun the same command and the newest unfinished
# run of the same profile is picked up (finished points are kept, unfinished
# ones redone). --new starts a fresh run instead; --run-id names one.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# suite name → the notebook (and report) that reads it.
declare -A NOTEBOOK_OF=([http1]=http1 [h2c]=http2 [https]=https [languages]=languages)
ALL_SUITES=(http1 h2c https languages)

usage() {
    sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
}

# newest_unfinished PROFILE: the run to resume, if any.
newest_unfinished() {
    local meta
    for meta in $(ls -1d "$RAW_ROOT"/*/meta.json 2>/dev/null | sort -r); do
        if [[ $(jq -r '.complete' "$meta") == false && $(jq -r '.profile' "$meta") == "$1" ]]; then
            dirname "$meta"; return
        fi
    done
}

run_suites() {
    local suite failed=()
    for suite in "${SUITES[@]}"; do
        log "=== suite $suite → $RUN_DIR"
        "$LAB_ROOT/scripts/bench_$suite.sh" --run-dir "$RUN_DIR" "${SUITE_FLAGS[@]}" || failed+=("$suite")
    done
    FAILED_SUITES=("${failed[@]}")
}

# pack_raw: every complete suite of the run becomes one .tar.xz per server
# (httplab.tidy.rawpack; the notebooks read packed runs as they are). Incomplete
# suites stay unpacked so that a rerun can resume them.
pack_raw() {
    "$(lab_python)" -m httplab.tidy.rawpack pack "$RUN_DIR" \
        || log "warning: packing $RUN_DIR failed (see above); its raw files stay unpacked"
}

# make_reports: one executed notebook per suite (reports/<run>/<nb>.ipynb, not
# committed), exported without code to Markdown and HTML. Both exports extract
# the figures into the one folder <nb>_files/ beside them (same file names, so
# each figure is stored once; the HTML links them instead of embedding base64),
# emptied first so that no figure of an earlier export is left behind.
make_reports() {
    local suite nb out py jupyter run_id
    py=$(lab_python)
    jupyter=$(dirname "$py")/jupyter
    run_id=$(basename "$RUN_DIR")
    out=$REPORTS_ROOT/$run_id
    mkdir -p "$out"
    # Each notebook writes the whole run's frames to data/<run_id>/ (runs, latency, estimates,
    # comparisons: httplab.stats.write.write_run); a statistics error fails the notebook and stops
    # here. `python -m httplab.stats.write raw/<run_id>` writes them without the reports.
    for suite in "${SUITES[@]}"; do
        nb=${NOTEBOOK_OF[$suite]}
        [[ -f $RUN_DIR/$suite/suite.json ]] || log "note: suite $suite is not complete; its report shows what was finished"
        log "papermill notebooks/$nb.ipynb (run $run_id)"
        (cd "$LAB_ROOT" && "$(dirname "$py")/papermill" -k httplab --cwd "$LAB_ROOT" \
            "notebooks/$nb.ipynb" "$out/$nb.ipynb" -p run_dir "$RUN_DIR" -p out_dir "$DATA_ROOT/$run_id" >/dev/null)
        rm -rf "${out:?}/${nb}_files"
        "$jupyter" nbconvert --log-level WARN --to html --no-input --ExtractOutputPreprocessor.enabled=True \
            "$out/$nb.ipynb" --output-dir "$out"
        "$jupyter" nbconvert --log-level WARN --to markdown --no-input "$out/$nb.ipynb" --output-dir "$out"
    done
    "$py" -m httplab.report.index "$REPORTS_ROOT" --raw "$RAW_ROOT"
    log "reports: $out/ and $REPORTS_ROOT/index.html"
}

main() {
    local profile=full run_id="" new=false skip_setup=false reports_only=false t0 s
    SUITES=("${ALL_SUITES[@]}") SUITE_FLAGS=()
    while (( $# )); do
        case $1 in
            --quick)      profile=quick; SUITE_FLAGS+=(--quick) ;;
            --suites)     IFS=, read -ra SUITES <<<"$2"; shift ;;
            --run-id)     run_id=$2; shift ;;
            --new)        new=true ;;
            --duration)   export DURATION=$2; shift ;;
            --warmup)     export WARMUP=$2; shift ;;
            --reps)       export REPS=$2; shift ;;
            --servers|--scenarios|--order-seed) SUITE_FLAGS+=("$1" "$2"); shift ;;
            --aa)         export AA=1 ;;
            --no-aa)      export AA=0 ;;
            --skip-setup) skip_setup=true ;;
            --reports-only) reports_only=true ;;
            -h|--help)    usage; exit 0 ;;
            *)            usage; die "unknown flag '$1'" ;;
        esac
        shift
    done
    for s in "${SUITES[@]}"; do [[ -n ${NOTEBOOK_OF[$s]:-} ]] || die "unknown suite '$s' (known: ${ALL_SUITES[*]})"; done
    t0=$(date +%s)
    if $reports_only; then
        [[ -n $run_id && -f $RAW_ROOT/$run_id/meta.json ]] || die "--reports-only needs --run-id of a run in $RAW_ROOT"
        RUN_DIR=$RAW_ROOT/$run_id
        mapfile -t SUITES < <(jq -r '.suites[]' "$RUN_DIR/meta.json")
        make_reports
        return
    fi
    $skip_setup || "$LAB_ROOT/scripts/setup.sh"
    "$LAB_ROOT/scripts/build.sh"
    default_cpu_sets

    if [[ -n $run_id ]]; then RUN_DIR=$RAW_ROOT/$run_id
    elif ! $new; then RUN_DIR=$(newest_unfinished "$profile"); fi
    if [[ -n ${RUN_DIR:-} && -f $RUN_DIR/meta.json ]]; then
        # A resumed run keeps the durations and reps it started with.
        export DURATION WARMUP REPS
        DURATION=$(jq -r .params.duration_s "$RUN_DIR/meta.json")
        WARMUP=$(jq -r .params.warmup_s "$RUN_DIR/meta.json")
        REPS=$(jq -r .params.reps "$RUN_DIR/meta.json")
        AA=$(jq -r '.params.aa // 0' "$RUN_DIR/meta.json"); export AA
        log "resuming run $(basename "$RUN_DIR") (${DURATION}s runs, $REPS reps)"
    else
        RUN_DIR=${RUN_DIR:-$RAW_ROOT/$(new_run_id)}
        apply_profile "$profile"
        create_run_meta "$RUN_DIR" "$profile" "${SUITES[*]}" "$(run_params_json)"
        log "new run $(basename "$RUN_DIR") (profile $profile, suites ${SUITES[*]})"
    fi

    run_suites
    if (( ${#FAILED_SUITES[@]} == 0 )); then finish_run_meta "$RUN_DIR" true
    else finish_run_meta "$RUN_DIR" false; fi
    pack_raw
    make_reports
    log "run_all finished in $(( $(date +%s) - t0 ))s"
    (( ${#FAILED_SUITES[@]} == 0 )) || die "suites that stopped early: ${FAILED_SUITES[*]} (rerun to resume them)"
}

main "$@"
