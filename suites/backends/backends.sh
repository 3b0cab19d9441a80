# shellcheck shell=bash
# backends: epoll against io_uring. The C server on its
# two event loops (evloop: epoll, evloop_uring: --loop uring, the same binary), the floor responder
# on each syscall model (floor, floor_uring: accept, read, a fixed reply, no parsing), nginx and
# h2o, side by side in every rep (each server started fresh, in a random order), with wrk over
# HTTP/1.1 GET /ping at 50, 100, 200 and 500 connections and pipelined 16 deep, so the report
# (report.ipynb) gives each ratio with its interval and how the gain moves with the
# connection count and with pipelining. The targets are declared beside this file
# (targets.toml). The points are the http1 suite's, measured the same way.
# Declarations only: scripts/bench.sh backends runs them (--help for its flags).

SUITE=backends PROTOCOL=h1 TLS=false SCHEME=http SERVER_MODE=h1
SUITE_DEFAULT_SERVERS="evloop evloop_uring floor floor_uring nginx h2o"
# id                     kind      method route size connections depth lua
SCENARIOS=(
    "get_ping_c50          ping      GET  /ping 0     50  1  report.lua"
    "get_ping_c100         ping      GET  /ping 0     100 1  report.lua"
    "get_ping_c200         ping      GET  /ping 0     200 1  report.lua"
    "get_ping_c500         ping      GET  /ping 0     500 1  report.lua"
    "get_ping_pipe16_c100  pipeline  GET  /ping 0     100 16 pipeline.lua"
)
# every point: the A/A copy of the C server (on epoll) gives the run's noise floor on each
HEADLINE_SCENARIOS=get_ping_c50,get_ping_c100,get_ping_c200,get_ping_c500,get_ping_pipe16_c100
QUICK_SCENARIOS=get_ping_c100
