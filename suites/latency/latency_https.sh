# shellcheck shell=bash
# latency_https: latency under load over HTTPS/1.1 (TLS, ALPN http/1.1): as
# latency_h1.sh, against each server's TLS port with the run's self-signed certificate. oha
# speaks TLS through rustls, not OpenSSL: the negotiated version and cipher of every point are read
# with s_client beside it (r<rep>.tls.txt), as in the https suite.
# Declarations only: scripts/bench.sh latency_https runs them (--help for its flags).

source "$SUITE_DIR/lib.sh"

SUITE=latency_https PROTOCOL=h1 TLS=true SCHEME=https SERVER_MODE=tls
latency_scenarios ping 100 1
