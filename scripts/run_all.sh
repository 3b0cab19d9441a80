#!/usr/bin/env bash
# run_all.sh: the lab's main job. setup → build → every suite → pack raw/ →
# papermill → nbconvert → reports/index.html.
#
#   scripts/run_all.sh [--quick | --seed-conditions] [--suites NAME,...] [--run-id ID | --new]
#                      (--seed-conditions: the write-ups' set-up, the server on all but four CPUs
#                      and the load tool with four threads on those, 10 s runs; refused below 8
#                      CPUs; by default the suites that mirror a write-up)
#                      (NAME: a suite, i.e. a folder of suites/, or one of its parts; default:
#                      every suite, in the order their suite.toml gives; docs/suites.md)
#                      [--duration S] [--warmup S] [--reps N] [--latency-every N] [--skip-setup]
#                      [--servers a,b] [--scenarios glob,glob] [--aa | --no-aa]
#                      [--order-seed N] [--blocks server|scenario|sliced]
#                      [--no-reports] [--skip-build] [--no-pack]
#                      (--blocks scenario: every server runs a scenario before any runs the
#                      next, a start per point; sliced: every server of a rep up at once and
#                      each scenario's runs interleaved in 0.1 s slices; docs/method.md "Sizing
#                      the reps")
#                      (--latency-every N: h2load's latency run in reps 1, 1+N, 1+2N... only)
#                      (--skip-build: the servers in build/ are used as they are, e.g. an offline
#                      archive's; --no-pack: raw/ stays unpacked, for the home machine to pack)
#                      [--hosts local|netns] [--netns-rate RATE] [--clients N] [--rtt MS]
#                      [--inventory FILE]
#                      (where server and load tool run: this machine, network namespaces with N
#                      client hosts, or the machines of an Ansible inventory; docs/host-modes.md)
#   scripts/run_all.sh --reports-only --run-id ID   (notebooks and exports of a run again)
#
# An interrupted run resumes: rerun the same command and the newest unfinished
# run of the same profile is picked up (finished points are kept, unfinished
# ones redone). --new starts a fresh run instead; --run-id names one.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# usage: the header above, then the suites and parts there are, read from suites/ (suites_help).
usage() { header_usage "${BASH_SOURCE[0]}"; suites_help >&2; }

# newest_unfinished PROFILE: the run to resume, if any.
newest_unfinished() {
    local meta
    for meta in $(ls -1d "$RAW_ROOT"/*/meta.json 2>/dev/null | sort -r); do
        if [[ $(jq -r '.complete' "$meta") == false && $(jq -r '.profile' "$meta") == "$1" ]]; then
            dirname "$meta"; return
        fi
    done
}

# count_points: how many points the run's suites have left and their estimated seconds, summed
# ("POINTS SECONDS"; each bench script counts its own with LAB_COUNT_POINTS=1, touching nothing:
# suite_plan in lib/plan.sh, which says where its per-point overheads come from), for the planned
# duration and the run-wide progress line.
count_points() {
    local suite total=0 secs=0 n s
    for suite in "${SUITES[@]}"; do
        read -r n s < <(LAB_COUNT_POINTS=1 "$LAB_ROOT/scripts/bench.sh" "$suite" --run-dir "$RUN_DIR" "${SUITE_FLAGS[@]}" 2>/dev/null) \
            && [[ $n =~ ^[0-9]+$ && $s =~ ^[0-9]+$ ]] \
            || die "could not count the points of suite $suite (run scripts/bench.sh $suite --help)"
        total=$(( total + n )) secs=$(( secs + s ))
    done
    echo "$total $secs"
}

# PLAN_REPORT_S, PLAN_NOTEBOOK_S: the planned duration's figures for what follows the points:
# packing, the build step and the index (about 13 s), then one notebook with its two exports per
# suite (about 4 s each), measured on the two-core lab machine with quick runs; they run
# REPORT_JOBS at a time (make_reports), which is counted as that many rounds fewer.
PLAN_REPORT_S=13
PLAN_NOTEBOOK_S=4

# A suite that stops (a server died, a tool hung, the disk is full) leaves the run to go on with
# the next suite, then to pack and report what was finished. A signal (Ctrl-C, SIGTERM) stops the
# whole run at once: no further suite, no packing, no reports; the rerun resumes it. The suite
# runs in the background and is waited for, so that the trap runs at once whoever got the signal
# (bash defers a trap until a foreground command ends, which was the whole suite for a SIGTERM
# sent to run_all.sh alone) and passes it on as SIGTERM (run_interrupted). A background command
# ignores SIGINT, and so does everything it starts: a Ctrl-C to the terminal's process group
# reaches the suite only that way, and cannot kill a curl of its verify gate halfway through.
run_suites() {
    local suite failed=() rc
    RUN_PROGRESS_FILE=$(mktemp) RUN_T0=$(date +%s)
    echo "0 0" >"$RUN_PROGRESS_FILE"
    local plan secs after=$PLAN_REPORT_S part nb=" " n
    plan=$(count_points)
    read -r RUN_TOTAL secs <<<"$plan"
    export RUN_PROGRESS_FILE RUN_T0 RUN_TOTAL
    log "run $(basename "$RUN_DIR"): $RUN_TOTAL points to run in ${#SUITES[@]} suite(s): ${SUITES[*]}"
    if ${reports:-true}; then
        for part in "${SUITES[@]}"; do nb+="$(part_suite "$part") "; done
        n=$(printf '%s\n' $nb | sort -u | grep -c . || true)
        after=$(( after + PLAN_NOTEBOOK_S * ( (n + $(report_jobs) - 1) / $(report_jobs) ) ))
    fi
    log "planned: $RUN_TOTAL points, $(plan_text $(( secs + after ))) (an estimate: $(plan_text "$secs") of points, each its suite's run and warm-up plus the overheads measured on the two-core lab machine, docs/running.md \"What a run costs\"; then $(plan_text "$after") of packing$(${reports:-true} && echo " and reports")$( [[ ${HOSTS:-local} == local ]] || echo "; measured in the local host mode: --hosts $HOSTS takes longer"))"
    for suite in "${SUITES[@]}"; do
        log "=== suite $suite → $RUN_DIR"
        rc=0
        "$LAB_ROOT/scripts/bench.sh" "$suite" --run-dir "$RUN_DIR" "${SUITE_FLAGS[@]}" &
        SUITE_PID=$!
        wait "$SUITE_PID" || rc=$?
        SUITE_PID=
        (( rc > 128 )) && run_interrupted "$(kill -l "$(( rc - 128 ))")"
        (( rc == 0 )) || failed+=("$suite")
    done
    FAILED_SUITES=("${failed[@]}")
    rm -f "$RUN_PROGRESS_FILE"
}

# run_interrupted SIGNAL: the INT and TERM traps, and a suite that died of a signal. The suite
# under way gets SIGTERM and is waited for (it ends its server and tool and says where it
# stopped); then the signal is raised again, so that whatever ran run_all.sh sees it too.
run_interrupted() {
    trap - INT TERM
    if [[ -n ${SUITE_PID:-} ]]; then
        kill -TERM "$SUITE_PID" 2>/dev/null || true
        wait "$SUITE_PID" 2>/dev/null || true
    fi
    rm -f "${RUN_PROGRESS_FILE:-}"
    log "run ${RUN_DIR:+$(basename "$RUN_DIR") }interrupted (SIG$1): no further suite, no packing, no reports${RUN_DIR:+; rerun the same command to resume it}"
    [[ $1 == INT || $1 == TERM ]] && kill -s "$1" $$
    exit $(( 128 + $(kill -l "$1") ))
}

# pack_raw: every complete suite of the run becomes one .tar.xz per server
# (httplab.tidy.rawpack; the notebooks read packed runs as they are). Incomplete
# suites stay unpacked so that a rerun can resume them.
pack_raw() {
    "$(lab_python)" -m httplab pack pack "$RUN_DIR" \
        || log "warning: packing $RUN_DIR failed (see above); its raw files stay unpacked"
}

# report_jobs: how many reports make_reports executes at once (REPORT_JOBS; default the machine's
# cores, at most 4).
report_jobs() {
    local jobs=${REPORT_JOBS:-$(( $(nproc) < 4 ? $(nproc) : 4 ))}
    [[ $jobs =~ ^[1-9][0-9]*$ ]] || die "REPORT_JOBS takes a number ≥ 1 (got '$jobs')"
    echo "$jobs"
}

# make_reports: one executed notebook per suite whose parts the run has (reports/<run>/<suite>.ipynb,
# not committed), exported without code to Markdown and HTML. The notebooks read only data/ and
# write only their own files, so REPORT_JOBS of them (default: the machine's cores, at most 4) run
# at once, all driven by one process (python -m httplab reports: papermill and nbconvert imported
# once, not once per report); on two cores the nine reports of a quick run take about half as long.
make_reports() {
    local part suite out py run_id done_suites=" " reports=() jobs
    py=$(lab_python)
    jobs=$(report_jobs)
    run_id=$(basename "$RUN_DIR")
    out=$REPORTS_ROOT/$run_id
    mkdir -p "$out"
    # The one build step: raw/<run_id>/ → data/<run_id>/ (the tidy and statistics frames and the
    # run's facts); the notebooks read only that. A statistics error stops here, before any report.
    log "building $DATA_ROOT/$run_id from $RUN_DIR"
    "$py" -m httplab build "$RUN_DIR" "$DATA_ROOT/$run_id" >/dev/null
    for part in "${SUITES[@]}"; do
        [[ -f $RUN_DIR/$part/suite.json ]] || log "note: suite $part is not complete; its report shows what was finished"
        suite=$(part_suite "$part")
        [[ -n $suite ]] || { log "note: part $part of run $run_id belongs to no suite of suites/; not reported"; continue; }
        [[ $done_suites == *" $suite "* ]] && continue   # a suite of several parts is reported once
        done_suites+="$suite "
        reports+=("$suite=$(suite_notebook "$suite")")
    done
    if (( ${#reports[@]} )); then
        (cd "$LAB_ROOT" && "$py" -m httplab reports "${reports[@]}" --run-dir "$RUN_DIR" \
            --data-dir "$DATA_ROOT/$run_id" --out "$out" --reports-root "$REPORTS_ROOT" \
            --templates "$LAB_ROOT/notebooks/templates" --cwd "$LAB_ROOT" --jobs "$jobs") ||
            die "a report of run $run_id failed (above); the others are in $out/"
    fi
    "$py" -m httplab index "$REPORTS_ROOT" --raw "$RAW_ROOT"
    log "reports: $out/ and $REPORTS_ROOT/index.html"
}

# flag_values FLAG: what a flag takes, for the error when its value is missing.
flag_values() {
    case $1 in
        --suites)    echo "a comma list of suites ($(lab_suites | paste -sd' ')) or parts ($(lab_parts | paste -sd' '))" ;;
        --run-id)    echo "a run under $RAW_ROOT" ;;
        --servers)   load_servers; echo "a comma list of ${LAB_SERVERS[*]}" ;;
        --scenarios) echo "a comma list of scenario id globs (SUITE:GLOB for one suite's)" ;;
        --blocks)    echo "one of ${BLOCK_MODES[*]}" ;;
        --hosts)     echo "one of ${HOST_MODES[*]}" ;;
        --netns-rate) echo "a rate as tc takes it, e.g. 1gbit" ;;
        --clients)   echo "a number of client hosts" ;;
        --inventory) echo "an Ansible inventory file (groups server and clients)" ;;
        --rtt)       echo "a round-trip time in milliseconds" ;;
        *)           echo "a whole number" ;;
    esac
}

# check_suite_flags FLAGS...: the values of the flags passed on to the bench scripts.
check_suite_flags() {
    local s
    while (( $# )); do
        case $1 in
            --servers)    IFS=, read -ra list <<<"$2"
                          for s in "${list[@]}"; do known_server "$s" || die "unknown server '$s' (known: ${LAB_SERVERS[*]})"; done
                          shift ;;
            --order-seed) check_count --order-seed "$2" 0; shift ;;
            --scenarios)  [[ -n $2 ]] || die "--scenarios needs at least one glob"; shift ;;
        esac
        shift
    done
}

main() {
    trap 'run_interrupted INT' INT
    trap 'run_interrupted TERM' TERM
    local profile=full run_id="" new=false skip_setup=false skip_build=false pack=true reports_only=false reports=true t0 s
    local suites_given=false given=()
    mapfile -t SUITES < <(lab_suites)
    SUITE_FLAGS=() BUILD_FLAGS=()
    while (( $# )); do
        case $1 in
            --suites|--run-id|--duration|--warmup|--reps|--latency-every|--servers|--scenarios|--order-seed|--blocks|--hosts|--netns-rate|--clients|--inventory|--rtt)
                need_value "$1" "$#" "$(flag_values "$1")" ;;&
            --quick)      profile=quick; SUITE_FLAGS+=(--quick) ;;
            --seed-conditions) profile=seed; SUITE_FLAGS+=(--seed-conditions) ;;
            --suites)     IFS=, read -ra SUITES <<<"$2"; suites_given=true; shift ;;
            --run-id)     run_id=$2; shift ;;
            --new)        new=true ;;
            --duration)   export DURATION=$2; given+=(duration_s); shift ;;
            --warmup)     export WARMUP=$2; given+=(warmup_s); shift ;;
            --reps)       export REPS=$2; given+=(reps); shift ;;
            --latency-every) export LATENCY_EVERY=$2; given+=(latency_every); shift ;;
            --blocks)     check_blocks "$2"; export BLOCKS=$2; given+=(blocks); shift ;;
            --servers)    SUITE_FLAGS+=("$1" "$2"); BUILD_FLAGS=(--servers "${2//"$AA_SUFFIX"/}"); shift ;;
            --scenarios|--order-seed|--netns-rate) SUITE_FLAGS+=("$1" "$2"); shift ;;
            --hosts)      check_host_mode "$2"; export HOSTS=$2; SUITE_FLAGS+=("$1" "$2"); shift ;;
            --clients)    export CLIENT_HOSTS=$2 CLIENTS_GIVEN=1; SUITE_FLAGS+=("$1" "$2"); shift ;;
            --inventory)  export HOSTS=inventory INVENTORY_FILE=$2; SUITE_FLAGS+=("$1" "$2"); shift ;;
            --rtt)        export NETNS_RTT_MS=$2; SUITE_FLAGS+=("$1" "$2"); shift ;;
            --aa)         export AA=1 ;;
            --no-aa)      export AA=0 ;;
            --skip-setup) skip_setup=true ;;
            --skip-build) skip_build=true ;;
            --no-pack)    pack=false ;;
            --reports-only) reports_only=true ;;
            --no-reports) reports=false ;;
            -h|--help)    usage; exit 0 ;;
            *)            usage; die "unknown flag '$1'" ;;
        esac
        shift
    done
    # Every flag is checked here, before setup and build take minutes.
    [[ " ${SUITE_FLAGS[*]} " == *" --quick "* && $profile == seed ]] && die "--quick and --seed-conditions exclude each other"
    if [[ $profile == seed ]] && ! $reports_only; then
        seed_conditions     # refuses a machine with too few CPUs, naming how many the profile needs
        # by default the suites that mirror a write-up (a [seed] table in their suite.toml)
        if ! $suites_given; then
            SUITES=()
            for s in $(lab_suites); do grep -q '^\[seed\]' "$SUITES_DIR/$s/suite.toml" && SUITES+=("$s"); done
        fi
        log "seed conditions: $CPU_PLAN_NOTE"
    fi
    (( ${#SUITES[@]} )) || die "--suites names no suite (suites: $(lab_suites | paste -sd' '))"
    s=$(expand_suites "${SUITES[@]}") || exit 1
    mapfile -t SUITES <<<"$s"
    [[ -z ${DURATION:-} ]] || check_count --duration "$DURATION" 1
    [[ -z ${WARMUP:-} ]] || check_count --warmup "$WARMUP" 0
    [[ -z ${REPS:-} ]] || check_count --reps "$REPS" 1
    [[ -z ${LATENCY_EVERY:-} ]] || check_count --latency-every "$LATENCY_EVERY" 1
    check_suite_flags "${SUITE_FLAGS[@]}"
    hosts_read
    check_client_hosts
    [[ -z $run_id || $run_id =~ ^[A-Za-z0-9._-]+$ ]] || die "--run-id takes a run id like 20261123T092401Z-vm (got '$run_id')"
    $new && [[ -n $run_id ]] && die "--new and --run-id exclude each other"
    t0=$(date +%s)
    if $reports_only; then
        [[ -n $run_id && -f $RAW_ROOT/$run_id/meta.json ]] || die "--reports-only needs --run-id of a run in $RAW_ROOT"
        RUN_DIR=$RAW_ROOT/$run_id
        mapfile -t SUITES < <(jq -r '.suites[]' "$RUN_DIR/meta.json")
        make_reports
        return
    fi
    $skip_setup || "$LAB_ROOT/scripts/setup.sh"
    # Only the servers the run will start: a server that is being edited and does not build
    # stops no run that leaves it out.
    $skip_build || "$LAB_ROOT/scripts/build.sh" "${BUILD_FLAGS[@]}"
    # the manifests, read once for every part (load_servers)
    load_servers
    export LAB_SERVERS_DECL
    default_cpu_sets

    if [[ -n $run_id ]]; then RUN_DIR=$RAW_ROOT/$run_id
    elif ! $new; then RUN_DIR=$(newest_unfinished "$profile"); fi
    # A raw directory that cannot be written is said before any server starts.
    s=$(raw_problem "${RUN_DIR:-$RAW_ROOT}")
    if [[ -n $s && -n ${RUN_DIR:-} ]]; then
        die "cannot write the raw files of run $(basename "$RUN_DIR"): $s; nothing was started (make room or make it writable, then rerun the same command to resume the run)"
    elif [[ -n $s ]]; then
        die "cannot write raw files under $RAW_ROOT: $s; nothing was started"
    fi
    if [[ -n ${RUN_DIR:-} && -f $RUN_DIR/meta.json ]]; then
        # A resumed run keeps the design it started with: resume_design.
        resume_design "$RUN_DIR/meta.json"
        AA=$(jq -r '.params.aa // 0' "$RUN_DIR/meta.json"); export AA
        # ... and its host mode: a run's points are all measured the same way
        local was
        was=$(jq -r '.params.hosts // "local"' "$RUN_DIR/meta.json")
        [[ $was == "${HOSTS:-local}" ]] || die "run $(basename "$RUN_DIR") was started with --hosts $was; resume it with --hosts $was (or start another with --new)"
        export HOSTS=$was
        SUITE_FLAGS+=(--hosts "$was")
        was=$(jq -r '.params.client_hosts // 1' "$RUN_DIR/meta.json")
        [[ $was == "${CLIENT_HOSTS:-1}" ]] || die "run $(basename "$RUN_DIR") was started with --clients $was; resume it with --clients $was (or start another with --new)"
        export CLIENT_HOSTS=$was
        # ... and its machine, where it measures on this one (an inventory's hosts are checked by
        # their own facts)
        [[ $HOSTS == inventory ]] || resume_host_check "$RUN_DIR/meta.json"
        log "resuming run $(basename "$RUN_DIR") (each part in the design it started with; hosts $HOSTS, $CLIENT_HOSTS client host(s))"
    else
        RUN_DIR=${RUN_DIR:-$RAW_ROOT/$(new_run_id)}
        apply_profile "$profile"
        create_run_meta "$RUN_DIR" "$profile" "${SUITES[*]}" "$(run_params_json)"
        # (which settings were flags: a resumed run gives them to the parts it has not started,
        # which otherwise take their own: resume_design)
        json_strs "${given[@]}"
        meta_update "$RUN_DIR" '.params.given = $g' --argjson g "$JSON_STRS" ||
            die "could not write $RUN_DIR/meta.json ($(raw_problem "$RUN_DIR"))"
        log "new run $(basename "$RUN_DIR") (profile $profile, suites ${SUITES[*]})"
    fi

    run_suites
    finish_run_meta "$RUN_DIR" "$( (( ${#FAILED_SUITES[@]} == 0 )) && echo true || echo false)" ||
        log "warning: the run's end could not be written to $RUN_DIR/meta.json ($(raw_problem "$RUN_DIR"))"
    if $pack; then pack_raw; else log "raw files left unpacked (--no-pack); pack them with: python -m httplab pack pack $RUN_DIR"; fi
    if $reports; then make_reports
    else log "no reports (--no-reports); make them with: scripts/run_all.sh --reports-only --run-id $(basename "$RUN_DIR")"; fi
    log "run_all finished in $(( $(date +%s) - t0 ))s"
    (( ${#FAILED_SUITES[@]} == 0 )) ||
        die "suites that stopped early: ${FAILED_SUITES[*]} (rerun to resume them)$(stop_reasons "$t0" "${FAILED_SUITES[@]}")"
}

# stop_reasons SINCE SUITE...: for the last line of a run that had suites stop, each one's reason as
# it kept it (suite.aborted.<time>.json, written at or after SINCE, epoch seconds), a line each:
# the tail of a long log is often all a reader (or a CI page) shows.
stop_reasons() {
    local since=$1 suite f t msg; shift
    for suite in "$@"; do
        msg="no reason was kept (see the suite's log above)"
        for f in $(ls "$RUN_DIR/$suite"/suite.aborted.*.json 2>/dev/null | sort -V); do
            t=${f##*/suite.aborted.}; t=${t%.json}
            [[ $t =~ ^[0-9]+$ ]] && (( t >= since )) || continue
            msg=$(jq -r '.message // empty' "$f" 2>/dev/null) || msg="(unreadable: $f)"
        done
        printf '\n  %s: %s' "$suite" "$msg"
    done
}

main "$@"
