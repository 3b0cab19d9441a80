# shellcheck shell=bash
# h3: HTTP/3 over QUIC on UDP with h3load (the lab's HTTP/3 load tool, tools/h3load): C connections
# with M streams (requests in flight) each. A certificate is made per run, as for the https suite;
# QUIC runs TLS 1.3 inside it, and each point records the ALPN h3load's handshakes agreed. The
# points at 100 connections × 10 streams mirror the https suite's HTTPS/2 points (h2load -m 10).
# Declarations only: scripts/bench.sh h3 runs them (--help for its flags).

SUITE=h3 PROTOCOL=h3 TLS=true SCHEME=https SERVER_MODE=h3
# id                     kind      method route size  connections streams lua
SCENARIOS=(
    "get_ping_c10_m1       ping      GET  /ping 0      10  1  -"
    "get_ping_c100_m1      ping      GET  /ping 0      100 1  -"
    "get_ping_c10          ping      GET  /ping 0      10  10 -"
    "get_ping_c100         ping      GET  /ping 0      100 10 -"
    "get_echo_s64_c100     echo_get  GET  /echo 64     100 10 -"
    "get_echo_s1024_c100   echo_get  GET  /echo 1024   100 10 -"
    "get_echo_s4096_c100   echo_get  GET  /echo 4096   100 10 -"
    "post_echo_b1024_c100  echo_post POST /echo 1024   100 10 -"
    "post_echo_b4096_c100  echo_post POST /echo 4096   100 10 -"
    "post_echo_b16384_c100 echo_post POST /echo 16384  100 10 -"
)

# The A/A copy of the contestant runs these (the run's noise floor)
HEADLINE_SCENARIOS=get_ping_c10,get_ping_c100

# --quick runs only these (the pipeline check, not the comparison)
QUICK_SCENARIOS=get_ping_c10,post_echo_b4096_c100
