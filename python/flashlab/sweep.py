"""Parameter sweeps: many pure runs on any ``concurrent.futures`` executor, one DataFrame.

A point of a sweep is a base configuration with some settings changed; its run is a pure
function of its resolved configuration (seed included), so points run anywhere (a local
process pool, a Dask cluster through ``distributed.Client.get_executor()``) and give the same
figures. Finished points are kept in an on-disk cache keyed by a hash of the resolved
configuration and the flashlab version: a rerun computes only the points whose configuration
changed. Keys name settings as ``flashlab.run`` does: the shortcut arguments (``device``,
``ftl``, ``workload``, ``precondition``, ``seed``, ``config``, ``trace``, ``trace_format``) and
dotted setting paths (``ftl.over_provisioning``, ``workload.queue_depth``), as ``--set``.

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
import multiprocessing
import os
import signal
import sys
import tempfile
import threading
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from . import _layers, _native
from .report import Report, SummaryValue, require_pandas

if TYPE_CHECKING:
    import pandas

__all__ = ["RUN_ARGUMENTS", "sweep", "sweep_points"]

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
            ``base``; a point's values override the base's.
        executor: Where the runs go: any :class:`concurrent.futures.Executor`, such as a Dask
            cluster's ``distributed.Client(...).get_executor()``. ``None`` runs them in a
            local process pool of ``max_workers`` processes (default: one per core), shut
            down at the end.
        cache: Directory of finished points (created if needed). A point whose resolved
            configuration, with the flashlab version, was computed before is read from it;
            failed points are not kept, so a rerun tries them again. ``None``: no cache.
        seeds: Run every point once per seed (``run.seed``), adding a ``seed`` column;
            ``None`` runs each point once with its configuration's seed.
        max_workers: Processes of the local pool (ignored with ``executor``).
        progress: Show a progress bar on stderr (tqdm when installed, else a line) and a
            last line with the points computed, read from the cache and failed.

    Returns:
        One row per point, in grid order (seeds innermost): the grid columns (and ``seed``),
        ``error`` (missing, or the exception of a failed point, e.g. ``"ConfigError: ..."``,
        whose figures are missing), ``cached`` (read from the cache), then the columns of
        :meth:`Report.summary`. ``DataFrame.attrs["sweep"]`` counts ``points``,
        ``computed``, ``cache_hits`` and ``failed``.

    Raises:
        TypeError, ValueError: ``base``, ``grid`` or ``seeds`` are malformed (a key that is
            neither a run argument nor a dotted setting, a grid value that is not a list).
            A point whose settings are refused (:class:`flashlab.ConfigError`) is recorded
            as failed instead.
        KeyboardInterrupt: Ctrl-C stopped the sweep; the points finished before it are in
            the cache.
    """
    require_pandas("flashlab.sweep()")
    import pandas

    base_settings = _flat_base(base)
    if seeds is not None and any(k in base_settings for k in ("seed", "run.seed")):
        raise ValueError("seeds: the base already sets the seed; give one or the other")
    points = [_Point(values) for values in sweep_points(grid, seeds)]
    cache_dir = None if cache is None else Path(os.fspath(cache))
    for point in points:
        _resolve(point, base_settings, cache_dir)
    pending = [p for p in points if p.error is None and p.report is None]
    todo = _deduplicated(pending)
    bar = _Progress(len(points), len(points) - len(pending), progress)
    try:
        _compute(todo, executor, max_workers, cache_dir, bar)
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


def sweep_points(grid: Grid, seeds: Iterable[int] | None = None) -> list[dict[str, object]]:
    """The points of ``grid`` (see :func:`sweep`) as dicts of settings, seeds innermost."""
    if isinstance(grid, Mapping):
        for key, values in grid.items():
            _check_key(key, "grid")
            if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
                raise TypeError(
                    f"grid[{key!r}]: expected a list of values, not {type(values).__name__}"
                )
        keys = list(grid)
        points = [dict(zip(keys, combo)) for combo in itertools.product(*grid.values())]
    elif isinstance(grid, Sequence):
        points = []
        for i, point in enumerate(grid):
            if not isinstance(point, Mapping):
                raise TypeError(f"grid[{i}]: expected a dict of settings, not {point!r}")
            for key in point:
                _check_key(key, f"grid[{i}]")
            points.append(dict(point))
    else:
        raise TypeError(
            "grid: expected a dict of setting -> list of values or a list of dicts, "
            f"not {type(grid).__name__}"
        )
    if seeds is None:
        return points
    seed_list = list(seeds)
    if any(isinstance(s, bool) or not isinstance(s, int) for s in seed_list):
        raise TypeError(f"seeds: expected integers, not {seed_list!r}")
    if any(k in ("seed", "run.seed") for p in points for k in p):
        raise ValueError("seeds: the grid already sets the seed; give one or the other")
    return [{**point, "seed": seed} for point in points for seed in seed_list]


def _check_key(key: object, where: str) -> None:
    if not isinstance(key, str):
        raise TypeError(f"{where}: a key must be a str, not {key!r}")
    if "." not in key and key not in RUN_ARGUMENTS:
        raise ValueError(
            f"{where}: {key!r} is neither a setting path such as 'ftl.over_provisioning' nor "
            f"an argument of flashlab.run ({', '.join(RUN_ARGUMENTS)})"
        )


def _flat_base(base: Mapping[str, object]) -> dict[str, object]:
    """``base`` with a ``set`` mapping merged in, its keys checked."""
    if not isinstance(base, Mapping):
        raise TypeError(f"base: expected a dict of settings, not {type(base).__name__}")
    flat: dict[str, object] = {}
    for key, value in base.items():
        if key == "set" and isinstance(value, Mapping):
            flat.update(value)
            continue
        _check_key(key, "base")
        flat[key] = value
    return flat


def _resolve(point: _Point, base: Mapping[str, object], cache_dir: Path | None) -> None:
    """Resolves a point's configuration and its cache key, reads it from the cache if there;
    records a refused configuration as the point's error."""
    settings = {**base, **point.values}
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
    max_workers: int | None,
    cache_dir: Path | None,
    bar: _Progress,
) -> None:
    """Runs the points on the executor (a local pool of ``max_workers`` processes if ``None``)
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
            max_workers, mp_context=context, initializer=_start_worker, initargs=(stop_workers,)
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
