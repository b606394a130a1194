#!/usr/bin/env python3
"""Writes a trace of uniformly random, 4 KiB-aligned 4 KiB writes for the comparison runs.

One line per request, `arrival_ns device lsn_sectors size_sectors op` with op 0 = write: the
trace format SSDSim and MQSim read (DiskSim ASCII with integer nanoseconds), which flashlab
replays as `disksim-ns`. Offsets are drawn with Python's `random.Random(seed)` (Mersenne
Twister), so one seed gives the same file on every machine.

    gen_randwrite_trace.py --count 2000000 --units 901775 --interarrival-ns 100000 \
        --seed 15 --out w2m-op14.trace
"""

import argparse
import random

SECTORS_PER_4K = 8


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, required=True, help="number of requests")
    parser.add_argument(
        "--units", type=int, required=True, help="logical 4 KiB units addressed (0..units-1)"
    )
    parser.add_argument(
        "--interarrival-ns", type=int, required=True, help="time between arrivals, ns"
    )
    parser.add_argument("--seed", type=int, default=15, help="random seed (default 15)")
    parser.add_argument("--out", required=True, help="output file")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    with open(args.out, "w", encoding="ascii") as out:
        lines = []
        for i in range(args.count):
            unit = rng.randrange(args.units)
            lines.append(f"{i * args.interarrival_ns} 0 {unit * SECTORS_PER_4K} 8 0")
            if len(lines) == 65536:
                out.write("\n".join(lines) + "\n")
                lines.clear()
        # SSDSim's readme: no line break after the last request.
        out.write("\n".join(lines))


if __name__ == "__main__":
    main()
