"""The published schema of the lab's frames, in one table the code and the docs share: the code
types the frames from it and validates them when it writes or reads them; docs/data.md is made
from it (tests/unit/test_schema_docs.py keeps the two in step).

A column is (name, type, unit, meaning). Types: str; str? (text or None); int; int? (nullable
Int64); float (NaN where unknown); bool; bool? (nullable boolean). An optional column is present
only when a run of the frame has it (tool- or protocol-specific), after the others.
The statistics frames (estimates, comparisons) are declared in httplab.stats.schema with the same
Column and checked by the same functions.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    unit: str
    meaning: str
    optional: bool = False


def table(text: str) -> tuple[Column, ...]:
    """Columns from lines `name | type[, optional] | unit | meaning` (blank lines skipped): the
    schema reads as the table it is, in the code as in docs/data.md."""
    cols = []
    for line in text.strip().splitlines():
        name, kind, unit, meaning = (part.strip() for part in line.split("|", 3))
        type_, _, flag = kind.partition(",")
        cols.append(Column(name, type_.strip(), unit, meaning, flag.strip() == "optional"))
    return tuple(cols)


RUNS: tuple[Column, ...] = table("""
run_id             | str             |             | the run: raw/<run_id>/
suite              | str             |             | http1, h2c, https, languages, latency_h1, latency_h2c, latency_https, versus_h2c or versus_tls
protocol           | str             |             | h1 or h2
tls                | bool            |             | the point ran over TLS
server             | str             |             | server id (servers/<id>); '~aa' marks the A/A copy of a server
route              | str             |             | request path
method             | str             |             | GET or POST
size_bytes         | int             | B           | response (GET) or request body (POST) size of the scenario
connections        | int             |             | concurrent connections of the load tool
streams            | int             |             | HTTP/2 streams per connection (1 for HTTP/1.1)
client_threads     | int             |             | load tool threads
duration_s         | float           | s           | the measured window's nominal length
rep                | int             |             | repetition, 1-based; every server starts fresh in each rep
status             | str             |             | ok; failed (any error, non-2xx, timeout, dead server); or saturated (an open-model point that achieved less than its target rate by more than httplab.tidy.bounds.SATURATION_MARGIN). Only ok runs enter a statistic
requests           | int?            | requests    | completed requests in the window
req_per_s          | float           | 1/s         | completed requests per second, as the tool timed the window
bytes_per_s        | float           | B/s         | bytes the client read per second
lat_mean_us        | float           | µs          | mean latency
lat_p50_us         | float           | µs          | median latency, from the run's full histogram
lat_p90_us         | float           | µs          | 90th percentile latency
lat_p99_us         | float           | µs          | 99th percentile latency
lat_p999_us        | float           | µs          | 99.9th percentile latency
lat_max_us         | float           | µs          | largest latency
errors             | int?            | requests    | socket errors, timeouts and non-2xx/3xx responses
server_cpu_s       | float           | s           | utime + stime of the server's process tree over the window
cpu_pct            | float           | % of a core | server_cpu_s / window_s
cpu_us_per_req     | float           | µs          | server CPU per completed request
rss_peak_kb        | float           | KiB         | peak RSS of the window itself (VmHWM reset before it); NaN in runs that recorded only the peak since start-up
raw_path           | str             |             | the point's raw files: <run_id>/<suite>/<server>/<scenario>/r<rep>
position           | int?            |             | 1-based slot of the server in its rep's randomised order
client_cpu_s       | float           | s           | the load tool's CPU time over the window
client_busy        | float           | fraction    | busy share of the load tool's cores (/proc/stat)
server_busy        | float           | fraction    | busy share of the server's cores (/proc/stat)
client_bound       | bool?           |             | the tool's cores were saturated and the server's were not (httplab.tidy.bounds); <NA> where the cores were not recorded
steal_pct          | float           | % of a core | the worst pinned core's CPU steal
foreign_cpu_pct    | float           | % of a core | CPU of other processes on the pinned cores
noisy              | bool?           |             | steal or other processes above the thresholds of httplab.tidy.bounds
rss_start_kb       | float           | KiB         | the server tree's RSS right after start-up
scenario           | str             |             | scenario id (route, method, size, connections, streams, pipelining)
pipeline           | int             |             | requests in flight per connection (wrk pipelining; 1 = none)
fail_reason        | str             |             | why the run failed ('' when ok)
hist_kind          | str             |             | exact (the whole histogram), quantiles (a dense grid), percentiles (oha's nine percentiles and the maximum, weighted by the share each stands for) or none
capacity_rps       | float           | 1/s         | requests per server CPU-second (1e6 / cpu_us_per_req): a throughput that does not depend on the client
rss_warm_kb        | float           | KiB         | the server tree's RSS after the warm-up
rss_peak_method    | str             |             | clear_refs, sampled (VmRSS every 20 ms), cumulative (old runs) or none
noisy_reason       | str             |             | why the run is noisy ('' when not)
aa_of              | str?            |             | for an A/A copy, the server it copies
start_utc          | str?            |             | when the measured run started (ISO 8601, UTC)
window_s           | float           | s           | length of the window cpu_pct and the busy shares are over
window_end         | str             |             | load_end (wrk's end-of-load snapshot), tool_exit_corrected (older wrk windows less wrk's post-load tail), tool_exit, or sliced (the seconds the tool ran in its slices, --blocks sliced)
connect_s          | float, optional | s           | the seconds the tool spent connecting (TCP, TLS handshakes) before its clock started, left out of the window and the counts (the lab's wrk and h2load, --lab-connect-wait); NaN where the clock started with the tool
req_per_s_with_log | float, optional | 1/s         | h2load points: req/s of the rep's latency run (the one writing --log-file)
target_rps         | float, optional | 1/s         | open-model points (latency suites): the rate the tool was asked to send at; NaN for closed-loop points
load_fraction      | float, optional | fraction    | open-model points set as a share of the server's capacity: that share; NaN otherwise
capacity_ref_rps   | float, optional | 1/s         | the server's closed-loop req/s in this run that load_fraction is of
aborted_at_deadline | float, optional | requests   | oha points: requests still in flight when the window ended (not answered, not errors while ≤ connections × streams)
tls_version        | str?, optional  |             | TLS points: negotiated protocol version
tls_cipher         | str?, optional  |             | TLS points: negotiated cipher suite
alpn               | str?, optional  |             | TLS points: negotiated ALPN protocol
alpn_source        | str?, optional  |             | TLS points: s_client or h2load (where ALPN was read)
load_model         | str?, optional  |             | latency suites: closed (as fast as the connections allow), open (a fixed send schedule, latency from the intended send time) or open_uncorrected (the same schedule, timed from the actual send)
client_hosts       | int, optional   |             | client hosts that loaded the point at once, each with its share of the connections (--clients; per host figures in the client_hosts frame); present when a point of the frame was loaded through per-host files (several client hosts, or the client machine of an inventory), 1 in the other rows
client_start_skew_ms | float, optional | ms        | several client hosts: time between the first and the last host's tool start (the point fails above httplab.tidy.bounds.start_skew_limit_s); 0 for one host
""")

LATENCY: tuple[Column, ...] = table("""
run_id     | str   |          | as in runs
suite      | str   |          | as in runs
server     | str   |          | as in runs
scenario   | str   |          | as in runs
rep        | int   |          | as in runs; (run_id, suite, server, scenario, rep) is a runs row
latency_us | float | µs       | a latency value of the run's histogram
count      | int   | requests | requests with that latency
""")

# One row per (run, client host) of the points that several client hosts loaded at once, or an
# inventory's one client machine (docs/data.md):
# each host's own share, beside the merged runs row (httplab.parse.merge, httplab.tidy.multihost).
CLIENT_HOSTS: tuple[Column, ...] = table("""
run_id          | str   |             | as in runs
suite           | str   |             | as in runs
server          | str   |             | as in runs
scenario        | str   |             | as in runs
rep             | int   |             | as in runs; (run_id, suite, server, scenario, rep) is a runs row
host            | int   |             | client host number, 1-based (raw files r<rep>.h<host>.*)
addr            | str?  |             | the host's address (None when its host.json is missing)
requests        | int?  | requests    | requests the host completed (the runs row's requests is their sum)
req_per_s       | float | 1/s         | the host's requests per second of its own tool's window
errors          | int?  | requests    | the host's erroneous requests, as the runs column
lat_p50_us      | float | µs          | median latency of the host's own histogram
lat_p99_us      | float | µs          | 99th percentile latency of the host's own histogram
client_cpu_s    | float | s           | the host's load tool CPU time (GNU time)
client_busy     | float | fraction    | busy share of the host's load CPUs over its run (its /proc/stat)
client_bound    | bool? |             | the host's CPUs were saturated and the server's were not (httplab.tidy.bounds.client_bound); the runs row is client-bound when any host is
start_offset_ms | float | ms          | the host's tool start after the first host's
exit_code       | int?  |             | the host's load tool exit status (None when its host.json is missing)
""")

# The idle-connection memory measurement (scripts/idle_memory.sh, httplab.tidy.idle_memory): one row
# per point, data/<run_id>/idle_memory.parquet and .csv.
IDLE_MEMORY: tuple[Column, ...] = table("""
run_id            | str   |             | the run: raw/<run_id>/
server            | str   |             | server id (servers/<id>)
mode              | str   |             | h1 (HTTP/1.1 keep-alive) or h2c (cleartext HTTP/2 by prior knowledge)
conns             | int   | connections | idle connections the point opened (N)
conns_asked       | int   | connections | N as asked for; conns is smaller where the open-file limit could not hold N (idle_memory.sh says so)
rep               | int   |             | repetition, 1-based; the server starts fresh for every point
status            | str   |             | ok, or failed (a connection got no answer or was closed before the memory was read, or a reading never settled); only ok points enter a statistic
answered          | int   | connections | connections whose one request got its whole 200 answer
alive_after       | int   | connections | of them, still open when the memory was read with them idle
rss_before_kb     | float | KiB         | VmRSS summed over the server's processes, stable, after a warm-up whose connections were closed
rss_after_kb      | float | KiB         | the same, stable, with the N connections open and idle
kib_per_conn      | float | KiB         | (rss_after_kb − rss_before_kb) / conns: the memory of one idle keep-alive connection
anon_kib_per_conn | float | KiB         | the same for RssAnon alone (heap and buffers, no file pages)
pss_before_kb     | float | KiB         | Pss (smaps_rollup) summed over the tree, before
pss_after_kb      | float | KiB         | Pss summed over the tree, with the connections idle
n_procs           | int   |             | processes in the server's tree
open_s            | float | s           | seconds the client took to open the N connections and read their answers
held_s            | float | s           | seconds from the first connection to the reading with them idle
fail_reason       | str   |             | why the point failed ('' when ok)
raw_path          | str   |             | the point's raw record: <run_id>/idle_memory/<server>.<mode>/c<N>/r<rep>.json
""")

# The machine's canary (scripts/lib/canary.sh, httplab.tidy.canary): one row per suite part and
# moment (start, mid, end), data/<run_id>/canary.parquet; runs made before the canary have none.
CANARY: tuple[Column, ...] = table("""
run_id            | str   |             | the run: raw/<run_id>/
suite             | str   |             | the part the canary ran in (as in runs)
when              | str   |             | start, mid (after the middle rep) or end of the part
utc               | str   |             | when the canary finished (ISO 8601)
seconds           | float | s           | the floor's run length
probe_seconds     | float | s           | the CPU loop's and the ping-pong's length: seconds, but 0.25 in the quick profile
server_cpu        | str   |             | the CPU the CPU loop, the ping-pong's echo and the floor responder ran on
cpu_mops_per_s    | float | 1/µs        | the fixed integer loop's speed, millions of operations per second (NaN when it did not run)
pingpong_rt_per_s | float | 1/s         | one-byte loopback TCP round trips per second, echo on the server CPU, sender on the first client CPU (NaN when it did not run)
floor_req_per_s   | float | 1/s         | the floor responder's req/s under wrk -c100 on the client CPUs (NaN when it did not run or failed)
floor_errors      | int?  | requests    | wrk's socket errors and non-2xx answers in the floor's run (a run with any is failed: floor_req_per_s NaN)
problems          | str   |             | why a part did not run or failed ('' when all three ran)
raw_path          | str   |             | the canary's raw folder: <run_id>/<suite>/canary.<when>
""")

FRAMES: dict[str, tuple[Column, ...]] = {"runs": RUNS, "latency": LATENCY, "idle_memory": IDLE_MEMORY}
# Frames a run writes only when it has rows for them: a run whose points all had one client host
# writes no client_hosts file, so its data/ folder is what it was before several hosts existed.
OPTIONAL_FRAMES: dict[str, tuple[Column, ...]] = {"client_hosts": CLIENT_HOSTS, "canary": CANARY}

DTYPES = {"str": object, "str?": object, "int": "int64", "int?": "Int64", "float": "float64",
          "bool": bool, "bool?": "boolean"}


def _is_text(s: pd.Series, nullable: bool) -> bool:
    return bool(s.map(lambda v: isinstance(v, str) or (nullable and v is None)).all())


_CHECKS = {
    "str": lambda s: _is_text(s, False),
    "str?": lambda s: _is_text(s, True),
    "int": lambda s: pd.api.types.is_integer_dtype(s) and not isinstance(s.dtype, pd.Int64Dtype),
    "int?": lambda s: isinstance(s.dtype, pd.Int64Dtype),
    "float": lambda s: pd.api.types.is_float_dtype(s),
    "bool": lambda s: pd.api.types.is_bool_dtype(s) and not isinstance(s.dtype, pd.BooleanDtype),
    "bool?": lambda s: isinstance(s.dtype, pd.BooleanDtype),
}


class SchemaError(ValueError):
    """A frame whose columns or types are not its schema's; the message names the frame and file."""


def columns(cols: tuple[Column, ...], optional: bool = False) -> list[str]:
    """The names of the required columns (and with optional=True, of the optional ones too)."""
    return [c.name for c in cols if optional or not c.optional]


def check(df: pd.DataFrame, name: str, cols: tuple[Column, ...], where: str = "") -> pd.DataFrame:
    """df unchanged when it has the schema's required columns in order, then only optional ones
    (in the schema's order), each of its declared type; SchemaError otherwise."""
    at = f" ({where})" if where else ""
    required = columns(cols)
    optional = [c.name for c in cols if c.optional]
    got = list(df.columns)
    if got[:len(required)] != required:
        raise SchemaError(f"{name}{at}: columns {got} do not start with the schema's {required}")
    extra = got[len(required):]
    if extra != [c for c in optional if c in extra]:
        raise SchemaError(f"{name}{at}: columns {extra} after the schema's are not its optional "
                          f"columns {optional} in order")
    for c in cols:
        if c.name in df and len(df) and not _CHECKS[c.type](df[c.name]):
            raise SchemaError(f"{name}{at}: column {c.name!r} is not of type {c.type} (dtype {df[c.name].dtype})")
    return df


def frame_schema(frame: str) -> tuple[Column, ...]:
    """The columns of a tidy frame (FRAMES or OPTIONAL_FRAMES); KeyError for another name."""
    return FRAMES[frame] if frame in FRAMES else OPTIONAL_FRAMES[frame]


def validate(df: pd.DataFrame, frame: str, where: str = "") -> pd.DataFrame:
    """check() against a tidy frame's schema (runs, latency, client_hosts)."""
    return check(df, frame, frame_schema(frame), where)


def empty_frame(cols: tuple[Column, ...]) -> pd.DataFrame:
    """A frame with the required columns, typed, and no rows."""
    return pd.DataFrame({c.name: pd.Series(dtype=DTYPES[c.type]) for c in cols if not c.optional})


def markdown(cols: tuple[Column, ...]) -> str:
    """The schema as a Markdown table (docs/data.md)."""
    lines = ["| column | type | unit | meaning |", "|---|---|---|---|"]
    lines += [f"| `{c.name}` | {c.type} | {c.unit} | {c.meaning}{' (optional)' if c.optional else ''} |"
              for c in cols]
    return "\n".join(lines)
