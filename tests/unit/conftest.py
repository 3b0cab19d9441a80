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


@pytest.fixture(autouse=True)
def _servers_named_plainly():
    """A test that opens a many-core run's report names its servers with that run's cores
    (lab.servers.name_servers_for_run); the next test starts from the manifests' plain names."""
    yield
    from httplab.lab.servers import name_servers_for_run
    name_servers_for_run(None)
