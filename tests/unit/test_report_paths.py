"""The committed reports show repository-relative paths only: nothing of the machine that made
them (its checkout, home, temporary or cache folders)."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ABSOLUTE = re.compile(r"(?<![\w.:/])/(?:work|tmp|root|home|Users|var/folders)/[\w.~-]+")


def test_no_absolute_path_in_any_committed_report():
    found = []
    for f in sorted((ROOT / "reports").rglob("*")):
        if f.suffix in (".md", ".html"):
            for m in ABSOLUTE.finditer(f.read_text(encoding="utf-8", errors="replace")):
                found.append(f"{f.relative_to(ROOT)}: {m.group(0)}")
    assert not found, "absolute paths in reports:\n" + "\n".join(found[:20])
