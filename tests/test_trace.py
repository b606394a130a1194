"""Block traces from Python: `flashlab.trace_stats` and `flashlab.run(trace=...)`.

Uses the real MQSim traces of the repository's ``traces/`` (read only): TPC-C (6,999
requests, 16 devices, about 136 ms, 63% reads) and WebSearch (24,783 requests, 6 devices,
about 60 s, almost only reads). Both are DiskSim ASCII with integer nanosecond timestamps.
"""

from __future__ import annotations

import gzip
import threading
from pathlib import Path
from typing import Any

import pytest

import flashlab

TRACES = Path(__file__).resolve().parents[1] / "traces"
TPCC = TRACES / "mqsim_tpcc-small.trace"
WSRCH = TRACES / "mqsim_wsrch-small.trace"

# Closed-loop replay on a fresh device: fast, and independent of the trace's timestamps.
CLOSED = {"trace.replay": "closed", "trace.queue_depth": 16}


@pytest.fixture(scope="module")
def tpcc() -> dict[str, Any]:
    return flashlab.trace_stats(TPCC)


@pytest.fixture(scope="module")
def tpcc_run() -> dict[str, Any]:
    return flashlab.run(trace=TPCC, precondition=0, set=dict(CLOSED))


def test_traces_exist() -> None:
    for path in (TPCC, WSRCH):
        assert path.is_file(), f"{path} is missing (the real traces ship with the repository)"


# ---------------------------------------------------------------------------------------------
# trace_stats
# ---------------------------------------------------------------------------------------------


def test_tpcc_stats(tpcc: dict[str, Any]) -> None:
    assert tpcc["schema"] == "flashlab.trace-stats/1"
    assert tpcc["format"] == "disksim-ns"
    assert tpcc["compression"] == "none"
    assert tpcc["lines"] == 6999
    assert tpcc["bad_lines"] == 0
    s = tpcc["stats"]
    assert s["requests"] == 6999
    assert s["read"]["count"] == 4381
    assert s["write"]["count"] == 2618
    assert s["trim"]["count"] == s["flush"]["count"] == 0
    assert s["read_fraction"] == pytest.approx(0.626, abs=0.001)
    assert s["read_fraction"] == pytest.approx(4381 / 6999)
    assert 0.13e9 <= s["duration_ns"] <= 0.14e9
    assert s["duration_ns"] == 1_075_002_000 - 938_513_000
    assert [d["device"] for d in s["devices"]] == list(range(16))
    assert sum(d["requests"] for d in s["devices"]) == 6999
    # Sizes are whole 512 B sectors; almost all requests are 8 KiB.
    assert s["read"]["bytes"] % 512 == 0 and s["write"]["bytes"] % 512 == 0
    assert s["write_footprint_bytes"] <= s["footprint_bytes"]
    assert 70 << 20 < s["footprint_bytes"] < 90 << 20
    assert s["skipped"] == {"other_devices": 0, "zero_length": 0, "late": 0, "max_late_ns": 0}


def test_wsrch_stats() -> None:
    result = flashlab.trace_stats(str(WSRCH))
    assert result["format"] == "disksim-ns"
    s = result["stats"]
    # 24,782 newlines: the last line has none, and it still counts.
    assert WSRCH.read_bytes().count(b"\n") == 24782
    assert s["requests"] == 24783
    assert result["lines"] == 24783
    assert len(s["devices"]) == 6
    assert sorted(d["device"] for d in s["devices"]) == list(range(6))
    assert s["read_fraction"] > 0.999
    assert 59e9 < s["duration_ns"] < 61e9


def test_disksim_ms_reads_times_as_milliseconds(tpcc: dict[str, Any]) -> None:
    ms = flashlab.trace_stats(TPCC, format="disksim-ms")
    assert ms["format"] == "disksim-ms"
    assert ms["stats"]["duration_ns"] == tpcc["stats"]["duration_ns"] * 1_000_000
    # Only the clock changes.
    assert ms["stats"]["requests"] == tpcc["stats"]["requests"]
    assert ms["stats"]["footprint_bytes"] == tpcc["stats"]["footprint_bytes"]


def test_explicit_disksim_ns_matches_detection(tpcc: dict[str, Any]) -> None:
    explicit = flashlab.trace_stats(TPCC, format="disksim-ns")
    assert explicit["notes"] == []
    assert "disksim-ns" in tpcc["notes"][0] and "disksim-ms" in tpcc["notes"][0]
    assert {**explicit, "notes": tpcc["notes"]} == tpcc


def test_devices_and_max_requests(tpcc: dict[str, Any]) -> None:
    by_device = {d["device"]: d["requests"] for d in tpcc["stats"]["devices"]}
    some = flashlab.trace_stats(TPCC, devices=[0, 3])
    assert some["stats"]["requests"] == by_device[0] + by_device[3]
    assert some["stats"]["skipped"]["other_devices"] == 6999 - some["stats"]["requests"]
    assert flashlab.trace_stats(TPCC, devices="0,3")["stats"] == some["stats"]
    assert flashlab.trace_stats(TPCC, max_requests=100)["stats"]["requests"] == 100
    assert flashlab.trace_stats(TPCC, max_requests=None)["stats"]["requests"] == 6999


def test_compressed_trace_is_read_transparently(tmp_path: Path, tpcc: dict[str, Any]) -> None:
    packed = tmp_path / "tpcc.trace.gz"
    packed.write_bytes(gzip.compress(TPCC.read_bytes()))
    result = flashlab.trace_stats(packed)
    assert result["compression"] == "gzip"
    assert result["stats"] == tpcc["stats"]


def test_unterminated_last_line_counts(tmp_path: Path) -> None:
    lines = TPCC.read_text().splitlines()[:5]
    for ending, name in (("\n", "terminated.trace"), ("", "unterminated.trace")):
        path = tmp_path / name
        path.write_text("\n".join(lines) + ending)
        result = flashlab.trace_stats(path, format="disksim-ns")
        assert result["lines"] == 5, name
        assert result["stats"]["requests"] == 5, name


def malformed(tmp_path: Path) -> tuple[Path, str]:
    """The first 10 lines of TPC-C with line 3's sector number replaced by text."""
    lines = TPCC.read_text().splitlines()[:10]
    fields = lines[2].split()
    fields[2] = "xyz"
    lines[2] = " ".join(fields)
    path = tmp_path / "bad.trace"
    path.write_text("\n".join(lines) + "\n")
    return path, lines[2]


@pytest.mark.parametrize("format", ["auto", "disksim-ns"])
def test_malformed_line_names_file_line_and_text(tmp_path: Path, format: str) -> None:
    path, bad = malformed(tmp_path)
    with pytest.raises(flashlab.ConfigError) as info:
        flashlab.trace_stats(path, format=format)
    message = str(info.value)
    assert f"{path}:3" in message
    assert bad in message
    assert "blkno" in message
    assert isinstance(info.value, ValueError)


def test_skip_bad_lines_counts_them(tmp_path: Path) -> None:
    path, _ = malformed(tmp_path)
    result = flashlab.trace_stats(path, skip_bad_lines=True)
    assert result["bad_lines"] == 1
    assert result["lines"] == 10
    assert result["stats"]["requests"] == 9


@pytest.mark.parametrize(
    ("kwargs", "mentions"),
    [
        ({"format": "nope"}, ["nope", "msr", "disksim-ns", "generic"]),
        ({"devices": "zero"}, ["zero"]),
        ({"devices": [-1]}, ["-1"]),
        ({"max_requests": -5}, ["max_requests"]),
    ],
)
def test_bad_arguments_raise_config_error(kwargs: dict[str, Any], mentions: list[str]) -> None:
    with pytest.raises(flashlab.ConfigError) as info:
        flashlab.trace_stats(TPCC, **kwargs)
    for m in mentions:
        assert m in str(info.value)


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    missing = tmp_path / "nosuch.trace"
    with pytest.raises(flashlab.ConfigError, match="nosuch.trace"):
        flashlab.trace_stats(missing)


def test_undetectable_format(tmp_path: Path) -> None:
    path = tmp_path / "prose.txt"
    path.write_text("this is not a trace\nnor is this\n")
    with pytest.raises(flashlab.ConfigError, match="trace format"):
        flashlab.trace_stats(path)


def test_trace_stats_in_parallel_threads_agree() -> None:
    # Threads reading traces in parallel give the same results as one at a time.
    expected = flashlab.trace_stats(WSRCH)
    results: list[dict[str, Any]] = []

    def work() -> None:
        results.append(flashlab.trace_stats(WSRCH))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 4


# ---------------------------------------------------------------------------------------------
# run(trace=...)
# ---------------------------------------------------------------------------------------------


def test_run_replays_the_trace(tpcc_run: dict[str, Any]) -> None:
    w = tpcc_run["workload"]
    assert w["kind"] == "trace"
    assert w["name"] == "mqsim_tpcc-small.trace"
    assert w["format"] == "disksim-ns"
    assert w["compression"] == "none"
    assert w["replay"]["mode"] == "closed"
    assert w["replay"]["queue_depth"] == 16
    summary = w["summary"]
    assert summary["requests"] == 6999
    assert summary["reads"] == 4381 and summary["writes"] == 2618
    assert summary["bad_lines"] == 0 and summary["warmup_requests"] == 0
    assert sorted(summary["devices"]) == list(range(16))
    assert summary["address"]["mode"] == "compact"
    host = tpcc_run["host"]
    assert host["all"]["count"] == 6999
    assert host["read"]["count"] == 4381
    assert host["write"]["count"] == 2618
    assert tpcc_run["config"]["trace"]["path"] == str(TPCC)


def test_run_bytes_match_the_trace(tpcc: dict[str, Any], tpcc_run: dict[str, Any]) -> None:
    # The MQSim sizes are whole sectors: nothing is widened, every byte is replayed.
    assert tpcc_run["workload"]["summary"]["address"]["widened_requests"] == 0
    host = tpcc_run["host"]
    assert host["read"]["bytes"] == tpcc["stats"]["read"]["bytes"]
    assert host["write"]["bytes"] == tpcc["stats"]["write"]["bytes"]


def test_run_warmup_requests_leave_the_statistics() -> None:
    report = flashlab.run(trace=TPCC, precondition=0, set={**CLOSED, "trace.warmup_requests": 1000})
    assert report["workload"]["summary"]["warmup_requests"] == 1000
    assert report["workload"]["summary"]["requests"] == 6999
    assert report["host"]["all"]["count"] == 5999


def test_run_with_explicit_format_and_limit() -> None:
    report = flashlab.run(
        trace=str(TPCC),
        trace_format="disksim-ns",
        precondition=0,
        set={**CLOSED, "trace.max_requests": 500},
    )
    assert report["workload"]["format"] == "disksim-ns"
    assert report["config"]["trace"]["format"] == "disksim-ns"
    assert report["host"]["all"]["count"] == 500


def test_run_open_loop_keeps_the_trace_clock() -> None:
    report = flashlab.run(trace=TPCC, precondition=0, set={"trace.max_requests": 2000})
    assert report["workload"]["replay"]["mode"] == "open"
    assert report["host"]["all"]["count"] == 2000
    # Requests arrive at the trace's times: the run lasts at least as long as they span.
    assert report["elapsed_ns"] >= report["workload"]["summary"]["trace_duration_ns"] > 0


def test_run_unknown_trace_format() -> None:
    with pytest.raises(flashlab.ConfigError) as info:
        flashlab.run(trace=TPCC, trace_format="nope", precondition=0)
    message = str(info.value)
    assert "trace.format" in message and "nope" in message and "disksim-ns" in message


def test_run_malformed_trace(tmp_path: Path) -> None:
    path, bad = malformed(tmp_path)
    with pytest.raises(flashlab.ConfigError) as info:
        flashlab.run(trace=path, precondition=0)
    assert f"{path}:3" in str(info.value)
    assert bad in str(info.value)


def test_run_trace_that_does_not_fit() -> None:
    with pytest.raises(flashlab.ConfigError, match="compact or wrap"):
        flashlab.run(trace=TPCC, precondition=0, set={"trace.address_map": "none"})
