"""Type stubs of the native extension ``flashlab._native`` (crates/py)."""

import os
from typing import Any

__version__: str

class ConfigError(ValueError):
    """Invalid configuration or workload: the message names the field and what is allowed."""

class SimulationError(RuntimeError):
    """A simulation failed for another reason than its input (a defect)."""

class CancelFlag:
    """Stops the runs it is given at their next progress point, from any thread; once set it
    stays set."""

    def __init__(self) -> None: ...
    def set(self) -> None:
        """Stops the runs given this flag (those running and those to come)."""

    def is_set(self) -> bool:
        """Whether :meth:`set` was called."""

def run(
    preset: str | None,
    config_path: str | os.PathLike[str] | None,
    sets: list[str],
    progress: bool = False,
    cancel: CancelFlag | None = None,
) -> str:
    """Runs one experiment; returns the report as JSON text.

    On the main thread, Python's signal handlers run during the run; the exception one raises
    (``KeyboardInterrupt`` for Ctrl-C) stops it and is raised. Setting ``cancel`` stops it on
    any thread (``KeyboardInterrupt``)."""

def resolve_config(
    preset: str | None,
    config_path: str | os.PathLike[str] | None,
    sets: list[str],
) -> str:
    """The resolved configuration ``run`` would simulate (the report's ``config``) as JSON
    text, without running it."""

def admit(
    preset: str | None,
    config_path: str | os.PathLike[str] | None,
    sets: list[str],
    ftl: str,
    tasks: str,
) -> str:
    """The admission analysis of a task set as JSON text (``flashlab admit --json``)."""

def parse_workload(spec: str) -> dict[str, Any]:
    """Parses the compact workload syntax into a dict of every ``[workload]`` field."""

def trace_stats(
    path: str | os.PathLike[str],
    format: str = "auto",
    devices: str = "",
    max_requests: int = 0,
    skip_bad_lines: bool = False,
    reorder_window: int = 4096,
) -> str:
    """Statistics of a trace file; returns the ``flashlab.trace-stats/1`` document as JSON text.

    Interruptible like :func:`run`."""

def cli(argv: list[str]) -> int:
    """Runs the ``flashlab`` command line (program name first); returns its exit status.

    Python's signal handlers do not run until it returns (the console script restores
    SIGINT's default action instead)."""

def presets() -> list[str]:
    """Names of the device presets."""

def version() -> str:
    """Version of the bindings."""
