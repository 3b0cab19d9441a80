"""Each suite's wording: what its tables' captions say about where a figure comes from (wrk or
h2load; the throughput or the latency run). Declared as data in the suite's own suite.toml
([wording]); report.engine reads it. A suite with the defaults declares nothing.

`sections` maps a section-key prefix to caption arguments of tables.comparison_table (the longest
matching prefix wins, "" matches every key); `latency_note` is the last sentence of its latency
table's caption.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..lab.suites import suite_of_part


@dataclass(frozen=True)
class Wording:
    sections: dict[str, dict[str, str]] = field(default_factory=dict)
    latency_note: str = "Pipelined scenarios: one latency sample per batch."

    def section(self, key: str) -> dict[str, str]:
        """The caption arguments of one section (by the longest prefix of its key)."""
        best = max((p for p in self.sections if key.startswith(p)), key=len, default=None)
        return dict(self.sections[best]) if best is not None else {}


def wording(part: str) -> Wording:
    """The wording of the suite that `part` (a suite's part, as runs' `suite` column names it)
    belongs to; the defaults for a part no suite declares."""
    s = suite_of_part(part)
    declared = s.wording if s is not None else {}
    sections = {k: {a: str(v) for a, v in args.items()} for k, args in declared.get("sections", {}).items()}
    if "latency_note" in declared:
        return Wording(sections, str(declared["latency_note"]))
    return Wording(sections)
