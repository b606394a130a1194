"""Entry point of the ``flashlab`` console script and of ``python -m flashlab``."""

from __future__ import annotations

import os
import signal
import sys

from . import main as _main


def main() -> None:
    """Runs the command line with ``sys.argv`` and exits with its status."""
    # Behave like the native binary: Ctrl-C ends the process at once through SIGINT's default
    # action (exit status 130 in a shell, no traceback), unless it was started with SIGINT
    # ignored (`nohup`, a script's background job); a closed pipe (`flashlab presets | head`)
    # ends it quietly. `flashlab sweep` keeps Python's handler: its KeyboardInterrupt stops the
    # worker processes and leaves the cache whole, then the process ends by SIGINT all the same.
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sweep = sys.argv[1:2] == ["sweep"]
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler and not sweep:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        status = _main()
    except KeyboardInterrupt:
        _end_by_sigint()
    sys.exit(status)


def _end_by_sigint() -> None:
    """Ends the process by SIGINT's default action, as an interrupted native command does: a
    shell shows status 130, and a script running it sees that it was interrupted."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    if hasattr(signal, "SIGINT") and hasattr(os, "kill"):
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    sys.exit(130)  # where a signal cannot end the process (or while SIGINT is blocked)


if __name__ == "__main__":
    main()
