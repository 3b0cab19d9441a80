# shellcheck shell=bash
# h2c: seed 001's HTTP/2 cleartext (prior knowledge) matrix with h2load,
# 10 concurrent streams per connection. Each point is two h2load
# runs: throughput without the per-request log, then latency with it.
# Declarations only: scripts/bench.sh h2c runs them (--help for its flags).

SUITE=h2c PROTOCOL=h2 TLS=false SCHEME=http SERVER_MODE=h2c
# id                     kind      method route size connections streams lua
SCENARIOS=(
    "get_ping_c50          ping      GET  /ping 0     50  10 -"
    "get_ping_c100         ping      GET  /ping 0     100 10 -"
    "get_ping_c200         ping      GET  /ping 0     200 10 -"
    "get_ping_c500         ping      GET  /ping 0     500 10 -"
    "get_echo_s64_c100     echo_get  GET  /echo 64    100 10 -"
    "get_echo_s256_c100    echo_get  GET  /echo 256   100 10 -"
    "get_echo_s1024_c100   echo_get  GET  /echo 1024  100 10 -"
    "get_echo_s4096_c100   echo_get  GET  /echo 4096  100 10 -"
    "post_echo_b1024_c100  echo_post POST /echo 1024  100 10 -"
    "post_echo_b4096_c100  echo_post POST /echo 4096  100 10 -"
    "post_echo_b16384_c100 echo_post POST /echo 16384 100 10 -"
    "post_echo_b65536_c100 echo_post POST /echo 65536 100 10 -"
)

# The seed's first table: the A/A copy of the contestant runs these (the run's noise floor)
HEADLINE_SCENARIOS=get_ping_c50,get_ping_c100,get_ping_c200,get_ping_c500

# --quick runs only these (the pipeline check, not the comparison)
QUICK_SCENARIOS=get_ping_c100,post_echo_b4096_c100
