"""The JSON report matches its documentation, docs/report-schema.md (schema flashlab.report/2).

The doc's "Report fields" table lists key paths in its first column (backticked, dotted, with
shell-style `{a,b}` alternatives). Every documented path must exist in a real report, with the
documented type, and every key of the report must be documented (inside `config`, down to the
sections, whose fields `flashlab run --help` documents).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import flashlab

DOC = Path(__file__).resolve().parent.parent / "docs" / "report-schema.md"
SCHEMA = "flashlab.report/2"
COUNT = 5000

# A small, fast experiment: 4 GiB raw, half preconditioned, 5,000 requests.
SMALL: dict[str, Any] = {
    "workload": f"randrw:count={COUNT}",
    "precondition": 0.5,
    "set": {"geometry.blocks_per_plane": 16, "ftl.over_provisioning": 0.25},
}

# Documented types and the JSON values that fit them.
TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "fraction": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array of fraction": (list,),
    "array": (list,),
    "null": (type(None),),
}

_MISSING = object()


def expand(path: str) -> list[str]:
    """Expands `{a,b}` alternatives: `x.{a,b}.y` -> `x.a.y`, `x.b.y` (several groups too)."""
    match = re.search(r"\{([^{}]*)\}", path)
    if match is None:
        return [path]
    head, tail = path[: match.start()], path[match.end() :]
    return [p for alt in match.group(1).split(",") for p in expand(head + alt.strip() + tail)]


def documented_fields(heading: str = "Report fields") -> dict[str, str]:
    """Key path -> documented type, from the table under `## heading` in the doc."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"\n## {heading}")
    end = text.find("\n## ", start + 1)
    section = text[start : end if end >= 0 else len(text)]
    fields: dict[str, str] = {}
    for line in section.splitlines():
        row = re.match(r"^\|\s*`([^`]+)`\s*\|([^|]*)\|", line)
        if row is None:
            continue
        for path in expand(row.group(1)):
            assert path not in fields, f"{path} documented twice"
            fields[path] = row.group(2).strip()
    return fields


def lookup(report: dict[str, Any], path: str) -> Any:
    """The value at a dotted path, or _MISSING."""
    value: Any = report
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return _MISSING
        value = value[key]
    return value


def key_paths(value: Any, prefix: str = "") -> list[str]:
    """Every key path of nested dicts (not into lists)."""
    paths = []
    if isinstance(value, dict):
        for key, child in value.items():
            path = f"{prefix}{key}"
            paths.append(path)
            paths.extend(key_paths(child, path + "."))
    return paths


def fits_documented_type(value: Any, doc_type: str) -> bool:
    """Whether `value` is of `doc_type` as the schema doc writes it ("integer or null",
    "fraction", ...)."""
    allowed: tuple[type, ...] = ()
    for alternative in doc_type.split(" or "):
        assert alternative in TYPES, f"unknown documented type {alternative!r}"
        allowed += TYPES[alternative]
    # bool is an int in Python: only "boolean" admits it.
    fits = isinstance(value, allowed) and (not isinstance(value, bool) or "boolean" in doc_type)
    if doc_type == "fraction" and fits:
        fits = 0.0 <= value <= 1.0
    if doc_type == "array of fraction" and fits:
        fits = all(isinstance(x, (int, float)) and 0.0 <= x <= 1.0 for x in value)
    return fits


def type_mismatches(view: dict[str, Any], fields: dict[str, str]) -> list[str]:
    """The documented paths of `view` whose values do not fit their documented type."""
    return [
        f"{path} = {lookup(view, path)!r} (documented: {doc_type})"
        for path, doc_type in fields.items()
        if not fits_documented_type(lookup(view, path), doc_type)
    ]


@pytest.fixture(scope="module")
def fields() -> dict[str, str]:
    found = documented_fields()
    assert len(found) > 100, f"too few documented paths: {sorted(found)}"
    return found


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    return flashlab.run("default", **SMALL)


def test_report_is_the_documented_schema(report: dict[str, Any]) -> None:
    assert report["schema"] == SCHEMA
    assert f"`{SCHEMA}`" in DOC.read_text(encoding="utf-8").splitlines()[0]
    assert report["host"]["all"]["count"] == COUNT
    assert report["ftl"] == "pagemap", "the doc's ftl_details rows describe pagemap"
    assert report["precondition"] is not None


def test_every_documented_path_exists(report: dict[str, Any], fields: dict[str, str]) -> None:
    missing = [path for path in fields if lookup(report, path) is _MISSING]
    assert not missing, f"documented but not in the report: {missing}"


def test_documented_types(report: dict[str, Any], fields: dict[str, str]) -> None:
    # Missing paths are reported by test_every_documented_path_exists.
    present = {p: t for p, t in fields.items() if lookup(report, p) is not _MISSING}
    wrong = type_mismatches(report, present)
    assert not wrong, "values that do not fit their documented type:\n" + "\n".join(wrong)


def test_no_undocumented_top_or_second_level_keys(
    report: dict[str, Any], fields: dict[str, str]
) -> None:
    undocumented = [
        path for path in key_paths(report) if path.count(".") <= 1 and path not in fields
    ]
    assert not undocumented, f"in the report but not documented: {undocumented}"


def test_no_undocumented_keys_at_any_level(report: dict[str, Any], fields: dict[str, str]) -> None:
    # Below the sections of `config` are the settings, documented by `flashlab run --help`.
    undocumented = [
        path
        for path in key_paths(report)
        if not (path.startswith("config.") and path.count(".") >= 2) and path not in fields
    ]
    assert not undocumented, f"in the report but not documented: {undocumented}"


def test_verify_run_checks_every_sector_read(fields: dict[str, str]) -> None:
    assert "verified_sectors" in fields
    verified = flashlab.run("default", **{**SMALL, "set": {**SMALL["set"], "run.verify": True}})
    sector_bytes = verified["config"]["host"]["sector_bytes"]
    read_sectors = verified["host"]["read"]["bytes"] // sector_bytes
    assert read_sectors > 0
    assert verified["verified_sectors"] == read_sectors


def test_not_preconditioned_is_null() -> None:
    fresh = flashlab.run("default", **{**SMALL, "precondition": 0.0})
    assert fresh["precondition"] is None
    assert fresh["host"]["all"]["count"] == COUNT


TRACE = Path(__file__).resolve().parents[1] / "traces" / "mqsim_tpcc-small.trace"


@pytest.fixture(scope="module")
def trace_report() -> dict[str, Any]:
    return flashlab.run("default", trace=TRACE, precondition=0.0, set=SMALL["set"])


def test_trace_workload_matches_its_documentation(trace_report: dict[str, Any]) -> None:
    fields = documented_fields("Trace replay fields")
    workload = {"workload": trace_report["workload"]}
    missing = [path for path in fields if lookup(workload, path) is _MISSING]
    assert not missing, f"documented but not in a trace report: {missing}"
    undocumented = [p for p in key_paths(workload) if p != "workload" and p not in fields]
    assert not undocumented, f"in a trace report but not documented: {undocumented}"
    wrong = type_mismatches(workload, fields)
    assert not wrong, wrong


@pytest.fixture(scope="module")
def merge_report() -> dict[str, Any]:
    # A small log-block run that merges constantly: 64 blocks, random 2 KiB writes.
    return flashlab.run(
        "kast-slc",
        ftl="kast",
        workload="randwrite:bs=2k,count=4000",
        precondition=0.5,
        set={"geometry.blocks_per_plane": 64, "ftl.log_blocks": 8, "ftl.max_associativity": 4},
    )


def check_against_section(report: dict[str, Any], heading: str, root: str) -> None:
    """Every path under `root` of the report is documented in `## heading`, with its type, and
    every documented path is in the report (the keys of a documented object are checked only when
    the doc lists them, e.g. not those of `ftl_details.settings`)."""
    fields = documented_fields(heading)
    missing = [path for path in fields if lookup(report, path) is _MISSING]
    assert not missing, f"documented under {heading!r} but not in the report: {missing}"
    scoped = {root: lookup(report, root)}
    opaque = [
        p
        for p, t in fields.items()
        if t == "object" and not any(q.startswith(p + ".") for q in fields)
    ]
    undocumented = [
        p
        for p in key_paths(scoped)
        if p != root and p not in fields and not any(p.startswith(o + ".") for o in opaque)
    ]
    assert not undocumented, f"in the report but not documented under {heading!r}: {undocumented}"
    wrong = type_mismatches(report, fields)
    assert not wrong, wrong


def test_log_block_details_match_their_documentation(merge_report: dict[str, Any]) -> None:
    assert merge_report["ftl"] == "kast"
    check_against_section(merge_report, "Log-block FTL fields", "ftl_details")


def test_demand_ftl_details_match_their_documentation() -> None:
    report = flashlab.run(
        "fmmu-16ch",
        ftl="fmmu",
        workload="randwrite:count=2000",
        precondition=0.5,
        set={
            "geometry.pages_per_block": 32,
            "geometry.blocks_per_plane": 32,
            "run.precondition_max_passes": 0,
        },
    )
    check_against_section(report, "Demand-paged FTL fields", "ftl_details")
    check_against_section(report, "Map unit queue fields", "utilisation.map_unit_queues")
    assert report["ftl_details"]["translation_dies"] == 128


def test_nftl_details_match_their_documentation() -> None:
    report = flashlab.run(
        "nftl-samsung",
        ftl="nftl",
        workload="randrw:count=2000",
        set={
            "geometry.blocks_per_plane": 256,
            "ftl.lookup_table": True,
            "ftl.page_cache_entries": 64,
        },
    )
    check_against_section(report, "NFTL fields", "ftl_details")
    ram = report["ftl_details"]["ram"]
    parts = ("mapping_table_bytes", "lookup_table_bytes", "page_cache_bytes")
    assert ram["total_bytes"] == sum(ram[k] for k in parts)
    assert ram["page_cache_bytes"] == 64 * 8
    counters = report["ftl_details"]["counters"]
    assert counters["gc_folds"] <= counters["folds"]


def test_merges_match_their_documentation(
    merge_report: dict[str, Any], report: dict[str, Any]
) -> None:
    assert report["merges"] is None, "a page-mapping FTL does not merge"
    fields = documented_fields("Merge fields")
    merges = {"merges": merge_report["merges"]}
    missing = [path for path in fields if lookup(merges, path) is _MISSING]
    assert not missing, f"documented but not in a log-block report: {missing}"
    undocumented = [p for p in key_paths(merges) if p != "merges" and p not in fields]
    assert not undocumented, f"in a log-block report but not documented: {undocumented}"
    wrong = type_mismatches(merges, fields)
    assert not wrong, wrong
    m = merge_report["merges"]
    assert m["total"] == m["switch"] + m["partial"] + m["full"] + m["fold"] > 0
    assert sum(n for _, n in m["associativity"]["histogram"]) == m["total"]
    assert m["associativity"]["max"] <= 4
    assert 0 < m["blocking_ns"]["max"] <= m["predicted_worst_blocking_ns"]


def test_part_ftl_details_match_their_documentation() -> None:
    report = flashlab.run(
        "cosmos",
        ftl="part-ftl",
        workload="randrw:bs=8k,count=3000",
        precondition=1.0,
        set={
            "geometry.pages_per_block": 32,
            "geometry.blocks_per_plane": 16,
            "run.precondition_max_passes": 1,
        },
    )
    check_against_section(report, "PaRT-FTL fields", "ftl_details")
    assert report["ftl_details"]["write_set_dies"] == 4
    assert report["ftl_details"]["counters"]["rebuilt_reads"] > 0


def _paths_into_lists(value: Any, prefix: str) -> dict[str, Any]:
    """Every path under `prefix` with its value, into lists as `key[]` (the first item)."""
    found: dict[str, Any] = {prefix: value}
    if isinstance(value, dict):
        for key, child in value.items():
            found.update(_paths_into_lists(child, f"{prefix}.{key}"))
    elif isinstance(value, list) and value:
        found.update(_paths_into_lists(value[0], f"{prefix}[]"))
    return found


def test_admission_matches_its_documentation() -> None:
    report = flashlab.run(
        "cosmos-table-iv",
        ftl="wao-gc",
        workload="periodic:tasks=4xw12p@60ms+4xr3p@15ms,duration=200ms",
        precondition=1.0,
        set={"geometry.blocks_per_plane": 64, "run.precondition_max_passes": 1},
    )
    part = flashlab.run(
        "cosmos-table-iv",
        ftl="part-ftl",
        workload="periodic:tasks=4xw12p@60ms+4xr3p@15ms,duration=200ms",
        precondition=1.0,
        set={"geometry.blocks_per_plane": 64, "run.precondition_max_passes": 1},
    )
    fields = documented_fields("Admission fields")
    seen: dict[str, Any] = {}
    # WAO-GC's test has requests, PaRT-FTL's terms: together every documented path.
    for r in (report, part):
        seen.update(_paths_into_lists(r["admission"], "admission"))
    missing = [p for p in fields if p not in seen]
    assert not missing, f"documented but not in the reports: {missing}"
    undocumented = [p for p in seen if p != "admission" and p not in fields]
    assert not undocumented, f"in the reports but not documented: {undocumented}"
    wrong = [
        f"{p} = {seen[p]!r} ({t})"
        for p, t in fields.items()
        if not fits_documented_type(seen[p], t)
    ]
    assert not wrong, wrong
    assert part["admission"]["outcome"] in ("refused, no miss", "refused, missed")
    assert part["admission"]["analysis"]["notes"][0].startswith("section VI.B says this set")
