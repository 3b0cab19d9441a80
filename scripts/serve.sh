#!/usr/bin/env bash
# serve.sh NAME PORT [--mode h1|h2c|tls|h3]: start one of the lab's servers in the
# foreground, pinned to the server CPUs exactly as the suites pin it (SERVER_CPUS
# overrides), with its manifest's (servers/**/lab.toml) start command for the mode
# (default h1; tls and h3, HTTP/3 over QUIC on UDP, need LAB_CERT and LAB_KEY).
# serve.sh --list: every server: name, tier, modes and the route kinds it serves.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [[ ${1:-} == --list ]]; then
    manifest_tool list
    exit 0
fi
mode=h1
if (( $# == 4 )) && [[ $3 == --mode ]]; then mode=$4
elif (( $# != 2 )); then die "usage: serve.sh NAME PORT [--mode h1|h2c|tls|h3] | serve.sh --list"; fi
[[ $2 =~ ^[0-9]+$ ]] || die "PORT must be a number (got '$2')"
default_cpu_sets
server_command "$1" "$2" "$mode"
exec taskset -c "$SERVER_CPUS" "${SERVER_CMD[@]}"
