# shellcheck shell=bash
# https: seed 002's HTTPS matrix: HTTPS/1.1 with wrk and HTTPS/2 (ALPN
# h2, 10 streams per connection) with h2load, against one TLS port per server.
# An RSA-2048 self-signed certificate is made per run under build/ (never in
# raw/ or git); the negotiated TLS version, cipher and ALPN protocol of every
# point are recorded in raw/ (r<rep>.tls.txt). The load tools offer TLS 1.3
# suites AES-128-GCM first (make_client_tls_config), so all servers negotiate
# the same cipher.
# Declarations only: scripts/bench.sh https runs them (--help for its flags).

SUITE=https TLS=true SCHEME=https SERVER_MODE=tls
# id                        kind          method route size connections depth lua
SCENARIOS=(
    "h1_get_ping_c50           h1:ping       GET  /ping 0     50  1  report.lua"
    "h1_get_ping_c100          h1:ping       GET  /ping 0     100 1  report.lua"
    "h1_get_ping_c200          h1:ping       GET  /ping 0     200 1  report.lua"
    "h1_get_ping_c500          h1:ping       GET  /ping 0     500 1  report.lua"
    "h1_get_echo_s1024_c100    h1:echo_get   GET  /echo 1024  100 1  report.lua"
    "h2_get_ping_c50           h2:ping       GET  /ping 0     50  10 -"
    "h2_get_ping_c100          h2:ping       GET  /ping 0     100 10 -"
    "h2_get_ping_c200          h2:ping       GET  /ping 0     200 10 -"
    "h2_get_echo_s64_c100      h2:echo_get   GET  /echo 64    100 10 -"
    "h2_get_echo_s1024_c100    h2:echo_get   GET  /echo 1024  100 10 -"
    "h2_get_echo_s4096_c100    h2:echo_get   GET  /echo 4096  100 10 -"
    "h2_post_echo_b1024_c100   h2:echo_post  POST /echo 1024  100 10 -"
    "h2_post_echo_b4096_c100   h2:echo_post  POST /echo 4096  100 10 -"
    "h2_post_echo_b16384_c100  h2:echo_post  POST /echo 16384 100 10 -"
    "h2_post_echo_b65536_c100  h2:echo_post  POST /echo 65536 100 10 -"
)

# The seed's first table: the A/A copy of the contestant runs these (the run's noise floor)
HEADLINE_SCENARIOS=h1_get_ping_c50,h1_get_ping_c100,h1_get_ping_c200,h1_get_ping_c500

# --quick runs only these (the pipeline check, not the comparison)
QUICK_SCENARIOS=h1_get_ping_c100,h2_get_ping_c100
