# shellcheck shell=bash
# latency_h1: latency under load over HTTP/1.1: per server, its closed-loop
# capacity, then open-model points (oha -q, latency from the intended send time) at fractions of it
# and at rates every server shares (lib.sh). 100 connections, GET /ping.
# Declarations only: scripts/bench.sh latency_h1 runs them (--help for its flags).

source "$SUITE_DIR/lib.sh"

SUITE=latency_h1 PROTOCOL=h1 TLS=false SCHEME=http SERVER_MODE=h1
latency_scenarios ping 100 1
