"""Entry point of the ``flashlab`` console script and of ``python -m flashlab``."""

from __future__ import annotations

import signal
import sys

from . import main as _main


def main() -> None:
    """Runs the command line with ``sys.argv`` and exits with its status."""
    # Behave like the native binary: Ctrl-C stops the process at once (the simulation runs
    # without the GIL, so Python's KeyboardInterrupt would only arrive at its end), and a
    # closed pipe (`flashlab presets | head`) ends it quietly.
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.exit(_main())


if __name__ == "__main__":
    main()
