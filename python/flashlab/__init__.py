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
the GIL, so independent runs can go in parallel threads. A run or trace read on the main thread
stops at Ctrl-C (``KeyboardInterrupt``, within a fraction of a second, also while
preconditioning), and so does a sweep (:func:`sweep`), on any pool. An argument of the wrong
type raises :class:`TypeError`; bad settings raise :class:`ConfigError` (a
:class:`ValueError`); both name the argument or setting. A failure of the simulator or of an
FTL raises :class:`SimulationError` (a :class:`RuntimeError`).
"""

from __future__ import annotations

import json
import math
import numbers
import operator
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Optional

from . import _native
from ._native import ConfigError, SimulationError
from .admission import Admission
from .report import Report

__all__ = [
    "Admission",
    "admit",
    "ConfigError",
    "SimulationError",
    "__version__",
    "main",
    "presets",
    "Report",
    "resolve_config",
    "run",
    "sweep",
    "sweep_points",
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
) -> Report:
    """Runs one simulated experiment and returns its report, a dict with tabular views
    (:class:`Report`).

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
            are ``bool``, ``int``, ``float``, ``str``, or lists and dicts of those. A setting
            an argument above stands for (``ftl.name``, ``run.precondition``, ``run.seed``,
            ``trace.path``, ``trace.format``) goes in one place: both is a ConfigError.
        config: Path of a TOML configuration file.
        trace: Block trace to replay instead of the synthetic workload (``trace.path``; plain,
            gzip or zstd; ``"sample:tpcc"`` or ``"sample:wsrch"``: a sample built in, see
            ``flashlab trace samples``). Replay settings go in ``set``, e.g.
            ``{"trace.replay": "closed", "trace.queue_depth": 16, "trace.warmup_requests":
            1000}``; the report's ``workload`` then has ``kind == "trace"``.
        trace_format: Format of ``trace`` (``trace.format``): ``"msr"``, ``"spc"``,
            ``"disksim-ms"``, ``"disksim-ns"``, ``"blkparse-q"``, ``"fio"``, ``"generic:..."``
            and others (``flashlab trace formats``); ``None`` detects it.
        progress: Show progress of the measured run on stderr.

    Returns:
        The report (see ``docs/report-schema.md``): a :class:`Report`, which is the JSON
        document as a ``dict`` with ``summary()``, ``latency(op)``, ``timeseries()`` and
        ``to_json()``.

    Raises:
        TypeError: An argument of the wrong type (``seed=1.7``, ``precondition=True``,
            ``set=["a=1"]``); the message names the argument.
        ConfigError: An unknown preset, FTL, workload kind or key, or a value out of range;
            the message names the field. Also an unreadable or malformed trace (the message
            gives ``file:line`` and the offending text) or one that does not fit the device.
        SimulationError: The simulation failed for another reason (a defect).
        KeyboardInterrupt: Ctrl-C (or another exception a signal handler raised) stopped the
            run.
    """
    layers = _layers(device, ftl, workload, precondition, seed, set, config, trace, trace_format)
    text = _native.run(*layers, _bool("progress", progress))
    return Report(json.loads(text))


def admit(
    ftl: str,
    tasks: str,
    device: str | None = "cosmos-table-iv",
    *,
    set: Mapping[str, object] | None = None,  # mirrors the CLI's --set
    config: str | os.PathLike[str] | None = None,
) -> Admission:
    """Real-time admission, like ``flashlab admit``: would the periodic task set ``tasks`` meet
    its deadlines on ``device`` under ``ftl``'s test?

    Args:
        ftl: ``"part-ftl"`` (eqs. 6-7), ``"wao-gc"`` (section VI.A's worst case) or ``"rtgc"``.
        tasks: The periodic workload's task syntax, e.g. ``"4xw12p@60ms+4xr3p@15ms"``.
        device: Device preset; ``"cosmos-table-iv"`` (the default) takes part-ftl.txt Table
            IV's measured times, other presets time their own model. ``None`` takes the
            ``config`` file's preset.
        set: Overrides ``{"section.key": value}``, e.g. ``{"ftl.data_ratio": 0.518}``.
        config: Path of a TOML configuration file.

    Returns:
        An :class:`Admission`: ``admitted``, ``refusal``, every test with its terms, the
        bounds (eqs. 8-16) and the analysis device.

    Raises:
        TypeError: An argument of the wrong type.
        ConfigError: An unknown preset or FTL, an FTL without a test, a malformed task set,
            a setting out of range; the message names it.
    """
    ftl = _str("ftl", ftl)
    tasks = _str("tasks", tasks)
    preset = _optional_str("device", device)
    config_path = None if config is None else _path("config", config)
    text = _native.admit(preset, config_path, _set_overrides(set), ftl, tasks)
    return Admission.from_json(json.loads(text))


def resolve_config(
    device: str | None = None,
    ftl: str | None = None,
    workload: str | None = None,
    *,
    precondition: float | None = None,
    seed: int | None = None,
    set: Mapping[str, object] | None = None,
    config: str | os.PathLike[str] | None = None,
    trace: str | os.PathLike[str] | None = None,
    trace_format: str | None = None,
) -> dict[str, Any]:
    """The complete configuration :func:`run` would simulate with these arguments (the
    report's ``config``, what ``flashlab run --print-config`` prints), without running it.

    Raises the same :class:`TypeError` and :class:`ConfigError` as :func:`run` for bad
    arguments or settings.
    """
    layers = _layers(device, ftl, workload, precondition, seed, set, config, trace, trace_format)
    result: dict[str, Any] = json.loads(_native.resolve_config(*layers))
    return result


#: What the native layer takes: the preset, the configuration file and the ``--set`` lines.
_Layers = tuple[Optional[str], Optional[str], list[str]]

#: The arguments of :func:`run` that each stand for one setting: giving one with its setting
#: in ``set`` is refused (which should win would be a guess).
_ARGUMENT_SETTINGS: dict[str, str] = {
    "ftl": "ftl.name",
    "precondition": "run.precondition",
    "seed": "run.seed",
    "trace": "trace.path",
    "trace_format": "trace.format",
}


def _layers(
    device: object,
    ftl: object,
    workload: object,
    precondition: object,
    seed: object,
    set: Mapping[str, object] | None,
    config: object,
    trace: object,
    trace_format: object,
) -> _Layers:
    """The arguments of :func:`run` as the native layers, checked (``TypeError``,
    ``ConfigError`` naming the argument)."""
    device = _optional_str("device", device)
    config_path = None if config is None else _path("config", config)
    sets: list[str] = []
    if ftl is not None:
        sets.append(f"ftl.name={_toml_value(_str('ftl', ftl))}")
    if workload is not None:
        fields = _native.parse_workload(_str("workload", workload))
        sets.extend(f"workload.{key}={_toml_value(value)}" for key, value in fields.items())
    if precondition is not None:
        sets.append(f"run.precondition={_toml_value(_real('precondition', precondition))}")
    if seed is not None:
        sets.append(f"run.seed={_int('seed', seed)}")
    if trace is not None:
        trace_path = _path("trace", trace)
        if workload is not None:
            raise ConfigError(
                "workload: a trace replaces the synthetic workload: give trace= or workload=, "
                "not both"
            )
        sets.append(f"trace.path={_toml_value(trace_path)}")
    if trace_format is not None:
        sets.append(f"trace.format={_toml_value(_str('trace_format', trace_format))}")
    sets.extend(_set_overrides(set))
    given = {
        "ftl": ftl,
        "precondition": precondition,
        "seed": seed,
        "trace": trace,
        "trace_format": trace_format,
    }
    overrides = {} if set is None else {key.strip(): value for key, value in set.items()}
    for argument, setting in _ARGUMENT_SETTINGS.items():
        if given[argument] is not None and setting in overrides:
            raise ConfigError(
                f"{argument}={given[argument]!r} and set[{setting!r}]="
                f"{overrides[setting]!r} both give {setting}: give one of them"
            )
    return device, config_path, sets


def _set_overrides(overrides: Mapping[str, object] | None) -> list[str]:
    """The ``--set`` lines of the ``set`` argument."""
    if overrides is None:
        return []
    if not isinstance(overrides, Mapping):
        raise TypeError(
            "set: expected a mapping of setting paths to values, such as "
            f"{{'geometry.channels': 4}}, not {_described(overrides)}"
        )
    lines = []
    for key, value in overrides.items():
        if not isinstance(key, str):
            raise TypeError(f"set: a key must be a setting path (str), not {_described(key)}")
        if not key or "=" in key:
            raise ConfigError(f"set: {key!r} is not a key path such as 'timing.read_latency_ns'")
        lines.append(f"{key}={_toml_value(value, f'set[{key!r}]')}")
    return lines


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
        path: Trace file, or ``"sample:tpcc"`` / ``"sample:wsrch"`` (a sample built in).
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
        TypeError: An argument of the wrong type; the message names the argument.
        ConfigError: The file cannot be read, the format is unknown or cannot be detected, the
            device list is malformed, ``max_requests`` is out of range, or a line is malformed
            (the message gives ``file:line``, the offending text and what was expected).
        KeyboardInterrupt: Ctrl-C (or another exception a signal handler raised) stopped the
            read.
    """
    file = _path("path", path)
    limit = 0 if max_requests is None else _int("max_requests", max_requests, _U64_MAX)
    text = _native.trace_stats(
        file,
        _str("format", format),
        _device_list(devices),
        limit,
        _bool("skip_bad_lines", skip_bad_lines),
    )
    result: dict[str, Any] = json.loads(text)
    return result


_U64_MAX = 2**64 - 1
_U32_MAX = 2**32 - 1


def _device_list(devices: str | Iterable[int] | None) -> str:
    """The ``devices`` argument of :func:`trace_stats` as a device list such as ``"0,3"``."""
    if devices is None:
        return ""
    if isinstance(devices, str):
        return devices
    if isinstance(devices, (bytes, bytearray, Mapping)) or not isinstance(devices, Iterable):
        raise TypeError(
            f"devices: expected a device list such as '0,3' or a sequence of device numbers, "
            f"not {_described(devices)}"
        )
    return ",".join(str(_int("devices", d, _U32_MAX)) for d in devices)


def _described(value: object) -> str:
    """``value`` for a message: its type and, if short, its text."""
    text = repr(value)
    return f"{type(value).__name__} {text}" if len(text) <= 60 else type(value).__name__


def _str(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name}: expected a str, not {_described(value)}")
    return value


def _optional_str(name: str, value: object) -> str | None:
    return None if value is None else _str(name, value)


def _bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name}: expected True or False, not {_described(value)}")
    return value


def _int(name: str, value: object, maximum: int | None = None) -> int:
    """An integer argument (any type with ``__index__`` but bool); ``0 ..= maximum`` if given."""
    if isinstance(value, bool):
        raise TypeError(f"{name}: expected an integer, not {_described(value)}")
    try:
        number = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{name}: expected an integer, not {_described(value)}") from None
    if maximum is not None and not 0 <= number <= maximum:
        raise ConfigError(f"{name}: {number} is out of range (allowed: 0 ..= {maximum})")
    return number


def _real(name: str, value: object) -> float:
    """A real-number argument (int, float or another real number, not bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a number, not {_described(value)}")
    return _float(name, value)


def _float(name: str, value: numbers.Real) -> float:
    try:
        return float(value)
    except OverflowError:
        raise ConfigError(f"{name}: {value} is too large for a number") from None


def _path(name: str, value: object) -> str:
    """A file path argument (str, bytes or os.PathLike)."""
    try:
        path = os.fspath(value)  # type: ignore[call-overload]
    except TypeError:
        raise TypeError(
            f"{name}: expected a file path (str or os.PathLike), not {_described(value)}"
        ) from None
    return os.fsdecode(path)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the ``flashlab`` command line and returns its exit status.

    Called from Python, a Ctrl-C during a native command takes effect when it returns (during
    ``sweep``, at once: it stops the sweep and raises ``KeyboardInterrupt``); the console
    script and ``python -m flashlab`` end by SIGINT instead, like the native binary.

    Args:
        argv: Arguments after the program name (a sequence of str); ``sys.argv[1:]`` when
            ``None``.
    """
    if argv is not None and (
        isinstance(argv, str)
        or not isinstance(argv, Sequence)
        or not all(isinstance(a, str) for a in argv)
    ):
        raise TypeError(f"argv: expected a sequence of str, not {_described(argv)}")
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["sweep"]:  # the one command written in Python (it needs pandas)
        from .sweep_command import main as sweep_main

        return sweep_main(args[1:])
    # The native code writes to the process's file descriptors: keep the order of output.
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    return _native.cli(["flashlab", *args])


def _toml_value(value: object, name: str = "setting") -> str:
    """Formats a value as the TOML right-hand side of a ``--set`` override; ``name`` says
    where the value came from in a :class:`TypeError`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        value = _float(name, value)
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        # A JSON string is a TOML basic string, except that TOML forbids a raw DEL.
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, Mapping):
        items = ", ".join(
            f"{_toml_value(_str(f'{name} key', k))} = {_toml_value(v, f'{name}[{k!r}]')}"
            for k, v in value.items()
        )
        return "{ " + items + " }" if items else "{}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v, f"{name}[{i}]") for i, v in enumerate(value)) + "]"
    raise TypeError(
        f"{name}: expected a bool, int, float, str, or a list or dict of those, "
        f"not {_described(value)}"
    )


# The sweep builds on run()'s helpers above.
from .sweep import sweep, sweep_points  # noqa: E402
