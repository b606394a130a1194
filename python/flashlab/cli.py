"""Entry point of the ``flashlab`` console script and of ``python -m flashlab``."""

from __future__ import annotations

import signal
import sys

from . import main as _main


def main() -> None:
    """Runs the command line with ``sys.argv`` and exits with its status."""
    # Behave like the native binary: Ctrl-C ends the process at once through SIGINT's default
    # action (exit status 130 in a shell, no traceback), unless it was started with SIGINT
    # ignored (`nohup`, a script's background job); a closed pipe (`flashlab presets | head`)
    # ends it quietly.
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.exit(_main())


if __name__ == "__main__":
    main()
