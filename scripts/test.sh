#!/usr/bin/env bash
# test.sh: the lab's tests, from a fresh clone (sets itself up first).
#   1. setup and build;
#   2. each server's own tests (its manifest's `test` command: the C server's unit
#      tests under ASan/UBSan and its sanitized build, go vet of the Go servers), and the
#      manifests themselves (every field checked, every start command built);
#   3. the C server's libFuzzer targets (scripts/fuzz.sh: every committed input replayed, then
#      each target fuzzed for 6 s, about a minute in all);
#   4. the Python unit tests (parsers on captured tool output, tidy frames, statistics);
#      steps 4 then 3 time nothing: they run after step 2 in the idle scheduling class
#      (SCHED_IDLE, chrt), beside step 5 and the attacks, on the CPU time those leave unused;
#   5. integration tests: those that time nothing (harness faults, scripts, archives), two at a
#      time; then, one at a time, those against the live sanitized C server on loopback (HTTP/1.1,
#      h2c, h2spec's conformance suite) and the language servers' routes; the C server's
#      again with --workers 2 and again on its io_uring loop (--loop uring);
#      then the attack suite (tests/attacks): hostile clients against the sanitized
#      C server (HTTP/1.1, h2 and QUIC), with a legitimate client measured throughout, on epoll
#      and on io_uring;
#   6. the pipeline smoke runs: first, alone, the latency suites (oha's open model: capacity,
#      fractions of it, a shared rate) on two servers; then the main run (run_all.sh with tiny
#      durations on a few scenarios of the seed suites, into a scratch raw/, data/ and reports/) with,
#      beside it in the background, the work that times nothing: step 5's integration
#      tests that time nothing; and the side runs one after the other: the backends
#      suite (epoll against io_uring) on the C server's two loops and both floors, the scaling suite
#      on the C server and Go (n = 1 on two cores), the HTTP/3 suite on its four servers (h3load),
#      the http1 and h2c suites in the netns host mode
#      (a server and two client namespaces), the versus suites (their /ping points, five reps with
#      the A/A copy, as the main run measures the seed suites); then, alone, the http1 and h2c suites in the inventory
#      host mode (Ansible over ssh to stand-in hosts: scripts/inventory_netns.sh);
#      then checks of every run's data and exported reports (without the smoke stage, steps 3 and
#      5 run in full at their places; without the idle class, steps 3 and 4 run beside the main
#      run, or step 3 beside step 4 without a smoke stage);
#   7. that run's index and reports opened in headless Chromium (tests/browser: images,
#      legible figures, no horizontal scroll, TOC links, empty sections, missing-value cells);
#      full-page screenshots are kept in build/screenshots/smoke/;
#   8. that no server, load tool or fuzzer the tests started is still running.
# TEST_ONLY=STAGE[,STAGE...] runs only those stages (servers, fuzz, unit, integration, attacks, smoke) after
# setup and build, for work on one of them; the test command runs them all.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

step() { log "=== test: $*"; }

# inventory_smoke DIR: a quick http1 and h2c run in the inventory host mode, two client hosts
# reached by Ansible over ssh; the stand-in hosts are removed however it ends.
inventory_smoke() {
    local dir=$1 enter out rc=0
    out=$("$LAB_ROOT/scripts/inventory_netns.sh" up "$dir/hosts" 2) ||
        { "$LAB_ROOT/scripts/inventory_netns.sh" down "$dir/hosts"; die "the stand-in hosts of the inventory smoke run could not be made"; }
    read -ra enter <<<"$out"
    LAB_CANARY=0 SMOKE_ENTER="${enter[*]}" smoke_run "$dir" \
        --inventory "$dir/hosts/inventory.ini" --suites http1,h2c --servers evloop \
        --scenarios get_ping_c100,post_echo_b4096_c100 --reps 1 --duration 1 --warmup 0 || rc=$?
    "$LAB_ROOT/scripts/inventory_netns.sh" down "$dir/hosts"
    return "$rc"
}

# the servers' own tests and the manifests
stage_servers() {
    step "the servers' own tests (manifests' test commands)"
    run_jobs tests

    step "server manifests"
    manifest_tool validate --built
}

# the C server's fuzzers
stage_fuzz() {
    step "fuzzing the C server (replay of the committed inputs, then 6 s per target)"
    "$LAB_ROOT/scripts/fuzz.sh" --replay all
    # a short exploration per target (the committed corpus replayed above is the regression test;
    # longer campaigns: scripts/fuzz.sh all SECONDS)
    "$LAB_ROOT/scripts/fuzz.sh" all 6
}

# the Python unit tests
stage_unit() {
    # The unit tests are independent of each other and of the machine's timing: both cores run
    # them (pytest-xdist).
    step "Python unit tests (on both cores)"
    (cd "$LAB_ROOT" && LAB_REQUIRE_TOOLS=1 "$py" -m pytest -q -n 2 tests/unit)
}

# the integration tests (live servers): both parts
stage_integration() {
    integration_concurrent
    integration_alone
}

# The integration tests marked `concurrent` time nothing a neighbour could disturb (the harness's
# fault handling, whose deadlines have seconds of margin; instruction counts; archives; compare.sh
# on committed runs): they run two at a time, a test file per worker, each worker's lab runs on
# ports of their own (tests/integration/conftest.py: 18580 and 19080).
integration_concurrent() {
    step "Python integration tests that time nothing (two at a time)"
    (cd "$LAB_ROOT" && LAB_REQUIRE_TOOLS=1 LANG_TESTS_REQUIRE_ALL=1 "$py" -m pytest -q -n 2 --dist loadfile \
        -m concurrent tests/integration)
}

# Every other integration test times the server or the machine (protocol timeouts, the open-model
# stall, memory windows, idle connections) and runs alone.
integration_alone() {
    step "Python integration tests (live servers, one at a time)"
    (cd "$LAB_ROOT" && LAB_REQUIRE_TOOLS=1 LANG_TESTS_REQUIRE_ALL=1 "$py" -m pytest -q -m "not concurrent" tests/integration)

    # (the command-line refusals start no server: EVLOOP_WORKERS and EVLOOP_LOOP change nothing in
    # them, so they run once, above)
    local same=(--deselect tests/integration/test_evloop_cli.py::test_bad_flags_are_named)
    step "the C server's integration tests again with --workers 2 (EVLOOP_WORKERS)"
    (cd "$LAB_ROOT" && LAB_REQUIRE_TOOLS=1 EVLOOP_WORKERS=2 "$py" -m pytest -q "${same[@]}" \
        tests/integration/test_evloop_http1.py tests/integration/test_evloop_h2.py \
        tests/integration/test_evloop_tls.py tests/integration/test_evloop_cli.py \
        tests/integration/test_evloop_h3.py)

    step "the C server's integration tests again on io_uring (EVLOOP_LOOP=uring)"
    (cd "$LAB_ROOT" && LAB_REQUIRE_TOOLS=1 EVLOOP_LOOP=uring "$py" -m pytest -q "${same[@]}" \
        tests/integration/test_evloop_http1.py tests/integration/test_evloop_h2.py \
        tests/integration/test_evloop_tls.py tests/integration/test_evloop_cli.py \
        tests/integration/test_evloop_workers.py tests/integration/test_evloop_h3.py)
}

# the attack suite, on both loops
stage_attacks() {
    step "the C server under attack (tests/attacks: floods, slow clients, memory, fds)"
    (cd "$LAB_ROOT" && "$py" -m pytest -q tests/attacks)
    # On io_uring the QUIC cases' socket is one readiness event like any other fd's: the two
    # floods check that path under load; the other QUIC cases would repeat the epoll pass.
    step "the C server under attack again, on io_uring (the QUIC cases: the two floods)"
    (cd "$LAB_ROOT" && EVLOOP_LOOP=uring "$py" -m pytest -q tests/attacks -k "not h3_ or _flood")
}

# smoke_run ROOT FLAGS...: one quick smoke run of run_all.sh with FLAGS, a new run into ROOT/raw,
# ROOT/data and ROOT/reports. The smoke runs all skip run_all.sh's setup and build: the test command
# built everything at its start, and its lanes must not run two makes of one tree at once.
# LAB_CANARY=0 before the call leaves the machine's canary out; SMOKE_ENTER, a command prefix (the
# inventory run's way into its stand-in hosts).
smoke_run() {
    local root=$1 enter
    shift
    read -ra enter <<<"${SMOKE_ENTER:-}"
    RAW_ROOT=$root/raw DATA_ROOT=$root/data REPORTS_ROOT=$root/reports \
        "${enter[@]}" "$LAB_ROOT/scripts/run_all.sh" --skip-setup --skip-build --new --quick "$@"
}

# The seed suites' and the versus suites' smoke design: five reps, the fewest at which a report prints
# its seed tables' intervals, the A/A noise floor and the verdicts (with three, those sections are
# left out, and the smoke checks fail), the A/A copy, 1 s points.
SMOKE_FIVE_REPS=(--aa --reps 5 --duration 1 --warmup 0)

# smoke_main DIR: the main smoke run, the seed suites (every server, with the A/A copy), into DIR/raw,
# data and reports.
smoke_main() {
    local dir=$1
    # Every server but the io_uring variants, which the backends smoke run below measures beside
    # their epoll twins (in the http1 suite they would add a fifth of its points and test nothing new).
    smoke_run "$dir" "${SMOKE_FIVE_REPS[@]}" \
        --suites http1,h2c,https,languages --servers "$(smoke_servers)" \
        --scenarios 'get_ping_c100,post_echo_b4096_c100,get_ping_pipe16_c100,h1_get_ping_c100,h2_get_ping_c100,get_root_c100'
    # (each suite runs those of these scenario ids it has: all four get some)
    # The machine's canary (scripts/lib/canary.sh) runs in this run, in each of its parts, and in the
    # versus run; the other smoke runs leave it out (LAB_CANARY=0), which saves a minute of the test
    # command.
}

# smoke_servers: every server but the io_uring variants, comma-separated.
smoke_servers() { manifest_tool list | awk '$1 !~ /_uring$/ { print $1 }' | paste -sd,; }

# smoke_versus DIR: the versus suites (h2c and TLS) on their /ping points, as the main run measures
# the seed suites (five reps, the A/A copy), into DIR/versus. Their own run, in the side lane: in
# the main run they were its last 75 points, three minutes of the test command's longest lane.
# With the machine's canary, as there (its report's header reads it; the side lane has the time).
smoke_versus() {
    local dir=$1
    smoke_run "$dir/versus" "${SMOKE_FIVE_REPS[@]}" \
        --suites versus --servers "$(smoke_servers)" --scenarios 'get_ping_c100,h1_get_ping_c100,h2_get_ping_c100'
}

# smoke_latency DIR: the latency suites (oha, open model) on their own: every kind of point (the
# capacity, a low and a high fraction, the uncorrected twin, one shared rate; --quick alone runs
# three), two servers, two reps, into DIR/latency.
smoke_latency() {
    local dir=$1
    LAB_CANARY=0 smoke_run "$dir/latency" --suites latency --servers evloop,nginx \
        --scenarios closed,f010,f080,f080_uncorrected,r10k --reps 2 --duration 1 --warmup 0
}

# smoke_side DIR: the smoke runs of the other suites and the netns host mode, each into a folder of
# DIR. They run in a lane beside the main run, so on ports of their own (1500 above the suites' 18080,
# clear of the concurrent integration tests' 18580 and 19080; the netns run has namespaces of its
# own as well).
smoke_side() {
    local dir=$1
    export LAB_PORT_BASE=19580
    # The backends suite (epoll against io_uring) on its two points, the four single-process servers,
    # with a 1 s warm-up: the one smoke run that goes through the warm-up (the quick profile has none).
    LAB_CANARY=0 smoke_run "$dir/backends" --suites backends \
        --servers evloop,evloop_uring,floor,floor_uring --scenarios get_ping_c100,get_ping_pipe16_c100 \
        --reps 1 --duration 1 --warmup 1
    # The scaling suite (every server that can use several cores, at n = 1, 2, 4, ... of them) on two
    # of them: n = 1 only on two cores, with the plan's message about larger n.
    LAB_CANARY=0 smoke_run "$dir/scaling" --suites scaling --servers evloop,go \
        --reps 1 --duration 1 --warmup 0
    # The HTTP/3 suite (QUIC on UDP, loaded with the lab's h3load) on its two quick points, every
    # HTTP/3 server, the C server's included (ngtcp2's serves the GET one only): the verify gate
    # over HTTP/3, the tool, its parser and the generic report.
    LAB_CANARY=0 smoke_run "$dir/h3" --suites h3 --servers evloop,go_h3,rust_h3,ngtcp2 \
        --reps 1 --duration 1 --warmup 0
    # The netns host mode (a server host and two client hosts as network namespaces, both loading
    # every point at once): http1 and h2c.
    LAB_CANARY=0 smoke_run "$dir/netns" --hosts netns --clients 2 --suites http1,h2c \
        --servers evloop,go --scenarios get_ping_c100,get_ping_pipe16_c100,post_echo_b4096_c100 \
        --reps 1 --duration 1 --warmup 0
    # The versus suites last: by then the concurrent integration tests have ended, and the main run
    # is the one neighbour of their TLS points (a TLS handshake that outlasts its window fails the
    # point, and hung Debian's h2load: docs/architecture.md, "Tried and left").
    smoke_versus "$dir"
}

# Lanes: stages run in the background beside another, each with its output in a file of its own
# (build/test-lanes/NAME.log), printed whole when it is joined (interleaved logs would be unreadable).
LANES=()           # the running lanes' names, in the order they started
declare -A LANE_PID=() LANE_WHAT=()
lane_log() { printf '%s/test-lanes/%s.log' "$BUILD_DIR" "$1"; }
# lane_start NAME WHAT CMD...: runs CMD in the background (WHAT says what it is).
lane_start() {
    local name=$1 what=$2; shift 2
    mkdir -p "$BUILD_DIR/test-lanes"
    step "started in the background: $what (its output follows when it ends)"
    ( "$@" ) >"$(lane_log "$name")" 2>&1 &
    LANE_PID[$name]=$!; LANE_WHAT[$name]=$what; LANES+=("$name")
}
# lane_join_all: waits for every lane in turn, prints its output, and dies when one failed.
lane_join_all() {
    local name rc
    for name in "${LANES[@]}"; do
        rc=0; wait "${LANE_PID[$name]}" || rc=$?
        unset "LANE_PID[$name]"
        step "the output of ${LANE_WHAT[$name]} (it ran in the background)"
        cat "$(lane_log "$name")" >&2
        (( rc == 0 )) || die "${LANE_WHAT[$name]} failed (exit $rc; its output is above)"
    done
    LANES=()
}
# lanes_end: ends what is left of every lane (a fuzzer outlives a killed shell).
lanes_end() {
    local pid
    for pid in "${LANE_PID[@]}"; do end_tree 5 "$pid"; done
}

# SMOKE_COMPANIONS: lanes of work that times nothing, run beside the main smoke run instead of before
# it, each a space-separated list of functions run one after the other (main fills it when the
# smoke stage runs too).
SMOKE_COMPANIONS=()
# in_turn FUNCTION...: each in turn, stopping at the first that fails.
in_turn() { local f; for f in "$@"; do "$f"; done; }

# The idle scheduling class (SCHED_IDLE) runs a process only on CPU time that no other process
# wants: a runnable task of the normal class preempts it at once on wake-up. The unit tests time
# nothing (their one speed check compares CPU times in one process), nor do the fuzzers, so they
# run in that class (main, below) beside the stages that run alone (the integration tests that
# time the server, the attacks), which leave much of the two cores idle while they wait on
# protocol timeouts and paced clients; those stages keep the CPU whenever they ask for it.
# idle_class_works: whether this machine lets us use the class (a container may not).
idle_class_works() { chrt --idle 0 true 2>/dev/null; }
# idle_class FUNCTION...: the functions in the idle class, with every process they start.
idle_class() { chrt --idle -p 0 "$BASHPID" >/dev/null && in_turn "$@"; }

# the pipeline smoke runs, their checks and the browser check of their reports
stage_smoke() {
    local companion
    SCRATCH=$(mktemp -d)
    trap 'lanes_end; rm -rf "$SCRATCH"' EXIT
    # The latency suites first, alone: an open-model point is a fraction of the capacity measured just
    # before it, which a neighbour that comes or goes in between makes meaningless (tried: beside the
    # side runs, the C server's 80 % points saturated and its knee had no data).
    # (the idle-class lane of the unit tests and the fuzzers, when it has not ended yet, ends
    # first: alone means alone)
    lane_join_all
    step "pipeline smoke run: the latency suites (alone)"
    smoke_latency "$SCRATCH"
    # Then the rest at once. A smoke run checks the pipeline, not the figures, and its points take
    # their wall-clock second whatever else runs; so the side runs (other suites, host modes) and the
    # stages that time nothing (SMOKE_COMPANIONS) go on beside the main run instead of after or
    # before it. Points that shared their cores are flagged noisy (foreign CPU): that is what the
    # flag is for, and the checks below read the flags, not the figures. (The side runs beside it
    # made Debian's h2load hang, when a client was still in its TLS handshake as its window ended;
    # the lab's build of h2load, scripts/setup.sh, ends on time: docs/method.md, "The lab's h2load".)
    lane_start side "the side smoke runs (backends, scaling, h3, netns, versus)" smoke_side "$SCRATCH"
    for companion in "${SMOKE_COMPANIONS[@]}"; do
        # shellcheck disable=SC2086  # a list of function names
        lane_start "${companion%% *}" "${companion// / then }" in_turn $companion
    done
    step "pipeline smoke run: the main run (the seed suites, every server, A/A copy)"
    smoke_main "$SCRATCH"
    lane_join_all
    # The inventory host mode through Ansible, against stand-in machines: namespaces with an sshd
    # each (scripts/inventory_netns.sh), the lab run from the server host's namespace. Alone: its
    # client hosts are launched over ssh to start together at a set time, and beside the main run
    # the launches came late enough that hosts began 237-514 ms apart, which fails the point
    # (limit 100 ms), as it should.
    step "pipeline smoke run: the inventory host mode (alone)"
    inventory_smoke "$SCRATCH/inventory"
    (cd "$LAB_ROOT" && LAB_SMOKE_DIR=$SCRATCH LAB_VERSUS_SMOKE_DIR=$SCRATCH/versus LAB_LATENCY_SMOKE_DIR=$SCRATCH/latency \
        LAB_BACKENDS_SMOKE_DIR=$SCRATCH/backends LAB_SCALING_SMOKE_DIR=$SCRATCH/scaling LAB_H3_SMOKE_DIR=$SCRATCH/h3 \
        LAB_NETNS_SMOKE_DIR=$SCRATCH/netns \
        LAB_INVENTORY_SMOKE_DIR=$SCRATCH/inventory "$py" -m pytest -q tests/smoke)

    step "the smoke run's reports in a browser (headless Chromium)"
    local browser_rc=0
    local dir
    for dir in "$SCRATCH" "$SCRATCH/latency" "$SCRATCH/versus"; do
        (cd "$LAB_ROOT" && LAB_SMOKE_DIR=$dir LAB_REQUIRE_BROWSER=1 "$py" -m pytest -q tests/browser) || browser_rc=$?
    done
    # The screenshots outlive the scratch dir, so a person can look at them.
    local shots
    for shots in "$SCRATCH/screenshots:smoke" "$SCRATCH/latency/screenshots:smoke-latency" \
                 "$SCRATCH/versus/screenshots:smoke-versus"; do
        [[ -d ${shots%%:*} ]] || continue
        rm -rf "$BUILD_DIR/screenshots/${shots##*:}"; mkdir -p "$BUILD_DIR/screenshots"
        cp -r "${shots%%:*}" "$BUILD_DIR/screenshots/${shots##*:}"
        log "screenshots of the smoke run's reports: $BUILD_DIR/screenshots/${shots##*:}/"
    done
    (( browser_rc == 0 )) || die "the browser test of the reports failed (above)"
}

STAGES=(servers fuzz unit integration attacks smoke)

main() {
    local stage
    step setup;  "$LAB_ROOT/scripts/setup.sh"
    step build;  "$LAB_ROOT/scripts/build.sh"
    py=$(lab_python)
    local only=${TEST_ONLY:-}
    for stage in ${only//,/ }; do
        [[ " ${STAGES[*]} " == *" $stage "* ]] || die "TEST_ONLY: no stage '$stage' (stages: ${STAGES[*]})"
    done
    selected() { [[ -z $only || ",$only," == *",$1,"* ]]; }
    trap lanes_end EXIT
    # The unit tests and the fuzzers time nothing a neighbour could disturb (the fuzzers' 6 s per
    # target are wall-clock seconds: they explore less on a busy machine, and replay every committed
    # input whatever the load): when the machine allows it, they run one after the other in a lane
    # of the idle class (idle_class, above) beside the stages that follow the servers' own tests
    # (those build the C server in its tree, as the fuzzers do: two makes never share a tree). The
    # smoke stage joins the lane before its first run; so does the end of the tests without one.
    local idle=() idle_started=false
    if idle_class_works; then
        selected unit && idle+=(stage_unit)
        selected fuzz && idle+=(stage_fuzz)
    fi
    in_idle() { [[ " ${idle[*]} " == *" stage_$1 "* ]]; }
    # Without the idle class, the concurrent integration tests, the unit tests before them and the
    # fuzzers run beside the smoke stage's main run, each lane on its own; without a smoke stage
    # either, the fuzzers run beside the unit tests.
    if selected smoke; then
        selected fuzz && ! in_idle fuzz && SMOKE_COMPANIONS+=(stage_fuzz)
        local lane=()
        selected unit && ! in_idle unit && lane+=(stage_unit)
        selected integration && lane+=(integration_concurrent)
        (( ${#lane[@]} == 0 )) || SMOKE_COMPANIONS+=("${lane[*]}")
    fi
    for stage in "${STAGES[@]}"; do
        selected "$stage" || continue
        if [[ $stage != servers ]] && ! $idle_started && (( ${#idle[@]} )); then
            idle_started=true
            lane_start idle "$(printf '%s' "${idle[*]}" | sed 's/stage_//g; s/ / then /') (idle scheduling class)" \
                idle_class "${idle[@]}"
        fi
        in_idle "$stage" && continue
        if selected smoke; then
            case $stage in
                fuzz|unit)   continue ;;                       # in the smoke stage's lanes
                integration) integration_alone; continue ;;    # its concurrent part is too
            esac
        fi
        if [[ $stage == fuzz ]] && selected unit && ! in_idle unit; then lane_start fuzz "the fuzzers" stage_fuzz; continue; fi
        "stage_$stage"
        if [[ $stage == unit ]]; then lane_join_all; fi
    done
    lane_join_all

    step "no process left behind (servers, load tools, fuzzers)"
    local left; left=$(leftover_processes)
    [[ -z $left ]] || die "the tests left these processes running:"$'\n'"$left"
    step "all passed"
}

main "$@"
