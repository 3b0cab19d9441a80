# shellcheck shell=bash
# versus_h2c: the C server against h2o and nginx over cleartext HTTP/2 (prior knowledge;
# flags: --help): h2load -m10 at 100 connections, GET /ping and GET /echo?size=1024, each point a
# throughput run and a latency run as in the h2c suite (lib.sh).
# Declarations only: scripts/bench.sh versus_h2c runs them (--help for its flags).

source "$SUITE_DIR/lib.sh"

SUITE=versus_h2c PROTOCOL=h2 TLS=false SCHEME=http SERVER_MODE=h2c
# id                   kind      method route size connections streams lua
SCENARIOS=(
    "get_ping_c100        ping      GET  /ping 0    100 10 -"
    "get_echo_s1024_c100  echo_get  GET  /echo 1024 100 10 -"
)
# the target's point: the A/A copy of the C server runs it (the run's noise floor)
HEADLINE_SCENARIOS=get_ping_c100
QUICK_SCENARIOS=get_ping_c100
