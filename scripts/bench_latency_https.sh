#!/usr/bin/env bash
# bench_latency_https.sh: latency under load over HTTPS/1.1 (TLS, ALPN http/1.1; flags: --help): as
# bench_latency_h1.sh, against each server's TLS port with the run's self-signed certificate. oha
# speaks TLS through rustls, not OpenSSL: the negotiated version and cipher of every point are read
# with s_client beside it (r<rep>.tls.txt), as in the https suite.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$LAB_ROOT/scripts/lib/latency.sh"

SUITE=latency_https PROTOCOL=h1 TLS=true SCHEME=https SERVER_MODE=tls
latency_scenarios ping 100 1

parse_suite_flags "$@"
if [[ -z ${LAB_COUNT_POINTS:-} ]]; then   # not when run_all.sh only counts the points
    make_run_certificate
    make_client_tls_config
fi
suite_run
