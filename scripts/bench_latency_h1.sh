#!/usr/bin/env bash
# bench_latency_h1.sh: latency under load over HTTP/1.1 (flags: --help): per server, its closed-loop
# capacity, then open-model points (oha -q, latency from the intended send time) at fractions of it
# and at rates every server shares (scripts/lib/latency.sh). 100 connections, GET /ping.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$LAB_ROOT/scripts/lib/latency.sh"

SUITE=latency_h1 PROTOCOL=h1 TLS=false SCHEME=http SERVER_MODE=h1
latency_scenarios ping 100 1

parse_suite_flags "$@"
suite_run
