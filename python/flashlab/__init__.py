"""flashlab: a NAND flash / SSD simulator with FTL plug-ins.

Run an experiment and get its report (schema ``flashlab.report/2``) as a dict::

    import flashlab

    report = flashlab.run(
        "default",
        ftl="pagemap",
        workload="randwrite:bs=4k,qd=32,count=1e5",
        precondition=0.5,
        set={"geometry.blocks_per_plane": 16},
    )
    print(report["host"]["all"]["iops"])

Replay a block trace instead of a synthetic workload, or look at one first::

    stats = flashlab.trace_stats("tpcc.trace")  # format detected, like `flashlab trace stats`
    print(stats["format"], stats["stats"]["requests"], stats["stats"]["read_fraction"])
    report = flashlab.run(trace="tpcc.trace", precondition=0, set={"trace.replay": "closed"})

Runs are pure functions of their configuration (one seed reproduces a run exactly) and release
the GIL, so independent runs can go in parallel threads. Bad settings raise
:class:`ConfigError` (a :class:`ValueError`); a failure of the simulator or of an FTL raises
:class:`SimulationError` (a :class:`RuntimeError`).
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from . import _native
from ._native import ConfigError, SimulationError

__all__ = [
    "ConfigError",
    "SimulationError",
    "__version__",
    "main",
    "presets",
    "run",
    "trace_stats",
]

__version__: str = _native.version()


def presets() -> list[str]:
    """Names of the device presets (``default``, ``cosmos``, ``fmmu-16ch``, ...)."""
    return list(_native.presets())


def run(
    device: str | None = None,
    ftl: str | None = None,
    workload: str | None = None,
    *,
    precondition: float | None = None,
    seed: int | None = None,
    set: Mapping[str, object] | None = None,  # mirrors the CLI's --set
    config: str | os.PathLike[str] | None = None,
    trace: str | os.PathLike[str] | None = None,
    trace_format: str | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Runs one simulated experiment and returns its report as a dict.

    The configuration is layered like ``flashlab run``: the device preset, then the TOML file
    ``config``, then the other arguments, then the ``set`` overrides.

    Args:
        device: Device preset name (see :func:`presets`). ``None`` takes the ``preset`` key of
            the ``config`` file, else ``"default"``.
        ftl: FTL plug-in name (sets ``ftl.name``).
        workload: Synthetic workload in the compact ``--workload`` syntax, e.g.
            ``"randrw:read=0.7,bs=4k,qd=32,count=1e5"``. It replaces the whole ``[workload]``
            section; fields it does not name take their defaults.
        precondition: Fraction of the logical space written before measuring
            (``run.precondition``, 0 = fresh device).
        seed: Seed of every random choice (``run.seed``).
        set: Overrides ``{"section.key": value}``, like ``--set section.key=value``; values
            are ``bool``, ``int``, ``float``, ``str``, or lists and dicts of those.
        config: Path of a TOML configuration file.
        trace: Block trace to replay instead of the synthetic workload (``trace.path``; plain,
            gzip or zstd). Replay settings go in ``set``, e.g. ``{"trace.replay": "closed",
            "trace.queue_depth": 16, "trace.warmup_requests": 1000}``; the report's
            ``workload`` then has ``kind == "trace"``.
        trace_format: Format of ``trace`` (``trace.format``): ``"msr"``, ``"spc"``,
            ``"disksim-ms"``, ``"disksim-ns"``, ``"blkparse-q"``, ``"fio"``, ``"generic:..."``
            and others (``flashlab trace formats``); ``None`` detects it.
        progress: Show progress of the measured run on stderr.

    Returns:
        The report (see ``docs/report-schema.md``).

    Raises:
        ConfigError: An unknown preset, FTL, workload kind or key, or a value out of range;
            the message names the field. Also an unreadable or malformed trace (the message
            gives ``file:line`` and the offending text) or one that does not fit the device.
        SimulationError: The simulation failed for another reason (a defect).
    """
    sets: list[str] = []
    if ftl is not None:
        sets.append(f"ftl.name={_toml_value(ftl)}")
    if workload is not None:
        fields = _native.parse_workload(workload)
        sets.extend(f"workload.{key}={_toml_value(value)}" for key, value in fields.items())
    if precondition is not None:
        sets.append(f"run.precondition={_toml_value(float(precondition))}")
    if seed is not None:
        sets.append(f"run.seed={_toml_value(int(seed))}")
    if trace is not None:
        sets.append(f"trace.path={_toml_value(os.fspath(trace))}")
    if trace_format is not None:
        sets.append(f"trace.format={_toml_value(trace_format)}")
    for key, value in (set or {}).items():
        if not isinstance(key, str) or not key or "=" in key:
            raise ConfigError(f"set: {key!r} is not a key path such as 'timing.read_latency_ns'")
        sets.append(f"{key}={_toml_value(value)}")
    config_path = None if config is None else os.fspath(config)
    text = _native.run(device, config_path, sets, progress)
    result: dict[str, Any] = json.loads(text)
    return result


def trace_stats(
    path: str | os.PathLike[str],
    format: str = "auto",
    devices: str | Iterable[int] | None = None,
    max_requests: int | None = None,
    skip_bad_lines: bool = False,
) -> dict[str, Any]:
    """Statistics of a block trace, as ``flashlab trace stats --json`` gives them.

    The file (plain, gzip or zstd) is read in one streaming pass, with the GIL released.

    Args:
        path: Trace file.
        format: Its format (see ``flashlab trace formats``), e.g. ``"disksim-ns"``,
            ``"disksim-ms"``, ``"msr"``, ``"generic:..."``; ``"auto"`` detects it.
        devices: Only these devices: ``"0,3"`` (blkparse ``"8:0"``) or a sequence of device
            numbers; ``None`` keeps all.
        max_requests: Read at most this many requests; ``None`` (or 0) reads them all.
        skip_bad_lines: Count and skip malformed lines (``bad_lines``) instead of raising at
            the first.

    Returns:
        A dict with ``schema`` (``"flashlab.trace-stats/1"``), ``file``, ``format`` (the one
        used, e.g. ``"disksim-ns"`` when detected), ``compression``, ``lines``, ``bad_lines``
        and ``stats``: ``requests``, ``read``/``write``/``trim``/``flush`` (``count``,
        ``bytes``), ``read_fraction``, ``size_bytes``, ``size_buckets``, ``footprint_bytes``,
        ``write_footprint_bytes``, ``sequential_fraction``, ``interarrival_ns``,
        ``zero_interarrival_fraction``, ``duration_ns``, ``devices`` and ``skipped``.

    Raises:
        ConfigError: The file cannot be read, the format is unknown or cannot be detected, the
            device list is malformed, or a line is malformed (the message gives ``file:line``,
            the offending text and what was expected).
    """
    if devices is None:
        device_list = ""
    elif isinstance(devices, str):
        device_list = devices
    else:
        device_list = ",".join(str(_device_number(d)) for d in devices)
    if max_requests is None:
        limit = 0
    elif isinstance(max_requests, bool) or not isinstance(max_requests, int) or max_requests < 0:
        raise ConfigError(f"max_requests: {max_requests!r} is not a count of requests (>= 0)")
    else:
        limit = max_requests
    text = _native.trace_stats(os.fspath(path), format, device_list, limit, bool(skip_bad_lines))
    result: dict[str, Any] = json.loads(text)
    return result


def _device_number(device: object) -> int:
    if isinstance(device, bool) or not isinstance(device, int) or not 0 <= device < 2**32:
        raise ConfigError(f"devices: {device!r} is not a device number (0 ..= 4294967295)")
    return device


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the ``flashlab`` command line and returns its exit status.

    Args:
        argv: Arguments after the program name; ``sys.argv[1:]`` when ``None``.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    # The native code writes to the process's file descriptors: keep the order of output.
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    return _native.cli(["flashlab", *args])


def _toml_value(value: object) -> str:
    """Formats a value as the TOML right-hand side of a ``--set`` override."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        # A JSON string is a TOML basic string, except that TOML forbids a raw DEL.
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, Mapping):
        items = ", ".join(f"{_toml_value(str(k))} = {_toml_value(v)}" for k, v in value.items())
        return "{ " + items + " }" if items else "{}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot use a {type(value).__name__} as a flashlab setting: {value!r}")
