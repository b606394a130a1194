"""Parameter sweeps: many pure runs on any ``concurrent.futures`` executor, one DataFrame.

A point of a sweep is a base configuration with some settings changed; its run is a pure
function of its resolved configuration (seed included), so points run anywhere (a local
process pool, a Dask cluster through ``distributed.Client.get_executor()``) and give the same
figures. Finished points are kept in an on-disk cache keyed by a hash of the resolved
configuration and the flashlab version: a rerun computes only the points whose configuration
changed. Keys name settings as ``flashlab.run`` does: the shortcut arguments (``device``,
``ftl``, ``workload``, ``precondition``, ``seed``, ``config``, ``trace``, ``trace_format``) and
dotted setting paths (``ftl.over_provisioning``, ``workload.queue_depth``), as ``--set``.

Before any point runs, the sweep checks what it can: the grid's size against ``max_points``
(before expanding it), every key against the configuration's settings, and that at least one
point's configuration is accepted; a mistake there is a :class:`flashlab.ConfigError` or
:class:`ValueError`, not a sweep of failed points.

Ctrl-C (or any exception) while the sweep waits stops it: points not started are cancelled and
running ones are stopped through a cancel flag their runs poll (the flag of the sweep for runs
in threads of this process; for the local process pool, a flag in each worker, set when the
sweep sets a shared event; the workers ignore SIGINT so that only the sweep decides). Finished
points stay in the cache, which never holds a partial entry; ``KeyboardInterrupt`` is raised
once the runs have stopped.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import hashlib
import itertools
import json
import math
import multiprocessing
import os
import signal
import sys
import tempfile
import threading
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence, Sized
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from . import _ARGUMENT_SETTINGS, ConfigError, _layers, _native
from .report import Report, SummaryValue, require_pandas

if TYPE_CHECKING:
    import pandas

__all__ = ["MAX_POINTS", "RUN_ARGUMENTS", "sweep", "sweep_points"]

#: Most points a sweep expands unless ``max_points`` allows more: about a day of the smallest
#: runs on one core, and some hundred megabytes of bookkeeping.
MAX_POINTS = 100_000

#: Keys without a dot: the shortcut arguments of ``flashlab.run``.
RUN_ARGUMENTS = (
    "device",
    "ftl",
    "workload",
    "precondition",
    "seed",
    "config",
    "trace",
    "trace_format",
)

#: A grid: setting -> values (every combination), or one dict of settings per point.
Grid = Union[Mapping[str, Sequence[object]], Sequence[Mapping[str, object]]]


@dataclass
class _Point:
    """One point of a sweep: its grid values, run layers, cache key and outcome."""

    values: dict[str, object]
    layers: tuple[str | None, str | None, list[str]] | None = None
    key: str | None = None
    report: Report | None = None
    error: str | None = None
    refused: Exception | None = None
    cached: bool = False
    waiting: list[_Point] = field(default_factory=list)


def sweep(
    base: Mapping[str, object],
    grid: Grid,
    *,
    executor: concurrent.futures.Executor | None = None,
    cache: str | os.PathLike[str] | None = None,
    seeds: Iterable[int] | None = None,
    max_workers: int | None = None,
    max_points: int = MAX_POINTS,
    progress: bool = True,
) -> pandas.DataFrame:
    """Runs every point of ``grid`` over ``base`` and gathers the results in one DataFrame.

    Args:
        base: Settings of every point, e.g. ``{"device": "default", "workload":
            "randwrite:count=1e4", "geometry.blocks_per_plane": 16}``: shortcut arguments of
            :func:`flashlab.run` (``device``, ``ftl``, ``workload``, ``precondition``,
            ``seed``, ``config``, ``trace``, ``trace_format``) and dotted setting paths, as
            ``--set``. A ``set`` mapping is merged in too.
        grid: Either a mapping of setting to a list of values (every combination, the first
            setting varying slowest) or a sequence of dicts, one per point. Keys as in
            ``base``; a point's values override the base's (a point's ``ftl`` the base's
            ``ftl.name`` too, and so on for each argument and the setting it stands for).
        executor: Where the runs go: any :class:`concurrent.futures.Executor`, such as a Dask
            cluster's ``distributed.Client(...).get_executor()``. ``None`` runs them in a
            local process pool, shut down at the end.
        cache: Directory of finished points (created if needed, before any point runs). A
            point whose resolved configuration, with the flashlab version, was computed
            before is read from it; failed points are not kept, so a rerun tries them again.
            ``None``: no cache.
        seeds: Run every point once per seed (``run.seed``), adding a ``seed`` column;
            ``None`` runs each point once with its configuration's seed.
        max_workers: Processes of the local pool (ignored with ``executor``); default and
            most: one per core, and never more than the points to compute. More than the
            cores is reduced to the cores, with a note on stderr (runs are CPU-bound; pass
            your own ``executor=ProcessPoolExecutor(n)`` to run more processes).
        max_points: Most points the sweep runs (grid combinations times seeds), checked
            before the grid is expanded; default :data:`MAX_POINTS` (100,000).
        progress: Show a progress bar on stderr (tqdm when installed, else a line) and a
            last line with the points computed, read from the cache and failed.

    Returns:
        One row per point, in grid order (seeds innermost): the grid columns (and ``seed``),
        ``error`` (missing, or the exception of a failed point, e.g. ``"ConfigError: ..."``,
        whose figures are missing), ``cached`` (read from the cache), then the columns of
        :meth:`Report.summary`. ``DataFrame.attrs["sweep"]`` counts ``points``,
        ``computed``, ``cache_hits`` and ``failed``.

    Raises:
        TypeError, ValueError: ``base``, ``grid``, ``seeds``, ``max_workers`` or
            ``max_points`` are malformed: a key that is neither a run argument nor a dotted
            setting, an argument and its setting both given (``ftl`` and ``ftl.name``), a
            grid value that is not a list, a grid without points or with more than
            ``max_points``.
        ConfigError: A key the configuration does not have (checked before any point runs),
            or no point's configuration is accepted. A point whose settings are refused while
            others run is recorded as failed instead.
        OSError: The cache directory cannot be created or written.
        KeyboardInterrupt: Ctrl-C stopped the sweep; the points finished before it are in
            the cache.
    """
    require_pandas("flashlab.sweep()")
    import pandas

    if max_workers is not None:
        _positive_int("max_workers", max_workers)
    base_settings = _flat_base(base)
    if seeds is not None and any(k in base_settings for k in ("seed", "run.seed")):
        raise ValueError("seeds: the base already sets the seed; give one or the other")
    points = [_Point(values) for values in sweep_points(grid, seeds, max_points=max_points)]
    settings = [_merged(base_settings, point.values) for point in points]
    _check_setting_keys(base_settings, grid, settings)
    cache_dir = _cache_directory(cache)
    for point, point_settings in zip(points, settings):
        _resolve(point, point_settings, cache_dir)
    _refuse_if_no_point_can_run(points)
    pending = [p for p in points if p.error is None and p.report is None]
    todo = _deduplicated(pending)
    local = executor is None and bool(todo)
    workers = _local_workers(max_workers, len(todo), progress) if local else 0
    bar = _Progress(len(points), len(points) - len(pending), progress)
    try:
        _compute(todo, executor, workers, cache_dir, bar)
    finally:
        bar.close()
    frame = pandas.DataFrame([_row(p) for p in points])
    frame.attrs["sweep"] = stats = _counts(points)
    if progress:
        print(
            f"flashlab.sweep: {stats['points']} points: {stats['computed']} computed, "
            f"{stats['cache_hits']} from the cache, {stats['failed']} failed",
            file=sys.stderr,
        )
    return frame


def _counts(points: list[_Point]) -> dict[str, int]:
    """Points of a finished sweep: all, computed now, read from the cache, failed."""
    return {
        "points": len(points),
        "computed": sum(1 for p in points if not p.cached and p.error is None),
        "cache_hits": sum(1 for p in points if p.cached),
        "failed": sum(1 for p in points if p.error is not None),
    }


def sweep_points(
    grid: Grid, seeds: Iterable[int] | None = None, *, max_points: int = MAX_POINTS
) -> list[dict[str, object]]:
    """The points of ``grid`` (see :func:`sweep`) as dicts of settings, seeds innermost.

    Raises :class:`ValueError` for a grid without points (an empty axis, list or ``seeds``)
    and for one of more than ``max_points`` points, counted before the grid is expanded.
    """
    limit = _positive_int("max_points", max_points)
    seed_list = None if seeds is None else _seed_list(seeds, limit)
    if isinstance(grid, Mapping):
        for key, values in grid.items():
            _check_key(key, "grid")
            if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
                raise TypeError(
                    f"grid[{key!r}]: expected a list of values, not {type(values).__name__}"
                )
            if len(values) == 0:
                raise ValueError(f"grid: the grid has no points because axis {key!r} is empty")
        _check_twins(grid, "grid")
        sizes = {key: len(values) for key, values in grid.items()}
        count = math.prod(sizes.values())
        factors = [f"{size:,} {key}" for key, size in sizes.items()]
    elif isinstance(grid, Sequence):
        if len(grid) == 0:
            raise ValueError("grid: the grid has no points (an empty list of points)")
        count = len(grid)
        factors = [f"{count:,} listed points"]
    else:
        raise TypeError(
            "grid: expected a dict of setting -> list of values or a list of dicts, "
            f"not {type(grid).__name__}"
        )
    if seed_list is not None:
        count *= len(seed_list)
        factors.append(f"{len(seed_list):,} seeds")
    if count > limit:
        raise ValueError(
            f"grid: {count:,} points ({' x '.join(factors)}) are more than max_points = "
            f"{limit:,}; sweep fewer, or raise max_points (flashlab sweep --max-points) to run "
            "them all"
        )
    if isinstance(grid, Mapping):
        keys = list(grid)
        points = [dict(zip(keys, combo)) for combo in itertools.product(*grid.values())]
    else:
        points = []
        for i, point in enumerate(grid):
            if not isinstance(point, Mapping):
                raise TypeError(f"grid[{i}]: expected a dict of settings, not {point!r}")
            for key in point:
                _check_key(key, f"grid[{i}]")
            _check_twins(point, f"grid[{i}]")
            points.append(dict(point))
    if seed_list is None:
        return points
    if any(k in ("seed", "run.seed") for p in points for k in p):
        raise ValueError("seeds: the grid already sets the seed; give one or the other")
    return [{**point, "seed": seed} for point in points for seed in seed_list]


def _seed_list(seeds: Iterable[int], limit: int) -> list[int]:
    """``seeds`` as a list of at most ``limit`` integers (more, or none, is refused)."""
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Iterable):
        raise TypeError(f"seeds: expected a list of integers, not {type(seeds).__name__}")
    if isinstance(seeds, Sized) and len(seeds) > limit:
        raise ValueError(
            f"seeds: {len(seeds):,} seeds are more than max_points = {limit:,}; raise "
            "max_points (flashlab sweep --max-points) to run them all"
        )
    seed_list = list(itertools.islice(seeds, limit + 1))
    if len(seed_list) > limit:
        raise ValueError(
            f"seeds: more than max_points = {limit:,} seeds; raise max_points (flashlab sweep "
            "--max-points) to run them all"
        )
    if not seed_list:
        raise ValueError("seeds: the grid has no points because seeds is empty")
    if any(isinstance(s, bool) or not isinstance(s, int) for s in seed_list):
        raise TypeError(f"seeds: expected integers, not {seed_list!r}")
    return seed_list


def _positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}: expected a whole number, not {type(value).__name__} {value!r}")
    if value < 1:
        raise ValueError(f"{name}: {value} is not at least 1")
    return value


def _check_key(key: object, where: str) -> None:
    if not isinstance(key, str):
        raise TypeError(f"{where}: a key must be a str, not {key!r}")
    if "." not in key and key not in RUN_ARGUMENTS:
        raise ValueError(
            f"{where}: {key!r} is neither a setting path such as 'ftl.over_provisioning' nor "
            f"an argument of flashlab.run ({', '.join(RUN_ARGUMENTS)})"
        )


#: Each argument of ``flashlab.run`` that stands for one setting, and that setting, both ways.
_TWINS = {**_ARGUMENT_SETTINGS, **{s: a for a, s in _ARGUMENT_SETTINGS.items()}}


def _check_twins(keys: Iterable[str], where: str) -> None:
    """Refuses an argument given together with the setting it stands for (``ftl`` and
    ``ftl.name``): one of the two would silently win."""
    present = set(keys)
    for argument, setting in _ARGUMENT_SETTINGS.items():
        if argument in present and setting in present:
            raise ValueError(
                f"{where}: {argument!r} and {setting!r} are the same setting; give one of them"
            )


def _flat_base(base: Mapping[str, object]) -> dict[str, object]:
    """``base`` with a ``set`` mapping merged in, its keys checked."""
    if not isinstance(base, Mapping):
        raise TypeError(f"base: expected a dict of settings, not {type(base).__name__}")
    flat: dict[str, object] = {}
    overrides = base.get("set")
    for key, value in base.items():
        if key == "set" and isinstance(value, Mapping):
            continue
        _check_key(key, "base")
        flat[key] = value
    if isinstance(overrides, Mapping):
        for key, value in overrides.items():
            _check_key(key, "base['set']")
            if key in flat:
                raise ValueError(f"base: {key!r} is given twice, in base and in base['set']")
            flat[key] = value
    _check_twins(flat, "base")
    return flat


def _merged(base: Mapping[str, object], values: Mapping[str, object]) -> dict[str, object]:
    """A point's settings: the base's, then the point's values over them. A point's argument
    replaces the base's setting it stands for and the other way round (``ftl`` over
    ``ftl.name``), as a point's key replaces the same key of the base."""
    settings = dict(base)
    for key in values:
        twin = _TWINS.get(key)
        if twin is not None:
            settings.pop(twin, None)
    settings.update(values)
    return settings


def _check_setting_keys(
    base: Mapping[str, object], grid: Grid, settings: list[dict[str, object]]
) -> None:
    """Refuses, before any point runs, a dotted key the configuration does not have: outside
    ``[ftl]`` one its section lacks, within it one that no FTL of the sweep has (a key that
    some of its FTLs have fails the points of the others)."""
    located = [(key, "base") for key in base]
    if isinstance(grid, Mapping):
        located += [(key, "grid") for key in grid]
    else:
        located += [(key, f"grid[{i}]") for i, point in enumerate(grid) for key in point]
    dotted = [(key, where) for key, where in located if "." in key]
    if not dotted:
        return
    defaults: dict[str, Any] = json.loads(_native.resolve_config(None, None, []))
    sections = [name for name, value in defaults.items() if isinstance(value, dict)]
    ftl_settings: tuple[list[str], set[str]] | None = None
    if any(key.startswith("ftl.") for key, _ in dotted):
        ftl_settings = _ftl_settings(settings)
    for key, where in dotted:
        section, _, path = key.partition(".")
        name = path.partition(".")[0]
        if section == "ftl":
            if ftl_settings is None or name in ftl_settings[1] or key == "ftl.name":
                continue
            ftls, known = ftl_settings
            raise ConfigError(
                f"{where}: {key!r} is not a setting of {' or '.join(ftls)} (the sweep's FTLs; "
                f"their settings: {', '.join(sorted(known))})"
            )
        if section not in sections:
            raise ConfigError(
                f"{where}: {key!r} is not a setting: there is no section {section!r} "
                f"(sections: {', '.join(sections)})"
            )
        if name not in defaults[section]:
            raise ConfigError(
                f"{where}: {key!r} is not a setting: [{section}] has {', '.join(defaults[section])}"
            )


def _ftl_settings(settings: list[dict[str, object]]) -> tuple[list[str], set[str]] | None:
    """The FTLs the points run and every ``[ftl]`` setting one of them has; ``None`` when an
    FTL cannot be told (an unknown FTL, a refused configuration file naming it), so that no
    key is refused wrongly."""
    names: dict[str, None] = {}
    named_by_file: dict[tuple[object, object], object] = {}
    for point in settings:
        name = point.get("ftl.name", point.get("ftl"))
        if name is None:  # the device's or the configuration file's FTL
            where = (point.get("device"), point.get("config"))
            if where not in named_by_file:
                named_by_file[where] = _resolved_ftl(where[0], None, where[1])
            name = named_by_file[where]
        if not isinstance(name, str):
            return None
        names[name] = None
    if not names:
        return None
    known: set[str] = set()
    for name in names:
        fields = _resolved_ftl(None, name, None, whole=True)
        if not isinstance(fields, dict):
            return None
        known.update(fields)
    return list(names), known


def _resolved_ftl(device: object, ftl: object, config: object, whole: bool = False) -> object:
    """The ``[ftl]`` table (``whole``) or FTL name of a configuration; ``None`` if refused."""
    try:
        layers = _layers(device, ftl, None, None, None, None, config, None, None)
        table = json.loads(_native.resolve_config(*layers))["ftl"]
    except (TypeError, ValueError):  # ConfigError is a ValueError
        return None
    return table if whole else table["name"]


def _cache_directory(cache: str | os.PathLike[str] | None) -> Path | None:
    """The cache directory, created and tried with a file before any point runs."""
    if cache is None:
        return None
    directory = Path(os.fspath(cache))
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile(dir=directory):
        pass
    return directory


def _resolve(point: _Point, settings: Mapping[str, object], cache_dir: Path | None) -> None:
    """Resolves a point's configuration and its cache key, reads it from the cache if there;
    records a refused configuration as the point's error."""
    arguments = {k: v for k, v in settings.items() if "." not in k}
    overrides = {k: v for k, v in settings.items() if "." in k}
    try:
        layers = _layers(
            arguments.get("device"),
            arguments.get("ftl"),
            arguments.get("workload"),
            arguments.get("precondition"),
            arguments.get("seed"),
            overrides,
            arguments.get("config"),
            arguments.get("trace"),
            arguments.get("trace_format"),
        )
        resolved: dict[str, Any] = json.loads(_native.resolve_config(*layers))
    except (TypeError, ValueError) as e:  # ConfigError is a ValueError
        point.error = _described_error(e)
        point.refused = e
        return
    point.layers = layers
    point.key = _cache_key(resolved)
    if cache_dir is not None:
        point.report = _cached_report(cache_dir / f"{point.key}.json")
        point.cached = point.report is not None


def _cached_report(path: Path) -> Report | None:
    """The report kept at ``path``; ``None`` if there is none or it is not a whole JSON
    document (computed again, and replaced)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except ValueError:  # not JSON, or not UTF-8
        return None
    return Report(document) if isinstance(document, dict) else None


def _refuse_if_no_point_can_run(points: list[_Point]) -> None:
    """Refuses a sweep whose every point's configuration is refused: nothing would run."""
    if not points or any(point.refused is None for point in points):
        return
    first = points[0]
    shown = ", ".join(f"{key}={value!r}" for key, value in first.values.items())
    raise ConfigError(
        f"no point of the sweep can run: every configuration is refused, the first "
        f"({shown or 'the base alone'}) with: {first.refused}"
    )


def _cache_key(resolved: Mapping[str, Any]) -> str:
    """Hash of a resolved configuration, the flashlab version and, for a trace replay, the
    trace file's size and modification time (its content is not hashed)."""
    trace_path = resolved.get("trace", {}).get("path", "")
    trace_stamp: list[int] = []
    if trace_path:
        try:
            stat = os.stat(trace_path)
            trace_stamp = [stat.st_size, stat.st_mtime_ns]
        except OSError:
            pass  # the run reports the unreadable trace
    document = {"config": resolved, "flashlab": _native.version(), "trace": trace_stamp}
    text = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _deduplicated(points: list[_Point]) -> list[_Point]:
    """One point per distinct configuration; the others wait for its result."""
    first: dict[str | None, _Point] = {}
    unique = []
    for point in points:
        if point.key in first:
            first[point.key].waiting.append(point)
        else:
            first[point.key] = point
            unique.append(point)
    return unique


def _usable_cores() -> int:
    """Cores this process may run on."""
    if sys.version_info >= (3, 13):
        return os.process_cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def _local_workers(max_workers: int | None, points: int, progress: bool) -> int:
    """Processes of the local pool: ``max_workers`` (default the cores), at most the cores
    (a note says so when asked for more) and the points to compute."""
    cores = _usable_cores()
    workers = cores if max_workers is None else max_workers
    if workers > cores:
        if progress:
            print(
                f"flashlab.sweep: {workers:,} workers asked, {cores} used: this machine has "
                f"{cores} cores and the runs are CPU-bound (executor=ProcessPoolExecutor(n) "
                "runs more)",
                file=sys.stderr,
            )
        workers = cores
    return max(1, min(workers, points))


#: Longest wait for the runs of this process to stop after the sweep's flag is set (they look
#: at it every few milliseconds; this bounds a defect, not the normal case).
_STOP_WAIT_S = 10.0


class _InProcessRuns:
    """A sweep's cancel flag for its runs on threads of this process (a thread pool's, a Dask
    cluster's without processes), and how many of them are running. A worker process that
    inherited this object by fork sees another pid and does not use it."""

    def __init__(self) -> None:
        self.flag = _native.CancelFlag()
        self.pid = os.getpid()
        self._running = 0
        self._changed = threading.Condition()

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        with self._changed:
            self._running += 1
        try:
            yield
        finally:
            with self._changed:
                self._running -= 1
                self._changed.notify_all()

    def stop(self) -> None:
        """Sets the flag and waits until none of these runs is left."""
        self.flag.set()
        with self._changed:
            self._changed.wait_for(lambda: self._running == 0, _STOP_WAIT_S)


#: The sweeps running in this process, by id: a point run on a thread of this process finds
#: its sweep's flag here through the id it carries.
_SWEEPS: dict[str, _InProcessRuns] = {}
#: In a worker process of a sweep's local pool: the flag its runs poll (see _start_worker).
_WORKER_FLAG: _native.CancelFlag | None = None


def _start_worker(stop: Any) -> None:
    """Starts a worker process of the local pool. It ignores SIGINT, which Ctrl-C sends to the
    whole process group: the sweep decides what stops, and sets ``stop`` (a
    ``multiprocessing`` event), which a thread here turns into this worker's cancel flag."""
    global _WORKER_FLAG
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    flag = _native.CancelFlag()
    _WORKER_FLAG = flag
    watcher = threading.Thread(
        target=_set_when, args=(stop, flag), name="flashlab-sweep-stop", daemon=True
    )
    watcher.start()


def _set_when(stop: Any, flag: _native.CancelFlag) -> None:
    stop.wait()
    flag.set()


def _run_point(device: str | None, config_path: str | None, sets: list[str], sweep: str) -> str:
    """Runs one point (in a worker) with the cancel flag of where it runs, if any: the report
    as JSON text. An exception it raises reaches the sweep through the future and is recorded
    as the point's error."""
    if _WORKER_FLAG is not None:
        return _native.run(device, config_path, sets, False, _WORKER_FLAG)
    runs = _SWEEPS.get(sweep)
    if runs is None or runs.pid != os.getpid():
        return _native.run(device, config_path, sets, False)
    with runs.running():
        return _native.run(device, config_path, sets, False, runs.flag)


def _compute(
    todo: list[_Point],
    executor: concurrent.futures.Executor | None,
    workers: int,
    cache_dir: Path | None,
    bar: _Progress,
) -> None:
    """Runs the points on the executor (a local pool of ``workers`` processes if ``None``)
    and records them as they finish; on Ctrl-C or another exception, cancels the points not
    started and stops the running ones before raising it."""
    if not todo:
        return
    own = executor is None
    stop_workers = None
    if executor is None:
        context = multiprocessing.get_context()
        stop_workers = context.Event()
        executor = concurrent.futures.ProcessPoolExecutor(
            workers, mp_context=context, initializer=_start_worker, initargs=(stop_workers,)
        )
    sweep_id = uuid.uuid4().hex
    runs = _SWEEPS[sweep_id] = _InProcessRuns()
    futures: dict[concurrent.futures.Future[str], _Point] = {}
    try:
        for point in todo:
            assert point.layers is not None
            futures[executor.submit(_run_point, *point.layers, sweep_id)] = point
        for future in concurrent.futures.as_completed(futures):
            _finish(futures[future], future, cache_dir)
            bar.update(1 + len(futures[future].waiting))
    except BaseException:
        for future in futures:
            future.cancel()
        if stop_workers is not None:
            stop_workers.set()
        runs.stop()
        raise
    finally:
        del _SWEEPS[sweep_id]
        if own:
            executor.shutdown(wait=True, cancel_futures=True)


def _finish(point: _Point, future: concurrent.futures.Future[str], cache_dir: Path | None) -> None:
    """Records a point's outcome (and its duplicates'), keeps a success in the cache."""
    text: str | None = None
    error: str | None = None
    try:
        text = future.result()
    except Exception as e:  # the run failed, or its worker did: the sweep goes on
        error = _described_error(e)
    report = None if text is None else Report(json.loads(text))
    if text is not None and cache_dir is not None and point.key is not None:
        _write_atomically(cache_dir / f"{point.key}.json", text)
    for each in (point, *point.waiting):
        each.report, each.error = report, error


def _write_atomically(path: Path, text: str) -> None:
    """Writes ``text`` to a temporary file beside ``path`` and renames it over ``path``, so
    that a reader, or a rerun after Ctrl-C, finds the whole entry or none; the temporary file
    goes whatever interrupts the write."""
    path.parent.mkdir(parents=True, exist_ok=True)
    file = tempfile.NamedTemporaryFile(
        "w",
        encoding="utf-8",
        dir=path.parent,
        prefix=f".{path.name}.",
        suffix=".tmp",
        delete=False,
    )
    try:
        with file:
            file.write(text)
        os.replace(file.name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(file.name)
        raise


def _row(point: _Point) -> dict[str, SummaryValue | object]:
    row: dict[str, SummaryValue | object] = dict(point.values)
    row["error"] = point.error
    row["cached"] = point.cached
    if point.report is not None:
        for key, value in point.report.summary_fields().items():
            row.setdefault(key, value)
    return row


def _described_error(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


class _Progress:
    """Progress of a sweep on stderr: a tqdm bar when tqdm is installed, else a line
    rewritten in place on a terminal (nothing when not a terminal or ``enabled`` is false)."""

    def __init__(self, total: int, done: int, enabled: bool) -> None:
        self.total, self.done, self.enabled = total, done, enabled
        self.bar: Any = None
        if not enabled:
            return
        try:
            from tqdm import tqdm
        except ImportError:
            self.bar = None
        else:
            self.bar = tqdm(total=total, initial=done, unit="point", desc="flashlab.sweep")

    def update(self, count: int) -> None:
        self.done += count
        if self.bar is not None:
            self.bar.update(count)
        elif self.enabled and sys.stderr.isatty():
            print(f"\rflashlab.sweep: {self.done}/{self.total} points", end="", file=sys.stderr)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.enabled and sys.stderr.isatty():
            print(file=sys.stderr)
