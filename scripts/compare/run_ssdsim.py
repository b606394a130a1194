#!/usr/bin/env python3
"""Runs SSDSim on one trace, timed, and stops it when it stops making progress.

SSDSim (huaicheng/ssdsim) reads the trace name from standard input and writes `ex.out` (one
line per completed request) and `statistic10.dat` in the working directory. When requests are
still in flight at the end of the trace it never exits (see docs/comparison.md), so this
watches `ex.out` and sends SIGTERM once the file has not grown for `--stall-s` seconds. It
prints the wall and CPU time at which the last completed request was written; `time.txt` has
the `/usr/bin/time -v` summary (wall time, CPU time and peak RSS of the whole process).

    run_ssdsim.py --ssd /work/sims/ssdsim/ssd --dir RUN_DIR --trace w2m.trace
"""

import argparse
import os
import signal
import subprocess
import time


def cpu_seconds(parent_pid: int) -> float:
    """User + system CPU seconds of the (only) child of `parent_pid`, 0 if it has none."""
    try:
        with open(f"/proc/{parent_pid}/task/{parent_pid}/children") as f:
            child = f.read().split()[0]
        with open(f"/proc/{child}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ssd", required=True, help="SSDSim binary")
    parser.add_argument("--dir", required=True, help="run directory (has page.parameters)")
    parser.add_argument("--trace", required=True, help="trace file name inside --dir (< 30 chars)")
    parser.add_argument("--stall-s", type=float, default=60.0, help="give up after this stall")
    parser.add_argument("--timeout-s", type=float, default=900.0, help="hard limit")
    args = parser.parse_args()

    out_path = os.path.join(args.dir, "ex.out")
    if os.path.exists(out_path):
        os.remove(out_path)
    with (
        open(os.path.join(args.dir, "stdout.txt"), "w") as stdout,
        open(os.path.join(args.dir, "time.txt"), "w") as stderr,
    ):
        start = time.monotonic()
        proc = subprocess.Popen(
            ["/usr/bin/time", "-v", args.ssd],
            cwd=args.dir,
            stdin=subprocess.PIPE,
            stdout=stdout,
            stderr=stderr,
        )
        proc.stdin.write(args.trace.encode() + b"\n")
        proc.stdin.close()
        last_size, last_growth, last_cpu, outcome = -1, start, 0.0, "exited"
        while proc.poll() is None:
            time.sleep(0.2)
            now = time.monotonic()
            size = os.path.getsize(out_path) if os.path.exists(out_path) else 0
            cpu = cpu_seconds(proc.pid)
            if size != last_size:
                last_size, last_growth, last_cpu = size, now, cpu
            stalled = now - last_growth > args.stall_s
            if stalled or now - start > args.timeout_s:
                outcome = "stalled" if stalled else "timeout"
                # The simulator is /usr/bin/time's only child; TERM it, time then reports.
                subprocess.run(["pkill", "-TERM", "-P", str(proc.pid)], check=False)
                proc.wait()
        end = time.monotonic()
    print(f"outcome: {outcome}, exit status {proc.returncode}")
    print(
        f"last ex.out growth after {last_growth - start:.1f} s wall, {last_cpu:.1f} s CPU; "
        f"process ended after {end - start:.1f} s"
    )


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    main()
