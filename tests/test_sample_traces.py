"""The sample traces built into the installed package, used from an empty directory far from
any checkout (as after ``pip install .``): ``sample:tpcc`` and ``sample:wsrch`` from Python,
and the console script's ``bench`` trace section and ``trace samples --extract``, which give
the repository's ``traces/`` files byte for byte with their licence.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

import flashlab

REPOSITORY_TRACES = Path(__file__).resolve().parents[1] / "traces"
FILES = ["mqsim_tpcc-small.trace", "mqsim_wsrch-small.trace", "LICENSE_mqsim.txt"]
SMALL = {"geometry.blocks_per_plane": 16, "ftl.over_provisioning": 0.25}


def console_script() -> str:
    scripts = sysconfig.get_path("scripts")
    found = shutil.which("flashlab", path=os.pathsep.join([scripts, os.environ.get("PATH", "")]))
    assert found is not None, f"the flashlab console script is not installed (looked in {scripts})"
    return found


@pytest.fixture
def lone_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working directory with nothing beside it."""
    lone = tmp_path / "lone"
    lone.mkdir()
    monkeypatch.chdir(lone)
    return lone


def test_samples_read_as_the_repository_files(lone_dir: Path) -> None:
    for name, file in [("tpcc", FILES[0]), ("wsrch", FILES[1])]:
        from_sample = flashlab.trace_stats(f"sample:{name}")
        from_file = flashlab.trace_stats(REPOSITORY_TRACES / file)
        assert from_sample["file"] == f"sample:{name}"
        del from_sample["file"], from_file["file"]
        assert from_sample == from_file
    with pytest.raises(flashlab.ConfigError, match="sample:tpcc, sample:wsrch"):
        flashlab.trace_stats("sample:msr")


def test_run_replays_a_sample(lone_dir: Path) -> None:
    report = flashlab.run(
        trace="sample:wsrch",
        precondition=0,
        set={**SMALL, "trace.replay": "closed", "trace.queue_depth": 16},
    )
    assert report["host"]["all"]["count"] == 24783
    assert report["workload"]["path"] == "sample:wsrch"
    assert report["workload"]["format"] == "disksim-ns"


def test_console_bench_finds_the_samples_anywhere(lone_dir: Path) -> None:
    args = ["bench", "--sections", "trace", "--mode", "timed", "--precondition", "0.2"]
    for key, value in SMALL.items():
        args += ["--set", f"{key}={value}"]
    result = subprocess.run(
        [console_script(), *args, "--json", "-"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = json.loads(result.stdout)
    assert [(m["workload"], m["requests"]) for m in lines] == [
        ("mqsim_tpcc-small.trace", 6999),
        ("mqsim_wsrch-small.trace", 24783),
    ]


def test_console_extracts_the_samples_with_their_licence(lone_dir: Path) -> None:
    result = subprocess.run(
        [console_script(), "trace", "samples", "--extract", "out"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (lone_dir / "out").iterdir()) == sorted(FILES)
    for name in FILES:
        assert (lone_dir / "out" / name).read_bytes() == (REPOSITORY_TRACES / name).read_bytes()
