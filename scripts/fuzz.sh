#!/usr/bin/env bash
# fuzz.sh: libFuzzer on the C server's parsers and whole connections (servers/evloop/fuzz/).
#   scripts/fuzz.sh TARGET SECONDS      build, then fuzz TARGET for SECONDS (`all`: each target
#                                       for SECONDS, one after the other)
#   scripts/fuzz.sh --replay [TARGET]   run every committed input once, as file arguments: the
#                                       seeds and the regression inputs (default: all targets)
#   scripts/fuzz.sh --list              the targets
#   --fresh                             start from the committed seeds (empty the scratch corpus)
# Reads the committed seeds servers/evloop/fuzz/corpus/TARGET/ and the regression inputs
# servers/evloop/fuzz/regressions/TARGET/ (never writes them); new inputs go to the scratch
# corpus build/fuzz/work/TARGET/ (kept between runs), reproducers to build/fuzz/crashes/TARGET/,
# libFuzzer's output to build/fuzz/logs/TARGET.log. Prints per target: execs/s, coverage
# (libFuzzer's cov: edges and ft: features), corpus size and findings; exits non-zero when a
# target crashed, leaked, hung or ran out of memory, naming the reproducer. One fuzzer runs at a
# time (no -jobs/-workers).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

EVLOOP=$LAB_ROOT/servers/evloop
FUZZ_SRC=$EVLOOP/fuzz
FUZZ_BIN=$BUILD_DIR/fuzz
FUZZ_OUT=$BUILD_DIR/fuzz

# The targets, as the Makefile's FUZZ_TARGETS lists them.
targets() { make -s -C "$EVLOOP" BUILD="$BUILD_DIR" --no-print-directory fuzz-list; }

# Per target: the dictionary (if any) and the largest input (the conn targets need room for a
# full 32 KiB read buffer and a 16 KiB head).
dict_of() {
    case $1 in
        http1_parser|conn_h1) echo "$FUZZ_SRC/dict/http1.dict" ;;
        json) echo "$FUZZ_SRC/dict/json.dict" ;;
        query) echo "$FUZZ_SRC/dict/query.dict" ;;
        *) echo "" ;;
    esac
}
max_len_of() { case $1 in conn_*) echo 40000 ;; *) echo 4096 ;; esac; }

build() {
    command -v "${FUZZ_CC:-clang}" >/dev/null ||
        die "clang is missing: scripts/setup.sh installs it (apt: clang, libclang-rt-14-dev, llvm)"
    log "building the fuzz targets (make fuzz)"
    make -s -C "$EVLOOP" BUILD="$BUILD_DIR" fuzz >/dev/null
}

# Sanitizer reports with file:line (also when llvm-symbolizer is not on PATH under that name),
# and UBSan's with the stack that led there.
sanitizer_env() {
    if ! command -v llvm-symbolizer >/dev/null && [[ -x /usr/lib/llvm-14/bin/llvm-symbolizer ]]; then
        export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer
    fi
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
}

# committed_inputs TARGET: every committed input file of TARGET (seeds, then regressions).
committed_inputs() {
    local d
    for d in "$FUZZ_SRC/corpus/$1" "$FUZZ_SRC/regressions/$1"; do
        [[ -d $d ]] && find "$d" -type f ! -name '.*' ! -name '*.md' | sort
    done
    return 0
}

# field LINE KEY: the number after "KEY: " in a libFuzzer status line.
field() { sed -n "s/.* $2: \([0-9]*\).*/\1/p" <<<"$1"; }

FINDINGS=()
SUMMARY=()

fuzz_one() {
    local t=$1 secs=$2 bin=$FUZZ_BIN/$1 work=$FUZZ_OUT/work/$1 crashes=$FUZZ_OUT/crashes/$1
    local logf=$FUZZ_OUT/logs/$1.log dict stamp rc=0 args=()
    [[ -x $bin ]] || die "no fuzz target $t (scripts/fuzz.sh --list)"
    $FRESH && rm -rf "$work"
    mkdir -p "$work" "$crashes" "$FUZZ_OUT/logs"
    stamp=$(mktemp)
    dict=$(dict_of "$t")
    [[ -n $dict ]] && args+=("-dict=$dict")
    args+=("$work" "$FUZZ_SRC/corpus/$t")
    [[ -d $FUZZ_SRC/regressions/$t ]] && args+=("$FUZZ_SRC/regressions/$t")
    log "fuzzing $t for ${secs}s (log: ${logf#"$LAB_ROOT"/})"
    "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len_of "$t")" \
        -print_final_stats=1 -artifact_prefix="$crashes/" "${args[@]}" >"$logf" 2>&1 || rc=$?

    # The last status line (DONE, or the last pulse before a crash) and the final stats.
    local last execs cov ft corp new found=()
    last=$(grep -aE '^#[0-9]+.*cov: ' "$logf" | tail -1 || true)
    execs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$logf")
    [[ -n $execs ]] || execs=$(field "$last" 'exec/s')
    cov=$(field "$last" cov); ft=$(field "$last" ft)
    corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p' <<<"$last")
    new=$(sed -n 's/^stat::new_units_added: *//p' "$logf")
    while IFS= read -r f; do found+=("$f"); done < <(
        find "$crashes" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) \
            -newer "$stamp" | sort)
    rm -f "$stamp"
    if (( rc != 0 && ${#found[@]} == 0 )); then
        found+=("(libFuzzer exited $rc without a reproducer: see ${logf#"$LAB_ROOT"/})")
    fi
    local what=none
    if (( ${#found[@]} )); then
        what="${#found[@]} finding(s)"
        FINDINGS+=("${found[@]/#/$t: }")
        grep -aE '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|fuzz_conn: )' "$logf" | head -5 | sed 's/^/    /' >&2 || true
    fi
    SUMMARY+=("$(printf '%-13s %9s %7s %7s %16s %7s  %s' "$t" "${execs:-?}" "${cov:-?}" "${ft:-?}" \
        "${corp:-?}" "${new:-?}" "$what")")
    log "$t: ${execs:-?} execs/s, cov ${cov:-?} edges, ft ${ft:-?}, corpus ${corp:-?} (entries/bytes), ${new:-?} new, findings: $what"
}

replay_one() {
    local t=$1 bin=$FUZZ_BIN/$1 logf=$FUZZ_OUT/logs/$1.replay.log files=() rc=0
    [[ -x $bin ]] || die "no fuzz target $t (scripts/fuzz.sh --list)"
    mkdir -p "$FUZZ_OUT/logs" "$FUZZ_OUT/crashes/$t"
    mapfile -t files < <(committed_inputs "$t")
    (( ${#files[@]} )) || { log "$t: no committed inputs"; return 0; }
    "$bin" -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$FUZZ_OUT/crashes/$t/" "${files[@]}" \
        >"$logf" 2>&1 || rc=$?
    if (( rc != 0 )); then
        local which
        which=$(grep -a '^Running: ' "$logf" | tail -1 | sed 's/^Running: //')
        grep -aE '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|fuzz_conn: )' "$logf" | head -5 | sed 's/^/    /' >&2 || true
        FINDINGS+=("$t: replay failed on ${which#"$LAB_ROOT"/} (log: ${logf#"$LAB_ROOT"/})")
        log "$t: replay of ${#files[@]} committed inputs FAILED"
    else
        log "$t: replayed ${#files[@]} committed inputs, all pass"
    fi
}

usage() { header_usage "${BASH_SOURCE[0]}"; exit 2; }

main() {
    local mode=fuzz target="" secs="" all
    FRESH=false
    while (( $# )); do
        case $1 in
            --list) mode=list ;;
            --replay) mode=replay ;;
            --fresh) FRESH=true ;;
            -h|--help) usage ;;
            -*) die "unknown flag $1 (scripts/fuzz.sh --help)" ;;
            *) if [[ -z $target ]]; then target=$1; elif [[ -z $secs ]]; then secs=$1; else usage; fi ;;
        esac
        shift
    done
    read -ra all <<<"$(targets)"
    if [[ $mode == list ]]; then printf '%s\n' "${all[@]}"; return 0; fi
    [[ $mode == replay ]] && target=${target:-all}
    [[ -n $target ]] || usage
    if [[ $target != all ]]; then
        [[ " ${all[*]} " == *" $target "* ]] || die "unknown target '$target' (targets: ${all[*]})"
        all=("$target")
    fi
    if [[ $mode == fuzz ]]; then
        [[ -n $secs ]] || die "how long? scripts/fuzz.sh $target SECONDS"
        check_count SECONDS "$secs" 1
    fi

    build
    sanitizer_env
    local t
    for t in "${all[@]}"; do
        if [[ $mode == replay ]]; then replay_one "$t"; else fuzz_one "$t" "$secs"; fi
    done
    if [[ $mode == fuzz ]]; then
        printf '%-13s %9s %7s %7s %16s %7s  %s\n' target execs/s cov ft corpus new findings
        printf '%s\n' "${SUMMARY[@]}"
    fi
    if (( ${#FINDINGS[@]} )); then
        printf 'finding: %s\n' "${FINDINGS[@]}" >&2
        die "${#FINDINGS[@]} finding(s); reproduce with build/fuzz/TARGET FILE (FUZZ_CONN_TRACE=1 prints a conn target's output)"
    fi
}

main "$@"
