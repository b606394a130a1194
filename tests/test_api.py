"""Behaviour of the Python API (`flashlab.run`, `flashlab.presets`, errors)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import flashlab

# A small device (8 ch x 4 chips x 2 dies x 2 planes x 16 blocks) keeps every run well under a
# second.
SMALL = {"geometry.blocks_per_plane": 16, "ftl.over_provisioning": 0.25}
WORKLOAD = "randrw:read=0.5,bs=4k,qd=8,count=2000"


def small_run(**kwargs: Any) -> dict[str, Any]:
    options: dict[str, Any] = {"workload": WORKLOAD, "precondition": 0.5, "set": dict(SMALL)}
    options.update(kwargs)
    return flashlab.run("default", **options)


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    return small_run(seed=7)


def test_report_schema_and_counts(report: dict[str, Any]) -> None:
    assert report["schema"] == "flashlab.report/2"
    assert report["preset"] == "default"
    host = report["host"]
    assert host["all"]["count"] == 2000
    assert host["read"]["count"] + host["write"]["count"] == 2000
    # read=0.5: both kinds occur, in roughly equal numbers.
    assert 800 < host["read"]["count"] < 1200
    assert host["all"]["bytes"] == 2000 * 4096
    assert report["elapsed_ns"] > 0
    # 4 KiB writes fill 8 KiB pages in pairs; a half-filled page may stay buffered at the end.
    assert report["flash"]["programs"]["host"] >= host["write"]["count"] // 2
    assert report["write_amplification"] > 0.9


def test_report_reflects_the_settings(report: dict[str, Any]) -> None:
    config = report["config"]
    assert config["geometry"]["blocks_per_plane"] == 16
    assert config["ftl"]["over_provisioning"] == 0.25
    assert config["run"]["precondition"] == 0.5
    assert config["run"]["seed"] == 7
    assert config["workload"]["queue_depth"] == 8
    assert config["workload"]["read_fraction"] == 0.5


@pytest.mark.parametrize("kind", ["read", "write", "all"])
def test_latency_percentiles_are_ordered(report: dict[str, Any], kind: str) -> None:
    lat = report["host"][kind]["latency_ns"]
    assert 0 < lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p99_9"] <= lat["max"]
    assert lat["mean"] <= lat["max"]


def differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Key paths where two JSON values differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [
            d
            for key in sorted(a.keys() | b.keys())
            for d in differences(a.get(key, "<missing>"), b.get(key, "<missing>"), f"{path}.{key}")
        ]
    return [] if a == b and type(a) is type(b) else [f"{path}: {a!r} != {b!r}"]


def test_cli_json_report_equals_the_python_report(report: dict[str, Any], tmp_path: Path) -> None:
    # The same experiment through `flashlab run --json` (the report has no wall-time fields).
    out = tmp_path / "report.json"
    sets = [arg for key, value in SMALL.items() for arg in ("--set", f"{key}={value}")]
    args = ["run", "--quiet", "--device", "default", "--workload", WORKLOAD]
    args += ["--precondition", "0.5", "--seed", "7", *sets, "--json", str(out)]
    cli = subprocess.run(
        [sys.executable, "-m", "flashlab", *args], capture_output=True, text=True, check=False
    )
    assert cli.returncode == 0, cli.stderr
    from_cli = json.loads(out.read_text())
    assert differences(from_cli, report) == []


def test_same_seed_gives_identical_reports(report: dict[str, Any]) -> None:
    assert small_run(seed=7) == report


def test_other_seed_gives_another_run(report: dict[str, Any]) -> None:
    other = small_run(seed=8)
    assert other["host"]["all"]["count"] == 2000
    assert other["host"] != report["host"]


def test_runs_in_threads_match_sequential_runs() -> None:
    seeds = [1, 2, 3, 4]
    sequential = [small_run(seed=s) for s in seeds]
    with ThreadPoolExecutor(max_workers=len(seeds)) as pool:
        concurrent = list(pool.map(lambda s: small_run(seed=s), seeds))
    assert concurrent == sequential


def test_a_run_releases_the_gil() -> None:
    # While a run works in another thread, this thread keeps running Python code.
    worker = threading.Thread(target=small_run, kwargs={"seed": 9, "precondition": 1.0})
    ticks = [time.monotonic()]
    worker.start()
    while worker.is_alive():
        time.sleep(0.005)
        ticks.append(time.monotonic())
    worker.join()
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    assert ticks[-1] - ticks[0] > 0.2, "the run was too short to tell"
    assert max(gaps) < 0.1, f"this thread stood still for {max(gaps):.2f} s"


def test_bad_value_names_the_field() -> None:
    with pytest.raises(flashlab.ConfigError, match="geometry.channels"):
        small_run(set={**SMALL, "geometry.channels": 0})


def test_config_error_is_a_value_error() -> None:
    assert issubclass(flashlab.ConfigError, ValueError)
    assert issubclass(flashlab.SimulationError, RuntimeError)
    assert not issubclass(flashlab.ConfigError, flashlab.SimulationError)


def test_unknown_preset_is_named() -> None:
    with pytest.raises(flashlab.ConfigError, match="no-such-ssd"):
        flashlab.run("no-such-ssd", workload=WORKLOAD)


def test_unknown_workload_key() -> None:
    with pytest.raises(flashlab.ConfigError, match="bogus"):
        flashlab.run("default", workload="randwrite:bogus=1,count=10")


def test_unknown_workload_kind() -> None:
    with pytest.raises(flashlab.ConfigError, match="sideways"):
        flashlab.run("default", workload="sideways:count=10")


def test_unknown_setting_key() -> None:
    with pytest.raises(flashlab.ConfigError, match="no_such_field"):
        small_run(set={**SMALL, "geometry.no_such_field": 1})


def test_unknown_ftl() -> None:
    with pytest.raises(flashlab.ConfigError, match="no-such-ftl"):
        small_run(ftl="no-such-ftl")


def test_workload_fields_reach_the_run() -> None:
    report = small_run(workload="seqwrite:bs=8k,qd=4,count=500", precondition=0.0)
    host = report["host"]
    assert host["write"]["count"] == 500
    assert host["read"]["count"] == 0
    assert host["write"]["bytes"] == 500 * 8192
    assert report["config"]["workload"]["pattern"] == "sequential"
    assert report["config"]["workload"]["block_size"] == "8k"


def test_desktop_workload() -> None:
    report = small_run(workload="desktop:qd=4,count=3000", precondition=0.0)
    host = report["host"]
    assert host["all"]["count"] == 3000
    assert host["write"]["bytes"] > 0 and host["read"]["bytes"] > 0
    assert report["config"]["workload"]["pattern"] == "desktop"
    workload = report["workload"]
    assert workload["spec"] == "desktop:qd=4,count=3000"
    assert workload["footprint_bytes"] <= 0.6 * workload["addressed_bytes"]
    with pytest.raises(flashlab.ConfigError, match="`bs` does not apply to the desktop"):
        flashlab.run("default", workload="desktop:bs=4k,count=10")


def test_set_overrides_the_workload_argument() -> None:
    report = small_run(set={**SMALL, "workload.count": 300})
    assert report["host"]["all"]["count"] == 300


def test_set_values_of_every_type() -> None:
    settings = {
        **SMALL,
        "run.functional_only": True,  # bool
        "workload.block_size": "8k",  # str
        "workload.queue_depth": 3,  # int
        "workload.read_fraction": 0.25,  # float
    }
    report = small_run(set=settings)
    config = report["config"]
    assert config["run"]["functional_only"] is True
    assert report["host"]["all"]["bytes"] == 2000 * 8192
    assert config["workload"]["queue_depth"] == 3
    assert config["workload"]["read_fraction"] == 0.25
    assert 400 < report["host"]["read"]["count"] < 600


def test_config_file(tmp_path: Any) -> None:
    path = tmp_path / "exp.toml"
    path.write_text(
        'preset = "default"\n'
        "[geometry]\nblocks_per_plane = 16\n"
        "[ftl]\nover_provisioning = 0.25\n"
        "[workload]\ncount = 700\nqueue_depth = 4\n"
        "[run]\nprecondition = 0.0\nseed = 3\n"
    )
    report = flashlab.run(config=path)
    assert report["host"]["all"]["count"] == 700
    assert report["config"]["workload"]["queue_depth"] == 4
    assert report["config"]["run"]["seed"] == 3


def test_missing_config_file(tmp_path: Any) -> None:
    with pytest.raises(flashlab.ConfigError, match="missing.toml"):
        flashlab.run(config=tmp_path / "missing.toml")


def test_presets() -> None:
    names = flashlab.presets()
    assert "cosmos" in names
    assert "fmmu-16ch" in names
    assert names[0] == "default"
    assert len(names) == len(set(names))


def test_version() -> None:
    assert flashlab.__version__
    assert flashlab.__version__[0].isdigit()
