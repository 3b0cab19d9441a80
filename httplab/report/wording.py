"""Each suite's wording, declared as data in one place: what its tables' captions say about where a
figure comes from (wrk or h2load; the throughput or the latency run). report.engine reads it; a new
suite with the defaults needs no entry.

Per suite: `sections` maps a section-key prefix to caption arguments of tables.comparison_table
(the longest matching prefix wins, "" matches every key), `latency_note` is the last sentence of
its latency table's caption.
"""
from __future__ import annotations

from dataclasses import dataclass, field

_H2LOAD_RUNS = ("from the rep's latency run, h2load with --log-file; req/s, Transfer/s and Δ from its "
                "throughput run, without the log")


@dataclass(frozen=True)
class Wording:
    sections: dict[str, dict[str, str]] = field(default_factory=dict)
    latency_note: str = "Pipelined scenarios: one latency sample per batch."

    def section(self, key: str) -> dict[str, str]:
        """The caption arguments of one section (by the longest prefix of its key)."""
        best = max((p for p in self.sections if key.startswith(p)), key=len, default=None)
        return dict(self.sections[best]) if best is not None else {}


WORDING: dict[str, Wording] = {
    "h2c": Wording(
        sections={"": {"transfer_source": "h2load's traffic total, i.e. bodies, headers and HTTP/2 framing; "
                                          "binary units",
                       "latency_source": _H2LOAD_RUNS}},
        latency_note=("Latency = duration of each request (stream), from the latency run's h2load log; with "
                      "-m streams per connection a request's time includes waiting behind the other "
                      "streams of its connection.")),
    "https": Wording(
        sections={"h2": {"transfer_source": "h2load's traffic total over TLS, i.e. decrypted bodies, headers "
                                            "and HTTP/2 framing as h2load counts them (not TLS record "
                                            "overhead); binary units",
                         "latency_source": _H2LOAD_RUNS}},
        latency_note=("HTTPS/1.1: wrk's per-request latency (one request in flight per connection); HTTPS/2: "
                      "the duration of each stream from the latency run's h2load log, which includes waiting "
                      "behind the other streams of its connection.")),
}


def wording(suite: str) -> Wording:
    return WORDING.get(suite, Wording())
