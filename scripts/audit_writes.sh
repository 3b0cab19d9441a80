#!/usr/bin/env bash
# audit_writes.sh [NAME...]: for each server (default: every one in the registry),
# start it with serve.sh under strace, send 10 keep-alive GETs on one connection,
# then 10 keep-alive POSTs on another (curl --http1.1), and print the write-class
# syscalls (write, writev, sendto, sendmsg, sendfile) on the accepted sockets per
# response, whether TCP_NODELAY was set on them, and writes to other fds (logs).
# Routes: GET / and POST /something (JSON) where the server serves the shoot-out's
# routes, else GET /ping and POST /echo (POST "-" where it has no POST route).
# README's "Server audit" table comes from this. Needs strace and curl; loopback only.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
command -v strace >/dev/null || { echo "audit_writes.sh: strace is not installed" >&2; exit 1; }
mapfile -t names < <(if (( $# )); then printf '%s\n' "$@"; else "$here/serve.sh" --list | awk '{print $1}'; fi)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
port=${AUDIT_PORT:-19400}
body='{"name":"benchmark","value":42,"tags":["a","b"]}'

count() {  # count FILE: "<conn writes> <nodelay conns>/<conns> <other writes>"
    python3 - "$1" <<'PY'
import re, sys
pending, calls = {}, []
for line in open(sys.argv[1]):
    m = re.match(r"^(\d+) +(.*)$", line.rstrip("\n"))
    if not m:
        continue
    pid, rest = m.groups()
    if rest.endswith("<unfinished ...>"):
        pending[pid] = rest[:-len("<unfinished ...>")]
        continue
    r = re.match(r"<\.\.\. (\w+) resumed>(.*)$", rest)
    if r:
        rest = pending.pop(pid, r.group(1) + "(") + r.group(2)
    calls.append(rest)
conns = {m.group(1) for c in calls if (m := re.match(r"accept4?\(.*\)\s+=\s+(\d+)$", c))}
nodelay = {m.group(1) for c in calls
           if (m := re.match(r"setsockopt\((\d+), SOL_TCP, TCP_NODELAY, \[1\]", c))}
conn_w = other_w = 0
for c in calls:
    m = re.match(r"(?:write|writev|sendto|sendmsg|sendmmsg|sendfile)\((\d+),(.*)", c)
    if not m:
        continue
    if m.group(1) in conns:
        conn_w += 1
    elif not re.search(r'"\\1\\0\\0\\0\\0\\0\\0\\0", 8\)\s+=\s+8$', c):  # not an eventfd wake-up
        other_w += 1
print(conn_w, f"{len(conns & nodelay)}/{len(conns)}", other_w)
PY
}

printf '%-20s %-10s %-10s %-9s %s\n' server GET POST NODELAY 'other writes per response'
for name in "${names[@]}"; do
    caps=$("$here/serve.sh" --list | awk -v n="$name" '$1 == n {$1 = ""; print}')
    [[ -n $caps ]] || { echo "audit_writes.sh: unknown server '$name'" >&2; exit 2; }
    get=/ping post=""
    [[ " $caps " == *" h1:echo_post "* ]] && post=/echo
    [[ " $caps " == *" h1:root "* ]] && { get=/; post=/something; }
    port=$((port + 1))
    log=$tmp/$name.strace
    strace -f -qq -o "$log" -e trace=write,writev,sendto,sendmsg,sendmmsg,sendfile,setsockopt,accept,accept4 \
        setsid "$here/serve.sh" "$name" "$port" >"$tmp/$name.log" 2>&1 &
    spid=$!
    for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
    sleep 0.5
    n0=$(wc -l <"$log")
    args=(); for _ in $(seq 10); do args+=(-o /dev/null "http://127.0.0.1:$port$get"); done
    curl -s --http1.1 "${args[@]}"
    sleep 0.3; n1=$(wc -l <"$log")
    if [[ -n $post ]]; then
        args=(); for i in $(seq 10); do
            args+=(--http1.1 -o /dev/null -H 'Content-Type: application/json' --data-binary "$body"
                   "http://127.0.0.1:$port$post"); (( i < 10 )) && args+=(--next)
        done
        curl -s "${args[@]}"
    fi
    sleep 0.3; n2=$(wc -l <"$log")
    # the server runs in its own session (setsid): stop its whole process group
    pgid=$(ps -o pgid= -p "$(pgrep -P "$spid" | head -1)" 2>/dev/null | tr -d ' ' || true)
    [[ -n $pgid ]] && kill -TERM -- "-$pgid" 2>/dev/null || true
    wait "$spid" 2>/dev/null || true
    sed -n "$((n0 + 1)),${n1}p" "$log" >"$tmp/get"
    sed -n "$((n1 + 1)),${n2}p" "$log" >"$tmp/post"
    read -r gw gnd go < <(count "$tmp/get")
    read -r pw _ po < <(count "$tmp/post")
    printf '%-20s %-10s %-10s %-9s %s\n' "$name" "$(awk -v w="$gw" 'BEGIN{printf "%.1f", w/10}')" \
        "$( [[ -n $post ]] && awk -v w="$pw" 'BEGIN{printf "%.1f", w/10}' || echo -)" "$gnd" \
        "$(awk -v a="$go" -v b="${po:-0}" -v p="$post" 'BEGIN{printf "%.1f", (p == "" ? a/10 : (a+b)/20)}')"
done
