#!/usr/bin/env bash
# soak.sh [SECONDS]: the sanitizer soak (default 180 s). The ASan/UBSan builds of
# the C server (plain and TLS) under mixed legitimate load (wrk on HTTP/1.1,
# h2load on h2c and TLS) interleaved with the attack clients of tests/attacks and
# malformed requests; passes with zero sanitizer reports, no leak at shutdown and
# no failed legitimate request. The test command runs a 20 s version.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

seconds=${1:-180}
[[ $seconds =~ ^[0-9]+$ ]] || die "usage: soak.sh [SECONDS]"
make -s -C "$LAB_ROOT/servers/evloop" BUILD="$BUILD_DIR" asan
exec "$(lab_python)" "$LAB_ROOT/tests/attacks/soak.py" "$seconds"
