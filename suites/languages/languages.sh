# shellcheck shell=bash
# languages: seed 003's five-language shoot-out with wrk at 100
# connections, stdlib and production tiers, plus our C event loop; and GET /
# with "Connection: close" on every request (connection set-up cost).
# Declarations only: scripts/bench.sh languages runs them (--help for its flags).

SUITE=languages PROTOCOL=h1 TLS=false SCHEME=http SERVER_MODE=h1
# Its Node and Python servers are warmed for at least a second a point whatever the profile or
# --warmup says: their manifests' min_warmup_s (their runtimes compile or specialise as they serve;
# without a warm-up Node's points read 13-38 % slower, docs/method.md, "Sizing the reps").
# id                   kind        method route                size connections depth lua
SCENARIOS=(
    "get_root_c100        root        GET  /                   0 100 1 report.lua"
    "get_query_c100       query       GET  /something?foo=bar  0 100 1 report.lua"
    "get_json_c100        json        GET  /something?json=true 0 100 1 report.lua"
    "post_json_c100       post_json   POST /something          0 100 1 post_json.lua"
    "get_root_close_c100  root_close  GET  /                   0 100 1 close.lua"
)

# The seed's first table: the A/A copy of the contestant runs these (the run's noise floor)
HEADLINE_SCENARIOS=get_root_c100

# --quick runs only these (the pipeline check, not the comparison)
QUICK_SCENARIOS=get_root_c100
