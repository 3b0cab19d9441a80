#!/usr/bin/env bash
# bisect.sh: which commit made the C server cost more? git bisect between GOOD and BAD, with the
# lab's own deterministic comparison as the oracle: instructions per request under valgrind
# (scripts/cost.sh), each candidate gated against GOOD's count (docs/cost.md).
#
#   scripts/bisect.sh GOOD BAD [--servers evloop] [--protocols h1,h2c] [--threshold 1.0]
#                              [--n1 500] [--n2 3000] [--keep]
#
# GOOD and BAD are commits of this repository (GOOD before the regression, BAD after it). Each
# candidate's servers/ is checked out into a scratch worktree and built there (this checkout's
# scripts build it, as cost.sh --against does); a commit whose servers do not build is skipped
# (git bisect's 125). GOOD is measured once; a candidate is bad when a figure rose by more than
# --threshold percent over GOOD's (cost.sh's gate), good otherwise. Instruction counts move only
# when the code does (a repeat of one build agrees to 0.01 % on cleartext), so the search is
# exact where a req/s search would need reps at every step. Prints the first bad commit with its
# ratios. The scratch folder (worktree, builds, raw counts, build.log and cost.log) is removed
# when the bisect succeeds, unless --keep; a failed bisect keeps it, since its error names the logs.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() { header_usage "${BASH_SOURCE[0]}"; }

# bisect_cleanup KEEP: the EXIT trap. The worktree is always unregistered (a stale one blocks the
# next bisect); the scratch folder goes only after a success without --keep, so the logs that a
# failure's message points to are still there to read.
bisect_cleanup() {
    local rc=$? keep=$1
    git -C "$LAB_ROOT" worktree remove --force "$BISECT_TREE" 2>/dev/null || true
    if (( rc == 0 )) && ! $keep; then
        rm -rf "$BISECT_DIR"
    else
        log "scratch kept: $BISECT_DIR"
    fi
    return "$rc"
}

# bisect_measure COMMIT OUT_VAR [--gate BASE]: COMMIT's servers built in the worktree and counted
# by cost.sh into the scratch roots; OUT_VAR gets the run id. Returns cost.sh's status (1: the
# gate failed) or 125 when the servers do not build.
bisect_measure() {
    local commit=$1 out=$2 rc=0
    shift 2
    git -C "$BISECT_TREE" checkout -q --detach "$commit"
    rm -rf "$BISECT_TREE/build"
    if ! LAB_SERVERS_DIR=$BISECT_TREE/servers BUILD_DIR=$BISECT_TREE/build \
            "$LAB_ROOT/scripts/build.sh" --servers "$BISECT_SERVERS" >>"$BISECT_DIR/build.log" 2>&1; then
        log "$(git -C "$LAB_ROOT" rev-parse --short "$commit"): the servers do not build (see $BISECT_DIR/build.log); skipped"
        return 125
    fi
    rm -f "$BISECT_DIR/last-run"
    LAB_SERVERS_DIR=$BISECT_TREE/servers BUILD_DIR=$BISECT_TREE/build RAW_ROOT=$BISECT_DIR/raw \
        DATA_ROOT=$BISECT_DIR/data REPORTS_ROOT=$BISECT_DIR/reports COST_LAST_RUN_FILE=$BISECT_DIR/last-run \
        COST_SOURCE="$commit" "$LAB_ROOT/scripts/cost.sh" --skip-build --servers "$BISECT_SERVERS" \
        --protocols "$BISECT_PROTOCOLS" --n1 "$BISECT_N1" --n2 "$BISECT_N2" --reps 1 \
        --threshold "$BISECT_THRESHOLD" "$@" >>"$BISECT_DIR/cost.log" 2>&1 || rc=$?
    [[ -f $BISECT_DIR/last-run ]] || die "cost.sh measured nothing at $commit; its last words: $(tail -n 2 "$BISECT_DIR/cost.log") (all: $BISECT_DIR/cost.log)"
    printf -v "$out" '%s' "$(cat "$BISECT_DIR/last-run")"
    return "$rc"
}

# bisect_step: one `git bisect run` step (this script called again with BISECT_STEP=1): 0 good,
# 1 bad, 125 skip, in git bisect's terms.
bisect_step() {
    local commit run rc=0
    commit=$(git -C "$BISECT_TREE" rev-parse HEAD)
    bisect_measure "$commit" run --gate "$BISECT_BASE" || rc=$?
    case $rc in
        0)   log "$(git -C "$LAB_ROOT" rev-parse --short "$commit"): good (within $BISECT_THRESHOLD % of GOOD)"; exit 0 ;;
        125) exit 125 ;;
        *)   log "$(git -C "$LAB_ROOT" rev-parse --short "$commit"): bad (a figure rose past $BISECT_THRESHOLD %)"; exit 1 ;;
    esac
}

main() {
    [[ ${BISECT_STEP:-} == 1 ]] && bisect_step
    local args=() keep=false good bad
    BISECT_SERVERS=evloop BISECT_PROTOCOLS=h1,h2c BISECT_THRESHOLD=1.0 BISECT_N1=500 BISECT_N2=3000
    while (( $# )); do
        case $1 in
            --servers|--protocols|--threshold|--n1|--n2) need_value "$1" "$#" ;;&
            --servers)   BISECT_SERVERS=$2; shift ;;
            --protocols) BISECT_PROTOCOLS=$2; shift ;;
            --threshold) BISECT_THRESHOLD=$2; shift ;;
            --n1)        BISECT_N1=$2; shift ;;
            --n2)        BISECT_N2=$2; shift ;;
            --keep)      keep=true ;;
            -h|--help)   usage; exit 0 ;;
            -*)          usage; die "unknown flag '$1'" ;;
            *)           args+=("$1") ;;
        esac
        shift
    done
    (( ${#args[@]} == 2 )) || { usage; die "bisect.sh takes two commits, GOOD and BAD (got ${#args[@]})"; }
    good=$(git -C "$LAB_ROOT" rev-parse --verify -q "${args[0]}^{commit}") || die "GOOD: '${args[0]}' is no commit here"
    bad=$(git -C "$LAB_ROOT" rev-parse --verify -q "${args[1]}^{commit}") || die "BAD: '${args[1]}' is no commit here"
    git -C "$LAB_ROOT" merge-base --is-ancestor "$good" "$bad" || die "GOOD ($good) is not an ancestor of BAD ($bad)"
    [[ $good != "$bad" ]] || die "GOOD and BAD are the same commit"
    BISECT_DIR=$(mktemp -d "${TMPDIR:-/tmp}/httplab-bisect.XXXXXX")
    BISECT_TREE=$BISECT_DIR/tree
    export BISECT_DIR BISECT_TREE BISECT_SERVERS BISECT_PROTOCOLS BISECT_THRESHOLD BISECT_N1 BISECT_N2
    # shellcheck disable=SC2064
    trap "bisect_cleanup $keep" EXIT
    git -C "$LAB_ROOT" worktree add -q --detach "$BISECT_TREE" "$good"
    log "bisecting $(git -C "$LAB_ROOT" rev-parse --short "$good")..$(git -C "$LAB_ROOT" rev-parse --short "$bad") on $BISECT_SERVERS, $BISECT_PROTOCOLS (threshold $BISECT_THRESHOLD %); scratch $BISECT_DIR"
    local rc=0
    bisect_measure "$good" BISECT_BASE || rc=$?
    (( rc == 0 )) || die "GOOD ($good) could not be measured (status $rc; see $BISECT_DIR/)"
    export BISECT_BASE
    log "GOOD measured as run $BISECT_BASE"
    # BAD must be bad, or there is nothing to find
    local bad_run
    rc=0; bisect_measure "$bad" bad_run --gate "$BISECT_BASE" || rc=$?
    (( rc == 1 )) || die "BAD ($bad) is within $BISECT_THRESHOLD % of GOOD on every figure (or could not be measured: status $rc): nothing to bisect"
    (cd "$BISECT_TREE" && git bisect start "$bad" "$good" >"$BISECT_DIR/bisect.log" 2>&1 &&
        BISECT_STEP=1 git bisect run "$LAB_ROOT/scripts/bisect.sh" >>"$BISECT_DIR/bisect.log" 2>&1) || true
    local first
    first=$(cd "$BISECT_TREE" && git rev-parse -q --verify refs/bisect/bad) || die "git bisect found no commit (see $BISECT_DIR/bisect.log)"
    (cd "$BISECT_TREE" && git bisect reset >/dev/null 2>&1) || true
    log "first bad commit: $(git -C "$LAB_ROOT" log -1 --format='%h %s' "$first")"
    echo "$first"
}

main "$@"
