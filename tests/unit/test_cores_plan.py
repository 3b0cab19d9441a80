"""The CPU plans of the scaling suite and the seed-conditions profile (httplab.lab.cores), on
machines of 2, 8, 16, 64 and 192 CPUs given as CPU lists (as LAB_CPUS would), with and without
hyperthread siblings."""
from __future__ import annotations

import subprocess
import sys

import pytest

from httplab.lab import cores as C


def smt(n_cores: int) -> tuple[list[int], dict[int, tuple[int, ...]]]:
    """A machine of n_cores cores with two threads each, numbered as Linux does on x86 (CPU i and
    i + n_cores are siblings)."""
    cpus = list(range(2 * n_cores))
    sib = {c: (c % n_cores, c % n_cores + n_cores) for c in cpus}
    return cpus, sib


@pytest.mark.parametrize("n, server, client, steps", [
    (2, 1, 1, (1,)),
    (8, 4, 4, (1, 2, 4)),
    (16, 8, 8, (1, 2, 4, 8)),
    (64, 32, 32, (1, 2, 4, 8, 16, 32)),
    (192, 96, 96, (1, 2, 4, 8, 16, 32, 64, 96)),
])
def test_scaling_plan_splits_in_halves(n, server, client, steps):
    p = C.scaling_plan(list(range(n)))
    assert len(p.server) == server and len(p.client) == client and p.client_threads == client
    assert not set(p.server) & set(p.client) and set(p.server) | set(p.client) == set(range(n))
    assert p.ladder == steps
    assert p.server_cpus(1) == (0,) and len(p.server_cpus(steps[-1])) == steps[-1]
    if n == 2:
        assert "n = 1 only" in p.note and "at least 4 cores" in p.note
    else:
        assert "n = 1 only" not in p.note


def test_scaling_plan_keeps_siblings_together_and_whole_cores_first():
    cpus, sib = smt(8)                       # 16 CPUs, 8 cores
    p = C.scaling_plan(cpus, sib)
    cores_of = lambda cs: {c % 8 for c in cs}  # noqa: E731
    assert not cores_of(p.server) & cores_of(p.client)       # no core shared
    assert len(p.server) == 8 and p.ladder == (1, 2, 4)       # 4 server cores, their 8 threads
    assert cores_of(p.server_cpus(4)) == {0, 1, 2, 3}         # n = 4: four whole cores
    assert p.server_cpus(4) == (0, 1, 2, 3)


def test_scaling_refuses_one_core():
    with pytest.raises(C.PlanError, match="at least 2 physical cores"):
        C.scaling_plan([0])
    with pytest.raises(C.PlanError, match="server share has"):
        C.scaling_plan([0, 1]).server_cpus(2)


@pytest.mark.parametrize("n", [2, 7])
def test_seed_conditions_refuse_small_machines_naming_what_they_need(n):
    with pytest.raises(C.PlanError) as e:
        C.seed_plan(list(range(n)))
    assert f"at least {C.MIN_SEED_CPUS} CPUs" in str(e.value) and f"gives the lab {n}" in str(e.value)


@pytest.mark.parametrize("n, server", [(8, 4), (16, 12), (64, 60), (192, 188)])
def test_seed_conditions_client_four_threads_on_the_last_cpus(n, server):
    p = C.seed_plan(list(range(n)))
    assert p.client == tuple(range(n - 4, n)) and p.client_threads == 4
    assert len(p.server) == server and p.ladder == (server,)


def test_seed_conditions_never_split_a_core():
    cpus, sib = smt(6)                       # 12 CPUs: the client takes two whole cores (4 threads)
    p = C.seed_plan(cpus, sib)
    assert {c % 6 for c in p.client} == {4, 5} and len(p.server) == 8
    assert not {c % 6 for c in p.server} & {4, 5}


def test_cpu_lists_round_trip_and_bad_ones_are_named():
    assert C.parse_cpu_list("0-3,6") == [0, 1, 2, 3, 6]
    assert C.format_cpu_list([6, 0, 1, 2, 3]) == "0-3,6"
    for bad in ("", "a", "3-1", "0,0"):
        with pytest.raises(ValueError, match="not a CPU list"):
            C.parse_cpu_list(bad)


def test_the_command_line_prints_bash_and_refuses_with_the_reason():
    out = subprocess.run([sys.executable, "-m", "httplab", "cores", "scaling", "--cpus", "0-15"],
                         capture_output=True, text=True, check=True).stdout
    assert "PLAN_SERVER_CPUS=0-7\n" in out and "PLAN_LADDER='1 2 4 8'" in out and "PLAN_CLIENT_THREADS=8" in out
    r = subprocess.run([sys.executable, "-m", "httplab", "cores", "seed", "--cpus", "0-1"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "needs at least 8 CPUs" in r.stderr
