"""The installed `flashlab` console script (runs the Rust command line in-process)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

FLASHLAB = shutil.which("flashlab")
pytestmark = pytest.mark.skipif(FLASHLAB is None, reason="flashlab console script not installed")


def flashlab(*args: str) -> subprocess.CompletedProcess[str]:
    assert FLASHLAB is not None
    return subprocess.run(
        [FLASHLAB, *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_help() -> None:
    result = flashlab("--help")
    assert result.returncode == 0, result.stderr
    assert "run" in result.stdout


def test_unknown_device_is_a_usage_error() -> None:
    result = flashlab("run", "--device", "nosuch")
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "nosuch" in result.stderr


def test_presets() -> None:
    result = flashlab("presets")
    assert result.returncode == 0, result.stderr
    assert "cosmos" in result.stdout
