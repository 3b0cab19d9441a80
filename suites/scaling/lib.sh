# shellcheck shell=bash
# The scaling suite's shared settings, sourced by each of its parts (scaling_*.sh): every server that
# can use more than one core (its manifest's [cores] uses is not "single") measured at n = 1, 2, 4, ...
# cores, as <server>@<n>: a server of its own for the suite's machinery, so each n is started fresh,
# gated, and interleaved with every other server and n in each rep's random order. The CPU split
# comes from `python -m httplab cores scaling` (httplab/lab/cores.py: the servers on the first half
# of the physical cores, the load tools on the rest, one thread per CPU; LAB_CPUS plans for another
# CPU list); a server at n cores is pinned to the first n CPUs of the share in the plan's order
# (SERVER_CPU_ORDER: one thread per physical core first; lib/suite.sh point_server_cpus) and told n
# through its manifest's {cores}. One part per server mode, as in the versus suite.

# the plan decides the split for this suite, whatever the run's default (the run's meta.json keeps
# that; each point's cpu.json records the CPUs it really had)
apply_cpu_plan scaling "the scaling suite"
[[ -n ${LAB_COUNT_POINTS:-} ]] || log "scaling: $PLAN_NOTE"
SC_EXTRA_JSON_SCALING=$(jq -cn --arg note "$PLAN_NOTE" --arg ladder "$PLAN_LADDER" \
    '{scaling_plan: $note, scaling_ladder: ($ladder | split(" ") | map(tonumber))}')

# suite_expand_servers: SUITE_SERVERS -> <server>@<n> for every n of the plan, leaving out the
# single-threaded servers (they are measured at one core by every other suite).
suite_expand_servers() {
    local s n out=() single=()
    for s in "${SUITE_SERVERS[@]}"; do
        if [[ $s == *@* ]]; then out+=("$s"); continue; fi
        if [[ ${SERVER_CORES_USES[$s]} == single ]]; then single+=("$s"); continue; fi
        for n in $PLAN_LADDER; do out+=("$s@$n"); done
    done
    (( ${#single[@]} == 0 )) || [[ -n ${LAB_COUNT_POINTS:-} ]] ||
        log "scaling: not measured (single-threaded by their manifests' [cores]): ${single[*]}"
    SUITE_SERVERS=("${out[@]}")
}

# suite_prepare_point: every point records the plan (scenario.json: scaling_plan, scaling_ladder).
suite_prepare_point() { SC_EXTRA_JSON=$SC_EXTRA_JSON_SCALING; }
