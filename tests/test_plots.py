"""flashlab.plots: each figure's drawn data against the report or DataFrame it came from."""

from __future__ import annotations

import concurrent.futures
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import flashlab

pandas = pytest.importorskip("pandas")
pytest.importorskip("matplotlib")
plots = importlib.import_module("flashlab.plots")

# 2 channels x 2 chips x 2 dies x 2 planes x 16 blocks: 8 dies, a run takes a fraction of a second.
TINY = {
    "geometry.channels": 2,
    "geometry.chips_per_channel": 2,
    "geometry.blocks_per_plane": 16,
    "ftl.over_provisioning": 0.25,
}
WORKLOAD = "randrw:read=0.5,bs=4k,qd=8,count=3000"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def tiny_run(**kwargs: Any) -> flashlab.Report:
    options: dict[str, Any] = {"workload": WORKLOAD, "precondition": 0.5, "seed": 3}
    options.update(kwargs)
    return flashlab.run("default", set=TINY, **options)


@pytest.fixture(scope="module")
def report() -> flashlab.Report:
    return tiny_run()


@pytest.fixture(scope="module")
def other() -> flashlab.Report:
    """A second run with other figures (another seed, more reads)."""
    return tiny_run(seed=9, workload="randrw:read=0.8,bs=4k,qd=4,count=2000")


def cdf_points(report: flashlab.Report, op: str) -> tuple[list[float], list[float]]:
    """The CDF from the report's raw histogram: (µs, fraction), starting at 0."""
    buckets = report["host"][op]["latency_histogram_ns"]
    total = sum(count for _, _, count in buckets)
    xs, ys, seen = [buckets[0][0] / 1000], [0.0], 0
    for _, high, count in buckets:
        seen += count
        xs.append(high / 1000)
        ys.append(seen / total)
    return xs, ys


def lines_by_label(figure: Any, axes_index: int = 0) -> dict[str, Any]:
    return {line.get_label(): line for line in figure.axes[axes_index].lines}


def test_the_latency_cdf_has_one_line_per_operation_on_the_histogram(
    report: flashlab.Report,
) -> None:
    figure = plots.latency_cdf(report)
    lines = lines_by_label(figure)
    assert sorted(lines) == ["read", "write"]  # no trims or flushes in the run
    for op, line in lines.items():
        xs, ys = cdf_points(report, op)
        assert list(line.get_xdata()) == pytest.approx(xs)
        assert list(line.get_ydata()) == pytest.approx(ys)
        assert ys[-1] == pytest.approx(1.0)
    assert figure.axes[0].get_xscale() == "log"


def test_the_latency_cdf_labels_several_reports_and_takes_the_operations_asked(
    report: flashlab.Report, other: flashlab.Report
) -> None:
    figure = plots.latency_cdf({"seed 3": report, "seed 9": other}, ops=["read", "all"])
    lines = lines_by_label(figure)
    assert sorted(lines) == ["seed 3 all", "seed 3 read", "seed 9 all", "seed 9 read"]
    xs, ys = cdf_points(other, "all")
    assert list(lines["seed 9 all"].get_xdata()) == pytest.approx(xs)
    assert list(lines["seed 9 all"].get_ydata()) == pytest.approx(ys)


@pytest.mark.parametrize(
    ("ops", "message"),
    [(["trim"], "completed no trim request"), (["reads"], "'reads' is not an operation")],
)
def test_the_latency_cdf_refuses_an_operation_it_cannot_draw(
    report: flashlab.Report, ops: list[str], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        plots.latency_cdf(report, ops=ops)


def test_percentile_bars_are_the_reports_percentiles_per_operation(
    report: flashlab.Report, other: flashlab.Report
) -> None:
    statistics = ["p50", "p99", "max"]
    figure = plots.percentile_bars({"a": report, "b": other}, statistics=statistics)
    assert [axes.get_title() for axes in figure.axes] == ["read", "write"]
    for axes in figure.axes:
        op = axes.get_title()
        assert [t.get_text() for t in axes.get_xticklabels()] == statistics
        bars = axes.patches
        assert len(bars) == 2 * len(statistics)
        for index, source in enumerate((report, other)):
            drawn = bars[index * len(statistics) : (index + 1) * len(statistics)]
            expected = [source["host"][op]["latency_ns"][s] / 1000 for s in statistics]
            assert [bar.get_height() for bar in drawn] == pytest.approx(expected)
            # Each statistic's group: report a left of report b.
            centres = [bar.get_x() + bar.get_width() / 2 for bar in drawn]
            assert [round(c) for c in centres] == [0, 1, 2]
            assert all((c < round(c)) == (index == 0) for c in centres)
    assert [t.get_text() for t in figure.axes[-1].get_legend().get_texts()] == ["a", "b"]


def test_percentile_bars_refuse_an_unknown_statistic_or_an_empty_operation(
    report: flashlab.Report,
) -> None:
    with pytest.raises(ValueError, match="'p95' is not a latency statistic"):
        plots.percentile_bars(report, statistics=["p50", "p95"])
    with pytest.raises(ValueError, match="no report completed a flush request"):
        plots.percentile_bars(report, ops=["read", "flush"])


def test_utilisation_bars_are_the_busy_fraction_of_each_die_and_channel(
    report: flashlab.Report,
) -> None:
    figure = plots.utilisation_bars(report)
    dies, channels = figure.axes
    utilisation = report["utilisation"]
    assert len(dies.patches) == 8 and len(channels.patches) == 2
    for axes, part in ((dies, "dies"), (channels, "channels")):
        assert [bar.get_height() for bar in axes.patches] == pytest.approx(
            utilisation[part]["each"]
        )
        assert [bar.get_x() + bar.get_width() / 2 for bar in axes.patches] == pytest.approx(
            range(len(utilisation[part]["each"]))
        )
        (mean_line,) = axes.lines
        assert list(mean_line.get_ydata()) == pytest.approx([utilisation[part]["mean"]] * 2)


def test_utilisation_bars_refuse_a_report_without_them(report: flashlab.Report) -> None:
    trimmed = flashlab.Report(json.loads(json.dumps(report)))
    del trimmed["utilisation"]["channels"]["each"]
    with pytest.raises(ValueError, match=r"no utilisation\.channels\.each"):
        plots.utilisation_bars(trimmed)


# A sweep-like frame: two FTLs x three over-provisioning values x two seeds, one failed point.
FRAME = pandas.DataFrame(
    {
        "ftl": ["pagemap"] * 6 + ["dftl"] * 6,
        "ftl.over_provisioning": [0.3, 0.3, 0.1, 0.1, 0.2, 0.2] * 2,
        "seed": [1, 2] * 6,
        "write_amplification": [1.5, 1.7, 4.0, 4.4, 2.0, 2.4, 1.9, None, 5.0, 5.2, 2.5, 2.9],
        "timing.die_queue_policy": ["fifo", "read-first"] * 6,
    }
)


def test_sweep_lines_average_each_group_along_the_axis() -> None:
    figure = plots.sweep_lines(FRAME, "ftl.over_provisioning", "write_amplification", "ftl")
    lines = lines_by_label(figure)
    assert list(lines) == ["pagemap", "dftl"]  # first appearance
    assert list(lines["pagemap"].get_xdata()) == [0.1, 0.2, 0.3]
    assert list(lines["pagemap"].get_ydata()) == pytest.approx([4.2, 2.2, 1.6])
    # The failed point (no figure) is left out: dftl at 0.3 is its one other seed.
    assert list(lines["dftl"].get_ydata()) == pytest.approx([5.1, 2.7, 1.9])
    bands = figure.axes[0].collections
    assert len(bands) == 2  # min-max of the two seeds
    low_high = bands[0].get_paths()[0].vertices[:, 1]
    assert min(low_high) == pytest.approx(1.5) and max(low_high) == pytest.approx(4.4)
    assert figure.axes[0].get_legend().get_title().get_text() == "ftl"
    assert list(figure.axes[0].get_xticks()) == [0.1, 0.2, 0.3]  # a tick at each grid value
    # One row per point and line: nothing to shade.
    by_seed = plots.sweep_lines(
        FRAME, "ftl.over_provisioning", "write_amplification", ["ftl", "seed"]
    )
    assert len(by_seed.axes[0].lines) == 4 and not by_seed.axes[0].collections


def test_sweep_lines_put_names_at_even_positions_and_group_by_several_columns() -> None:
    figure = plots.sweep_lines(
        FRAME, "timing.die_queue_policy", "write_amplification", ["ftl", "seed"], band=False
    )
    lines = lines_by_label(figure)
    assert list(lines) == ["pagemap, 1", "pagemap, 2", "dftl, 1", "dftl, 2"]
    axes = figure.axes[0]
    assert [t.get_text() for t in axes.get_xticklabels()] == ["fifo", "read-first"]
    # Seed 1 is always fifo here: one point, the mean of its three over-provisioning values.
    assert list(lines["pagemap, 1"].get_xdata()) == [0.0]
    assert list(lines["pagemap, 1"].get_ydata()) == pytest.approx([(1.5 + 4.0 + 2.0) / 3])
    assert list(lines["dftl, 2"].get_xdata()) == [1.0]
    assert list(lines["dftl, 2"].get_ydata()) == pytest.approx([(5.2 + 2.9) / 2])
    assert not axes.collections


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("ftl.overprovisioning", "write_amplification", "ftl"), "x: no column"),
        (("ftl.over_provisioning", "wa", None), "y: no column 'wa'"),
        (("ftl.over_provisioning", "write_amplification", "preset"), "by: no column 'preset'"),
        (("ftl.over_provisioning", "timing.die_queue_policy", None), "is not numeric"),
    ],
)
def test_sweep_lines_name_a_missing_or_unusable_column(args: tuple[Any, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message) as error:
        plots.sweep_lines(FRAME, *args)
    if "no column" in message:
        assert "the frame has: ftl, ftl.over_provisioning, seed" in str(error.value)


def test_write_amplification_against_over_provisioning_of_a_real_sweep() -> None:
    with concurrent.futures.ThreadPoolExecutor(2) as executor:
        frame = flashlab.sweep(
            {"device": "default", "workload": "randwrite:count=2e4", "precondition": 1.0, **TINY},
            {"ftl.over_provisioning": [0.3, 0.15]},
            seeds=[1, 2],
            executor=executor,
            progress=False,
        )
    figure = plots.write_amplification_vs_over_provisioning(frame)
    (line,) = figure.axes[0].lines
    assert line.get_label() == "pagemap"
    expected = frame.groupby("ftl.over_provisioning")["write_amplification"].mean()
    assert list(line.get_xdata()) == [0.15, 0.3]
    assert list(line.get_ydata()) == pytest.approx(list(expected.sort_index()))
    assert expected[0.15] > expected[0.3] > 1.0
    percent = figure.axes[0].xaxis.get_major_formatter()
    assert [percent(x, 0) for x in (0.15, 0.3, 0.125)] == ["15%", "30%", "12.5%"]
    with pytest.raises(ValueError, match="sweep a grid over 'ftl.over_provisioning'"):
        plots.write_amplification_vs_over_provisioning(frame.drop(columns="ftl.over_provisioning"))


def test_a_figure_is_saved_as_png_or_svg_by_its_extension(
    report: flashlab.Report, tmp_path: Path
) -> None:
    png, svg = tmp_path / "cdf.png", tmp_path / "cdf.SVG"
    plots.latency_cdf(report, path=png)
    plots.latency_cdf(report, path=str(svg))
    assert png.read_bytes().startswith(PNG_MAGIC) and png.stat().st_size > 10_000
    text = svg.read_text(encoding="utf-8")
    assert text.startswith("<?xml") and "<svg" in text and "latency CDF" in text
    with pytest.raises(ValueError, match=r"must end in \.png, \.svg, \.pdf"):
        plots.utilisation_bars(report, path=tmp_path / "util.jpeg")
    assert not (tmp_path / "util.jpeg").exists()


def test_the_report_methods_draw_the_same_figures(report: flashlab.Report, tmp_path: Path) -> None:
    figure = report.plot_latency_cdf(["write"], path=tmp_path / "w.png")
    (line,) = figure.axes[0].lines
    assert list(line.get_ydata()) == pytest.approx(cdf_points(report, "write")[1])
    assert (tmp_path / "w.png").read_bytes().startswith(PNG_MAGIC)
    bars = report.plot_percentiles(["read"], ["p99"]).axes[0].patches
    assert [b.get_height() for b in bars] == [report["host"]["read"]["latency_ns"]["p99"] / 1000]
    utilisation = report.plot_utilisation(path=tmp_path / "u.svg")
    assert "<svg" in (tmp_path / "u.svg").read_text(encoding="utf-8")
    heights = [b.get_height() for b in utilisation.axes[0].patches]
    assert heights == pytest.approx(report["utilisation"]["dies"]["each"])
    assert figure._repr_png_().startswith(PNG_MAGIC)  # shows itself in a notebook


def test_plots_are_headless_and_leave_no_pyplot_state(
    report: flashlab.Report, tmp_path: Path
) -> None:
    saved = tmp_path / "report.json"
    report.to_json(saved)
    script = f"""
import sys, flashlab
from flashlab import plots
report = flashlab.Report(__import__("json").load(open({str(saved)!r})))
figures = [plots.latency_cdf(report), plots.percentile_bars(report),
           plots.utilisation_bars(report, path={str(tmp_path / "u.png")!r})]
assert all(type(f.canvas).__name__ == "FigureCanvasAgg" for f in figures)
assert "matplotlib.pyplot" not in sys.modules, "pyplot was imported"
print("ok")
"""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "MPLBACKEND")}
    result = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_without_matplotlib_the_error_names_the_plot_extra(
    report: flashlab.Report, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("matplotlib", "matplotlib.figure"):
        monkeypatch.setitem(sys.modules, name, None)  # `import matplotlib` fails
    monkeypatch.delitem(sys.modules, "flashlab.plots")
    with pytest.raises(ImportError, match=r"'plot' extra: pip install 'flashlab\[plot\]'"):
        importlib.import_module("flashlab.plots")
    with pytest.raises(ImportError, match=r"flashlab\[plot\].*missing: matplotlib"):
        report.plot_latency_cdf()
