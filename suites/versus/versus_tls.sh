# shellcheck shell=bash
# versus_tls: the C server against h2o and nginx over TLS: HTTPS/1.1 with
# wrk and HTTPS/2 (ALPN h2) with h2load -m10, 100 connections, GET /ping and GET /echo?size=1024,
# against each server's TLS port with the run's self-signed certificate, the negotiated TLS of
# every point recorded as in the https suite (lib.sh).
# Declarations only: scripts/bench.sh versus_tls runs them (--help for its flags).

source "$SUITE_DIR/lib.sh"

SUITE=versus_tls TLS=true SCHEME=https SERVER_MODE=tls
# id                        kind          method route size connections depth lua
SCENARIOS=(
    "h1_get_ping_c100          h1:ping       GET  /ping 0    100 1  report.lua"
    "h1_get_echo_s1024_c100    h1:echo_get   GET  /echo 1024 100 1  report.lua"
    "h2_get_ping_c100          h2:ping       GET  /ping 0    100 10 -"
    "h2_get_echo_s1024_c100    h2:echo_get   GET  /echo 1024 100 10 -"
)
# the targets' points: the A/A copy of the C server runs them (the run's noise floor)
HEADLINE_SCENARIOS=h2_get_ping_c100,h1_get_ping_c100
QUICK_SCENARIOS=h1_get_ping_c100,h2_get_ping_c100
