"""raw/<run>/<suite>/hosts.json (scripts/lib/hosts.sh): read into a typed record and said in one line
for the report header; a malformed file is named with its key; a suite without one ran locally."""
from __future__ import annotations

import json

import pytest

from httplab.parse.errors import RawFormatError
from httplab.lab.hosts import read_hosts, suite_hosts

NETNS = {"mode": "netns", "server_addr": "10.231.0.1", "rate": None, "netem_available": False,
         "kernel": "6.18.44",
         "hosts": [{"role": "server", "netns": "hlx-srv", "addr": "10.231.0.1", "cpus": "0"},
                   {"role": "client", "netns": "hlx-cli1", "addr": "10.231.0.11", "cpus": "1"}]}


def write(tmp_path, doc):
    (tmp_path / "http1").mkdir(exist_ok=True)
    p = tmp_path / "http1" / "hosts.json"
    p.write_text(json.dumps(doc))
    return p


def test_netns_hosts_said_in_one_line(tmp_path):
    h = suite_hosts(tmp_path, "http1") if write(tmp_path, NETNS) else None
    assert h is not None and h.mode == "netns" and [x.role for x in h.hosts] == ["server", "client"]
    assert h.words() == ("netns: server host 10.231.0.1 (CPUs 0), client host 10.231.0.11 (CPUs 1), "
                         "joined by a veth pair; link unshaped; no netem in this kernel: no added delay")
    shaped = read_hosts(write(tmp_path, NETNS | {"rate": "1gbit", "netem_available": True}))
    assert "link shaped by tbf at 1gbit; netem available (not used)" in shaped.words()


def test_local_hosts_and_a_suite_without_the_file(tmp_path):
    doc = {"mode": "local", "server_addr": "127.0.0.1", "rate": None, "netem_available": None,
           "hosts": [{"role": "server", "netns": None, "addr": "127.0.0.1", "cpus": "0"},
                     {"role": "client", "netns": None, "addr": "127.0.0.1", "cpus": "1"}]}
    h = read_hosts(write(tmp_path, doc))
    assert h.words() == "local: this machine over loopback (127.0.0.1), server CPUs 0, load tool CPUs 1"
    assert suite_hosts(tmp_path, "h2c") is None


@pytest.mark.parametrize("doc, says", [
    ({"mode": "ssh"}, "unknown host mode 'ssh'"),
    ({"mode": "netns", "server_addr": "x"}, "key 'hosts'"),
    ({"mode": "netns", "server_addr": "x", "hosts": [1]}, "key 'hosts[0]'"),
])
def test_a_malformed_file_is_named(tmp_path, doc, says):
    p = write(tmp_path, doc)
    with pytest.raises(RawFormatError) as e:
        read_hosts(p)
    assert str(p) in str(e.value) and says in str(e.value)


def test_several_client_hosts_said_in_one_line(tmp_path):
    two = NETNS | {"hosts": NETNS["hosts"] + [
        {"role": "client", "netns": "hlx-cli2", "addr": "10.231.0.12", "cpus": "1"}]}
    h = read_hosts(write(tmp_path, two))
    assert [c.addr for c in h.clients] == ["10.231.0.11", "10.231.0.12"]
    assert h.words() == ("netns: server host 10.231.0.1 (CPUs 0), 2 client hosts 10.231.0.11, 10.231.0.12 "
                         "(CPUs 1), joined by veth pairs through a bridge; links unshaped; "
                         "no netem in this kernel: no added delay")
    shaped = read_hosts(write(tmp_path, two | {"rate": "1gbit"}))
    assert "each client link shaped by tbf at 1gbit" in shaped.words()


INVENTORY = {"mode": "inventory", "server_addr": "192.168.1.10", "rate": None, "netem_available": None,
             "hosts": [{"role": "server", "netns": None, "addr": "192.168.1.10", "cpus": "0-3", "name": "srv1",
                        "cpu_model": "Xeon E-2288G", "cores": 8, "kernel": "6.1.0-13-amd64", "distro": "Debian 12"},
                       {"role": "client", "addr": "192.168.1.11", "cpus": "0-7", "name": "cli1",
                        "cpu_model": "EPYC 7302P", "cores": 16},
                       {"role": "client", "addr": "192.168.1.12", "cpus": "0-7", "name": "cli2",
                        "cpu_model": "EPYC 7302P", "cores": 16}]}


def test_inventory_hosts_with_their_facts(tmp_path):
    h = read_hosts(write(tmp_path, INVENTORY))
    assert h.mode == "inventory" and h.hosts[0].cores == 8 and h.hosts[1].netns is None
    assert h.words() == ("inventory: server host srv1 192.168.1.10 (Xeon E-2288G, 8 cores, kernel "
                         "6.1.0-13-amd64, Debian 12, CPUs 0-3), 2 client hosts cli1 192.168.1.11, "
                         "cli2 192.168.1.12 (EPYC 7302P, 16 cores, CPUs 0-7)")
    mixed = INVENTORY | {"hosts": INVENTORY["hosts"][:2] + [
        {"role": "client", "addr": "192.168.1.13", "cpus": "0-3", "cores": 4}]}
    assert read_hosts(write(tmp_path, mixed)).words().endswith(
        "2 client hosts cli1 192.168.1.11 (EPYC 7302P, 16 cores, CPUs 0-7), 192.168.1.13 (4 cores, CPUs 0-3)")


def test_a_bad_inventory_fact_is_named(tmp_path):
    bad = INVENTORY | {"hosts": [INVENTORY["hosts"][0] | {"cores": "eight"}]}
    p = write(tmp_path, bad)
    with pytest.raises(RawFormatError) as e:
        read_hosts(p)
    assert str(p) in str(e.value) and "key 'hosts[0].cores'" in str(e.value)
