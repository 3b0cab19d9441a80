# shellcheck shell=bash
# scaling_tls: HTTPS/1.1 with wrk and HTTPS/2 (ALPN h2) with h2load -m10, GET /ping at 100
# connections on one TLS port, every scalable server at each number of cores (lib.sh).
# Declarations only: scripts/bench.sh scaling_tls runs them (--help for its flags).

source "$SUITE_DIR/lib.sh"

SUITE=scaling_tls TLS=true SCHEME=https SERVER_MODE=tls
# id                        kind          method route size connections depth lua
SCENARIOS=(
    "h1_get_ping_c100          h1:ping       GET  /ping 0    100 1  report.lua"
    "h2_get_ping_c100          h2:ping       GET  /ping 0    100 10 -"
)
QUICK_SCENARIOS=h1_get_ping_c100,h2_get_ping_c100
