"""Periodic real-time tasks from Python: deadline misses, per-task latencies and the time series
(part-ftl.txt Table III), and their documentation in docs/report-schema.md."""

from __future__ import annotations

from typing import Any

import pytest

import flashlab
from test_report_schema import _MISSING, documented_fields, key_paths, lookup, type_mismatches

SMALL = {"geometry.blocks_per_plane": 16, "ftl.over_provisioning": 0.25}
TABLE_III = "periodic:tasks=4xw12p@60ms+4xr3p@15ms,duration=300ms"


def periodic_run(workload: str, **sets: Any) -> dict[str, Any]:
    return flashlab.run(
        "default",
        workload=workload,
        precondition=0.5,
        set={**SMALL, "run.timeseries_interval_ns": 50_000_000, **sets},
    )


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    return periodic_run(TABLE_III)


def test_table_iii_meets_every_period_deadline(report: dict[str, Any]) -> None:
    deadlines = report["deadlines"]
    # Writers 0-3: 5 jobs each (0, 60, ..., 240 ms); readers 4-7: 20 each (0, 15, ..., 285 ms).
    assert deadlines["requests"] == 4 * 5 + 4 * 20
    assert deadlines["misses"] == 0 and deadlines["worst_lateness_ns"] == 0
    assert [t["task"] for t in deadlines["tasks"]] == list(range(8))
    tasks = report["tasks"]
    assert [(t["write"]["count"], t["read"]["count"]) for t in tasks] == [(5, 0)] * 4 + [
        (0, 20)
    ] * 4
    for t in tasks:
        op = "write" if t["write"]["count"] else "read"
        latency = t[op]["latency_ns"]
        assert 0 < latency["p50"] <= latency["p99"] <= latency["max"]
    assert report["host"]["write"]["bytes"] == 20 * 12 * 8192
    assert report["workload"]["kind"] == "periodic"


def test_a_tiny_deadline_is_missed_and_reported(report: dict[str, Any]) -> None:
    tight = periodic_run("periodic:tasks=4xw12p@60ms+4xr3p@15ms/deadline=1us,duration=300ms")
    deadlines = tight["deadlines"]
    per_task = {t["task"]: t for t in deadlines["tasks"]}
    assert all(per_task[k]["misses"] == 0 for k in range(4)), "writers keep their period"
    assert all(per_task[k]["misses"] == 20 for k in range(4, 8)), "every read misses 1 us"
    assert deadlines["misses"] == 80 and deadlines["miss_ratio"] == 0.8
    worst_read = max(t["read"]["latency_ns"]["max"] for t in tight["tasks"][4:])
    assert abs(deadlines["worst_lateness_ns"] - (worst_read - 1_000)) <= worst_read / 1000


def test_time_series_adds_up_to_the_totals(report: dict[str, Any]) -> None:
    series = report["timeseries"]
    assert series["interval_ns"] == 50_000_000
    intervals = series["intervals"]
    assert [i["start_ns"] for i in intervals] == [k * 50_000_000 for k in range(len(intervals))]
    assert sum(i["requests"] for i in intervals) == report["host"]["all"]["count"]
    assert sum(i["write_bytes"] for i in intervals) == report["host"]["write"]["bytes"]
    assert sum(i["read_bytes"] for i in intervals) == report["host"]["read"]["bytes"]


def with_items(value: Any) -> Any:
    """`value` with each list of objects also under `key[]` as its first item (how the doc
    names array items)."""
    if not isinstance(value, dict):
        return value
    out = {k: with_items(v) for k, v in value.items()}
    for k, v in value.items():
        if isinstance(v, list) and v and isinstance(v[0], dict):
            out[f"{k}[]"] = with_items(v[0])
    return out


@pytest.mark.parametrize(
    ("heading", "roots"),
    [
        ("Real-time fields", ["deadlines", "tasks[]", "timeseries"]),
        ("Periodic workload fields", ["workload.tasks[]"]),
    ],
)
def test_real_time_fields_match_their_documentation(
    report: dict[str, Any], heading: str, roots: list[str]
) -> None:
    fields = documented_fields(heading)
    view = with_items(report)
    missing = [p for p in fields if lookup(view, p) is _MISSING]
    assert not missing, f"documented under {heading!r} but not in the report: {missing}"
    # The roots themselves are documented in the main table ("Report fields").
    undocumented = [
        f"{root}.{path}"
        for root in roots
        for path in key_paths(lookup(view, root))
        if f"{root}.{path}" not in fields
    ]
    assert not undocumented, f"in the report but not documented under {heading!r}: {undocumented}"
    wrong = type_mismatches(view, fields)
    assert not wrong, wrong


def test_bad_task_syntax_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"workload\.tasks.*unknown operation `z`"):
        periodic_run("periodic:tasks=4xz3p@15ms")
