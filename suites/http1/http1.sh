# shellcheck shell=bash
# http1: seed 000's HTTP/1.1 matrix with wrk.
# Latency under pipelining is per batch of 16, not per request (wrk's rule).
# Declarations only: scripts/bench.sh http1 runs them (--help for its flags).

SUITE=http1 PROTOCOL=h1 TLS=false SCHEME=http SERVER_MODE=h1
# id                     kind      method route size connections depth lua
SCENARIOS=(
    "get_ping_c50          ping      GET  /ping 0     50  1  report.lua"
    "get_ping_c100         ping      GET  /ping 0     100 1  report.lua"
    "get_ping_c200         ping      GET  /ping 0     200 1  report.lua"
    "get_ping_c500         ping      GET  /ping 0     500 1  report.lua"
    "get_echo_s64_c100     echo_get  GET  /echo 64    100 1  report.lua"
    "get_echo_s256_c100    echo_get  GET  /echo 256   100 1  report.lua"
    "get_echo_s1024_c100   echo_get  GET  /echo 1024  100 1  report.lua"
    "get_echo_s4096_c100   echo_get  GET  /echo 4096  100 1  report.lua"
    "post_echo_b1024_c100  echo_post POST /echo 1024  100 1  post_body.lua"
    "post_echo_b4096_c100  echo_post POST /echo 4096  100 1  post_body.lua"
    "post_echo_b16384_c100 echo_post POST /echo 16384 100 1  post_body.lua"
    "post_echo_b65536_c100 echo_post POST /echo 65536 100 1  post_body.lua"
    "get_ping_pipe16_c100  pipeline  GET  /ping 0     100 16 pipeline.lua"
)

# The seed's first table: the A/A copy of the contestant runs these (the run's noise floor)
HEADLINE_SCENARIOS=get_ping_c50,get_ping_c100,get_ping_c200,get_ping_c500

# --quick runs only these (the pipeline check, not the comparison)
QUICK_SCENARIOS=get_ping_c100,post_echo_b4096_c100,get_ping_pipe16_c100
