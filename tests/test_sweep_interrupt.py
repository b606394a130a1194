"""Ctrl-C stops a sweep within seconds, on a process pool and on a thread pool alike.

Each case starts a sweep in a child process of its own session (so the signal reaches only it
and its workers), waits until its first points are cached and the slow ones are running, then
sends SIGINT the way a terminal does (to the whole process group) or to the sweep's process
alone (`kill -INT`). The child must end within seconds, interrupted (KeyboardInterrupt from
`flashlab.sweep`, death by SIGINT from `flashlab sweep`, which a shell shows as 130), leave no
process behind, and leave its cache valid: the finished points in it, nothing half-written,
and a rerun computes only the others.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import Executor, Future
from pathlib import Path
from typing import Any

import pytest

import flashlab

pandas = pytest.importorskip("pandas")

if not Path("/proc/self/stat").exists():
    pytest.skip("finds leftover processes through /proc (Linux)", allow_module_level=True)

# Seconds from SIGINT to the end of the sweep's process: the runs look at their stop flag every
# few milliseconds; the rest is shutting the pool down.
MAX_EXIT_S = 5.0

BASE: dict[str, object] = {
    "device": "default",
    "workload": "randwrite:bs=4k,qd=8",
    "precondition": 0.0,
    "geometry.channels": 2,
    "geometry.chips_per_channel": 2,
    "geometry.blocks_per_plane": 16,
    "ftl.over_provisioning": 0.25,
}
# Two quick points (a tenth of a second each), then up to four of hours each.
QUICK = [{"workload.count": 2000, "seed": seed} for seed in (1, 2)]
SLOW = [{"workload.count": 10**9, "seed": seed} for seed in (1, 2, 3, 4)]

CHILD = r"""
import json, sys
from concurrent.futures import ThreadPoolExecutor
import flashlab

base, grid, cache, pool = json.loads(sys.argv[1])
try:
    if pool == "threads":
        with ThreadPoolExecutor(max_workers=2) as executor:
            flashlab.sweep(base, grid, cache=cache, executor=executor, progress=False)
    else:
        flashlab.sweep(base, grid, cache=cache, max_workers=2, progress=False)
except KeyboardInterrupt:
    print("KeyboardInterrupt", flush=True)
    raise
print("finished", flush=True)
"""

GRID_TOML = """\
[base]
device = "default"
workload = "randwrite:bs=4k,qd=8"
precondition = 0.0
geometry = { channels = 2, chips_per_channel = 2, blocks_per_plane = 16 }
ftl.over_provisioning = 0.25

[[points]]
workload.count = 2000
seed = 1
[[points]]
workload.count = 2000
seed = 2
"""
GRID_TOML += "".join(
    f"[[points]]\nworkload.count = {10**9}\nseed = {seed}\n" for seed in (1, 2, 3, 4)
)


def start_sweep(
    kind: str, grid: list[dict[str, int]], tmp_path: Path
) -> tuple[subprocess.Popen[str], Path]:
    """Starts the sweep in a session of its own; returns it and its cache directory."""
    if kind == "command":
        assert grid == QUICK + SLOW
        grid_toml = tmp_path / "grid.toml"
        grid_toml.write_text(GRID_TOML)
        out = tmp_path / "out"
        command = [sys.executable, "-m", "flashlab", "sweep", str(grid_toml), "--out", str(out)]
        command += ["--workers", "2", "--quiet"]
        cache = out / "cache"
    else:
        cache = tmp_path / "cache"
        arguments = json.dumps([BASE, grid, str(cache), kind])
        command = [sys.executable, "-c", CHILD, arguments]
    child = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    return child, cache


def wait_until_the_slow_points_run(child: subprocess.Popen[str], cache: Path) -> None:
    """Waits until the quick points are cached, then a little more (the slow ones start)."""
    deadline = time.monotonic() + 60
    while len(list(cache.glob("*.json"))) < len(QUICK):
        assert child.poll() is None, f"the sweep ended early: {child.communicate()}"
        assert time.monotonic() < deadline, "the quick points did not finish in 60 s"
        time.sleep(0.05)
    time.sleep(0.5)
    assert child.poll() is None, f"the sweep ended before it was interrupted: {child.communicate()}"


def processes_in_group(group: int) -> list[str]:
    """Live processes of a process group (zombies excluded): `pid command`."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue  # ended meanwhile
        name_end = text.rindex(")")
        state, _parent, pgrp = text[name_end + 2 :].split()[:3]
        if int(pgrp) == group and state != "Z":
            found.append(f"{stat.parent.name} {text[text.index('(') + 1 : name_end]}")
    return found


class FailingExecutor(Executor):
    """Counts the points a sweep submits and fails each at once (nothing runs)."""

    def __init__(self) -> None:
        self.submitted = 0

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.submitted += 1
        future: Future[Any] = Future()
        future.set_exception(RuntimeError("not run"))
        return future


@pytest.mark.parametrize(
    ("kind", "target", "slow"),
    [
        ("processes", "group", 4),  # Ctrl-C in a terminal: the sweep and its workers
        ("processes", "group", 1),  # one worker idle when it comes
        ("processes", "parent", 4),  # kill -INT of the sweep's process only
        ("threads", "group", 4),
        ("command", "group", 4),
        ("command", "parent", 4),
    ],
)
def test_ctrl_c_stops_the_sweep_and_keeps_a_valid_cache(
    kind: str, target: str, slow: int, tmp_path: Path
) -> None:
    grid = QUICK + SLOW[:slow]
    child, cache = start_sweep(kind, grid, tmp_path)
    try:
        wait_until_the_slow_points_run(child, cache)
        if target == "group":
            os.killpg(child.pid, signal.SIGINT)
        else:
            os.kill(child.pid, signal.SIGINT)
        sent = time.monotonic()
        try:
            stdout, stderr = child.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            pytest.fail(f"still running 15 s after SIGINT: {processes_in_group(child.pid)}")
        took = time.monotonic() - sent
        left = processes_in_group(child.pid)
        deadline = time.monotonic() + 2  # a pool's helper processes see their pipe close
        while left and time.monotonic() < deadline:
            time.sleep(0.1)
            left = processes_in_group(child.pid)
    finally:
        if child.poll() is None or processes_in_group(child.pid):
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    assert took < MAX_EXIT_S, f"ended {took:.1f} s after SIGINT\n{stderr}"
    # A shell shows death by SIGINT as status 130, as for the native commands.
    assert child.returncode == -signal.SIGINT, (child.returncode, stdout, stderr)
    if kind == "command":
        assert "flashlab sweep: interrupted" in stderr, stderr
        assert not (tmp_path / "out" / "sweep.csv").exists()
    else:
        assert stdout.splitlines() == ["KeyboardInterrupt"], (stdout, stderr)
    assert not left, f"processes left behind: {left}"
    assert "_process_worker" not in stderr, f"a worker was interrupted, not stopped: {stderr}"

    # The cache holds the quick points, whole, and nothing else (no temporary file).
    entries = sorted(cache.iterdir())
    assert len(entries) == len(QUICK) and all(e.suffix == ".json" for e in entries), entries
    for entry in entries:
        assert json.loads(entry.read_text())["schema"] == "flashlab.report/2"
    # A rerun reads them and submits only the slow points.
    executor = FailingExecutor()
    again = flashlab.sweep(BASE, grid, cache=cache, executor=executor, progress=False)
    assert again.attrs["sweep"] == {
        "points": len(grid),
        "computed": 0,
        "cache_hits": len(QUICK),
        "failed": slow,
    }
    assert executor.submitted == slow


def test_an_interrupted_cache_write_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sweep_module = importlib.import_module("flashlab.sweep")

    def interrupted(source: str, target: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        sweep_module._write_atomically(tmp_path / "entry.json", '{"schema": "x"}')
    assert list(tmp_path.iterdir()) == []


def test_a_damaged_cache_entry_is_computed_again_and_replaced(tmp_path: Path) -> None:
    grid = QUICK[:1]
    first = flashlab.sweep(BASE, grid, cache=tmp_path, max_workers=1, progress=False)
    (entry,) = tmp_path.glob("*.json")
    entry.write_text('{"schema": "flashlab.report/2", "host": {"all"')  # cut short
    again = flashlab.sweep(BASE, grid, cache=tmp_path, max_workers=1, progress=False)
    assert again.attrs["sweep"]["computed"] == 1 and again.attrs["sweep"]["cache_hits"] == 0
    pandas.testing.assert_frame_equal(again, first)
    assert json.loads(entry.read_text())["schema"] == "flashlab.report/2"
