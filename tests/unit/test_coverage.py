"""The coverage check (docs/method.md): every interval the reports print, simulated (seeded) at
n = 3, 5, 10, 12 with equal and 3:1 spreads, normal and lognormal noise, paired and unpaired, and the
interleaved design on its runs' own noise, covers the truth 93-97 % of the time at a nominal 95 % for
n ≥ 5; Holm keeps the ranking's family-wise error
near 5 %; and the table the reports print (coverage_table.csv) is the one this code computes."""
import pandas as pd
import pytest

from httplab.stats.coverage import RESIDUALS_PATH, TRIALS, committed_table, coverage_table, measured_residuals


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return coverage_table()


def test_every_interval_covers_93_to_97_percent_from_n5(table):
    at5 = table[table["n"] >= 5]
    bad = at5[(at5["coverage"] < 0.93) | (at5["coverage"] > 0.97)]
    assert bad.empty, bad.to_string()


def test_all_designs_noises_and_spreads_are_simulated(table):
    assert set(table["interval"]) == {"center", "ratio_welch", "ratio_paired", "ranking_holm"}
    assert {"normal", "lognormal"} <= set(table["noise"]) <= {"normal", "lognormal", "measured"}
    assert set(table["n"]) == {3, 5, 10, 12}
    ratios = table[table["interval"].str.startswith("ratio")]
    assert {"equal 10%:10%", "3:1 15%:5%"} <= set(ratios["spread"])
    assert (table.loc[table["interval"] != "ranking_holm", "trials"] == TRIALS).all()


def test_n3_is_measured_and_stated(table):
    at3 = table[(table["n"] == 3) & (table["interval"] != "ranking_holm")]
    assert len(at3) and at3["coverage"].between(0.90, 0.99).all()


def test_committed_table_is_current(table):
    pd.testing.assert_frame_equal(committed_table(), table, check_dtype=False)


def test_the_interleaved_design_is_checked_on_its_own_noise(table):
    # the rows of --blocks sliced: the committed interleaved runs' residuals, resampled
    measured = table[table["noise"] == "measured"]
    assert RESIDUALS_PATH.exists() and set(measured["n"]) == {3, 5, 10, 12}
    assert (measured["interval"] == "ratio_paired").all() and (measured["design"] == "interleaved slices").all()
    z = measured_residuals()
    assert len(z) >= 200 and abs(z.mean()) < 0.05 and 0.9 < z.std() < 1.1
