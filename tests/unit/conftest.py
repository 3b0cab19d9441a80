import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # make_fake_run

FIXTURES = HERE.parent / "fixtures" / "wrk"


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture
def fake_run(tmp_path):
    from make_fake_run import make_fake_run
    return make_fake_run(tmp_path / "raw")
