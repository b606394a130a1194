"""``flashlab sweep GRID.toml --out DIR``: a sweep from the command line (Python package only).

The console script of the Python package handles ``sweep`` itself and hands every other
command to the native command line. GRID.toml holds the sweep of :func:`flashlab.sweep`::

    seeds = [1, 2]                     # optional: every point once per seed
    [base]                             # settings of every point
    device = "default"
    workload = "randwrite:bs=4k,count=2e4"
    precondition = 0.5
    geometry.blocks_per_plane = 16     # a dotted setting path, as --set
    [grid]                             # setting -> values: every combination
    ftl.name = ["pagemap", "dftl"]     # not `ftl = ...` beside other ftl.* keys (TOML)
    ftl.over_provisioning = [0.2, 0.3, 0.4]

or, instead of ``[grid]``, one ``[[points]]`` table per point. Nested tables are read as dotted
paths (``[base.geometry]`` ``blocks_per_plane = 16`` is ``geometry.blocks_per_plane``). The
results go to ``DIR/sweep.csv`` and ``DIR/sweep.parquet``; finished points are kept in
``DIR/cache`` (``--cache`` elsewhere, ``--no-cache`` none), so a rerun computes only what
changed. Ctrl-C stops the sweep's workers, keeps the finished points in the cache and ends the
process by SIGINT, as the native commands do (a shell shows status 130).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from .sweep import MAX_POINTS

__all__ = ["main", "read_grid_file"]

EXIT_BAD_INPUT = 2
EXIT_NOT_WRITTEN = 74


def main(argv: Sequence[str]) -> int:
    """Runs ``flashlab sweep`` with ``argv`` (the arguments after ``sweep``); returns the exit
    status: 0, 2 bad input or missing extra, 1 when some points failed, 74 the results or the
    cache cannot be written (checked before any point runs). Ctrl-C stops the sweep (see
    :func:`flashlab.sweep`) and raises ``KeyboardInterrupt`` once its runs have stopped."""
    args = _parser().parse_args(list(argv))
    try:
        from . import sweep
        from .report import require_pandas

        require_pandas("flashlab sweep")
        _require_parquet()
        base, grid, seeds = read_grid_file(Path(args.grid))
        executor = None if args.scheduler is None else _dask_executor(args.scheduler)
    except (ImportError, OSError, ValueError, TypeError) as e:
        print(f"flashlab sweep: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    out = Path(args.out)
    cache = None if args.no_cache else Path(args.cache) if args.cache else out / "cache"
    try:
        for directory in (out, cache):
            if directory is not None:
                _check_writable(directory)
    except OSError as e:
        print(f"flashlab sweep: error: results cannot be written: {e}", file=sys.stderr)
        return EXIT_NOT_WRITTEN
    try:
        frame = sweep(
            base,
            grid,
            executor=executor,
            cache=cache,
            seeds=seeds,
            max_workers=args.workers,
            max_points=args.max_points,
            progress=not args.quiet,
        )
    except (ValueError, TypeError) as e:
        print(f"flashlab sweep: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as e:
        print(f"flashlab sweep: error: the cache cannot be written: {e}", file=sys.stderr)
        return EXIT_NOT_WRITTEN
    except KeyboardInterrupt:
        kept = "" if cache is None else f"; the points finished are kept in {cache}"
        print(f"flashlab sweep: interrupted: no results written{kept}", file=sys.stderr)
        raise
    try:
        frame.to_csv(out / "sweep.csv", index=False)
        frame.to_parquet(out / "sweep.parquet", index=False)
    except OSError as e:
        print(f"flashlab sweep: error: results not written: {e}", file=sys.stderr)
        return EXIT_NOT_WRITTEN
    if not args.quiet:
        print(f"flashlab sweep: wrote {out / 'sweep.csv'} and {out / 'sweep.parquet'}")
    return 1 if frame.attrs["sweep"]["failed"] else 0


def _require_parquet() -> None:
    """Checks that pyarrow (Parquet output, part of the analysis extra) is installed."""
    try:
        importlib.import_module("pyarrow")
    except ImportError as e:
        raise ImportError(
            "flashlab sweep writes Parquet with pyarrow, part of flashlab's optional "
            "'analysis' extra: pip install 'flashlab[analysis]'"
        ) from e


def _check_writable(directory: Path) -> None:
    """Creates ``directory`` and writes a file in it, so that an output error is found before
    the sweep runs rather than after."""
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile(dir=directory):
        pass


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="flashlab sweep",
        description="Run a grid of experiments (see GRID.toml's format in the docs) and write "
        "the results as CSV and Parquet. Needs the analysis extra: "
        "pip install 'flashlab[analysis]'.",
    )
    parser.add_argument("grid", metavar="GRID.toml", help="base settings, grid and seeds")
    parser.add_argument("--out", required=True, metavar="DIR", help="directory of the results")
    parser.add_argument("--cache", metavar="DIR", help="cache of finished points (DIR/cache)")
    parser.add_argument("--no-cache", action="store_true", help="compute every point")
    parser.add_argument(
        "--workers",
        type=_at_least_one,
        metavar="N",
        help="local processes (default and most: the cores; never more than the points)",
    )
    parser.add_argument(
        "--max-points",
        type=_at_least_one,
        default=MAX_POINTS,
        metavar="N",
        help=f"refuse a grid of more points (default {MAX_POINTS:,})",
    )
    parser.add_argument(
        "--scheduler", metavar="ADDRESS", help="run on this Dask scheduler (tcp://host:8786)"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    return parser


def _at_least_one(text: str) -> int:
    """A count option's value: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not at least 1")
    return value


def read_grid_file(path: Path) -> tuple[dict[str, object], Any, list[int] | None]:
    """``base``, ``grid`` and ``seeds`` of a GRID.toml file (see the module doc)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    with open(path, "rb") as file:
        try:
            document = tomllib.load(file)
        except tomllib.TOMLDecodeError as e:
            raise ValueError(f"{path}: {e}") from None
    unknown = set(document) - {"base", "grid", "points", "seeds"}
    if unknown:
        raise ValueError(
            f"{path}: unknown keys {sorted(unknown)} (allowed: base, grid, points, seeds)"
        )
    if ("grid" in document) == ("points" in document):
        raise ValueError(f"{path}: give either a [grid] table or [[points]] tables")
    base = _flattened(document.get("base", {}))
    grid: Any = (
        _flattened(document["grid"])
        if "grid" in document
        else [_flattened(p) for p in document["points"]]
    )
    seeds = document.get("seeds")
    return base, grid, seeds


def _flattened(table: Mapping[str, Any], prefix: str = "") -> dict[str, object]:
    """A TOML table with nested tables turned into dotted keys."""
    flat: dict[str, object] = {}
    for key, value in table.items():
        if isinstance(value, Mapping):
            flat.update(_flattened(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _dask_executor(address: str) -> Any:
    try:
        from distributed import Client
    except ImportError as e:
        raise ImportError("--scheduler needs Dask: pip install 'dask[distributed]'") from e
    # distributed is partly typed, and absent where mypy runs before the tests install it.
    client: Any = cast(Any, Client)(address)
    return client.get_executor()
