"""The run-quality layer (httplab.report.quality): the A/A noise floor, its sentence beside Δ tables,
client-bound Δ cells, the flagged-points table and the position effect."""
import numpy as np
import pandas as pd
import pytest

from httplab.report import quality as Q
from httplab.stats import RatioCI
from httplab.report.tables import CLIENT_BOUND_MARK, delta_cell


def frame(rows):
    df = pd.DataFrame(rows)
    for col, default in (("run_id", "test"), ("suite", "http1"), ("status", "ok"), ("aa_of", None), ("client_bound", False), ("noisy", False),
                         ("client_busy", 0.5), ("server_busy", 0.9), ("steal_pct", 0.0),
                         ("foreign_cpu_pct", 0.0), ("position", 1)):
        if col not in df:
            df[col] = default
    df["client_bound"] = df["client_bound"].astype("boolean")
    df["noisy"] = df["noisy"].astype("boolean")
    return df


def aa_runs(spread=0.01, shift=0.0, seed=1):
    rng = np.random.default_rng(seed)
    rows = []
    for rep in range(1, 6):
        for server, aa in (("evloop", None), ("evloop~aa", "evloop"), ("go", None)):
            base = 100_000 * (1 + shift if server == "evloop~aa" else 1) * (0.6 if server == "go" else 1)
            rps = base * (1 + rng.normal(0, spread))
            rows.append({"server": server, "aa_of": aa, "scenario": "get_ping_c100", "rep": rep,
                         "req_per_s": rps, "cpu_us_per_req": 1e6 / rps, "position": rep})
    return frame(rows)


def test_noise_floor_from_the_aa_copy():
    nf = Q.noise_floor(aa_runs())
    assert nf.present and nf.original == "evloop"
    assert set(nf.deltas) == {("get_ping_c100", "req_per_s"), ("get_ping_c100", "cpu_us_per_req")}
    r = nf.deltas[("get_ping_c100", "req_per_s")]
    assert r.has_interval and r.low < 0 < r.high            # two identical servers: no difference
    assert nf.floor["req_per_s"] == pytest.approx(max(abs(r.low), abs(r.high)))
    assert 0 < nf.pct() < 10
    text = Q.floor_sentence(nf)
    assert text.startswith("**Noise floor of this run**") and "req/s" in text
    table = Q.noise_floor_table(nf)
    assert list(table["Scenario"]) == ["get_ping_c100"] and table.iloc[0]["n (copy / original)"] == "5 / 5"


def test_no_aa_copy_says_so():
    runs = aa_runs()
    nf = Q.noise_floor(runs[runs["aa_of"].isna()])
    assert not nf.present and "No A/A copy" in Q.floor_sentence(nf)
    few = aa_runs()
    few = few[~((few["server"] == "evloop~aa") & (few["rep"] > 3))]
    assert "fewer than 5" in Q.floor_sentence(Q.noise_floor(few))


def test_below_floor():
    nf = Q.NoiseFloor("evloop", {("s", "req_per_s"): RatioCI(0.0, -0.05, 0.05, 5, 5, 0.95)},
                      {"req_per_s": 0.05, "cpu_us_per_req": None})
    assert Q.below_floor(RatioCI(0.02, -0.01, 0.04, 5, 5, 0.95), nf, "req_per_s")
    assert not Q.below_floor(RatioCI(0.10, 0.06, 0.14, 5, 5, 0.95), nf, "req_per_s")
    assert not Q.below_floor(RatioCI(0.02, -0.01, 0.04, 5, 5, 0.95), nf, "cpu_us_per_req")


def test_both_client_bound_is_no_req_finding():
    runs = aa_runs()
    a = runs[runs["server"] == "evloop"].assign(client_bound=True, capacity_rps=200_000.0)
    b = runs[runs["server"] == "go"].assign(client_bound=True, capacity_rps=100_000.0)
    a["capacity_rps"] *= np.linspace(0.99, 1.01, 5)
    b["capacity_rps"] *= np.linspace(1.01, 0.99, 5)
    cell = delta_cell(a, b, "req_per_s")
    assert cell.startswith(f"{CLIENT_BOUND_MARK} both client-bound; capacity Δ +100%"), cell
    # one side client-bound (A, the higher): the req/s Δ is a bound, never "faster", with capacity beside it
    one = delta_cell(a, b.assign(client_bound=False), "req_per_s")
    assert "client-bound: the gap is at least (" in one and "capacity Δ +100%" in one, one
    assert "faster" not in one and "slower" not in one, one
    # neither side client-bound: the req/s Δ with its word
    assert "client-bound" not in delta_cell(a.assign(client_bound=False), b.assign(client_bound=False), "req_per_s")
    # other metrics are never replaced
    assert "client-bound" not in delta_cell(a, b, "cpu_us_per_req")


def test_point_flags_table_lists_flagged_points():
    runs = aa_runs()
    runs.loc[(runs["server"] == "go"), "client_bound"] = True
    runs.loc[(runs["server"] == "evloop") & (runs["rep"] == 2), ["noisy", "foreign_cpu_pct"]] = [True, 12.0]
    t = Q.point_flags_table(runs)
    assert set(t["Server"]) == {"Go net/http", "C (evloop)"}
    go = t[t["Server"] == "Go net/http"].iloc[0]
    assert go["client-bound runs"] == 5 and go["noisy runs"] == 0
    assert t[t["Server"] == "C (evloop)"].iloc[0]["max other CPU"] == "12.0%"
    assert "5 were client-bound and 1 noisy" in t.attrs["caption"]


def test_position_effect_shows_a_slow_first_slot():
    rows = []
    for rep in range(1, 11):
        for i, server in enumerate(["a", "b", "c"]):
            pos = (i + rep) % 3 + 1
            rows.append({"server": server, "scenario": "s", "rep": rep, "position": pos,
                         "req_per_s": 100.0 * (0.9 if pos == 1 else 1.0) * (1 + 0.001 * rep),
                         "cpu_us_per_req": 1.0})
    t = Q.position_effect_table(frame(rows))
    assert list(t["Position"]) == [1, 2, 3]
    first = t.iloc[0, 2]
    assert first.startswith("−") and "±" in first
