"""Plots of reports and sweeps as matplotlib figures, safe on a machine without a display.

Every function builds a :class:`matplotlib.figure.Figure` itself (never ``pyplot``: no GUI
backend, no global list of open figures, nothing left over between calls), draws on it with the
Agg renderer, returns it, and saves it to ``path`` when given (the format from the extension:
``.png``, ``.svg`` or ``.pdf``). A returned figure shows itself in a notebook. Latencies are
drawn in microseconds; busy fractions and over-provisioning as percentages.

matplotlib and pandas are the optional ``plot`` extra (``pip install 'flashlab[plot]'``):
importing this module without them raises an :class:`ImportError` naming the extra.
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping, Sequence
from typing import Union

from .report import HOST_OPS, LATENCY_STATISTICS, Report, _host_op

PLOT_EXTRA = "pip install 'flashlab[plot]'"

try:
    import matplotlib  # noqa: F401
    import pandas
    from matplotlib.axes import Axes
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, MaxNLocator, PercentFormatter
except ImportError as e:  # pragma: no cover - exercised by a test that hides matplotlib
    raise ImportError(
        f"flashlab.plots needs matplotlib and pandas, flashlab's optional 'plot' extra: "
        f"{PLOT_EXTRA} (missing: {e.name})"
    ) from e

__all__ = [
    "PlotFigure",
    "latency_cdf",
    "percentile_bars",
    "sweep_lines",
    "utilisation_bars",
    "write_amplification_vs_over_provisioning",
]

#: One report, or several by label (the legend's names), in the order to draw them.
Reports = Union[Report, Mapping[str, Report]]
#: Where to save a figure: a path ending in ``.png``, ``.svg`` or ``.pdf``.
PathLike = Union[str, "os.PathLike[str]"]

_SAVE_FORMATS = ("png", "svg", "pdf")
_NS_PER_US = 1000.0
#: A numeric x axis with at most this many values gets a tick at each.
_MAX_GRID_TICKS = 12
_STATISTIC_NAMES = tuple(key for key, _ in LATENCY_STATISTICS)


class PlotFigure(Figure):
    """A :class:`~matplotlib.figure.Figure` drawn by Agg that displays itself as a PNG in a
    notebook (``_repr_png_``), with no ``pyplot`` involved."""

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        self.savefig(buffer, format="png")
        return buffer.getvalue()


def latency_cdf(
    reports: Reports,
    ops: Sequence[str] | None = None,
    *,
    path: PathLike | None = None,
    title: str | None = None,
) -> PlotFigure:
    """The latency CDF of each operation: one line per report and operation, latency (µs,
    log scale) against the fraction of requests completed within it.

    The line joins the report's histogram (``Report.latency_histogram``) at each bucket's upper
    bound (the CDF there, exact), from 0 at the first non-empty bucket's lower bound; between
    bounds it interpolates linearly.

    Args:
        reports: A :class:`Report`, or several by label.
        ops: Operations (``read``, ``write``, ``trim``, ``flush``, ``all``); ``None``: each
            report's ``read``, ``write``, ``trim`` and ``flush`` that completed any request.
        path: Save the figure there too (``.png``, ``.svg`` or ``.pdf``).
        title: The axes' title.

    Raises:
        ValueError: An unknown operation, one a report completed no request of, or nothing
            to draw; the message names the operation and the report.
    """
    labelled = _labelled(reports)
    figure, axes = _figure(width=6.4, height=4.0)
    for label, report in labelled.items():
        for op in _ops_with_requests(report, label, ops):
            histogram = report.latency_histogram(op)
            latencies_us = [histogram["low_ns"].iloc[0] / _NS_PER_US]
            latencies_us.extend(histogram["high_ns"] / _NS_PER_US)
            fractions = [0.0, *histogram["cumulative_fraction"]]
            name = op if len(labelled) == 1 and _single(reports) else f"{label} {op}"
            axes.plot(latencies_us, fractions, label=name)
    axes.set_xscale("log")
    axes.set_xlabel("latency (µs)")
    axes.set_ylabel("fraction of requests")
    axes.set_ylim(0.0, 1.02)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend()
    axes.set_title(title if title is not None else _title(labelled, "latency CDF"))
    return _finish(figure, path)


def percentile_bars(
    reports: Reports,
    ops: Sequence[str] | None = None,
    statistics: Sequence[str] = ("p50", "p99", "p99_9", "max"),
    *,
    log: bool = True,
    path: PathLike | None = None,
    title: str | None = None,
) -> PlotFigure:
    """Latency percentiles as grouped bars: one panel per operation, one group per
    statistic, one bar per report (µs, ``host.{op}.latency_ns``).

    Args:
        reports: A :class:`Report`, or several by label (one bar colour each).
        ops: Operations to draw, one panel each; ``None``: ``read`` and ``write``, those any
            report completed requests of.
        statistics: Keys of ``latency_ns``: ``mean``, ``p50``, ``p90``, ``p99``, ``p99_9``,
            ``p99_99``, ``max``.
        log: A logarithmic latency axis.
        path: Save the figure there too (``.png``, ``.svg`` or ``.pdf``).
        title: The figure's title.

    Raises:
        ValueError: An unknown operation or statistic, or an operation no report completed
            requests of.
    """
    labelled = _labelled(reports)
    for statistic in statistics:
        if statistic not in _STATISTIC_NAMES:
            raise ValueError(
                f"statistics: {statistic!r} is not a latency statistic "
                f"(allowed: {', '.join(_STATISTIC_NAMES)})"
            )
    if not statistics:
        raise ValueError("statistics: give at least one latency statistic")
    panels = _panel_ops(labelled, ops)
    figure = _new_figure(width=max(4.0, 3.4 * len(panels)), height=4.0)
    all_axes = figure.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    width = 0.8 / len(labelled)
    for axes, op in zip(all_axes, panels):
        for index, (label, report) in enumerate(labelled.items()):
            latency = report["host"][op]["latency_ns"]
            heights = [latency[s] / _NS_PER_US for s in statistics]
            positions = [i - 0.4 + width * (index + 0.5) for i in range(len(statistics))]
            axes.bar(positions, heights, width=width, label=label)
        axes.set_xticks(range(len(statistics)), list(statistics))
        axes.set_title(op)
        if log:
            axes.set_yscale("log")
        axes.grid(True, axis="y", which="both", alpha=0.3)
    all_axes[0].set_ylabel("latency (µs)")
    if len(labelled) > 1 or not _single(reports):
        all_axes[-1].legend()
    figure.suptitle(title if title is not None else _title(labelled, "latency percentiles"))
    return _finish(figure, path)


def utilisation_bars(
    report: Report, *, path: PathLike | None = None, title: str | None = None
) -> PlotFigure:
    """Busy fraction of each die and each channel (``utilisation.{dies,channels}.each``), one
    panel each, with the mean as a dashed line.

    Raises:
        ValueError: The report has no per-die or per-channel utilisation.
    """
    figure = _new_figure(width=9.0, height=3.6)
    panels = figure.subplots(1, 2, squeeze=False)[0]
    for axes, part in zip(panels, ("dies", "channels")):
        each = _utilisation(report, part)
        axes.bar(range(len(each)), each, width=0.8)
        mean = report["utilisation"][part]["mean"]
        axes.axhline(mean, color="black", linestyle="--", linewidth=1)
        axes.set_xlabel(f"{part[:-1] if part == 'channels' else 'die'} index")
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.set_ylim(0.0, 1.0)
        axes.yaxis.set_major_formatter(PercentFormatter(xmax=1.0))
        axes.set_title(f"{part} (mean {mean:.1%}, dashed)")
    panels[0].set_ylabel("busy")
    figure.suptitle(title if title is not None else _title({"": report}, "utilisation"))
    return _finish(figure, path)


def sweep_lines(
    frame: pandas.DataFrame,
    x: str,
    y: str,
    by: str | Sequence[str] | None = None,
    *,
    band: bool = True,
    path: PathLike | None = None,
    title: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
) -> PlotFigure:
    """A sweep's ``y`` against the grid axis ``x``, one line per value of ``by``.

    Rows with the same ``by`` and ``x`` (several seeds, or axes not shown) are averaged; with
    ``band`` their min-max range is shaded. Rows without a ``y`` (failed points) are left out.
    A numeric ``x`` is drawn at its values, ascending; any other at evenly spaced positions in
    the order of first appearance, labelled with the values.

    Args:
        frame: A DataFrame such as :func:`flashlab.sweep` returns (any DataFrame works).
        x: Column along the horizontal axis, e.g. ``"ftl.over_provisioning"``.
        y: Numeric column to draw, e.g. ``"write_amplification"``, ``"read_latency_p99_ns"``.
        by: Column(s) whose values make the lines (the legend); ``None``: one line.
        band: Shade the min-max range of the averaged rows.
        path: Save the figure there too (``.png``, ``.svg`` or ``.pdf``).
        title, xlabel, ylabel: Text of the axes (defaults from the column names).

    Raises:
        ValueError: A column the frame lacks (the message lists the frame's columns), a
            ``y`` that is not numeric, or no row with a ``y``.
    """
    groups = [] if by is None else [by] if isinstance(by, str) else list(by)
    for role, column in [("x", x), ("y", y), *(("by", g) for g in groups)]:
        _require_column(frame, column, role)
    try:
        values = pandas.to_numeric(frame[y])
    except (TypeError, ValueError):
        raise ValueError(f"y: column {y!r} is not numeric (dtype {frame[y].dtype})") from None
    data = frame[[x, *groups]].assign(__y=values).dropna(subset=["__y"])
    if data.empty:
        raise ValueError(f"y: no row has a value of {y!r} (every point failed?)")
    positions, tick_labels = _x_positions(data[x])
    data = data.assign(__x=data[x].map(positions))
    figure, axes = _figure(width=6.4, height=4.0)
    for label, rows in _line_groups(data, groups):
        stats = rows.groupby("__x")["__y"].agg(["mean", "min", "max"]).sort_index()
        (line,) = axes.plot(stats.index, stats["mean"], marker="o", label=label)
        if band and (stats["min"] < stats["max"]).any():
            axes.fill_between(
                stats.index, stats["min"], stats["max"], color=line.get_color(), alpha=0.2
            )
    if tick_labels is not None:
        axes.set_xticks(range(len(tick_labels)), tick_labels)
    elif len(positions) <= _MAX_GRID_TICKS:  # a grid axis: a tick at each of its values
        axes.set_xticks(sorted(positions.values()))
    axes.set_xlabel(xlabel if xlabel is not None else x)
    axes.set_ylabel(ylabel if ylabel is not None else y)
    axes.grid(True, alpha=0.3)
    if groups:
        axes.legend(title=", ".join(groups))
    if title is not None:
        axes.set_title(title)
    return _finish(figure, path)


def write_amplification_vs_over_provisioning(
    frame: pandas.DataFrame,
    *,
    by: str | Sequence[str] | None = "ftl",
    over_provisioning: str = "ftl.over_provisioning",
    path: PathLike | None = None,
    title: str | None = None,
) -> PlotFigure:
    """Write amplification against over-provisioning (as a percentage) from a sweep over
    ``ftl.over_provisioning``: :func:`sweep_lines` with ``y="write_amplification"``, one line
    per FTL by default (``by=None``: one line).

    Raises:
        ValueError: The frame lacks the over-provisioning column (the sweep's grid did not
            vary it: put ``"ftl.over_provisioning"`` in the grid) or another column.
    """
    _require_column(
        frame,
        over_provisioning,
        "over_provisioning",
        hint=" (sweep a grid over 'ftl.over_provisioning', or name the column)",
    )
    figure = sweep_lines(
        frame,
        over_provisioning,
        "write_amplification",
        by,
        title=title if title is not None else "write amplification against over-provisioning",
        xlabel="over-provisioning",
        ylabel="write amplification",
    )
    figure.axes[0].xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{100 * x:g}%"))
    return _finish(figure, path)


def _new_figure(width: float, height: float) -> PlotFigure:
    """An empty figure on its own Agg canvas (no pyplot, no global state)."""
    figure = PlotFigure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _figure(width: float, height: float) -> tuple[PlotFigure, Axes]:
    figure = _new_figure(width, height)
    return figure, figure.add_subplot()


def _finish(figure: PlotFigure, path: PathLike | None) -> PlotFigure:
    """Saves ``figure`` to ``path`` (format from its extension) when given; returns it."""
    if path is not None:
        suffix = os.path.splitext(os.fspath(path))[1].lower().lstrip(".")
        if suffix not in _SAVE_FORMATS:
            raise ValueError(
                f"path: {os.fspath(path)!r} must end in "
                f"{', '.join('.' + f for f in _SAVE_FORMATS)} (the format to save)"
            )
        figure.savefig(path, format=suffix, dpi=150)
    return figure


def _single(reports: Reports) -> bool:
    return isinstance(reports, Report)


def _labelled(reports: Reports) -> dict[str, Report]:
    """The reports by label: one :class:`Report` is labelled ``FTL on PRESET``."""
    if isinstance(reports, Report):
        return {f"{reports['ftl']} on {reports['preset']}": reports}
    if isinstance(reports, Mapping) and reports:
        labelled = {str(label): report for label, report in reports.items()}
        for label, report in labelled.items():
            if not isinstance(report, Report):
                raise TypeError(
                    f"reports[{label!r}]: expected a flashlab.Report, not "
                    f"{type(report).__name__} (wrap a report dict: flashlab.Report(d))"
                )
        return labelled
    raise TypeError(
        "reports: expected a flashlab.Report or a non-empty mapping of labels to reports, "
        f"not {type(reports).__name__}"
    )


def _ops_with_requests(report: Report, label: str, ops: Sequence[str] | None) -> list[str]:
    """The operations of ``report`` to draw: ``ops`` (each checked), or those it has."""
    if ops is None:
        return [op for op in HOST_OPS[:-1] if report["host"][op]["count"] > 0]
    for op in ops:
        if report["host"][_host_op(op)]["count"] == 0:
            raise ValueError(f"op: report {label!r} completed no {op} request to draw")
    return list(ops)


def _panel_ops(labelled: Mapping[str, Report], ops: Sequence[str] | None) -> list[str]:
    """The operations with a panel: ``ops`` (each completed by some report), or read and
    write where some report has them."""
    candidates = ("read", "write") if ops is None else [_host_op(op) for op in ops]
    has = [op for op in candidates if any(r["host"][op]["count"] > 0 for r in labelled.values())]
    if ops is not None and len(has) < len(candidates):
        missing = next(op for op in candidates if op not in has)
        raise ValueError(f"op: no report completed a {missing} request to draw")
    if not has:
        raise ValueError("op: the reports completed no read or write request to draw")
    return has


def _utilisation(report: Report, part: str) -> list[float]:
    try:
        each = report["utilisation"][part]["each"]
    except (KeyError, TypeError):
        raise ValueError(
            f"report: no utilisation.{part}.each (per-{part[:-1] if part == 'channels' else 'die'}"
            " busy fractions; a report written by flashlab before they were added?)"
        ) from None
    return [float(v) for v in each]


def _require_column(frame: pandas.DataFrame, column: str, role: str, hint: str = "") -> None:
    if column not in frame.columns:
        shown = ", ".join(map(str, frame.columns[:40]))
        more = ", ..." if len(frame.columns) > 40 else ""
        raise ValueError(f"{role}: no column {column!r}{hint}; the frame has: {shown}{more}")


def _x_positions(column: pandas.Series) -> tuple[dict[object, float], list[str] | None]:
    """Where each value of ``column`` goes on the x axis, and tick labels for non-numbers."""
    values = list(dict.fromkeys(column.tolist()))
    if pandas.api.types.is_numeric_dtype(column) and not pandas.api.types.is_bool_dtype(column):
        return {v: float(v) for v in values}, None
    return {v: float(i) for i, v in enumerate(values)}, [str(v) for v in values]


def _line_groups(
    data: pandas.DataFrame, groups: list[str]
) -> list[tuple[str | None, pandas.DataFrame]]:
    """The rows of each line, labelled by their ``groups`` values (in first-appearance order)."""
    if not groups:
        return [(None, data)]
    lines: list[tuple[str | None, pandas.DataFrame]] = []
    for key, rows in data.groupby(groups, sort=False, dropna=False):
        parts = key if isinstance(key, tuple) else (key,)
        lines.append((", ".join(map(str, parts)), rows))
    return lines


def _title(labelled: Mapping[str, Report], what: str) -> str:
    if len(labelled) == 1:
        report = next(iter(labelled.values()))
        return f"{what}: {report['ftl']} on {report['preset']}"
    return what
