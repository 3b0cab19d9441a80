#!/usr/bin/env bash
# rtt_sweep.sh: the suites at several round-trip times between the server host and the client
# hosts (netns host mode, delay added by tc netem). One run per RTT, each a run of its own
# with its RTT in meta.json and in every suite's hosts.json, so their reports stand side by side.
#
#   scripts/rtt_sweep.sh [--rtts 0,1,10,50] [run_all.sh flags...]
#
# Refused, before anything runs, on a kernel without the netem qdisc (this machine's among them):
# the lab does not fake delay in user space.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$LAB_ROOT/scripts/lib/netns.sh"

rtts=0,1,10,50
if [[ ${1:-} == --rtts ]]; then need_value "$1" "$#" "a comma list of milliseconds"; rtts=$2; shift 2; fi
[[ ${1:-} == -h || ${1:-} == --help ]] && { header_usage "$0"; exit 0; }
IFS=, read -ra list <<<"$rtts"
for r in "${list[@]}"; do
    [[ $r =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--rtts takes milliseconds, e.g. 0,1,10,50 (got '$r')"
    [[ $r == 0 ]] || check_rtt "$r"
done
for r in "${list[@]}"; do
    log "=== RTT ${r} ms"
    if [[ $r == 0 ]]; then "$LAB_ROOT/scripts/run_all.sh" --new --hosts netns "$@"
    else "$LAB_ROOT/scripts/run_all.sh" --new --hosts netns --rtt "$r" "$@"; fi
done
