# shellcheck shell=bash
# scaling_h1: HTTP/1.1 with wrk, GET /ping at 100 and 500 connections and POST /echo with a 4 KiB
# body, every scalable server at each number of cores (lib.sh).
# Declarations only: scripts/bench.sh scaling_h1 runs them (--help for its flags).

source "$SUITE_DIR/lib.sh"

SUITE=scaling_h1 PROTOCOL=h1 TLS=false SCHEME=http SERVER_MODE=h1
# id                     kind      method route size connections depth lua
SCENARIOS=(
    "get_ping_c100         ping      GET  /ping 0     100 1  report.lua"
    "get_ping_c500         ping      GET  /ping 0     500 1  report.lua"
    "post_echo_b4096_c100  echo_post POST /echo 4096  100 1  post_body.lua"
)
QUICK_SCENARIOS=get_ping_c100
