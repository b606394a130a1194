"""`flashlab.sweep` and `flashlab sweep`: grids, executors (local pool, Dask), cache, failures."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import flashlab
from flashlab import _native

pandas = pytest.importorskip("pandas")

# 2 channels x 2 chips x 2 dies x 2 planes x 16 blocks, 2,000 requests: about 0.1 s a point.
BASE: dict[str, object] = {
    "device": "default",
    "workload": "randrw:read=0.5,bs=4k,qd=8,count=2000",
    "precondition": 0.5,
    "geometry.channels": 2,
    "geometry.chips_per_channel": 2,
    "geometry.blocks_per_plane": 16,
}
# 2 FTLs x 2 over-provisionings x 5 queue depths x 2 seeds = 40 points.
GRID: dict[str, list[object]] = {
    "ftl": ["pagemap", "dftl"],
    "ftl.over_provisioning": [0.25, 0.35],
    "workload.queue_depth": [1, 2, 4, 8, 16],
}
SEEDS = [1, 2]
OP = {"ftl.over_provisioning": 0.25}
SMALL_GRID: dict[str, list[object]] = {"ftl.over_provisioning": [0.15, 0.25], "seed": [1, 2]}


def without_bookkeeping(frame: Any) -> Any:
    return frame.drop(columns=["cached"])


@pytest.fixture(scope="module")
def local_sweep() -> Any:
    return flashlab.sweep(BASE, GRID, seeds=SEEDS, max_workers=2, progress=False)


@pytest.fixture(scope="module")
def dask_executor() -> Iterator[Any]:
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
    )
    client = distributed.Client(cluster)
    try:
        yield client.get_executor()
    finally:
        client.close()
        cluster.close()


def test_a_grid_is_every_combination_first_key_slowest_seeds_innermost() -> None:
    points = flashlab.sweep_points({"a.x": [1, 2], "b.y": ["p", "q"]}, seeds=[7, 8])
    assert points[:3] == [
        {"a.x": 1, "b.y": "p", "seed": 7},
        {"a.x": 1, "b.y": "p", "seed": 8},
        {"a.x": 1, "b.y": "q", "seed": 7},
    ]
    assert len(points) == 8
    assert flashlab.sweep_points([{"ftl": "dftl"}, {"seed": 4}]) == [{"ftl": "dftl"}, {"seed": 4}]


@pytest.mark.parametrize(
    ("grid", "error", "message"),
    [
        ({"over_provisioning": [0.1]}, ValueError, "neither a setting path"),
        ({"ftl.over_provisioning": 0.1}, TypeError, "expected a list of values"),
        ({"ftl.name": "pagemap"}, TypeError, "expected a list of values"),
        ([["ftl"]], TypeError, "grid\\[0\\]: expected a dict"),
        (42, TypeError, "grid: expected a dict"),
    ],
)
def test_a_malformed_grid_is_refused(grid: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        flashlab.sweep(BASE, grid, progress=False)


def test_seeds_and_a_seed_setting_are_not_combined() -> None:
    with pytest.raises(ValueError, match="seeds: the grid already sets the seed"):
        flashlab.sweep(BASE, {"seed": [1]}, seeds=[2], progress=False)
    with pytest.raises(ValueError, match="seeds: the base already sets the seed"):
        flashlab.sweep({**BASE, "run.seed": 4}, {"ftl": ["dftl"]}, seeds=[2], progress=False)


def test_a_grid_file_reads_nested_tables_as_setting_paths(tmp_path: Path) -> None:
    from flashlab.sweep_command import read_grid_file

    path = tmp_path / "points.toml"
    path.write_text(
        "[base]\nworkload = 'randread'\n[base.geometry]\nchannels = 2\n"
        "[[points]]\nftl = 'dftl'\n[[points]]\nftl.name = 'fmmu'\nftl.cache_ways = 4\n"
    )
    base, grid, seeds = read_grid_file(path)
    assert base == {"workload": "randread", "geometry.channels": 2}
    assert grid == [{"ftl": "dftl"}, {"ftl.name": "fmmu", "ftl.cache_ways": 4}]
    assert seeds is None


def test_the_sweep_has_one_row_per_point_in_grid_order(local_sweep: Any) -> None:
    assert len(local_sweep) == 40
    assert list(local_sweep.columns[:6]) == [
        "ftl",
        "ftl.over_provisioning",
        "workload.queue_depth",
        "seed",
        "error",
        "cached",
    ]
    assert local_sweep["error"].isna().all()
    assert list(local_sweep["seed"][:4]) == [1, 2, 1, 2]
    assert list(local_sweep["workload.queue_depth"][:4]) == [1, 1, 2, 2]
    assert local_sweep.attrs["sweep"] == {
        "points": 40,
        "computed": 40,
        "cache_hits": 0,
        "failed": 0,
    }


def test_the_sweep_equals_separate_runs_with_the_same_seeds(local_sweep: Any) -> None:
    rows = []
    for point in flashlab.sweep_points(GRID, SEEDS):
        settings = {k: v for k, v in BASE.items() if "." in k}
        settings["ftl.over_provisioning"] = point["ftl.over_provisioning"]
        settings["workload.queue_depth"] = point["workload.queue_depth"]
        report = flashlab.run(
            "default",
            ftl=str(point["ftl"]),
            workload=str(BASE["workload"]),
            precondition=0.5,
            seed=int(str(point["seed"])),
            set=settings,
        )
        rows.append({**point, **report.summary_fields()})
    expected = pandas.DataFrame(rows)
    pandas.testing.assert_frame_equal(local_sweep.drop(columns=["error", "cached"]), expected)


def test_a_dask_cluster_gives_the_same_frame_as_the_local_pool(
    local_sweep: Any, dask_executor: Any
) -> None:
    started = time.monotonic()
    on_dask = flashlab.sweep(BASE, GRID, seeds=SEEDS, executor=dask_executor, progress=False)
    print(f"40 points on the Dask LocalCluster: {time.monotonic() - started:.1f} s")
    pandas.testing.assert_frame_equal(on_dask, local_sweep)


def test_a_rerun_reads_every_point_from_the_cache(tmp_path: Path) -> None:
    first = flashlab.sweep(BASE, SMALL_GRID, cache=tmp_path, progress=False)
    assert first.attrs["sweep"]["computed"] == 4 and not first["cached"].any()
    assert len(list(tmp_path.glob("*.json"))) == 4
    again = flashlab.sweep(BASE, SMALL_GRID, cache=tmp_path, progress=False)
    assert again.attrs["sweep"] == {"points": 4, "computed": 0, "cache_hits": 4, "failed": 0}
    assert again["cached"].all()
    pandas.testing.assert_frame_equal(without_bookkeeping(again), without_bookkeeping(first))


def test_changing_one_setting_recomputes_only_the_points_it_changes(tmp_path: Path) -> None:
    flashlab.sweep(BASE, SMALL_GRID, cache=tmp_path, progress=False)
    changed = {"ftl.over_provisioning": [0.15, 0.3], "seed": [1, 2]}
    after = flashlab.sweep(BASE, changed, cache=tmp_path, progress=False)
    assert after.attrs["sweep"]["computed"] == 2 and after.attrs["sweep"]["cache_hits"] == 2
    assert list(after["cached"]) == [True, True, False, False]
    # A change of the base reaches every point.
    longer = {**BASE, "workload.count": 2500}
    assert (
        flashlab.sweep(longer, SMALL_GRID, cache=tmp_path, progress=False).attrs["sweep"][
            "computed"
        ]
        == 4
    )


def test_the_cache_is_keyed_by_the_resolved_configuration(tmp_path: Path) -> None:
    flashlab.sweep(BASE, SMALL_GRID, cache=tmp_path, progress=False)
    # Spelled otherwise, the same configuration: pagemap is the default FTL, ftl.name = ftl.
    spelled = {**BASE, "ftl.name": "pagemap"}
    again = flashlab.sweep(spelled, SMALL_GRID, cache=tmp_path, progress=False)
    assert again.attrs["sweep"]["cache_hits"] == 4


def test_another_flashlab_version_recomputes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flashlab.sweep(BASE, SMALL_GRID, cache=tmp_path, progress=False)
    monkeypatch.setattr(_native, "version", lambda: "999.0.0")
    after = flashlab.sweep(BASE, SMALL_GRID, cache=tmp_path, progress=False)
    assert after.attrs["sweep"]["computed"] == 4


class CountingExecutor(ThreadPoolExecutor):
    """A thread pool (any Executor will do) that counts the runs submitted to it."""

    def __init__(self) -> None:
        super().__init__(max_workers=2)
        self.submitted = 0

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        self.submitted += 1
        return super().submit(fn, *args, **kwargs)


def test_identical_points_run_once_on_any_executor(tmp_path: Path) -> None:
    grid = [{"ftl": "pagemap", **OP}, {"ftl.name": "pagemap", **OP}, {"seed": 5, **OP}]
    with CountingExecutor() as executor:
        frame = flashlab.sweep(BASE, grid, cache=tmp_path, executor=executor, progress=False)
    assert executor.submitted == 2
    assert frame.attrs["sweep"]["computed"] == 3
    assert frame.iloc[0]["all_latency_mean_ns"] == frame.iloc[1]["all_latency_mean_ns"]
    assert frame.iloc[0]["all_latency_mean_ns"] != frame.iloc[2]["all_latency_mean_ns"]
    assert len(list(tmp_path.glob("*.json"))) == 2


def test_failed_points_are_recorded_and_the_sweep_goes_on(tmp_path: Path) -> None:
    grid = [
        {"ftl.over_provisioning": 0.25},
        {"ftl.over_provisioning": 7.0},  # refused when the configuration is resolved
        {"run.max_memory_bytes": 1000, **OP},  # refused by the run, in the worker
        {"ftl.over_provisioning": 0.15},
    ]
    frame = flashlab.sweep(BASE, grid, cache=tmp_path, progress=False)
    assert frame["error"].isna().tolist() == [True, False, False, True]
    errors = list(frame["error"])
    assert errors[1].startswith("ConfigError:") and "over_provisioning" in errors[1]
    assert errors[2].startswith("ConfigError:") and "memory" in errors[2]
    assert frame["all_count"].isna().tolist() == [False, True, True, False]
    assert frame.attrs["sweep"]["failed"] == 2
    assert len(list(tmp_path.glob("*.json"))) == 2  # failures are not cached


def test_progress_and_cache_hits_are_reported_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flashlab.sweep(BASE, SMALL_GRID, cache=tmp_path, max_workers=1)
    flashlab.sweep(BASE, SMALL_GRID, cache=tmp_path, max_workers=1)
    err = capsys.readouterr().err
    assert "flashlab.sweep: 4 points: 4 computed, 0 from the cache, 0 failed" in err
    assert "flashlab.sweep: 4 points: 0 computed, 4 from the cache, 0 failed" in err


GRID_TOML = """\
seeds = [1, 2]

[base]
device = "default"
workload = "randrw:read=0.5,bs=4k,qd=8,count=2000"
precondition = 0.5
geometry = { channels = 2, chips_per_channel = 2 }
"geometry.blocks_per_plane" = 16

[grid]
ftl.name = ["pagemap", "nosuchftl"]
ftl.over_provisioning = [0.15, 0.25]
"""


def flashlab_command(*args: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "flashlab", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def test_the_sweep_command_writes_csv_and_parquet_and_reuses_its_cache(tmp_path: Path) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text(GRID_TOML)
    out = tmp_path / "out"
    done = flashlab_command("sweep", grid, "--out", out, "--workers", "2")
    assert done.returncode == 1, done.stderr  # some points failed
    assert "8 points: 4 computed, 0 from the cache, 4 failed" in done.stderr
    csv = pandas.read_csv(out / "sweep.csv")
    parquet = pandas.read_parquet(out / "sweep.parquet")
    assert len(csv) == len(parquet) == 8
    assert list(parquet.columns[:5]) == [
        "ftl.name",
        "ftl.over_provisioning",
        "seed",
        "error",
        "cached",
    ]
    assert parquet["error"].notna().tolist() == [False] * 4 + [True] * 4
    expected = flashlab.sweep(
        BASE, {"ftl.over_provisioning": [0.15, 0.25]}, seeds=[1, 2], progress=False
    )
    assert parquet["all_latency_p99_ns"][:4].tolist() == expected["all_latency_p99_ns"].tolist()
    again = flashlab_command("sweep", grid, "--out", out, "--quiet")
    assert "0 computed, 4 from the cache, 4 failed" not in again.stderr  # quiet
    assert pandas.read_parquet(out / "sweep.parquet")["cached"][:4].all()


def test_the_sweep_command_explains_bad_input(tmp_path: Path) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text("[base]\nworkload = 'randread'\n")
    done = flashlab_command("sweep", grid, "--out", tmp_path / "out")
    assert done.returncode == 2
    assert "either a [grid] table or [[points]] tables" in done.stderr
    missing = flashlab_command("sweep", grid)
    assert missing.returncode == 2 and "--out" in missing.stderr
