"""The package names no server. Display names, short names, languages, tiers, display order
and colours come from the servers' manifests (servers/**/lab.toml, read by lab.servers), so a new
lab.toml looks right in every report without an edit to httplab/. Tests may name servers."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import pytest
from matplotlib.colors import to_hex

from httplab.lab.manifest import TIERS, load_all
from httplab.lab import servers as S
from httplab.tidy.rawrun import build_frames

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "httplab"
NAMES = {m.name for m in load_all(ROOT / "servers")}
COLOURS = {m.name: m.colour for m in load_all(ROOT / "servers")}
# Server ids that are also ordinary words ("go", "noise floor"): only searched as whole literals.
WORDS = {"go", "floor"}


def _sources() -> list[Path]:
    return sorted(PKG.rglob("*.py"))


def _literals(path: Path) -> list[tuple[int, str]]:
    """Every string constant of a module, docstrings and f-string pieces included."""
    return [(n.lineno, n.value) for n in ast.walk(ast.parse(path.read_text()))
            if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def test_no_string_literal_names_a_server():
    bad = []
    for path in _sources():
        for line, text in _literals(path):
            # a tier's name is not a server's, although the floor server is of tier floor
            if (text in NAMES and text not in TIERS) or "lang_" in text:
                bad.append(f"{path.relative_to(ROOT)}:{line}: {text[:60]!r}")
    assert not bad, "server ids in the package (read them from the manifests):\n" + "\n".join(bad)


def test_no_server_id_in_code_or_comments():
    ids = sorted(NAMES - WORDS)
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, ids)) + r")\b|\blang_[a-z_]+")
    bad = []
    for path in _sources():
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line):
                bad.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()[:80]}")
    assert not bad, "server ids in the package's code or comments:\n" + "\n".join(bad)


# ---------------------------------------------------------------- lookups from the manifests
def test_lookups_read_the_real_manifests():
    assert S.display_name("evloop") == "C (evloop)" and S.short_name("evloop") == "C"
    assert S.display_name("evloop~aa") == "C (evloop), A/A copy" and S.short_name("evloop~aa") == "C A/A"
    assert S.tier("nginx") == "reference" and S.is_reference("nginx") and S.is_reference("floor")
    assert not S.is_reference("go") and not S.is_reference("nginx~aa")
    assert S.language("lang_cpp_beast") == "C++" and S.tier("lang_cpp_beast") == "production"
    assert S.contestants(["go", "nginx", "evloop~aa", "evloop"]) == ["evloop"]
    assert S.sort_servers({"zzz_old", "nginx", "evloop~aa", "go", "evloop", "aaa_old"}) == [
        "evloop", "evloop~aa", "go", "nginx", "aaa_old", "zzz_old"]
    # unknown ids (an old run's server): shown as given, after the known ones, a stable neutral colour
    assert S.display_name("retired") == "retired" and S.tier("retired") is None
    assert S.colour("retired") == S.colour("retired") != S.colour("retired2")
    assert re.fullmatch(r"#[0-9a-f]{6}", S.colour("retired"))


def test_every_server_has_its_manifest_colour_and_aa_copies_are_lighter():
    for name, colour in COLOURS.items():
        assert S.colour(name) == colour
        aa = S.colour(name + S.AA_SUFFIX)
        assert aa != colour and aa not in COLOURS.values()
        assert sum(int(aa[i:i + 2], 16) for i in (1, 3, 5)) > sum(int(colour[i:i + 2], 16) for i in (1, 3, 5))


@pytest.fixture
def temp_servers(tmp_path, monkeypatch):
    """A servers folder with two manifests: the C server's, renamed and restyled, and Go's."""
    base = tmp_path / "servers"
    (base / "mine").mkdir(parents=True)
    text = (ROOT / "servers" / "evloop" / "lab.toml").read_text()
    for key, value in (("name", "mine"), ("display", "My server (test)"), ("short", "Mine"),
                       ("colour", "#123456"), ("tier", "stdlib"), ("language", "Zig")):
        text, n = re.subn(rf'^{key} = ".*"$', f'{key} = "{value}"', text, count=1, flags=re.M)
        assert n == 1, key
    text = re.sub(r"^order = \d+$", "order = 500", text, count=1, flags=re.M)
    (base / "mine" / "lab.toml").write_text(text)
    (base / "go").mkdir()
    (base / "go" / "lab.toml").write_text((ROOT / "servers" / "go" / "lab.toml").read_text())
    monkeypatch.setenv("LAB_SERVERS_DIR", str(base))
    S.clear_cache()
    yield base
    monkeypatch.delenv("LAB_SERVERS_DIR")
    S.clear_cache()


def test_a_new_manifest_is_seen_everywhere(temp_servers):
    assert set(S.manifests()) == {"mine", "go"}
    assert S.display_name("mine") == "My server (test)" and S.short_name("mine") == "Mine"
    assert S.colour("mine") == "#123456" and S.tier("mine") == "stdlib" and S.language("mine") == "Zig"
    assert S.contestants(["mine", "go"]) == []
    # order 500 puts it after Go (20); the C server has no manifest here and sorts last, under its id
    assert S.sort_servers(["evloop", "mine", "go"]) == ["go", "mine", "evloop"]
    assert S.display_name("evloop") == "evloop" and S.colour("evloop") != COLOURS["evloop"]
    from httplab.report.plots import palette
    assert palette(["mine", "go"]) == {"mine": "#123456", "go": COLOURS["go"]}


def test_editing_the_manifest_takes_effect_after_clear_cache(temp_servers):
    assert S.colour("mine") == "#123456"
    path = temp_servers / "mine" / "lab.toml"
    path.write_text(path.read_text().replace("#123456", "#654321").replace("tier = \"stdlib\"", "tier = \"contestant\""))
    S.clear_cache()
    assert S.colour("mine") == "#654321" and S.contestants(["go", "mine"]) == ["mine"]


# ---------------------------------------------------------------- every plot in the manifest colour
def _legend_colours(fig) -> dict[str, str]:
    out = {}
    for ax in fig.axes:
        handles, labels = ax.get_legend_handles_labels()
        for h, label in zip(handles, labels):
            artist = h.patches[0] if hasattr(h, "patches") else h
            c = artist.get_facecolor() if hasattr(artist, "get_facecolor") and not hasattr(artist, "get_xdata") \
                else artist.get_color()
            out[label.split(" (n=")[0]] = to_hex(c)
    return out


def _by_display(servers) -> dict[str, str]:
    return {S.display_name(s): S.colour(s) for s in servers}


def test_plots_use_the_manifest_colours(tmp_path):
    from make_fake_run import make_fake_run
    from httplab.report import plots
    runs, latency = build_frames(make_fake_run(tmp_path / "raw"))[:2]
    present = set(runs["server"])
    assert plots.palette(sorted(present)) == {s: S.colour(s) for s in present}
    figs = [plots.throughput_bars(runs, {"route": "/ping"}, "connections"),
            plots.cpu_bars(runs, {"route": "/ping"}, "connections"),
            plots.latency_curves(latency, runs)]
    for fig in figs:
        assert fig is not None
        seen = _legend_colours(fig)
        assert seen and seen == {k: v for k, v in _by_display(present).items() if k in seen}
        plt.close(fig)


def test_language_plots_use_the_manifest_colours(tmp_path):
    from make_fake_languages import make_fake_languages_run
    from httplab.lab.suites import suite_module
    L = suite_module("languages")
    from httplab.tidy.rawrun import load_run
    runs = load_run(make_fake_languages_run(tmp_path / "raw")).runs
    for tier_name in ("stdlib", "production", None):
        fig = L.endpoint_bars(runs, tier_name)
        seen = _legend_colours(fig)
        assert seen == {k: v for k, v in _by_display(set(runs["server"])).items() if k in seen} and seen
        plt.close(fig)


def test_a_server_pinned_to_n_cores_is_named_and_coloured_after_its_own():
    """The scaling suite's <server>@<n>: its manifest, name with n, its server's colour, after it."""
    assert S.base_of("evloop@4") == "evloop" and S.cores_of("evloop@4") == 4
    assert S.cores_of("evloop") is None and S.base_of("evloop~aa") == "evloop"
    assert S.manifest("go@2").name == "go"
    assert S.display_name("evloop@1") == S.display_name("evloop") + ", 1 core"
    assert S.display_name("go@8") == S.display_name("go") + ", 8 cores"
    assert S.colour("go@8") == S.colour("go")
    assert S.sort_servers(["go@2", "evloop@2", "go@1", "evloop@1"]) == ["evloop@1", "evloop@2", "go@1", "go@2"]
