#!/usr/bin/env bash
# run.sh [run_all.sh flags]: the lab's suites on this host, from the offline archive this file is in
# (scripts/offline.sh pack made it; docs/host-modes.md, "Offline benchmark hosts"). No network, no
# package manager, no compiler: the servers come built, the tools and their libraries come in
# tools/, and the Python the run calls is the host's python3 with its standard library alone.
#
#   httplab-offline/run.sh --suites http1,h2c --quick        (any run_all.sh flag but --reports-only)
#
# The run goes to raw/<run_id> in this folder (RAW_ROOT overrides), packed (one .tar.xz per server
# of each complete suite, as at home: much less to carry back) and without reports:
# bring that folder home, then `scripts/offline.sh import DIR` and
# `scripts/run_all.sh --reports-only --run-id ID` there.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=/dev/null
source "$root/offline.env"

die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# version_ge A B: true when version A ≥ B (dotted numbers).
version_ge() { [[ $(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1) == "$2" ]]; }

for arg in "$@"; do
    [[ $arg != --reports-only ]] || die "the reports are made at home: scripts/run_all.sh --reports-only --run-id ID there"
done
have=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{ print $2 }') || true
[[ -n $have ]] || die "this host's C library is not glibc (the archive's programs need glibc >= $OFFLINE_GLIBC_NEEDED)"
version_ge "$have" "$OFFLINE_GLIBC_NEEDED" || die "this host has glibc $have; the archive's programs need >= $OFFLINE_GLIBC_NEEDED"
python3 -c "import sys; sys.exit(sys.version_info < (${OFFLINE_PYTHON_NEEDED/./, }))" 2>/dev/null ||
    die "python3 >= $OFFLINE_PYTHON_NEEDED is needed (found: $(python3 --version 2>&1 || echo none))"

# The carried programs first on PATH; the run-time verbs from this folder's httplab with a plain
# python3; what the scripts would ask git or the compilers for, from the archive.
export PATH=$root/tools/bin:$PATH PYTHONPATH=$root LAB_RUNTIME_PYTHON=python3 \
    LAB_GNU_TIME=$root/tools/bin/time LAB_SERVER_VERSIONS=$root/server-versions.json \
    LAB_BUILD_TOOLS=$root/build-tools.json \
    LAB_SOURCE_COMMIT LAB_SOURCE_DIRTY RAW_ROOT=${RAW_ROOT:-$root/raw}
unset VIRTUAL_ENV CONDA_PREFIX
exec "$root/scripts/run_all.sh" --skip-setup --skip-build --no-reports "$@"
