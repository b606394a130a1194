"""flashlab: a NAND flash / SSD simulator with FTL plug-ins.

Run an experiment and get its report (schema ``flashlab.report/1``) as a dict::

    import flashlab

    report = flashlab.run(
        "default",
        ftl="pagemap",
        workload="randwrite:bs=4k,qd=32,count=1e5",
        precondition=0.5,
        set={"geometry.blocks_per_plane": 16},
    )
    print(report["host"]["all"]["iops"])

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
from collections.abc import Mapping, Sequence
from typing import Any

from . import _native
from ._native import ConfigError, SimulationError

__all__ = ["ConfigError", "SimulationError", "__version__", "main", "presets", "run"]

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
        progress: Show progress of the measured run on stderr.

    Returns:
        The report (see ``docs/report-schema.md``).

    Raises:
        ConfigError: An unknown preset, FTL, workload kind or key, or a value out of range;
            the message names the field.
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
    for key, value in (set or {}).items():
        if not isinstance(key, str) or not key or "=" in key:
            raise ConfigError(f"set: {key!r} is not a key path such as 'timing.read_latency_ns'")
        sets.append(f"{key}={_toml_value(value)}")
    config_path = None if config is None else os.fspath(config)
    text = _native.run(device, config_path, sets, progress)
    result: dict[str, Any] = json.loads(text)
    return result


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
