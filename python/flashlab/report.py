"""The result of one run as data: :class:`Report`, the report dict with pandas views.

A :class:`Report` *is* the ``flashlab.report/2`` document (a ``dict``, docs/report-schema.md),
so ``report["host"]["all"]["count"]`` and ``json.dumps(report)`` work as before; its methods
flatten the headline figures (:meth:`Report.summary_fields`, :meth:`Report.summary`), one
operation's latency percentiles and histogram (:meth:`Report.latency`,
:meth:`Report.latency_histogram`) and the time series
(:meth:`Report.timeseries`) into pandas DataFrames; a latency of an operation the run did not
complete is NaN there (the document's 0 stands for "no value"), and a document missing a field
those views read raises a :class:`ValueError` naming the field. pandas is the optional
``analysis`` extra (``pip install 'flashlab[analysis]'``): it is imported only by the methods
that return a DataFrame, which raise an :class:`ImportError` naming the extra when it is
missing. The ``plot_*`` methods draw the report with :mod:`flashlab.plots` (the ``plot``
extra, matplotlib).
"""

from __future__ import annotations

import html
import io
import json
import math
import os
from collections.abc import Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any, Union, cast

if TYPE_CHECKING:
    import pandas

    from .plots import PlotFigure

__all__ = ["HOST_OPS", "LATENCY_STATISTICS", "Report", "require_pandas"]

#: Operations of ``host`` in the report, ``all`` being every request together.
HOST_OPS = ("read", "write", "trim", "flush", "all")
#: Keys of a ``latency_ns`` object, with the quantile each stands for (``None``: the mean).
LATENCY_STATISTICS: tuple[tuple[str, float | None], ...] = (
    ("mean", None),
    ("p50", 0.5),
    ("p90", 0.9),
    ("p99", 0.99),
    ("p99_9", 0.999),
    ("p99_99", 0.9999),
    ("max", 1.0),
)

#: A flat summary value: a figure, a name, or ``None`` where the report has ``null``.
SummaryValue = Union[int, float, str, bool, None]

ANALYSIS_EXTRA = "pip install 'flashlab[analysis]'"


def require_pandas(feature: str) -> None:
    """Checks that pandas is installed; else an :class:`ImportError` saying ``feature``
    needs the ``analysis`` extra."""
    try:
        import pandas  # noqa: F401
    except ImportError as e:
        raise ImportError(
            f"{feature} needs pandas, part of flashlab's optional 'analysis' extra: "
            f"{ANALYSIS_EXTRA}"
        ) from e


class Report(dict[str, Any]):
    """One run's report (schema ``flashlab.report/2``): the JSON document as a ``dict``,
    plus tabular views of it.

    Equal to, and serialised like, the plain dict; ``Report(json.load(f))`` wraps a report
    read from a file (``flashlab run --json``).
    """

    def summary_fields(self) -> dict[str, SummaryValue]:
        """The headline figures as one flat dict (no pandas needed); keys as :meth:`summary`'s
        columns."""
        fields: dict[str, SummaryValue] = {"ftl": _at(self, "ftl"), "preset": _at(self, "preset")}
        workload = _at(self, "workload")
        fields["workload"] = workload.get("spec", workload.get("name"))
        fields["elapsed_ns"] = _at(self, "elapsed_ns")
        for op in HOST_OPS:
            fields.update(_op_fields(self, op, always=op in ("read", "write", "all")))
        fields["write_amplification"] = _at(self, "write_amplification")
        fields.update(_gc_fields(self))
        fields["utilisation_dies_mean"] = _at(self, "utilisation", "dies", "mean")
        fields["utilisation_channels_mean"] = _at(self, "utilisation", "channels", "mean")
        fields["erase_count_max"] = _at(self, "wear", "erase_count_max")
        fields.update(_optional_fields(self))
        return fields

    def summary(self) -> pandas.DataFrame:
        """One-row DataFrame of the headline figures.

        Columns: ``ftl``, ``preset``, ``workload`` (its ``--workload`` spec, or the trace's
        name), ``elapsed_ns``; per operation ``{op}_count``, ``{op}_iops``, ``{op}_mb_per_s``
        and ``{op}_latency_{mean,p50,p90,p99,p99_9,p99_99,max}_ns`` for ``read``, ``write``
        and ``all`` (``trim`` and ``flush`` too when the run had any; the latencies NaN for
        an operation without requests, e.g. reads of a write-only run); ``write_amplification``
        (``None`` where the report has ``null``); ``gc_runs``, ``gc_foreground_runs``,
        ``gc_background_runs``, ``gc_units_moved``, ``erases``; ``utilisation_dies_mean``,
        ``utilisation_channels_mean``, ``erase_count_max``; and when the report has them
        ``deadline_requests``, ``deadline_misses``, ``deadline_miss_ratio``,
        ``deadline_worst_lateness_ns`` (real-time runs), ``merges``, ``merge_pages_copied``
        (block-mapped and log-block FTLs), ``map_cache_cmt_hit_ratio``,
        ``map_cache_ctp_hit_ratio``, ``map_cache_translation_reads``,
        ``map_cache_translation_writes`` (demand-paged FTLs).

        Raises:
            ValueError: The document lacks a field (``Report({})``); the message names it.
        """
        require_pandas("Report.summary()")
        import pandas

        return pandas.DataFrame([self.summary_fields()])

    def latency(self, op: str = "all") -> pandas.DataFrame:
        """Latency distribution of one host operation (``read``, ``write``, ``trim``,
        ``flush`` or ``all``): one row per statistic (index ``mean``, ``p50``, ``p90``,
        ``p99``, ``p99_9``, ``p99_99``, ``max``), columns ``quantile`` (0.5 ... 1.0; NaN for
        the mean) and ``latency_ns``. The percentiles are the report's (HDR histogram, 3
        significant digits); NaN when the run completed no such request (a write-only run's
        reads: there is no latency to show, where the document has 0).
        """
        require_pandas("Report.latency()")
        import pandas

        latency = _latency_fields(self, _host_op(op))
        frame = pandas.DataFrame(
            {
                "quantile": [float("nan") if q is None else q for _, q in LATENCY_STATISTICS],
                "latency_ns": [latency[key] for key, _ in LATENCY_STATISTICS],
            },
            index=pandas.Index([key for key, _ in LATENCY_STATISTICS], name="statistic"),
        )
        return frame

    def latency_histogram(self, op: str = "all") -> pandas.DataFrame:
        """Latency histogram of one host operation (``host.{op}.latency_histogram_ns``): one
        row per non-empty quarter-octave bucket, ascending, columns ``low_ns``, ``high_ns``
        (inclusive bounds), ``count``, ``fraction`` (of the operation's requests) and
        ``cumulative_fraction`` (the CDF at ``high_ns``); no rows when the run completed no
        such request.
        """
        require_pandas("Report.latency_histogram()")
        import pandas

        buckets = _at(self, "host", _host_op(op), "latency_histogram_ns")
        frame = pandas.DataFrame(buckets, columns=["low_ns", "high_ns", "count"], dtype="int64")
        total = int(frame["count"].sum())
        frame["fraction"] = frame["count"] / total if total else 0.0
        frame["cumulative_fraction"] = frame["count"].cumsum() / total if total else 0.0
        return frame

    def timeseries(self) -> pandas.DataFrame:
        """The run's time series (``timeseries.intervals``), one row per interval, columns as
        the keys of an interval (``start_ns``, ``requests``, ``read_mb_per_s``, ...).

        Raises:
            ValueError: The run recorded none (``run.timeseries_interval_ns`` was 0).
        """
        require_pandas("Report.timeseries()")
        import pandas

        series = self.get("timeseries")
        if series is None:
            raise ValueError(
                "timeseries: this run recorded none; set run.timeseries_interval_ns (e.g. "
                "set={'run.timeseries_interval_ns': 1_000_000}) to record one"
            )
        columns = [
            "start_ns",
            "requests",
            "read_bytes",
            "write_bytes",
            "read_mb_per_s",
            "write_mb_per_s",
            "mean_latency_ns",
            "max_latency_ns",
            "deadline_misses",
        ]
        return pandas.DataFrame(_at(self, "timeseries", "intervals"), columns=columns)

    def plot_latency_cdf(
        self, ops: Sequence[str] | None = None, *, path: str | os.PathLike[str] | None = None
    ) -> PlotFigure:
        """The latency CDF of each operation (:func:`flashlab.plots.latency_cdf`): a
        matplotlib figure, also saved to ``path`` (``.png``, ``.svg``, ``.pdf``) when given.
        Needs the ``plot`` extra."""
        from .plots import latency_cdf

        return latency_cdf(self, ops, path=path)

    def plot_percentiles(
        self,
        ops: Sequence[str] | None = None,
        statistics: Sequence[str] = ("p50", "p99", "p99_9", "max"),
        *,
        path: str | os.PathLike[str] | None = None,
    ) -> PlotFigure:
        """Latency percentiles as bars, one panel per operation
        (:func:`flashlab.plots.percentile_bars`). Needs the ``plot`` extra."""
        from .plots import percentile_bars

        return percentile_bars(self, ops, statistics, path=path)

    def plot_utilisation(self, *, path: str | os.PathLike[str] | None = None) -> PlotFigure:
        """Busy fraction of each die and channel (:func:`flashlab.plots.utilisation_bars`).
        Needs the ``plot`` extra."""
        from .plots import utilisation_bars

        return utilisation_bars(self, path=path)

    def to_json(
        self,
        path: str | os.PathLike[str] | IO[str] | IO[bytes] | None = None,
        *,
        indent: int | None = 2,
    ) -> str:
        """The report as JSON text (keys sorted, as ``flashlab run --json`` writes them);
        also written to ``path`` when given: a file path (``str`` or ``os.PathLike``) or an
        open file object (text or binary).

        Raises:
            TypeError: ``path`` is neither (an ``int`` would name a file descriptor).
        """
        text = json.dumps(self, indent=indent, sort_keys=True, allow_nan=False) + "\n"
        if path is None:
            return text
        if isinstance(path, (str, os.PathLike)):
            with open(path, "w", encoding="utf-8") as file:
                file.write(text)
            return text
        if isinstance(path, (io.RawIOBase, io.BufferedIOBase)) or "b" in str(
            getattr(path, "mode", "")
        ):
            cast("IO[bytes]", path).write(text.encode("utf-8"))
        elif callable(getattr(path, "write", None)):
            cast("IO[str]", path).write(text)
        else:
            raise TypeError(
                "path: expected a file path (str or os.PathLike) or a file object, not "
                f"{type(path).__name__} {path!r}"
            )
        return text

    def _repr_html_(self) -> str:
        """A small table of the headline figures for notebooks (no pandas needed)."""
        rows = "".join(
            f"<tr><th style='text-align:left'>{html.escape(key)}</th>"
            f"<td style='text-align:right'>{html.escape(_shown(value))}</td></tr>"
            for key, value in self.summary_fields().items()
        )
        title = html.escape(f"flashlab report: {_at(self, 'ftl')} on {_at(self, 'preset')}")
        return f"<table><caption>{title}</caption>{rows}</table>"


def _host_op(op: str) -> str:
    if op not in HOST_OPS:
        raise ValueError(f"op: {op!r} is not an operation (allowed: {', '.join(HOST_OPS)})")
    return op


def _at(report: Mapping[str, Any], *path: str) -> Any:
    """``report[path[0]][path[1]]...``; a :class:`ValueError` naming the first field missing
    (rather than a bare ``KeyError``)."""
    node: Any = report
    for depth, key in enumerate(path):
        if not isinstance(node, Mapping) or key not in node:
            schema = report.get("schema")
            what = (
                "it has no 'schema': not a flashlab report"
                if schema is None
                else f"schema {schema!r}"
            )
            raise ValueError(
                f"report: no {'.'.join(path[: depth + 1])!r} in this document ({what}); a "
                "Report wraps a flashlab.report/2 document, as flashlab.run returns it and "
                "flashlab run --json writes it"
            )
        node = node[key]
    return node


def _latency_fields(report: Mapping[str, Any], op: str) -> dict[str, float]:
    """The latency statistics of one operation; NaN each when it had no request."""
    none = _at(report, "host", op, "count") == 0
    return {
        key: math.nan if none else _at(report, "host", op, "latency_ns", key)
        for key, _ in LATENCY_STATISTICS
    }


def _op_fields(report: Mapping[str, Any], op: str, always: bool) -> dict[str, SummaryValue]:
    """``{op}_count``, rates and latency statistics of one operation (NaN latencies without
    requests); none for an operation the run did not have unless ``always``."""
    count = _at(report, "host", op, "count")
    if not always and count == 0:
        return {}
    fields: dict[str, SummaryValue] = {
        f"{op}_count": count,
        f"{op}_iops": _at(report, "host", op, "iops"),
        f"{op}_mb_per_s": _at(report, "host", op, "mb_per_s"),
    }
    for key, value in _latency_fields(report, op).items():
        fields[f"{op}_latency_{key}_ns"] = value
    return fields


def _gc_fields(report: Report) -> dict[str, SummaryValue]:
    return {
        "gc_runs": _at(report, "gc", "gc_runs"),
        "gc_foreground_runs": _at(report, "gc", "gc_foreground_runs"),
        "gc_background_runs": _at(report, "gc", "gc_background_runs"),
        "gc_units_moved": _at(report, "gc", "gc_units_moved"),
        "erases": _at(report, "flash", "erases", "total"),
    }


def _optional_fields(report: Report) -> dict[str, SummaryValue]:
    """Deadline, merge and map-cache figures, for the runs whose report has them."""
    fields: dict[str, SummaryValue] = {}
    if report.get("deadlines") is not None:
        fields["deadline_requests"] = _at(report, "deadlines", "requests")
        fields["deadline_misses"] = _at(report, "deadlines", "misses")
        fields["deadline_miss_ratio"] = _at(report, "deadlines", "miss_ratio")
        fields["deadline_worst_lateness_ns"] = _at(report, "deadlines", "worst_lateness_ns")
    if report.get("merges") is not None:
        fields["merges"] = _at(report, "merges", "total")
        fields["merge_pages_copied"] = _at(report, "merges", "pages_copied")
    cache = report.get("map_cache")
    if cache is not None:
        fields["map_cache_cmt_hit_ratio"] = _at(report, "map_cache", "cmt", "hit_ratio")
        ctp = cache.get("ctp") if isinstance(cache, Mapping) else None
        fields["map_cache_ctp_hit_ratio"] = (
            None if ctp is None else _at(report, "map_cache", "ctp", "hit_ratio")
        )
        fields["map_cache_translation_reads"] = _at(report, "map_cache", "translation_reads")
        fields["map_cache_translation_writes"] = _at(report, "map_cache", "translation_writes")
    return fields


def _shown(value: SummaryValue) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)
