#!/usr/bin/env bash
# scripts/ansible/run_on_client.sh: the inventory host mode's launcher (scripts/lib/fanout.sh):
# runs scripts/client_run.sh with ARGS on client host HOST through Ansible (load.yml), and unpacks
# the files it wrote there where the suite expects them (beside --prefix). Exits with the load
# tool's status as the host recorded it, 1 when the host left no record.
#   run_on_client.sh HOST ARGS...     (LAB_INVENTORY: the inventory file)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
source "$LAB_ROOT/scripts/lib/inventory.sh"

host=$1; shift
args=() prefix=
while (( $# )); do
    case $1 in
        # the host writes under its own directory (@REMOTE@, load.yml): only the names travel
        --prefix) prefix=$2; args+=("$1" "@REMOTE@/$(basename "$2")"); shift 2 ;;
        --h2log)  args+=("$1" "@REMOTE@/$(basename "$2")"); shift 2 ;;
        *)        args+=("$1"); shift ;;
    esac
done
[[ -n $prefix ]] || die "run_on_client.sh: no --prefix"
base=$(basename "$prefix") dir=$(dirname "$prefix")
fetch=$(mktemp -d)
trap 'rm -rf "$fetch"' EXIT
# (the arguments as a JSON list, a line each: jq would take "--x" for its own options)
for a in "${args[@]}"; do [[ $a != *$'\n'* ]] || die "run_on_client.sh: an argument holds a newline"; done
vars=$(printf '%s\n' "${args[@]}" | jq -R . | jq -s --arg t "$host" --arg b "$base" --arg f "$fetch/" \
    '{lab_target: $t, lab_base: $b, lab_fetch: $f, lab_args: .}')
inventory_playbook load.yml -e "$vars" >"$fetch/ansible.log" 2>&1 ||
    { sed 's/^/  ansible: /' "$fetch/ansible.log" | tail -n 20 >&2; }
if [[ -f $fetch/$base.tgz ]]; then tar -xzf "$fetch/$base.tgz" -C "$dir"; fi
[[ -f $prefix.host.json ]] || { echo "run_on_client.sh: client host $host left no record of the run" >&2; exit 1; }
exit "$(jq -r '.exit_code' "$prefix.host.json")"
