"""What a sweep checks before any point runs: its size, its workers, its keys, its outputs.

A grid is counted before it is expanded and refused above `max_points`; the local pool has at
most one process per core and per point; a grid without points, a key the configuration does
not have, an argument given with its own setting (`ftl` and `ftl.name`), and a sweep none of
whose points can run are refused (exit 2 from `flashlab sweep`); output that cannot be written
is found before the first run (exit 74).
"""

from __future__ import annotations

import concurrent.futures
import importlib
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import Executor, Future
from pathlib import Path
from typing import Any

import pytest

import flashlab

sweep_module = importlib.import_module("flashlab.sweep")  # flashlab.sweep is the function

pandas = pytest.importorskip("pandas")

# A device of 2 x 2 x 2 x 2 x 16 blocks, 2,000 writes: about 0.1 s a point.
BASE: dict[str, object] = {
    "device": "default",
    "workload": "randwrite:bs=4k,qd=8,count=2000",
    "precondition": 0.5,
    "geometry.channels": 2,
    "geometry.chips_per_channel": 2,
    "geometry.blocks_per_plane": 16,
    "ftl.over_provisioning": 0.25,
}


class Axis(Sequence[int]):
    """An axis of `length` values that fails the test if the grid is expanded."""

    def __init__(self, length: int) -> None:
        self.length = length

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: Any) -> Any:
        raise AssertionError("the grid was expanded before its size was checked")


class NothingRuns(Executor):
    """An executor that fails the test when a point is submitted."""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        raise AssertionError(f"a point was submitted: {args}")


def flashlab_command(*args: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "flashlab", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)


def grid_file(tmp_path: Path, grid: str, base: str = "") -> Path:
    path = tmp_path / "grid.toml"
    path.write_text(
        '[base]\ndevice = "default"\nworkload = "randwrite:bs=4k,qd=8,count=2000"\n'
        "precondition = 0.5\nftl.over_provisioning = 0.25\n"
        "geometry = { channels = 2, chips_per_channel = 2, blocks_per_plane = 16 }\n"
        f"{base}\n{grid}\n"
    )
    return path


# --- size (issue 25, class 5) ---------------------------------------------------------------


def test_a_grid_of_a_billion_points_is_refused_with_its_figures_before_expansion() -> None:
    grid = {"ftl.over_provisioning": Axis(1000), "workload.queue_depth": Axis(1000)}
    with pytest.raises(ValueError) as refused:
        flashlab.sweep(BASE, grid, seeds=range(1000), executor=NothingRuns(), progress=False)
    message = str(refused.value)
    assert "1,000,000,000 points" in message
    assert "1,000 ftl.over_provisioning x 1,000 workload.queue_depth x 1,000 seeds" in message
    assert "max_points = 100,000" in message and "--max-points" in message
    with pytest.raises(ValueError, match="1,000,000 seeds are more than max_points"):
        flashlab.sweep_points({"seed": [1]}, seeds=range(10**6))
    with pytest.raises(ValueError, match="more than max_points"):
        flashlab.sweep_points([{"seed": 1}] * 3, seeds=iter(range(10**12)), max_points=10)


def test_max_points_raises_the_limit() -> None:
    grid = {"workload.queue_depth": [1, 2, 4]}
    with pytest.raises(ValueError, match=r"3 points \(3 workload.queue_depth\)"):
        flashlab.sweep_points(grid, max_points=2)
    assert len(flashlab.sweep_points(grid, max_points=3)) == 3
    with pytest.raises(ValueError, match="max_points: 0 is not at least 1"):
        flashlab.sweep_points(grid, max_points=0)


def test_the_command_refuses_a_grid_above_max_points(tmp_path: Path) -> None:
    grid = grid_file(tmp_path, "[grid]\nseed = [1, 2, 3]\n")
    done = flashlab_command("sweep", grid, "--out", tmp_path / "out", "--max-points", "2")
    assert done.returncode == 2, done.stderr
    assert "3 points (3 seed) are more than max_points = 2" in done.stderr
    assert not (tmp_path / "out" / "sweep.csv").exists()


class RecordingPool(concurrent.futures.ProcessPoolExecutor):
    """A process pool that records the workers asked for and starts one."""

    asked: list[int | None] = []

    def __init__(self, max_workers: int | None = None, **kwargs: Any) -> None:
        RecordingPool.asked.append(max_workers)
        super().__init__(1, **kwargs)


@pytest.mark.parametrize(
    ("max_workers", "points", "expected"),
    [
        (10_000, 2, 2),  # never more than the points
        (10_000, 40, "cores"),  # nor than the cores
        (None, 1, 1),
        (1, 40, 1),
    ],
)
def test_the_local_pool_has_at_most_one_process_per_core_and_per_point(
    max_workers: int | None,
    points: int,
    expected: int | str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cores = sweep_module._usable_cores()
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", RecordingPool)
    monkeypatch.setattr(RecordingPool, "asked", [])
    grid = {"workload.count": [2 + i for i in range(points)]}
    flashlab.sweep(BASE, grid, max_workers=max_workers)
    wanted = min(cores, points) if expected == "cores" else expected
    assert RecordingPool.asked == [min(wanted, cores)]
    note = f"{10_000:,} workers asked, {cores} used"
    assert (note in capsys.readouterr().err) == (max_workers == 10_000 and cores < 10_000)


def test_a_worker_count_below_one_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="max_workers: 0 is not at least 1"):
        flashlab.sweep(BASE, {"seed": [1]}, max_workers=0, progress=False)
    with pytest.raises(TypeError, match="max_workers: expected a whole number"):
        flashlab.sweep(BASE, {"seed": [1]}, max_workers=1.5, progress=False)  # type: ignore[arg-type]
    grid = grid_file(tmp_path, "[grid]\nseed = [1]\n")
    done = flashlab_command("sweep", grid, "--out", tmp_path / "out", "--workers", "0")
    assert done.returncode == 2 and "--workers: 0 is not at least 1" in done.stderr


# --- ambiguities (issue 25, class 9) --------------------------------------------------------


@pytest.mark.parametrize(
    ("grid", "seeds", "message"),
    [
        (
            {"ftl.name": ["pagemap"], "workload.queue_depth": []},
            None,
            "axis 'workload.queue_depth' is empty",
        ),
        ([], None, "an empty list of points"),
        ({"ftl.name": ["pagemap"]}, [], "seeds is empty"),
    ],
)
def test_a_grid_without_points_is_refused(grid: Any, seeds: Any, message: str) -> None:
    with pytest.raises(ValueError, match=f"the grid has no points.*{message}"):
        flashlab.sweep(BASE, grid, seeds=seeds, executor=NothingRuns(), progress=False)


def test_the_command_refuses_a_grid_without_points(tmp_path: Path) -> None:
    grid = grid_file(tmp_path, "[grid]\nftl.name = []\n")
    done = flashlab_command("sweep", grid, "--out", tmp_path / "out")
    assert done.returncode == 2, done.stderr
    assert "the grid has no points because axis 'ftl.name' is empty" in done.stderr
    assert not (tmp_path / "out" / "sweep.csv").exists()


UNKNOWN_KEYS: list[tuple[dict[str, object], Any, str]] = [
    (
        {"geometry.bogus": 1},
        {"seed": [1]},
        "base: 'geometry.bogus' is not a setting: [geometry] has channels",
    ),
    ({"bogus.x": 1}, {"seed": [1]}, "base: 'bogus.x' is not a setting: there is no section"),
    (
        {"ftl.over_provisionning": 0.3},
        {"seed": [1]},
        "base: 'ftl.over_provisionning' is not a setting of pagemap",
    ),
    ({"set": {"run.bogus": 1}}, {"seed": [1]}, "base: 'run.bogus' is not a setting: [run] has"),
    ({}, {"workload.queue_dept": [1, 2]}, "grid: 'workload.queue_dept' is not a setting"),
    (
        {},
        [{"seed": 1}, {"ftl": "fmmu", "ftl.cach_ways": 4}],
        "grid[1]: 'ftl.cach_ways' is not a setting of pagemap or fmmu",
    ),
]


@pytest.mark.parametrize(("base", "grid", "message"), UNKNOWN_KEYS)
def test_a_key_the_configuration_lacks_is_refused_before_any_point_runs(
    base: dict[str, object], grid: Any, message: str
) -> None:
    with pytest.raises(flashlab.ConfigError) as refused:
        flashlab.sweep({**BASE, **base}, grid, executor=NothingRuns(), progress=False)
    assert message in str(refused.value)


def test_a_key_of_only_some_of_the_sweeps_ftls_fails_only_the_others_points() -> None:
    base = {**BASE, "ftl.cache_ways": 4}
    frame = flashlab.sweep(base, {"ftl": ["pagemap", "fmmu"]}, progress=False)
    assert frame["error"].notna().tolist() == [True, False]
    assert "cache_ways" in frame["error"][0]


def test_a_sweep_none_of_whose_points_can_run_is_refused() -> None:
    grid = {"ftl.over_provisioning": [0.99, 2.0]}
    with pytest.raises(flashlab.ConfigError) as refused:
        flashlab.sweep(BASE, grid, executor=NothingRuns(), progress=False)
    message = str(refused.value)
    assert "no point of the sweep can run" in message
    assert "ftl.over_provisioning=0.99" in message and "out of range" in message


def test_the_command_refuses_an_unknown_base_key_with_exit_2(tmp_path: Path) -> None:
    grid = grid_file(tmp_path, "[grid]\nseed = [1, 2]\n", base="run.precondition_passes = 4")
    done = flashlab_command("sweep", grid, "--out", tmp_path / "out")
    assert done.returncode == 2, done.stderr
    assert "base: 'run.precondition_passes' is not a setting: [run] has" in done.stderr
    assert not (tmp_path / "out" / "sweep.csv").exists()


ARGUMENTS_AND_SETTINGS = [
    ("ftl", "dftl", "ftl.name", "pagemap"),
    ("precondition", 0.5, "run.precondition", 0.2),
    ("seed", 3, "run.seed", 4),
    ("trace", "t.trace", "trace.path", "u.trace"),
    ("trace_format", "msr", "trace.format", "spc"),
]


@pytest.mark.parametrize(("argument", "value", "setting", "other"), ARGUMENTS_AND_SETTINGS)
def test_run_refuses_an_argument_and_its_setting_in_set(
    argument: str, value: object, setting: str, other: object
) -> None:
    arguments: dict[str, Any] = {argument: value, "set": {setting: other}}
    if argument.startswith("trace"):
        arguments["trace"] = "t.trace"
    for call in (flashlab.run, flashlab.resolve_config):
        with pytest.raises(flashlab.ConfigError) as refused:
            call("default", **arguments)
        message = str(refused.value)
        assert f"{argument}={value!r}" in message and f"set[{setting!r}]={other!r}" in message


@pytest.mark.parametrize(("argument", "value", "setting", "other"), ARGUMENTS_AND_SETTINGS)
def test_a_sweep_refuses_an_argument_and_its_setting_in_one_place(
    argument: str, value: object, setting: str, other: object
) -> None:
    together = {argument: value, setting: other}
    message = f"{argument!r} and {setting!r} are the same setting"
    with pytest.raises(ValueError, match=f"base: {message}"):
        flashlab.sweep({**BASE, **together}, {"seed": [1]}, progress=False)
    with pytest.raises(ValueError, match=f"base: {message}"):
        flashlab.sweep({**BASE, argument: value, "set": {setting: other}}, {"seed": [1]})
    with pytest.raises(ValueError, match=f"grid: {message}"):
        flashlab.sweep(BASE, {argument: [value], setting: [other]}, progress=False)
    with pytest.raises(ValueError, match=rf"grid\[1\]: {message}"):
        flashlab.sweep(BASE, [{"seed": 1}, together], progress=False)


def test_a_key_in_the_base_and_in_its_set_mapping_is_refused() -> None:
    base = {**BASE, "set": {"ftl.over_provisioning": 0.3}}
    with pytest.raises(ValueError, match="'ftl.over_provisioning' is given twice"):
        flashlab.sweep(base, {"seed": [1]}, executor=NothingRuns(), progress=False)


def test_a_points_argument_replaces_the_bases_setting_and_the_other_way_round() -> None:
    base = {k: v for k, v in BASE.items() if k != "precondition"}
    frame = flashlab.sweep(
        {**base, "ftl": "dftl", "run.seed": 7, "precondition": 0.5},
        [{"ftl.name": "pagemap", "seed": 8}, {"run.precondition": 0.25}],
        progress=False,
    )
    assert frame["error"].isna().all(), frame["error"]
    assert list(frame["ftl"]) == ["pagemap", "dftl"]
    settings = {k: v for k, v in base.items() if "." in k}
    eighth = flashlab.run(
        "default", "pagemap", str(BASE["workload"]), precondition=0.5, seed=8, set=settings
    )
    quarter = flashlab.run(
        "default", "dftl", str(BASE["workload"]), precondition=0.25, seed=7, set=settings
    )
    assert frame["all_latency_mean_ns"].tolist() == [
        eighth["host"]["all"]["latency_ns"]["mean"],
        quarter["host"]["all"]["latency_ns"]["mean"],
    ]


# --- output errors (issue 25, class 9) ------------------------------------------------------


@pytest.mark.parametrize(
    ("blocked", "options"),
    [("out", []), ("out", ["--no-cache"]), ("cache", ["--cache", "{blocker}/cache"])],
)
def test_output_that_cannot_be_written_exits_74_before_any_point_runs(
    blocked: str, options: list[str], tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")
    # Hours of runs if they started: the check must come first.
    grid = grid_file(tmp_path, "[grid]\nworkload.count = [1e9, 2e9]\n")
    out = blocker / "out" if blocked == "out" else tmp_path / "out"
    extra = [option.format(blocker=blocker) for option in options]
    command = [sys.executable, "-m", "flashlab", "sweep", str(grid), "--out", str(out), *extra]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail("the sweep started its points instead of refusing its output")
    assert done.returncode == 74, done.stderr
    assert "cannot be written" in done.stderr and "a-file" in done.stderr


def test_python_sweep_with_an_unwritable_cache_raises_before_any_point_runs(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(OSError):
        flashlab.sweep(BASE, {"seed": [1]}, cache=blocker / "cache", executor=NothingRuns())
    no_files = Path("/proc/self/fdinfo")  # a directory where not even root creates a file
    if no_files.is_dir():
        with pytest.raises(OSError):
            flashlab.sweep(BASE, {"seed": [1]}, cache=no_files, executor=NothingRuns())


def test_a_cache_write_failing_during_the_sweep_exits_74(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from flashlab.sweep_command import main

    def disk_full(path: Path, text: str) -> None:
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(sweep_module, "_write_atomically", disk_full)
    grid = grid_file(tmp_path, "[grid]\nseed = [1, 2]\n")
    status = main([str(grid), "--out", str(tmp_path / "out"), "--workers", "1", "--quiet"])
    assert status == 74
    assert "the cache cannot be written: [Errno 28] No space left" in capsys.readouterr().err
