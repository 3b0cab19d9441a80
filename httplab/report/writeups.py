"""The four write-up reports (notebooks/http1.ipynb, http2.ipynb, https.ipynb, languages.ipynb):
each names the suites of the seed write-up it mirrors and shows their reports, one after the
other, for one run: the reference run (raw/REFERENCE) when no run is given.

A part is a suite's own report (its suites/<name>/report.ipynb, or notebooks/suite.ipynb for a
suite without one), executed in the write-up's kernel (inline_notebook), or one protocol of a suite
(protocol_part: the https suite's HTTPS/2 half in the HTTP/2 write-up). A part the run does not hold
is one line saying so. Everything shown is read from data/<run_id>/ (the suites' report code reads
nothing else); the raw run is only named, except raw/REFERENCE, the one line that says which run
is the reference when none is given."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..lab.paths import repo_root, resolve
from ..lab.suites import suite as lab_suite
from ..parse.errors import NoRunError
from ..stats.write import RUN_JSON, NoDataError


@dataclass(frozen=True)
class Part:
    suite: str                  # a folder of suites/
    protocol: str | None = None  # only the suite's runs of this protocol (runs.protocol), else its whole report
    title: str = ""             # the part's title when it is one protocol of a suite
    label: str = ""             # its short name, the first word of its own sections' titles
    baseline: str | None = None  # that part's Δ baseline; None: its suite's (suite.toml `baseline`)

    @property
    def key(self) -> str:
        """'h2c', or 'https:h2' for one protocol of a suite: what a notebook's show_part names."""
        return f"{self.suite}:{self.protocol}" if self.protocol else self.suite


@dataclass(frozen=True)
class Writeup:
    name: str    # the notebook's name under notebooks/
    title: str
    seeds: str   # the seed write-ups it mirrors (docs/glossary.md#seeds)
    parts: tuple[Part, ...]


WRITEUPS: dict[str, Writeup] = {w.name: w for w in (
    Writeup("http1", "HTTP/1.1", "seed 000", (Part("http1"),)),
    Writeup("http2", "HTTP/2: cleartext (h2c), over TLS (HTTPS/2), and HTTP/3 beside them", "seed 001 and seed 002's HTTPS/2 tables",
            (Part("h2c"), Part("https", "h2", "HTTPS/2 (the https suite's HTTP/2 half)", "HTTPS/2"), Part("h3"))),
    Writeup("https", "HTTPS/1.1 and HTTPS/2", "seed 002", (Part("https"),)),
    Writeup("languages", "Languages: stdlib and production servers", "seed 003", (Part("languages"),)),
)}


@dataclass(frozen=True)
class WriteupRun:
    writeup: Writeup
    run_id: str
    run_dir: Path     # raw/<run_id>: names the run (the suites' reports never open it)
    data_dir: Path    # data/<run_id>/: all the parts read
    parts_run: tuple[str, ...]   # the suite parts the run holds (run.json's meta)
    confidence: float
    reference: bool   # the run is raw/REFERENCE's (no run_dir was given)


def reference_run_id(raw_root: Path) -> str:
    """The run id that raw_root/REFERENCE names (its first line); NoRunError when there is none."""
    from .index import reference_run
    text = reference_run(raw_root)
    if not text:
        raise NoRunError(f"{raw_root / 'REFERENCE'} names no run: pass run_dir (-p run_dir raw/<run_id>)")
    return text.splitlines()[0].strip()


def open_writeup(name: str, run_dir: str | Path | None = None, out_dir: str | Path | None = None,
                 confidence: float = 0.95, raw_root: str | Path = "raw", data_root: str | Path = "data",
                 start: str | Path | None = None) -> WriteupRun:
    """Write-up `name` on one run: run_dir (raw/<run_id>, or a run id), else the reference run;
    its data out_dir, else data_root/<run_id>. NoDataError, with the build command, when that data
    was never built."""
    writeup = WRITEUPS[name]
    root = repo_root(start)
    raw = resolve(raw_root, root)
    run_id = Path(run_dir).name if run_dir else reference_run_id(raw)
    # a bare run id names raw_root/<run_id>; a path is taken as given (never opened)
    rdir = resolve(run_dir, root) if run_dir and len(Path(run_dir).parts) > 1 else raw / run_id
    ddir = resolve(out_dir, root) if out_dir else resolve(data_root, root) / run_id
    doc_path = ddir / RUN_JSON
    if not doc_path.is_file():
        raise NoDataError(f"{ddir} holds no built data ({RUN_JSON} is missing): build it with "
                          f"`python -m httplab build raw/{run_id} {ddir}`")
    meta = json.loads(doc_path.read_text(encoding="utf-8")).get("meta") or {}
    parts_run = tuple(str(s) for s in meta.get("suites") or ())
    return WriteupRun(writeup, run_id, rdir, ddir, parts_run, confidence, reference=not run_dir)


def part(w: WriteupRun, key: str) -> Part:
    """The write-up's part named `key` (Part.key); KeyError naming the parts it has."""
    for p in w.writeup.parts:
        if p.key == key:
            return p
    raise KeyError(f"the {w.writeup.name} write-up has no part {key!r}: {[p.key for p in w.writeup.parts]}")


def holds(w: WriteupRun, suite: str) -> bool:
    """Whether the run holds any part of the suite."""
    return any(p in w.parts_run for p in lab_suite(suite).parts)


def intro_markdown(w: WriteupRun) -> str:
    """The write-up's title, its run and the parts it shows (those the run lacks said so)."""
    which = "the reference run (`raw/REFERENCE`)" if w.reference else "run"
    parts = w.writeup.parts
    # one part: the suite's report heads itself; several: the write-up's title above them
    lines = [f"# {w.writeup.title}", ""] if len(parts) > 1 else []
    lines += [f"The report of the write-up this lab mirrors ({w.writeup.seeds}), for {which} "
              f"`{w.run_id}`, read from `{_shown(w.data_dir)}/`. "
              + ("Its parts, in this order:" if len(parts) > 1 else "Its part:"), ""]
    for p in parts:
        title = p.title or lab_suite(p.suite).title
        state = "" if holds(w, p.suite) else " — not in this run"
        lines.append(f"- {title} (suite `{p.suite}`){state}")
    return "\n".join(lines) + "\n"


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(repo_root()))
    except (ValueError, NoRunError):
        return str(path)


def show_intro(w: WriteupRun) -> None:
    from .engine import show_markdown
    show_markdown(intro_markdown(w))


def show_part(w: WriteupRun, key: str) -> None:
    """One part of the write-up for its run: the suite's report (or one protocol of it), or one
    line saying the run does not hold it."""
    from .engine import show_markdown
    p = part(w, key)
    if not holds(w, p.suite):
        show_markdown(f"> Run `{w.run_id}` holds no `{p.suite}` suite: no {p.title or lab_suite(p.suite).title} part.\n")
        return
    if p.protocol:
        show_protocol_part(w, p)
    else:
        show_suite_report(w, p.suite)


def suite_notebook(suite: str, root: Path | None = None) -> tuple[Path, dict[str, str]]:
    """The suite's report notebook and the parameters it needs besides the run: its own
    report.ipynb, else the generic notebooks/suite.ipynb with `suite`."""
    nb = lab_suite(suite).notebook
    if nb is not None:
        return nb, {}
    return (root or repo_root()) / "notebooks" / "suite.ipynb", {"suite": suite}


def show_suite_report(w: WriteupRun, suite: str) -> None:
    """The suite's own report notebook, executed in this kernel on the write-up's run."""
    from .inline_notebook import run_notebook
    nb, extra = suite_notebook(suite)
    run_notebook(nb, {**extra, "run_dir": str(w.run_dir), "out_dir": str(w.data_dir), "confidence": w.confidence})


def show_protocol_part(w: WriteupRun, p: Part) -> None:
    """One protocol of a suite (protocol_part): its header, then its tables; for the https suite's
    HTTPS/2 half also what TLS costs HTTP/2 (the https report's own table)."""
    from . import engine as R
    from . import protocol_part as PP
    assert p.protocol is not None
    ctx = PP.open_protocol_report(p.suite, p.protocol, w.run_dir, w.data_dir, w.confidence, p.baseline)
    R.header(ctx, f"{p.title}: " + R.compared_title(ctx),
             f"The `{p.protocol}` runs of the `{p.suite}` suite alone, from the same run; the suite's "
             f"own report (`suites/{p.suite}/report.ipynb`) shows the rest of it.")
    if ctx.runs.empty:
        R.show_markdown(f"> Run `{w.run_id}` holds no `{p.protocol}` runs of the `{p.suite}` suite.\n")
        return
    R.contents(ctx)  # the run and its machine: the header's line (the suites' reports beside it show them in full)
    PP.show_sections(ctx)
    if p.suite == "https" and p.protocol == "h2":
        HS = R.suite_code("https")
        R.section(ctx, "What TLS costs HTTP/2", "Each server's cleartext h2c `get_ping_c100` against its "
                  "HTTPS/2 `h2_get_ping_c100`, from the same run (the table says so when the run has no h2c suite).",
                  HS.tls_cost(ctx, "h2"))
        R.heading(ctx, "HTTPS/2 negotiated TLS parameters")
        ctx.show_table(HS.tls_params_table(ctx.runs))
    PP.show_latency_and_cost(ctx, p.label)
