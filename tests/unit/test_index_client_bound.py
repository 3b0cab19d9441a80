"""The index's headlines never print a client-bound req/s as the server's figure (issue: the C
server's h2c /ping read "429,866 … +1596 % faster" with the load tool as the limit): on the
committed criterion run, whose C server is client-bound on h2c and HTTPS/2 /ping in every rep, the
headline reads "≥ … ⚑" and its Δ is read on CPU-µs per request; a point the server bounds keeps its
plain req/s and Δ; the flag is explained on the page."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from httplab.report import index as I

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "data" / "20261206T032534Z-vm"


def test_a_client_bound_headline_is_a_lower_bound_with_its_delta_on_cost():
    (h2c,) = [h for h in I.headlines(RUN, ("h2c",)) if ": C " in h]
    assert "≥ " in h2c and I.CLIENT_BOUND_FLAG in h2c, h2c
    assert "on CPU-µs per request" in h2c and "faster" not in h2c, h2c


def test_a_server_bound_headline_keeps_its_req_per_s():
    est = pd.read_parquet(RUN / "estimates.parquet")
    for head in I.headlines(RUN, ("http1", "h2c", "https", "languages")):
        suite = head.split(" ", 1)[0]
        if I.CLIENT_BOUND_FLAG not in head:
            assert "≥" not in head and "CPU-µs" not in head, head
        else:
            assert "faster" not in head and "slower" not in head, head
    assert {"client_bound_share"} <= set(est.columns)


def test_the_flag_is_explained_on_the_page(tmp_path):
    page = I.render([], None)
    assert I.CLIENT_BOUND_FLAG in page and "lower bound" in page


def test_the_audit_fails_a_bare_client_bound_req_per_s_and_passes_the_index():
    from httplab.report.audit import bare_client_bound
    (head,) = I.headlines(RUN, ("h2c",))
    assert bare_client_bound(head, RUN) == []
    # the mistake the index used to make: the tool's ceiling as the server's figure, "faster" on it
    planted = head.replace("≥ ", "").split(";")[0] + "; Δ vs Go +1596% [+1545%, +1649%] faster"
    assert bare_client_bound(planted, RUN) and "client-bound req/s printed as the server's" in bare_client_bound(planted, RUN)[0]
    flagged_faster = head.split(";")[0].replace("⚑", "⚑ +1596% faster")
    assert bare_client_bound(flagged_faster, RUN)
    # the committed index, for every current run it lists
    page = (ROOT / "reports" / "index.html").read_text(encoding="utf-8")
    for data in sorted((ROOT / "data").glob("*/estimates.parquet")):
        assert bare_client_bound(page, data.parent) == [], data.parent.name
