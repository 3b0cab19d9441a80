# shellcheck shell=bash
# scaling_h2c: cleartext HTTP/2 (prior knowledge) with h2load, GET /ping, 100 connections of 10
# streams each, every scalable server at each number of cores (lib.sh).
# Declarations only: scripts/bench.sh scaling_h2c runs them (--help for its flags).

source "$SUITE_DIR/lib.sh"

SUITE=scaling_h2c PROTOCOL=h2 TLS=false SCHEME=http SERVER_MODE=h2c
# id                     kind      method route size connections depth lua
SCENARIOS=(
    "get_ping_c100         ping      GET  /ping 0     100 10 -"
)
QUICK_SCENARIOS=get_ping_c100
