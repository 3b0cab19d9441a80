# The versus suite's shared settings, sourced by each of its parts (versus_*.sh). The C server
# against the two production C servers, h2o and nginx, on the points its targets are set on (GET
# /ping and GET /echo?size=1024 at 100 connections; HTTP/2 with 10 streams per connection): one
# part per server mode, because a server starts in one mode a part
# (versus_h2c: cleartext HTTP/2 by prior knowledge; versus_tls: HTTPS/1.1 and HTTPS/2 on one TLS
# port); `run_all.sh --suites versus` runs both. The points are those of the h2c and https suites,
# measured the same way (wrk, h2load, warm-up, windows, the randomised order of each rep), so the
# versus report (report.ipynb) reads the ratios evloop/h2o and evloop/nginx from the
# run's comparisons frame like every other Δ. The targets on these points are declared
# beside this file, in targets.toml, which the report reads; a target's point
# must be one of the suite's HEADLINE_SCENARIOS (tests/unit/test_versus_report.py checks it).

SUITE_DEFAULT_SERVERS="evloop h2o nginx"
