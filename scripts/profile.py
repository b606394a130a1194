#!/usr/bin/env python3
"""Instructions per simulated host request, split by part of the simulator (docs/performance.md).

Runs `flashlab bench` twice under callgrind (valgrind must be installed) with two request
counts and subtracts, so what the two runs share (building the device, preconditioning; the
callgrind toggle also catches `Simulation::run_until_idle`, which preconditioning uses) cancels
out and only the measured phase's cost per request remains. Instruction counts do not depend
on the machine's load, so a step can be measured on a busy machine.

    scripts/profile.py [--mode timed|functional] [--requests 100000,400000] [-- BENCH ARGS...]

Default bench arguments: the 4 GiB variant of the reference device (same dies and blocks,
a quarter of the blocks, same write amplification), which keeps the valgrind runs short.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict

DEFAULT_ARGS = [
    "--set",
    "geometry.blocks_per_plane=16",
    "--set",
    "ftl.over_provisioning=0.14",
    "--block-ftl-requests",
    "0",
    "--map-cache-requests",
    "0",
]

# (part, pattern on the function symbol callgrind reports), first match wins.
PARTS = [
    ("event queue", r"binary_heap|engine::events"),
    ("flash scheduler", r"flashlab_sim::flash::"),
    ("FTL and NAND state", r"flashlab_sim::(ftl|nand)::|as flashlab_sim::ftl::Ftl>"),
    ("host ordering", r"flashlab_sim::host::|collections::btree"),
    ("statistics", r"hdrhistogram|flashlab_sim::stats::"),
    ("workload generator", r"flashlab_sim::workload::|rand|Pcg"),
    ("FTL CPU model", r"flashlab_sim::engine::cpu::|engine::map_unit"),
    ("engine (events, calls, effects, requests)", r"flashlab_sim::engine::"),
    ("memcpy/memset", r"mem(cpy|move|set)"),
]


def run(binary, mode, requests, bench_args, out_dir):
    out = os.path.join(out_dir, f"cg.{mode}.{requests}")
    cmd = [
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={out}",
        "--toggle-collect=flashlab_sim::engine::Simulation::run",
        binary,
        "bench",
        "--mode",
        mode,
        "--requests",
        str(requests),
        *bench_args,
    ]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    text = subprocess.run(
        ["callgrind_annotate", "--auto=no", "--threshold=100", out],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    total, parts = 0, defaultdict(int)
    for line in text.splitlines():
        m = re.match(r"^\s*([\d,]+) \([ \d.]+%\)\s+(\S.*)$", line)
        if not m:
            continue
        cost, where = int(m.group(1).replace(",", "")), m.group(2)
        if "PROGRAM TOTALS" in where:
            total = cost
            continue
        symbol = where.split(":", 1)[1] if ":" in where else where
        part = next((p for p, rx in PARTS if re.search(rx, symbol)), "other")
        parts[part] += cost
    return total, parts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=["timed", "functional"], default="timed")
    ap.add_argument("--requests", default="100000,400000")
    ap.add_argument("--binary", default="target/release/flashlab")
    ap.add_argument("bench_args", nargs="*")
    a = ap.parse_args()
    n1, n2 = (int(x) for x in a.requests.split(","))
    bench_args = a.bench_args or DEFAULT_ARGS
    with tempfile.TemporaryDirectory() as d:
        t1, p1 = run(a.binary, a.mode, n1, bench_args, d)
        t2, p2 = run(a.binary, a.mode, n2, bench_args, d)
    n = n2 - n1
    print(f"{a.mode}: {(t2 - t1) / n:,.0f} instructions per host request")
    rows = sorted(((p2[k] - p1[k]) / n, k) for k in set(p1) | set(p2))
    for per, k in reversed(rows):
        print(f"  {k:<45} {per:>8,.0f}  {100 * per * n / (t2 - t1):5.1f}%")


if __name__ == "__main__":
    sys.exit(main())
