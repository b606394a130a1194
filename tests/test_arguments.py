"""Every argument of the public functions is checked: a wrong type raises TypeError, a value out
of range raises ConfigError, both naming the argument; never AttributeError, OverflowError or a
silent conversion (`seed=1.7` is not seed 1, `skip_bad_lines="no"` is not True)."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

import flashlab

TPCC = Path(__file__).resolve().parents[1] / "traces" / "mqsim_tpcc-small.trace"
SMALL = {"geometry.blocks_per_plane": 16, "ftl.over_provisioning": 0.25}


def run(**kwargs: Any) -> dict[str, Any]:
    options: dict[str, Any] = {"workload": "randwrite:count=200", "precondition": 0.0}
    options["set"] = dict(SMALL)
    options.update(kwargs)
    return flashlab.run(**options)


def trace_stats(**kwargs: Any) -> dict[str, Any]:
    return flashlab.trace_stats(**{"path": TPCC, **kwargs})


# (call, arguments, exception, text the message must contain)
REFUSED: list[tuple[Callable[..., Any], dict[str, Any], type[Exception], str]] = [
    (run, {"device": 5}, TypeError, "device"),
    (run, {"ftl": 5}, TypeError, "ftl"),
    (run, {"workload": 5}, TypeError, "workload"),
    (run, {"workload": b"randwrite:count=1"}, TypeError, "workload"),
    (run, {"precondition": True}, TypeError, "precondition"),
    (run, {"precondition": "0.5"}, TypeError, "precondition"),
    (run, {"precondition": [0.5]}, TypeError, "precondition"),
    (run, {"precondition": 10**400}, flashlab.ConfigError, "precondition"),
    (run, {"seed": 1.7}, TypeError, "seed"),
    (run, {"seed": 7.0}, TypeError, "seed"),
    (run, {"seed": "7"}, TypeError, "seed"),
    (run, {"seed": True}, TypeError, "seed"),
    (run, {"set": ["geometry.channels=4"]}, TypeError, "set"),
    (run, {"set": "geometry.channels=4"}, TypeError, "set"),
    (run, {"set": [("geometry.channels", 4)]}, TypeError, "set"),
    (run, {"set": 4}, TypeError, "set"),
    (run, {"set": {4: 4}}, TypeError, "set"),
    (run, {"set": {"": 4}}, flashlab.ConfigError, "set"),
    (run, {"set": {"geometry.channels": None}}, TypeError, "geometry.channels"),
    (run, {"set": {"trace.path": b"x.trace"}}, TypeError, "trace.path"),
    (run, {"set": {"ftl.x": {1: 2}}}, TypeError, "ftl.x"),
    (run, {"set": {"ftl.x": [1, object()]}}, TypeError, "ftl.x"),
    (run, {"set": {"run.precondition": Fraction(10**400)}}, flashlab.ConfigError, "run"),
    (run, {"config": 5}, TypeError, "config"),
    (run, {"trace": 5}, TypeError, "trace"),
    (run, {"trace_format": 5}, TypeError, "trace_format"),
    (run, {"progress": "yes"}, TypeError, "progress"),
    (run, {"progress": 1}, TypeError, "progress"),
    (trace_stats, {"path": 5}, TypeError, "path"),
    (trace_stats, {"path": None}, TypeError, "path"),
    (trace_stats, {"format": 5}, TypeError, "format"),
    (trace_stats, {"format": None}, TypeError, "format"),
    (trace_stats, {"devices": 5}, TypeError, "devices"),
    (trace_stats, {"devices": b"0,3"}, TypeError, "devices"),
    (trace_stats, {"devices": {0: "a"}}, TypeError, "devices"),
    (trace_stats, {"devices": [1.5]}, TypeError, "devices"),
    (trace_stats, {"devices": ["0"]}, TypeError, "devices"),
    (trace_stats, {"devices": [True]}, TypeError, "devices"),
    (trace_stats, {"devices": [2**32]}, flashlab.ConfigError, "devices"),
    (trace_stats, {"devices": [-1]}, flashlab.ConfigError, "devices"),
    (trace_stats, {"max_requests": 2**70}, flashlab.ConfigError, "max_requests"),
    (trace_stats, {"max_requests": 2**64}, flashlab.ConfigError, "max_requests"),
    (trace_stats, {"max_requests": -5}, flashlab.ConfigError, "max_requests"),
    (trace_stats, {"max_requests": 1.5}, TypeError, "max_requests"),
    (trace_stats, {"max_requests": 100.0}, TypeError, "max_requests"),
    (trace_stats, {"max_requests": "100"}, TypeError, "max_requests"),
    (trace_stats, {"max_requests": True}, TypeError, "max_requests"),
    (trace_stats, {"skip_bad_lines": "no"}, TypeError, "skip_bad_lines"),
    (trace_stats, {"skip_bad_lines": 0}, TypeError, "skip_bad_lines"),
    (trace_stats, {"skip_bad_lines": None}, TypeError, "skip_bad_lines"),
]


@pytest.mark.parametrize(
    ("call", "kwargs", "error", "mentions"),
    REFUSED,
    ids=[f"{c.__name__}-{'-'.join(f'{k}={v!r}' for k, v in a.items())}" for c, a, _, _ in REFUSED],
)
def test_refused_with_the_argument_named(
    call: Callable[..., Any], kwargs: dict[str, Any], error: type[Exception], mentions: str
) -> None:
    with pytest.raises(error) as info:
        call(**kwargs)
    assert mentions in str(info.value)


@pytest.mark.parametrize("argv", ["presets", b"presets", [1], ["presets", None], 5])
def test_main_refuses_anything_but_a_sequence_of_str(argv: Any) -> None:
    with pytest.raises(TypeError, match="argv"):
        flashlab.main(argv)


class IntLike:
    """An integer of another library (like numpy.int64): it has `__index__`."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value


def test_integer_and_real_types_of_other_libraries_are_accepted() -> None:
    plain = run(seed=7, precondition=0.5)
    assert run(seed=IntLike(7), precondition=Fraction(1, 2)) == plain
    assert plain["config"]["run"]["seed"] == 7
    assert plain["config"]["run"]["precondition"] == 0.5
    limited = trace_stats(max_requests=IntLike(100), devices=[IntLike(0)])
    assert (
        limited["stats"]["requests"]
        == trace_stats(max_requests=100, devices=[0])["stats"]["requests"]
    )


def test_largest_max_requests_reads_everything() -> None:
    assert trace_stats(max_requests=2**64 - 1)["stats"]["requests"] == 6999


def test_paths_may_be_bytes_or_path_like() -> None:
    assert trace_stats(path=bytes(TPCC))["stats"] == trace_stats(path=str(TPCC))["stats"]


def _memory_available() -> int:
    with open("/proc/meminfo", encoding="ascii") as info:
        line = next(line for line in info if line.startswith("MemAvailable:"))
    return int(line.split()[1]) * 1024


def test_a_device_beyond_the_memory_is_refused_before_it_is_allocated() -> None:
    # About twice the memory available (`default` needs about 1 MiB per block per plane).
    blocks = min(max(2 * _memory_available() // (1 << 20), 32_767), 262_143)
    with pytest.raises(flashlab.ConfigError, match="memory available") as refused:
        flashlab.run(workload="randwrite:count=10", set={"geometry.blocks_per_plane": blocks})
    assert "run.max_memory_bytes" in str(refused.value)


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"trace": TPCC, "workload": "randread:count=10"}, "workload"),
        ({"trace": TPCC, "set": {"workload.count": 10}}, "set workload.count"),
        ({"workload": "randread:count=10", "set": {"trace.replay": "closed"}}, "set trace.replay"),
        ({"workload": "randread:count=10", "trace_format": "msr"}, "set trace.format"),
    ],
)
def test_settings_the_run_would_ignore_are_refused(arguments: dict[str, Any], named: str) -> None:
    with pytest.raises(flashlab.ConfigError, match=named):
        flashlab.run(**arguments)
