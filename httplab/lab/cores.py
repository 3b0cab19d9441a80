"""Which CPUs a run gives the servers and which the load tools: the plans of the scaling suite and of
the seed-conditions profile, from a CPU list (the machine's, or an override such as LAB_CPUS="0-191",
so that the plans of machines we do not have can be tested here).

The rules, and why:
- The server and the load tools never share a CPU, nor a physical core: two hyperthreads of one core
  share its execution units, so a load tool on the sibling of a server thread would slow the server
  by an amount that depends on the load. CPUs are therefore split by physical core (the topology's
  thread_siblings_list when it is known; one core per CPU when not).
- Scaling: the server share is the first half of the physical cores (rounded down, at least one),
  the load tools get the rest, one thread per CPU of theirs. A scaling curve is only as good as the
  client that drives it, so the client gets as many cores as the largest server; a point where the
  client is the limit is flagged by the run's usual client-bound check, and the report says at which
  n each protocol ran out of client.
- Within the server share the CPUs are ordered one thread per physical core first, then the
  siblings: a server given n <= cores CPUs gets n whole cores, not n hyperthreads of n/2 cores.
- The cores ladder is 1, 2, 4, ... up to the server share, plus the share itself when it is not a
  power of two.
- Seed conditions: the load tool with four threads on the last four CPUs, the server on all the
  others, as the write-ups the lab reproduces ran (a 12-core laptop: the server on eight). Fewer than
  MIN_SEED_SERVER_CPUS server CPUs would not be those conditions, so such a machine is refused, naming
  how many CPUs it needs.

Only the standard library: the shell asks this before a run (python -m httplab cores ...).
"""
from __future__ import annotations

import argparse
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from .hoststate import format_cpu_list   # '0-3,6': the one writer of CPU lists

SEED_CLIENT_THREADS = 4
MIN_SEED_SERVER_CPUS = 4
MIN_SEED_CPUS = SEED_CLIENT_THREADS + MIN_SEED_SERVER_CPUS


class PlanError(ValueError):
    """A plan this machine cannot carry out: the message says why and what it needs."""


def parse_cpu_list(text: str) -> list[int]:
    """'0-3,6' -> [0, 1, 2, 3, 6] (taskset's list syntax); ValueError names what is wrong."""
    out: list[int] = []
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()):
            raise ValueError(f"not a CPU list: {text!r} (e.g. 0-3,6)")
        a, b = int(lo), int(hi or lo)
        if b < a:
            raise ValueError(f"not a CPU list: {text!r} ({part} runs backwards)")
        out.extend(range(a, b + 1))
    if not out:
        raise ValueError(f"not a CPU list: {text!r} (no CPU in it)")
    if len(set(out)) != len(out):
        raise ValueError(f"not a CPU list: {text!r} (a CPU named twice)")
    return out


def physical_cores(cpus: list[int], siblings: dict[int, tuple[int, ...]] | None = None) -> list[tuple[int, ...]]:
    """The CPUs grouped by physical core, in the order of their first CPU; siblings maps a CPU to
    the CPUs of its core (the kernel's thread_siblings_list); without it each CPU is a core."""
    groups: list[tuple[int, ...]] = []
    seen: set[int] = set()
    for c in cpus:
        if c in seen:
            continue
        mates = tuple(x for x in (siblings or {}).get(c, (c,)) if x in cpus) or (c,)
        if c not in mates:
            mates = (c, *mates)
        groups.append(mates)
        seen.update(mates)
    return groups


def machine_siblings(cpus: list[int]) -> dict[int, tuple[int, ...]]:
    """This machine's thread siblings of each CPU (empty where sysfs does not say)."""
    out: dict[int, tuple[int, ...]] = {}
    for c in cpus:
        f = Path(f"/sys/devices/system/cpu/cpu{c}/topology/thread_siblings_list")
        try:
            out[c] = tuple(parse_cpu_list(f.read_text().strip()))
        except (OSError, ValueError):
            pass
    return out


def ladder(n_max: int) -> tuple[int, ...]:
    """1, 2, 4, ... <= n_max, and n_max itself."""
    steps = []
    n = 1
    while n <= n_max:
        steps.append(n)
        n *= 2
    if steps[-1] != n_max:
        steps.append(n_max)
    return tuple(steps)


@dataclass(frozen=True)
class Plan:
    kind: str                      # "scaling" or "seed"
    cpus: tuple[int, ...]          # every CPU the run may use
    server: tuple[int, ...]        # the server share, one thread per physical core first
    client: tuple[int, ...]
    client_threads: int
    ladder: tuple[int, ...]        # the cores a server is measured at (scaling); (len(server),) for seed
    note: str                      # what the split means on this machine, for the log and the report

    def server_cpus(self, n: int) -> tuple[int, ...]:
        """The CPUs a server given n cores is pinned to: the first n of the share."""
        if not 1 <= n <= len(self.server):
            raise PlanError(f"{n} cores asked; the server share has {len(self.server)} ({format_cpu_list(self.server)})")
        return self.server[:n]

    def shell(self) -> str:
        """Bash assignments for scripts/lib (eval'd)."""
        values = {
            "PLAN_KIND": self.kind,
            "PLAN_SERVER_CPUS": format_cpu_list(sorted(self.server)),
            "PLAN_SERVER_ORDER": " ".join(map(str, self.server)),
            "PLAN_CLIENT_CPUS": format_cpu_list(sorted(self.client)),
            "PLAN_CLIENT_THREADS": str(self.client_threads),
            "PLAN_LADDER": " ".join(map(str, self.ladder)),
            "PLAN_NOTE": self.note,
        }
        return "\n".join(f"{k}={shlex.quote(v)}" for k, v in values.items()) + "\n"


def _server_order(groups: list[tuple[int, ...]]) -> tuple[int, ...]:
    """One thread of each core first, then the second threads, and so on."""
    depth = max(len(g) for g in groups)
    return tuple(g[i] for i in range(depth) for g in groups if i < len(g))


def scaling_plan(cpus: list[int], siblings: dict[int, tuple[int, ...]] | None = None) -> Plan:
    groups = physical_cores(cpus, siblings)
    if len(groups) < 2:
        raise PlanError(f"the scaling suite needs at least 2 physical cores (one for the server, one for "
                        f"the load tools); CPUs {format_cpu_list(cpus)} are {len(groups)}")
    half = len(groups) // 2
    server = _server_order(groups[:half])
    client = tuple(c for g in groups[half:] for c in g)
    steps = ladder(half)
    note = (f"{len(cpus)} CPUs ({len(groups)} physical cores): servers on up to {half} core(s) "
            f"({format_cpu_list(sorted(server))}), the load tools on {len(client)} CPU(s) "
            f"({format_cpu_list(sorted(client))}) with {len(client)} thread(s); cores measured: "
            + ", ".join(map(str, steps)))
    if half == 1:
        note += ("; n > 1 needs a machine of at least 4 cores (the load tools take the other half), "
                 "so this machine measures n = 1 only")
    return Plan("scaling", tuple(cpus), server, client, len(client), steps, note)


def seed_plan(cpus: list[int], siblings: dict[int, tuple[int, ...]] | None = None) -> Plan:
    groups = physical_cores(cpus, siblings)
    if len(cpus) < MIN_SEED_CPUS:
        raise PlanError(f"the seed-conditions profile needs at least {MIN_SEED_CPUS} CPUs "
                        f"({SEED_CLIENT_THREADS} for the load tool's {SEED_CLIENT_THREADS} threads, at least "
                        f"{MIN_SEED_SERVER_CPUS} for the server, as the write-ups ran: 4 and 8); this machine "
                        f"gives the lab {len(cpus)} ({format_cpu_list(cpus)})")
    # the load tool's four threads on whole cores from the end, never beside a server thread
    client: list[int] = []
    taken = 0
    for g in reversed(groups):
        if len(client) >= SEED_CLIENT_THREADS:
            break
        client[:0] = list(g)
        taken += 1
    server_groups = groups[:len(groups) - taken]
    server = _server_order(server_groups) if server_groups else ()
    if len(server) < MIN_SEED_SERVER_CPUS:
        raise PlanError(f"the seed-conditions profile needs at least {MIN_SEED_SERVER_CPUS} server CPUs on "
                        f"cores apart from the load tool's; CPUs {format_cpu_list(cpus)} leave {len(server)}")
    note = (f"seed conditions: the server on {len(server)} CPUs ({format_cpu_list(sorted(server))}), "
            f"the load tool with {SEED_CLIENT_THREADS} threads on {format_cpu_list(sorted(client))}")
    return Plan("seed", tuple(cpus), server, tuple(client), SEED_CLIENT_THREADS, (len(server),), note)


def lab_cpus() -> list[int]:
    """The CPUs the lab may use: LAB_CPUS (a CPU list, e.g. to plan for another machine), else this
    process's affinity mask."""
    text = os.environ.get("LAB_CPUS")
    return parse_cpu_list(text) if text else sorted(os.sched_getaffinity(0))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m httplab cores",
                                 description="CPU plans: bash assignments PLAN_* for the scripts")
    ap.add_argument("kind", choices=("scaling", "seed"))
    ap.add_argument("--cpus", help="a CPU list to plan for (default: LAB_CPUS, else this machine's)")
    ap.add_argument("--no-topology", action="store_true",
                    help="treat every CPU as a core of its own (the default with --cpus or LAB_CPUS)")
    args = ap.parse_args(argv)
    try:
        cpus = parse_cpu_list(args.cpus) if args.cpus else lab_cpus()
        overridden = bool(args.cpus or os.environ.get("LAB_CPUS"))
        siblings = None if (args.no_topology or overridden) else machine_siblings(cpus)
        plan = (scaling_plan if args.kind == "scaling" else seed_plan)(cpus, siblings)
    except (ValueError, PlanError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    sys.stdout.write(plan.shell())
    return 0
