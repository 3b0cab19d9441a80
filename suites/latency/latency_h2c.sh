# shellcheck shell=bash
# latency_h2c: latency under load over cleartext HTTP/2 (prior knowledge):
# as latency_h1.sh, with 10 connections of 10 concurrent streams (100 requests in flight).
# Declarations only: scripts/bench.sh latency_h2c runs them (--help for its flags).

source "$SUITE_DIR/lib.sh"

SUITE=latency_h2c PROTOCOL=h2 TLS=false SCHEME=http SERVER_MODE=h2c
latency_scenarios ping 10 10
