"""Ctrl-C stops a run or a trace read from Python within a second, in every long phase.

Each case runs in a child process (so a stray KeyboardInterrupt cannot end the test session):
a timer thread sends the child SIGINT while `flashlab.run` or `flashlab.trace_stats` works
with the GIL released, and the child reports whether the call raised KeyboardInterrupt and how
long after the signal.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# Prompt enough for a notebook user; the binding looks at signals every 50 ms.
MAX_DELAY_S = 1.0

CHILD = r"""
import json, os, signal, sys, threading, time
import flashlab

def call(kind, kwargs):
    if kind == "run":
        return flashlab.run(**kwargs)
    if kind == "trace_stats":
        return flashlab.trace_stats(**kwargs)
    raise ValueError(kind)

def interrupted_after(kind, kwargs, delay_s):
    # Calls, sending SIGINT after delay_s; the outcome and the seconds from signal to raise.
    sent = []
    def send():
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)
    timer = threading.Timer(delay_s, send)
    timer.start()
    try:
        call(kind, kwargs)
        outcome = "finished"
    except KeyboardInterrupt:
        outcome = "KeyboardInterrupt"
    ended = time.monotonic()
    timer.cancel()
    return {"outcome": outcome, "delay_s": ended - sent[0] if sent else None}

def seconds(kind, kwargs):
    started = time.monotonic()
    call(kind, kwargs)
    return time.monotonic() - started

results = []
for step in json.loads(sys.argv[1]):
    delay_s = step.get("signal_after_s")
    if delay_s is None:
        # A multiple of the time an uninterrupted call takes here, plus a margin.
        timed = step["signal_after_timed"]
        delay_s = timed["factor"] * seconds("run", timed["run"]) + timed["plus_s"]
    results.append(interrupted_after(step["call"], step["kwargs"], delay_s))
print(json.dumps(results))
"""


def interrupt(*steps: dict[str, Any], timeout_s: float = 60) -> list[dict[str, Any]]:
    """Runs the child on `steps`: each names the `call` and its `kwargs`, and when to send
    SIGINT: `signal_after_s`, or `signal_after_timed` (`factor` times the duration of an
    uninterrupted `run` with those arguments, `plus_s`)."""
    try:
        child = subprocess.run(
            [sys.executable, "-c", CHILD, json.dumps(steps)],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"not interrupted: still working after {timeout_s} s")
    assert child.returncode == 0, child.stderr
    results: list[dict[str, Any]] = json.loads(child.stdout)
    return results


def assert_prompt(result: dict[str, Any]) -> None:
    assert result["outcome"] == "KeyboardInterrupt", result
    assert result["delay_s"] is not None and result["delay_s"] < MAX_DELAY_S, result


# Preconditioning the whole default device (16 GiB): a sequential fill of about a second, then
# random single-unit overwrites for many more seconds; the measured run is one request.
PRECONDITION = {"device": "default", "workload": "randwrite:count=1", "precondition": 1.0}
FILL_ONLY = {**PRECONDITION, "set": {"run.precondition_max_passes": 0}}


def test_interrupt_during_the_sequential_fill_and_the_random_overwrites() -> None:
    fill_time = {"run": FILL_ONLY, "factor": 0.5, "plus_s": 0.0}
    past_fill = {"run": FILL_ONLY, "factor": 2.0, "plus_s": 0.5}
    fill, overwrites = interrupt(
        # Halfway through a fill-only preconditioning (timed uninterrupted first).
        {"call": "run", "kwargs": FILL_ONLY, "signal_after_timed": fill_time},
        # Well past the fill: inside the random overwrites, which last ten times longer.
        {"call": "run", "kwargs": PRECONDITION, "signal_after_timed": past_fill},
    )
    assert_prompt(fill)
    assert_prompt(overwrites)


def test_interrupt_during_the_measured_run() -> None:
    # A fresh device (nothing to precondition) and a measured run of minutes.
    run = {"workload": "randwrite:count=1e8", "precondition": 0.0}
    (result,) = interrupt({"call": "run", "kwargs": run, "signal_after_s": 0.5})
    assert_prompt(result)


@pytest.fixture(scope="module")
def big_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six million DiskSim lines, gzip-compressed to half a megabyte (seconds to read)."""
    path = tmp_path_factory.mktemp("traces") / "big.trace.gz"
    chunk = b"1000 0 64 8 1\n" * 100_000
    with gzip.open(path, "wb", compresslevel=1) as out:
        for _ in range(60):
            out.write(chunk)
    return path


def test_interrupt_trace_stats(big_trace: Path) -> None:
    stats = {"path": str(big_trace), "format": "disksim-ns"}
    (result,) = interrupt({"call": "trace_stats", "kwargs": stats, "signal_after_s": 0.3})
    assert_prompt(result)


def test_interrupt_while_a_replay_surveys_its_trace(big_trace: Path) -> None:
    replay = {"trace": str(big_trace), "trace_format": "disksim-ns", "precondition": 0.0}
    (result,) = interrupt({"call": "run", "kwargs": replay, "signal_after_s": 0.3})
    assert_prompt(result)
