# scripts/lib/plan.sh: the planned duration (sourced by lib.sh): what run_all.sh prints before its
# first point, and each part's share of it (bench.sh --count). It needs the suite driver's matrix
# (suite.sh: suite_blocks, todo_for, parse_scenario) and the canary's moments (canary.sh).

# What a part costs, for the planned duration run_all.sh prints before it starts (suite_plan):
# each point's tool time from the profile (warm-up, measured run, the latency run) plus the
# overheads below, in seconds, measured in the local host mode on the two-core lab machine (bash -x
# timestamps of scripts/bench.sh quick runs; docs/running.md, "What a run costs"). An estimate: a
# busy machine, slow-starting servers, or the netns and inventory host modes take longer.
PLAN_POINT_S=0.35       # every point: the tools' start and exit, the window's reads, the check, raw files
PLAN_H2LOG_S=0.15       # an h2load point: its per-request log compacted (python -m httplab h2log)
PLAN_OHA_S=0.25         # an oha point, per second of its run: its request database read into a histogram
                        # (0.25 s for a quick point; 1 s at 3 s + 1 s, as the full latency run took)
PLAN_WRK_LAT_S=0.3      # wrk's latency run in a sliced rep, beyond its seconds: the tool's start, connects, exit
PLAN_TLS_S=0.05         # a TLS point: the negotiated-TLS probe (openssl s_client)
PLAN_SERVER_S=0.4       # every server start: start, readiness polls, the verify gate, stop
PLAN_PART_S=0.6         # every part: bench.sh, the order, the host state's two starts; plus its two samples
PLAN_CANARY_S=0.5       # every canary, beyond its three parts' seconds: the programs' and the floor's start
PLAN_SLICED_S=0.45      # a point of --blocks sliced, beyond PLAN_POINT_S: its tool's tail after the
                        # slicer ends it (0.17 s, counted alone), its share of the slicer's start, its
                        # server's drains after its slices (scripts/lib/sliced.sh; the languages suite
                        # at 8 reps of 0.1 s slices: planned 22 minutes, took 22.6)

# suite_plan: "POINTS SECONDS": the number of points suite_run would measure now and their
# estimated time, the part's fixed costs included ("0 0" for a complete suite or none selected).
suite_plan() {
    local rep server line starts=0 todo tools=() lat
    [[ -f $RUN_DIR/$SUITE/suite.json ]] && { echo "0 0"; return 0; }
    local blocks block
    mapfile -t blocks < <(suite_blocks)
    for (( rep = 1; rep <= REPS; rep++ )); do
        lat=0
        latency_rep "$rep" && lat=1
        for block in "${blocks[@]}"; do
            for server in "${SUITE_SERVERS[@]}"; do
                mapfile -t todo < <(TODO_BLOCK=$block todo_for "$server" "$rep")
                (( ${#todo[@]} )) || continue
                starts=$(( starts + 1 ))
                server_warmup "$server"
                # (each point's tool, whether its rep has the latency run (latency_rep), and
                # its server's warm-up)
                for line in "${todo[@]}"; do
                    parse_scenario "$line"
                    tools+=("$SC_TOOL $lat $WARMUP")
                done
            done
        done
    done
    WARMUP=$RUN_WARMUP
    (( ${#tools[@]} )) || { echo "0 0"; return 0; }
    # the machine's canary: at the start, halfway and at the end (canary_moments), three parts each
    local canaries=0
    [[ ${LAB_CANARY:-1} == 1 ]] && canaries=$(canary_moments | wc -w)
    printf '%s\n' "${tools[@]}" | awk -v d="$DURATION" -v lat="$(lat_duration)" -v lw="$LAT_WARMUP_S" -v tls="$TLS" \
        -v k="$starts" -v p="$PLAN_POINT_S" -v h2="$PLAN_H2LOG_S" -v oha="$PLAN_OHA_S" -v t="$PLAN_TLS_S" \
        -v srv="$PLAN_SERVER_S" -v part="$PLAN_PART_S" -v wl="$(wrk_lat_s)" -v wlo="$PLAN_WRK_LAT_S" -v hs="$(host_sample_seconds)" -v cn="$canaries" -v cs="$(canary_seconds)" -v cp="$(canary_probe_seconds)" -v co="$PLAN_CANARY_S" \
        -v sl="$( [[ ${BLOCKS:-server} == sliced ]] && echo "$PLAN_SLICED_S" || echo 0)" '
        { n++; s += d + $3 + p + sl + (tls == "true" ? t : 0) + ($1 == "h2load" && $2 ? lat + lw + h2 : 0) + ($1 == "wrk" && $2 && sl > 0 ? wl + wlo : 0) + ($1 == "oha" ? oha * (d + $3) : 0) }
        END { printf "%d %d\n", n, s + k * srv + part + 2 * hs + cn * (cs + 2 * cp + co) + 0.5 }'
}

# plan_text SECONDS: "about 4 min" (under 2 min: "about 75 s").
plan_text() {
    if (( $1 < 120 )); then echo "about $1 s"; else echo "about $(( ($1 + 30) / 60 )) min"; fi
}
