"""The sanitizer soak, short (SOAK_SECONDS, default 20): see soak.py. The long
run is scripts/soak.sh."""
import os

from soak import soak


def test_sanitizer_soak():
    passed, report = soak(float(os.environ.get("SOAK_SECONDS", "20")))
    print(report)
    assert passed, report
