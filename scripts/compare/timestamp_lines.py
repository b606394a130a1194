#!/usr/bin/env python3
"""Prefixes each line of standard input with the seconds since this filter started.

Used on MQSim's progress output to see its rate in each 5% step of a run.
"""

import sys
import time


def main() -> None:
    start = time.monotonic()
    for line in sys.stdin:
        if line.strip():
            sys.stdout.write(f"{time.monotonic() - start:9.2f} {line}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
