#!/usr/bin/env bash
# bench_latency_h2c.sh: latency under load over cleartext HTTP/2 (prior knowledge; flags: --help):
# as bench_latency_h1.sh, with 10 connections of 10 concurrent streams (100 requests in flight).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$LAB_ROOT/scripts/lib/latency.sh"

SUITE=latency_h2c PROTOCOL=h2 TLS=false SCHEME=http SERVER_MODE=h2c
latency_scenarios ping 10 10

parse_suite_flags "$@"
suite_run
