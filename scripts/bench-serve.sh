#!/usr/bin/env bash
# Benchmark of `flashlab serve` (issue 30): IOPS served with --clock fast over a Unix socket
# at queue depth 32 (fio's nbd engine, 4 KiB random reads and writes, 50/50, for SECONDS), and
# the wall time to reopen a 16 GiB image (the `default` preset: 16 GiB raw) after MIB MiB were
# written to it (its pages read back and the FTL's power-up scan over every page). Prints one
# line of figures and writes them as JSON to OUT (default /tmp/flashlab-bench-serve.json).
# Usage: scripts/bench-serve.sh [SECONDS] [MIB] [OUT]   (needs fio and flashlab on PATH)
set -euo pipefail
seconds=${1:-10}
mib=${2:-1024}
out=${3:-/tmp/flashlab-bench-serve.json}
dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$dir"' EXIT
sock="$dir/nbd.sock"
uri="nbd+unix:///?socket=$sock"

start_server() {
    flashlab serve --image "$dir/flash.img" --listen "unix:$sock" "$@" 2>"$dir/serve.log" &
    server=$!
    for _ in $(seq 600); do
        grep -q "listening on" "$dir/serve.log" 2>/dev/null && return 0
        kill -0 $server 2>/dev/null || { cat "$dir/serve.log" >&2; exit 1; }
        sleep 0.1
    done
    echo "error: the server did not start" >&2
    exit 1
}

start_server --device default
fio --name=fill --ioengine=nbd --uri="$uri" --rw=write --bs=1m --iodepth=8 \
    --size="${mib}m" --output-format=terse >/dev/null
fio --name=qd32 --ioengine=nbd --uri="$uri" --rw=randrw --bs=4k --iodepth=32 \
    --size="${mib}m" --time_based --runtime="$seconds" --output-format=json \
    >"$dir/fio.json"
kill -INT $server
wait $server
start_server
recovered=$(grep "^recovered:" "$dir/serve.log")
kill -INT $server
wait $server
python3 - "$dir/fio.json" "$recovered" "$out" "$seconds" "$mib" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
fio = json.loads(text[text.index("{"):])
job = fio["jobs"][0]
iops = job["read"]["iops"] + job["write"]["iops"]
rec = sys.argv[2]
wall = float(re.search(r"([0-9.]+) s wall", rec).group(1))
sim_ms = float(re.search(r"([0-9.]+) ms simulated", rec).group(1))
pages = int(re.search(r"(\d+) pages read back", rec).group(1))
figures = {
    "serve_iops_qd32_fast_unix": round(iops),
    "serve_seconds": int(sys.argv[4]),
    "image_gib": 16,
    "written_mib": int(sys.argv[5]),
    "recovery_wall_s": wall,
    "recovery_scan_simulated_ms": sim_ms,
    "recovery_pages_read_back": pages,
}
json.dump(figures, open(sys.argv[3], "w"), indent=1)
print(
    f"serve: {iops:,.0f} IOPS (fio 4 KiB randrw, QD 32, --clock fast, Unix socket); "
    f"recovery of a 16 GiB image with {figures['written_mib']} MiB written: "
    f"{wall:.2f} s wall ({pages:,} pages read back, FTL scan {sim_ms:.1f} ms simulated)"
)
PY
