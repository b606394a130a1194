"""Figures a report does not have are shown as missing, never as 0 or a bare KeyError.

A latency of an operation the run completed no request of is NaN in `Report.summary()`,
`Report.latency(op)` and a sweep's rows (the report's JSON keeps its 0); a failed sweep point
has NaN figures; a document missing a field raises a ValueError naming it; `to_json` writes to
a path or a file object only (an int would be a file descriptor).
"""

from __future__ import annotations

import io
import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

import flashlab

pandas = pytest.importorskip("pandas")

SMALL = {
    "geometry.channels": 2,
    "geometry.chips_per_channel": 2,
    "geometry.blocks_per_plane": 16,
    "ftl.over_provisioning": 0.25,
}


@pytest.fixture(scope="module")
def write_only() -> flashlab.Report:
    return flashlab.run("default", workload="randwrite:count=500", precondition=0, set=SMALL)


def test_the_latency_of_an_operation_without_requests_is_nan(
    write_only: flashlab.Report,
) -> None:
    assert write_only["host"]["read"]["count"] == 0
    assert write_only["host"]["read"]["latency_ns"]["p99"] == 0  # the document is unchanged
    read = write_only.latency("read")
    assert list(read.index) == ["mean", "p50", "p90", "p99", "p99_9", "p99_99", "max"]
    assert read["latency_ns"].isna().all()
    assert write_only.latency("write")["latency_ns"].gt(0).all()
    fields = write_only.summary_fields()
    assert fields["read_count"] == 0 and fields["read_iops"] == 0.0
    latencies = {k: v for k, v in fields.items() if k.startswith("read_latency_")}
    assert len(latencies) == 7
    assert all(isinstance(v, float) and math.isnan(v) for v in latencies.values())
    assert write_only.summary()["read_latency_p99_ns"].isna().all()
    assert "<td style='text-align:right'>n/a</td>" in write_only._repr_html_()


def test_a_sweep_shows_missing_latencies_and_failed_points_as_nan(tmp_path: Path) -> None:
    base = {"device": "default", "workload": "randwrite:count=500", "precondition": 0, **SMALL}
    grid = [{"seed": 1}, {"ftl.over_provisioning": 7.0}]  # the second is refused
    frame = flashlab.sweep(base, grid, progress=False)
    assert frame["error"].isna().tolist() == [True, False]
    assert frame["read_latency_mean_ns"].isna().all()  # no reads, or no run at all
    assert frame["write_latency_mean_ns"].isna().tolist() == [False, True]
    frame.to_csv(tmp_path / "sweep.csv", index=False)
    again = pandas.read_csv(tmp_path / "sweep.csv")
    assert again["read_latency_p99_ns"].isna().all()
    assert again["write_latency_p99_ns"].isna().tolist() == [False, True]


MISSING: list[tuple[dict[str, Any], str, str]] = [
    ({}, "'ftl'", "it has no 'schema': not a flashlab report"),
    ({"schema": "flashlab.report/2", "ftl": "x", "preset": "y"}, "'workload'", "flashlab.report/2"),
]


@pytest.mark.parametrize(("document", "field", "schema"), MISSING)
def test_a_document_missing_a_field_names_it(
    document: dict[str, Any], field: str, schema: str
) -> None:
    report = flashlab.Report(document)
    for view in (report.summary, report.summary_fields, report._repr_html_):
        with pytest.raises(ValueError) as refused:
            view()
        message = str(refused.value)
        assert f"no {field}" in message and schema in message, message


def test_latency_views_of_a_document_without_host_name_it(write_only: flashlab.Report) -> None:
    partial = flashlab.Report({k: v for k, v in write_only.items() if k != "host"})
    with pytest.raises(ValueError, match="no 'host'"):
        partial.latency("read")
    with pytest.raises(ValueError, match="no 'host'"):
        partial.latency_histogram("write")
    no_counts = json.loads(json.dumps(write_only))
    del no_counts["host"]["read"]["count"]
    with pytest.raises(ValueError, match="no 'host.read.count'"):
        flashlab.Report(no_counts).latency("read")


def test_to_json_refuses_a_file_descriptor(write_only: flashlab.Report) -> None:
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    try:
        for not_a_path in (write_end, True, 2.5):
            with pytest.raises(TypeError, match="path: expected a file path"):
                write_only.to_json(not_a_path)  # type: ignore[arg-type]
        with pytest.raises(BlockingIOError):
            os.read(read_end, 1)  # nothing went to the descriptor
    finally:
        for end in (read_end, write_end):
            try:
                os.close(end)
            except OSError:
                pass  # closed by a file object wrapping it


def test_to_json_writes_to_a_path_or_a_file_object(
    write_only: flashlab.Report, tmp_path: Path
) -> None:
    text = write_only.to_json()
    write_only.to_json(tmp_path / "a.json")
    write_only.to_json(str(tmp_path / "b.json"))
    assert (tmp_path / "a.json").read_text() == (tmp_path / "b.json").read_text() == text
    as_text, as_bytes = io.StringIO(), io.BytesIO()
    write_only.to_json(as_text)
    write_only.to_json(as_bytes)
    assert as_text.getvalue() == as_bytes.getvalue().decode() == text
    with open(tmp_path / "c.json", "wb") as binary:
        write_only.to_json(binary)
    assert (tmp_path / "c.json").read_text() == text
