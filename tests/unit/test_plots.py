"""The one plotting look (report.plots): one pixel width for every figure, fonts ≥ 10 px, log y
over a > 10× span, a server's colour the same in every plot, client-bound bars hatched, the nines
axis of the latency curves, and the alt text that engine.show_figure puts on each image."""
from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.colors import to_hex

from httplab.report import engine as R
from httplab.lab.suites import suite_module
L = suite_module("languages")
from httplab.report import plots as P
from httplab.lab import servers as S
from httplab.tidy.rawrun import load_run

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def http_run(tmp_path_factory):
    from make_fake_run import make_fake_run
    return load_run(make_fake_run(tmp_path_factory.mktemp("raw")))


@pytest.fixture(scope="module")
def lang_run(tmp_path_factory):
    from make_fake_languages import make_fake_languages_run
    return load_run(make_fake_languages_run(tmp_path_factory.mktemp("rawlang")))


def _figures(http_run, lang_run):
    runs, latency = http_run.runs, http_run.latency
    out = {
        "throughput": P.throughput_bars(runs, {"route": "/ping"}, "connections"),
        "cpu": P.cpu_bars(runs, {"route": "/ping"}, "connections"),
        "latency": P.latency_curves(latency, runs),
        "lang stdlib": L.endpoint_bars(lang_run.runs, "stdlib"),
        "lang cpu": L.endpoint_bars(lang_run.runs, None, "cpu_us_per_req"),
        "lang latency": L.latency_curves(lang_run.latency, lang_run.runs, "production"),
    }
    assert all(f is not None for f in out.values()), [k for k, f in out.items() if f is None]
    return out


@pytest.fixture(scope="module")
def figures(http_run, lang_run):
    figs = _figures(http_run, lang_run)
    yield figs
    for f in figs.values():
        plt.close(f)


def test_every_figure_has_the_same_pixel_width(figures):
    widths = {k: P.png_bytes(f)[1][0] for k, f in figures.items()}
    assert set(widths.values()) == {P.WIDTH_PX}, widths
    # shown 1:1 in a 1280-px browser window (the page's margins leave more than 1100 px)
    assert P.WIDTH_PX <= 1100


def _texts(fig):
    fig.canvas.draw()
    for t in fig.findobj(matplotlib.text.Text):
        if t.get_text().strip() and t.get_visible():
            yield t


def test_fonts_are_at_least_10_px(figures):
    for k, fig in figures.items():
        for t in _texts(fig):
            px = t.get_fontsize() * P.DPI / 72.0
            assert px >= 10 * 1.3, (k, t.get_text(), t.get_fontsize())  # em ≥ 13 px: digits ≥ 10 px
            # and the rendered height of the text's box (one line) is ≥ 10 px
            h = t.get_window_extent().height / max(1, t.get_text().count("\n") + 1)
            assert h >= 10, (k, t.get_text(), h)


def test_log_axis_only_over_a_wide_span():
    assert P.wants_log([1_000, 150_000]) and not P.wants_log([20_000, 150_000])
    assert not P.wants_log([5.0]) and not P.wants_log([0, 10, 50])
    fig, ax = plt.subplots()
    assert P.set_value_axis(ax, [100, 5_000]) and ax.get_yscale() == "log"
    fig2, ax2 = plt.subplots()
    assert not P.set_value_axis(ax2, [100_000, 150_000]) and ax2.get_yscale() == "linear"
    plt.close(fig)
    plt.close(fig2)


def test_count_and_latency_ticks():
    assert P.count_tick(150_000) == "150,000" and P.count_tick(2_500) == "2,500" and P.count_tick(12.5) == "12.5"
    assert P.latency_tick(50) == "50 µs" and P.latency_tick(1_000) == "1 ms" and P.latency_tick(2_500) == "2.5 ms"
    assert P.latency_tick(1e6) == "1 s"


def test_a_plot_over_a_wide_span_is_log(lang_run):
    # the languages endpoints' CPU-µs per request and req/s span well over 10× across servers?
    runs = lang_run.runs.copy()
    ok = runs["status"] == "ok"
    slow = ok & (runs["server"] == sorted(set(runs["server"]))[0])
    runs.loc[slow, "req_per_s"] = runs.loc[slow, "req_per_s"] / 100.0
    fig = L.endpoint_bars(runs, None)
    assert fig.axes[0].get_yscale() == "log"
    plt.close(fig)


def test_nines_axis():
    assert np.allclose(P.nines([90, 99, 99.9, 99.99]), [1, 2, 3, 4])
    fig, ax = plt.subplots()
    P.set_nines_axis(ax)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["50", "90", "99", "99.9", "99.99"]
    plt.close(fig)


def test_latency_curves_on_the_nines_axis(figures):
    ax = figures["latency"].axes[0]
    assert ax.get_yscale() == "log" and ax.get_xscale() == "linear"
    assert ax.get_xlim() == (0.0, 4.0)
    assert "99.9" in [t.get_text() for t in ax.get_xticklabels()]


def _server_colours(fig) -> dict[str, str]:
    out = {}
    for ax in fig.axes:
        for h, label in zip(*ax.get_legend_handles_labels()):
            artist = h.patches[0] if hasattr(h, "patches") else h
            c = artist.get_color() if hasattr(artist, "get_xdata") else artist.get_facecolor()
            out[label.split(" (n=")[0]] = to_hex(c)
    return out


def test_a_server_has_one_colour_in_every_plot(figures, http_run, lang_run):
    by_name = {}
    for run, keys in ((http_run, ("throughput", "cpu", "latency")),
                      (lang_run, ("lang stdlib", "lang cpu", "lang latency"))):
        expected = {S.display_name(s): S.colour(s) for s in set(run.runs["server"])}
        expected |= {L.name(s): S.colour(s) for s in set(run.runs["server"])}
        for k in keys:
            colours = _server_colours(figures[k])
            assert colours and all(c == expected[n] for n, c in colours.items()), (k, colours)
            for n, c in colours.items():
                by_name.setdefault((id(run), n), []).append(c)
    # servers drawn in two or more different plots, in one colour
    assert any(len(cs) >= 2 for cs in by_name.values())
    assert all(len(set(cs)) == 1 for cs in by_name.values())


def test_client_bound_bars_are_hatched_and_explained(http_run):
    runs = http_run.runs.copy()
    runs["client_bound"] = True
    runs["noisy"] = False
    runs.loc[runs.index[0], "noisy"] = True
    fig = P.throughput_bars(runs, None, "connections")
    ax = fig.axes[0]
    assert any(p.get_hatch() for p in ax.patches)
    legend = ax.get_legend() or fig.legends[0]
    labels = [t.get_text() for t in legend.get_texts()]
    assert any("client-bound" in t for t in labels) and any("noisy" in t for t in labels)
    assert "client-bound" in P.description(fig)
    plt.close(fig)


def test_show_figure_output_carries_alt_text(figures):
    for k, fig in figures.items():
        data, md = R.figure_output(fig, k)
        alt = md["image/png"]["alt"]
        assert alt.startswith(k) and len(alt) > len(k) + 20, alt
        assert md["image/png"]["width"] == P.WIDTH_PX
        assert data["image/png"] and alt in data["text/plain"]


def test_show_figure_displays_png_with_alt(monkeypatch, http_run):
    import IPython.display as D
    shown = []
    monkeypatch.setattr(D, "display", lambda *a, **kw: shown.append((a, kw)))
    R.show_figure(P.throughput_bars(http_run.runs, {"route": "/ping"}, "connections"), "GET /ping throughput")
    (args, kw), = shown
    assert kw["raw"] and "image/png" in args[0]
    assert kw["metadata"]["image/png"]["alt"].startswith("GET /ping throughput. Bar chart")
    R.show_figure(None, "nothing")
    assert len(shown) == 2 and "No data for nothing" in shown[1][0][0].data


def test_nbconvert_reads_the_alt_from_the_image_metadata(http_run):
    """The metadata key is the one nbconvert reads (its classic HTML template: get_metadata('alt',
    'image/png')); the default lab and markdown templates of nbconvert 7 ignore it."""
    import nbformat
    from nbconvert import HTMLExporter
    fig = P.cpu_bars(http_run.runs, {"route": "/ping"}, "connections")
    data, md = R.figure_output(fig, "CPU-µs per request")
    plt.close(fig)
    out = nbformat.v4.new_output("display_data", data=data, metadata=md)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("show()", outputs=[out])])
    html, _ = HTMLExporter(template_name="classic").from_notebook_node(nb)
    assert 'alt="CPU-µs per request. Bar chart' in html
