"""The `Report` that `flashlab.run` returns: still the report dict, plus DataFrame views."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest

import flashlab

pandas = pytest.importorskip("pandas")

# 2 channels x 2 chips x 2 dies x 2 planes x 16 blocks: a run takes a fraction of a second.
TINY = {
    "geometry.channels": 2,
    "geometry.chips_per_channel": 2,
    "geometry.blocks_per_plane": 16,
    "ftl.over_provisioning": 0.25,
}
WORKLOAD = "randrw:read=0.5,bs=4k,qd=8,count=3000"


def tiny_run(**kwargs: Any) -> flashlab.Report:
    settings = dict(TINY)
    settings.update(kwargs.pop("set", {}))
    options: dict[str, Any] = {"workload": WORKLOAD, "precondition": 0.5, "seed": 3}
    options.update(kwargs)
    return flashlab.run("default", set=settings, **options)


@pytest.fixture(scope="module")
def report() -> flashlab.Report:
    return tiny_run()


def test_the_report_is_still_the_json_dict(report: flashlab.Report) -> None:
    assert isinstance(report, dict)
    assert report["host"]["all"]["count"] == 3000
    plain = json.loads(json.dumps(report))
    assert plain == report and type(plain) is dict


def test_summary_is_one_row_of_the_report_figures(report: flashlab.Report) -> None:
    summary = report.summary()
    assert len(summary) == 1
    row = summary.iloc[0]
    host = report["host"]
    assert row["ftl"] == "pagemap" and row["preset"] == "default"
    assert row["workload"] == report["workload"]["spec"]
    assert row["elapsed_ns"] == report["elapsed_ns"]
    for op in ("read", "write", "all"):
        assert row[f"{op}_count"] == host[op]["count"]
        assert row[f"{op}_iops"] == host[op]["iops"]
        assert row[f"{op}_mb_per_s"] == host[op]["mb_per_s"]
        for key in ("mean", "p50", "p90", "p99", "p99_9", "p99_99", "max"):
            assert row[f"{op}_latency_{key}_ns"] == host[op]["latency_ns"][key]
    assert row["write_amplification"] == report["write_amplification"]
    assert row["gc_runs"] == report["gc"]["gc_runs"]
    assert row["erases"] == report["flash"]["erases"]["total"]
    # The run had no trims, flushes, deadlines, merges or map cache: no such columns.
    assert not any(c.startswith(("trim_", "flush_", "deadline_", "map_cache_")) for c in row.index)
    assert "merges" not in row.index


def test_summary_has_the_map_cache_and_deadline_figures_when_the_run_has_them() -> None:
    report = tiny_run(ftl="dftl", set={"workload.deadline_ns": 300_000})
    row = report.summary().iloc[0]
    assert report["map_cache"] is not None and report["deadlines"] is not None
    assert row["map_cache_cmt_hit_ratio"] == report["map_cache"]["cmt"]["hit_ratio"]
    assert row["map_cache_translation_reads"] == report["map_cache"]["translation_reads"]
    assert row["deadline_requests"] == 3000
    assert row["deadline_misses"] == report["deadlines"]["misses"] > 0
    assert row["deadline_miss_ratio"] == report["deadlines"]["miss_ratio"]


def test_latency_gives_the_percentiles_of_one_operation(report: flashlab.Report) -> None:
    latency = report.latency("read")
    expected = report["host"]["read"]["latency_ns"]
    assert list(latency.index) == ["mean", "p50", "p90", "p99", "p99_9", "p99_99", "max"]
    assert latency["latency_ns"].to_dict() == expected
    assert list(latency["quantile"][1:]) == [0.5, 0.9, 0.99, 0.999, 0.9999, 1.0]
    assert math.isnan(latency.loc["mean", "quantile"])
    assert report.latency().loc["max", "latency_ns"] == report["host"]["all"]["latency_ns"]["max"]


def test_latency_histogram_counts_every_request_and_brackets_the_percentiles(
    report: flashlab.Report,
) -> None:
    for op in ("read", "write", "all"):
        histogram = report.latency_histogram(op)
        figures = report["host"][op]
        assert histogram["count"].sum() == figures["count"]
        assert (histogram["count"] > 0).all()
        assert (histogram["low_ns"] <= histogram["high_ns"]).all()
        assert (histogram["low_ns"].iloc[1:].values > histogram["high_ns"].iloc[:-1].values).all()
        # Quarter octaves: from 8 ns on, [m 2^e, (m+1) 2^e - 1] with m = 4..7.
        for low, high in zip(histogram["low_ns"], histogram["high_ns"]):
            width = high - low + 1
            assert (
                low < 8 and width == 1 or (width & (width - 1) == 0 and low // width in range(4, 8))
            )
        assert histogram["cumulative_fraction"].iloc[-1] == pytest.approx(1.0)
        # The largest latency is in the last bucket, the median in the bucket where the CDF
        # reaches one half (HDR percentiles are within 0.1% of a bucket's values).
        latency = figures["latency_ns"]
        assert histogram["low_ns"].iloc[-1] <= latency["max"] <= histogram["high_ns"].iloc[-1] + 1
        median = histogram[histogram["cumulative_fraction"] >= 0.5].iloc[0]
        assert median["low_ns"] * 0.999 <= latency["p50"] <= median["high_ns"] * 1.001


def test_latency_histogram_of_an_operation_without_requests_is_empty(
    report: flashlab.Report,
) -> None:
    assert report["host"]["trim"]["latency_histogram_ns"] == []
    assert len(report.latency_histogram("trim")) == 0


def test_latency_of_an_unknown_operation_names_the_allowed_ones(report: flashlab.Report) -> None:
    with pytest.raises(ValueError, match="'reads'.*read, write, trim, flush, all"):
        report.latency("reads")
    with pytest.raises(ValueError, match="'sub_requests'"):
        report.latency_histogram("sub_requests")


def test_timeseries_is_a_frame_of_the_intervals() -> None:
    report = tiny_run(set={"run.timeseries_interval_ns": 5_000_000})
    series = report.timeseries()
    intervals = report["timeseries"]["intervals"]
    assert len(series) == len(intervals) > 3
    assert series["requests"].sum() == report["host"]["all"]["count"]
    assert list(series["start_ns"]) == [i * 5_000_000 for i in range(len(intervals))]
    assert series.iloc[1].to_dict() == pytest.approx(intervals[1])


def test_timeseries_of_a_run_without_one_says_which_setting(report: flashlab.Report) -> None:
    with pytest.raises(ValueError, match="run.timeseries_interval_ns"):
        report.timeseries()


def test_to_json_round_trips(report: flashlab.Report, tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    text = report.to_json(path)
    assert json.loads(text) == report
    assert json.loads(path.read_text()) == report
    assert flashlab.Report(json.loads(text)).summary().equals(report.summary())


def test_html_shows_the_headline_figures(report: flashlab.Report) -> None:
    page = report._repr_html_()
    assert page.startswith("<table>") and "pagemap on default" in page
    assert "all_iops" in page and f"{report['host']['all']['count']:,}" in page


def test_without_pandas_the_error_names_the_extra(
    report: flashlab.Report, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` raises ImportError
    with pytest.raises(ImportError, match=r"Report.summary\(\).*flashlab\[analysis\]"):
        report.summary()
    with pytest.raises(ImportError, match=r"flashlab.sweep\(\).*flashlab\[analysis\]"):
        flashlab.sweep({}, {"seed": [1]})
    assert "pagemap" in report._repr_html_()  # needs no pandas


def test_resolve_config_is_the_config_the_run_reports(report: flashlab.Report) -> None:
    config = flashlab.resolve_config(
        "default", workload=WORKLOAD, precondition=0.5, seed=3, set=TINY
    )
    assert config == report["config"]
