"""The `flashlab` command line as installed: the console script and `python -m flashlab` (both
run the Rust command line in-process). A missing console script fails these tests: it is part
of the package."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable
from pathlib import Path

import pytest


def console_script() -> str:
    """The installed `flashlab` script: in this interpreter's scripts directory, else on PATH."""
    scripts = sysconfig.get_path("scripts")
    found = shutil.which("flashlab", path=os.pathsep.join([scripts, os.environ.get("PATH", "")]))
    assert found is not None, f"the flashlab console script is not installed (looked in {scripts})"
    return found


COMMANDS = {
    "console-script": lambda: [console_script()],
    "python-m": lambda: [sys.executable, "-m", "flashlab"],
}


@pytest.fixture(params=sorted(COMMANDS))
def command(request: pytest.FixtureRequest) -> list[str]:
    make: Callable[[], list[str]] = COMMANDS[request.param]
    return make()


def flashlab(command: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*command, *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_help(command: list[str]) -> None:
    result = flashlab(command, "--help")
    assert result.returncode == 0, result.stderr
    assert "run" in result.stdout


def test_unknown_device_is_a_usage_error(command: list[str]) -> None:
    result = flashlab(command, "run", "--device", "nosuch")
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "nosuch" in result.stderr


def test_presets(command: list[str]) -> None:
    result = flashlab(command, "presets")
    assert result.returncode == 0, result.stderr
    assert "cosmos" in result.stdout


# A measured run of minutes on a fresh device.
LONG_RUN = ("run", "--quiet", "--precondition", "0", "--workload", "randwrite:count=1e8")


def started_simulating(child: subprocess.Popen[bytes]) -> None:
    """Waits until the child has loaded the native module, and a little more."""
    maps = Path(f"/proc/{child.pid}/maps")
    deadline = time.monotonic() + 30
    while maps.exists() and time.monotonic() < deadline:
        if "_native" in maps.read_text():
            break
        time.sleep(0.05)
    time.sleep(0.5)
    assert child.poll() is None, "the run ended before it was interrupted"


def test_ctrl_c_ends_the_command_at_once(command: list[str]) -> None:
    # As the native binary: SIGINT's default action ends the process (a shell shows exit
    # status 130), with no Python traceback.
    with subprocess.Popen(
        [*command, *LONG_RUN], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    ) as child:
        started_simulating(child)
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        try:
            child.wait(timeout=30)
        finally:
            child.kill()
        delay = time.monotonic() - sent
        errors = child.stderr.read().decode() if child.stderr else ""
    assert child.returncode == -signal.SIGINT, (child.returncode, errors)
    assert delay < 1.0, delay
    assert "KeyboardInterrupt" not in errors and "Traceback" not in errors, errors


def test_ignored_sigint_stays_ignored(command: list[str]) -> None:
    # A native command started with SIGINT ignored (`nohup`, a background job of a script)
    # keeps ignoring it.
    ignoring = ["sh", "-c", 'trap "" INT; exec "$@"', "sh"]
    with subprocess.Popen(
        [*ignoring, *command, *LONG_RUN], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    ) as child:
        started_simulating(child)
        child.send_signal(signal.SIGINT)
        time.sleep(0.5)
        still_running = child.poll() is None
        child.kill()
        child.wait(timeout=30)
    assert still_running, "an ignored SIGINT ended the command"
