# The latency suite's shared matrix and hooks, sourced by each of its parts (latency_*.sh): one
# part per protocol (latency_h1, latency_h2c, latency_https), because a server starts in one mode
# per part; `run_all.sh --suites latency` runs the three.
#
# Per server, every rep: one closed-loop point (oha without a rate, as fast as its connections
# allow: the server's capacity as this tool can draw it, and the closed-loop percentiles coordinated
# omission shapes), then open-model points (oha -q R --latency-correction) at fractions of that
# capacity and at absolute rates every server shares, so curves can be laid over each other; plus
# one point at 80 % without the correction, timed the way a paced closed-loop tool times it.
# The capacity is the closed-loop req/s of the server's first good closed point of the run (rep 1
# unless it failed), written once to <suite>/<server>/capacity.json: every rep runs the same rates.
# A point whose achieved rate falls short of its target by more than the stated margin is marked
# saturated by the tidy layer (httplab.tidy.bounds.SATURATION_MARGIN) and never averaged in.

SUITE_TOOL=oha
SUITE_DEFAULT_SERVERS="evloop go nginx h2o"
LATENCY_FRACTIONS=(0.10 0.25 0.50 0.70 0.80 0.90 0.95 1.10)
LATENCY_RATES=(10000 25000 50000)
LATENCY_CLOSED_ID=closed

# latency_scenarios KIND CONNECTIONS DEPTH: SCENARIOS for one protocol ("id kind method route size
# connections depth load", load being closed, frac:F[:uncorrected] or rate:R).
latency_scenarios() {
    local kind=$1 conns=$2 depth=$3 f r
    SCENARIOS=("$LATENCY_CLOSED_ID $kind GET /ping 0 $conns $depth closed")
    for f in "${LATENCY_FRACTIONS[@]}"; do
        SCENARIOS+=("$(printf 'f%03d' "$(awk -v f="$f" 'BEGIN { printf "%d", f * 100 + 0.5 }')") $kind GET /ping 0 $conns $depth frac:$f")
    done
    SCENARIOS+=("f080_uncorrected $kind GET /ping 0 $conns $depth frac:0.80:uncorrected")
    for r in "${LATENCY_RATES[@]}"; do
        SCENARIOS+=("r$(( r / 1000 ))k $kind GET /ping 0 $conns $depth rate:$r")
    done
    HEADLINE_SCENARIOS=   # no A/A copy: the curves' spread across reps is their noise
    # --quick: the capacity and one fraction of it (oha closed and open); the latency smoke run of
    # scripts/test.sh names every kind: closed,f010,f080,f080_uncorrected,r10k
    QUICK_SCENARIOS=$LATENCY_CLOSED_ID,f080
}

# latency_capacity SERVER: the server's capacity (req/s) for this run and suite, from
# capacity.json, made from the first good closed-loop point when missing. Prints nothing when no
# closed point of the server is good yet.
latency_capacity() {
    local server=$1 file rep json cap
    file=$RUN_DIR/$SUITE/$server/capacity.json
    if [[ ! -f $file ]]; then
        for (( rep = 1; rep <= REPS; rep++ )); do
            json=$RUN_DIR/$SUITE/$server/$LATENCY_CLOSED_ID/r$rep.oha.json
            [[ -f $RUN_DIR/$SUITE/$server/$LATENCY_CLOSED_ID/r$rep.run.json && -f $json ]] || continue
            # good: every request answered, all 2xx, no error of any kind
            cap=$(jq -r 'if (.summary.successRate == 1) and ((.errorDistribution // {}) | length == 0)
                            and ([(.statusCodeDistribution // {}) | keys[] | startswith("2")] | all)
                            and (.summary.requestsPerSec > 0)
                         then .summary.requestsPerSec else empty end' "$json" 2>/dev/null) || cap=
            [[ -n $cap ]] || continue
            write_json_once "$file" "$(jq -n --argjson c "$cap" --arg s "$server" --argjson r "$rep" \
                --arg src "$LATENCY_CLOSED_ID/r$rep.oha.json" \
                '{server: $s, capacity_rps: $c, from_rep: $r, source: $src,
                  meaning: "closed-loop oha req/s of this server in this run: the base of the fractions"}')"
            break
        done
    fi
    [[ -f $file ]] && jq -r .capacity_rps "$file"
}

# suite_prepare_point SERVER REP (suite.sh's hook): SC_LOAD, SC_TARGET_RPS and SC_EXTRA_JSON of the
# parsed scenario; fails, with POINT_SKIP_REASON, for a fraction when no capacity is known.
suite_prepare_point() {
    local server=$1 spec=$SC_LUA frac= cap= model
    SC_TARGET_RPS= POINT_SKIP_REASON=
    case $spec in
        closed)  SC_LOAD=closed ;;
        frac:*)  frac=${spec#frac:}; frac=${frac%%:*}
                 SC_LOAD=open; [[ $spec == *:uncorrected ]] && SC_LOAD=open_uncorrected
                 cap=$(latency_capacity "$server")
                 if [[ -z $cap ]]; then
                     POINT_SKIP_REASON="no good closed-loop point of $server gives its capacity"
                     return 1
                 fi
                 SC_TARGET_RPS=$(awk -v c="$cap" -v f="$frac" 'BEGIN { printf "%d", c * f + 0.5 }') ;;
        rate:*)  SC_LOAD=open SC_TARGET_RPS=${spec#rate:} ;;
        *)       die "scenario $SC_ID: unknown load '$spec' (closed, frac:F[:uncorrected], rate:R)" ;;
    esac
    model=$SC_LOAD
    SC_EXTRA_JSON=$(jq -n --arg m "$model" --arg t "$SC_TARGET_RPS" --arg f "$frac" --arg c "$cap" \
        '{load_model: $m, warmup_in_run: true,
          target_rps: (if $t == "" then null else ($t | tonumber) end),
          load_fraction: (if $f == "" then null else ($f | tonumber) end),
          capacity_ref_rps: (if $c == "" then null else ($c | tonumber) end)}')
}

# suite_order_points SERVER REP LINE... (suite.sh's hook): the closed point first (the fractions
# need its capacity), then the open points in a random order, seeded by the run's order seed, the
# rep and the server, so that a slow drift within a server's block does not line up with the rate.
suite_order_points() {
    local server=$1 rep=$2 line seed
    shift 2
    seed=$(( (${ORDER_SEED:-0} + rep * 7919 + $(printf '%s' "$server" | cksum | cut -d' ' -f1)) % 2147483647 ))
    for line in "$@"; do [[ ${line%% *} == "$LATENCY_CLOSED_ID" ]] && echo "$line"; done
    for line in "$@"; do [[ ${line%% *} == "$LATENCY_CLOSED_ID" ]] || echo "$line"; done |
        awk -v seed="$seed" 'BEGIN { srand(seed) } { printf "%.9f\t%s\n", rand(), $0 }' | sort -k1,1 | cut -f2-
}
