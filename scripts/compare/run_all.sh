#!/usr/bin/env bash
# Reproduces docs/comparison.md: builds MQSim and SSDSim at the recorded commits, writes the
# traces, runs every workload on them and on flashlab, and leaves each run's output in
# $RUNS/<name>/ (stdout.txt, time.txt with `/usr/bin/time -v`). Takes about 15 minutes.
#
#   scripts/compare/run_all.sh [SIMS_DIR] [RUNS_DIR]     # defaults /work/sims, $SIMS/runs
#
# MQSIM_GIT and SSDSIM_GIT may point to existing clones (bare or not) to skip the download;
# BUILD_ONLY=1 stops after building the three simulators.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SIMS=$(mkdir -p "${1:-/work/sims}" && cd "${1:-/work/sims}" && pwd)
RUNS=$(mkdir -p "${2:-$SIMS/runs}" && cd "${2:-$SIMS/runs}" && pwd)
MQSIM_COMMIT=7ec40e3b198e8bd117f992f051cd610e330e079e
SSDSIM_COMMIT=f4112896c8e8439382fe9f9dca20052d1b5c936d
LIMIT_S=${LIMIT_S:-600}   # per run; LIMIT_S=5 makes a quick smoke test of this script

checkout() { # url commit dir [existing git dir]
    local url=$1 commit=$2 dir=$3 git=${4:-}
    [ -d "$dir" ] && return
    if [ -z "$git" ]; then git clone -q "$url" "$dir.git" && git=$dir.git; fi
    mkdir -p "$dir" && git --git-dir="$git" archive "$commit" | tar -x -C "$dir"
}
checkout https://github.com/CMU-SAFARI/MQSim "$MQSIM_COMMIT" "$SIMS/mqsim" "${MQSIM_GIT:-}"
checkout https://github.com/huaicheng/ssdsim "$SSDSIM_COMMIT" "$SIMS/ssdsim" "${SSDSIM_GIT:-}"

# MQSim: its own Makefile (g++ -std=c++11 -O3 -g).
[ -x "$SIMS/mqsim/MQSim" ] || (cd "$SIMS/mqsim" && nice make -j1 >build.log 2>&1)
# SSDSim: its Makefile's flags (gcc -c -g, no optimisation) plus -fcommon, without which
# GCC >= 10 refuses to link it (initialize.h defines `ac_timing` in every object file).
# ssd-O2 is the same with -O2, to show what the compiler flags are worth.
build_ssdsim() { # output-name extra-flags
    local out=$1 flags=$2 obj
    [ -x "$SIMS/ssdsim/$out" ] && return
    obj=$(mktemp -d)
    for f in ssd avlTree flash initialize pagemap; do
        nice gcc -c -g $flags -fcommon "$SIMS/ssdsim/$f.c" -o "$obj/$f.o" 2>/dev/null
    done
    gcc -g -o "$SIMS/ssdsim/$out" "$obj"/*.o && rm -r "$obj"
}
build_ssdsim ssd ""
build_ssdsim ssd-O2 "-O2"

(cd "$REPO" && nice cargo build --release --locked -p flashlab-cli)
FLASHLAB=$REPO/target/release/flashlab
[ "${BUILD_ONLY:-0}" = 1 ] && exit 0

timed() { # dir command...: run nice'd under /usr/bin/time -v and timeout, output in dir
    local dir=$1; shift
    mkdir -p "$dir"
    (cd "$dir" && nice /usr/bin/time -v timeout "$LIMIT_S" "$@" >stdout.txt 2>time.txt </dev/null) || true
    grep -E "Command terminated|Exit status|Elapsed|User time|System time|Maximum resident" \
        "$dir/time.txt" | sed "s|^|$(basename "$dir"): |"
}

# (a) and (b) on MQSim, 16 GiB `default` preset, and (d) the same device with 128 blocks per
# plane (32 GiB). "nocache": no DRAM write cache and the whole mapping table in DRAM, as
# flashlab's pagemap; "cache": MQSim's own 256 MiB write cache and cached mapping table (CMT)
# from its shipped ssdconfig.xml, everything else the same.
for variant in nocache cache; do
    for run in 16:fresh-375k 16:gc-6m 32:gc-9m; do
        size=${run%%:*} w=${run#*:}
        d=$RUNS/mqsim$size-$w-$variant; mkdir -p "$d"
        if [ $variant = nocache ]; then
            cp "$HERE/mqsim/ssdconfig-default$size.xml" "$d/ssd.xml"
            cp "$HERE/mqsim/workload-$w.xml" "$d/workload.xml"
        else
            sed 's/<Caching_Mechanism>SIMPLE</<Caching_Mechanism>ADVANCED</;
                 s/<Ideal_Mapping_Table>true</<Ideal_Mapping_Table>false</' \
                "$HERE/mqsim/ssdconfig-default$size.xml" >"$d/ssd.xml"
            sed 's/TURNED_OFF/WRITE_CACHE/' "$HERE/mqsim/workload-$w.xml" >"$d/workload.xml"
        fi
        (cd "$d" && nice /usr/bin/time -v timeout "$LIMIT_S" "$SIMS/mqsim/MQSim" \
            -i ssd.xml -w workload.xml 2>time.txt </dev/null \
            | python3 "$HERE/timestamp_lines.py" >stdout.txt) || true
        grep -E "Assertion|Command terminated|Exit status|Elapsed|User time|Maximum resident" \
            "$d/time.txt" | sed "s|^|$(basename "$d"): |"
        grep -E "requests generated" "$d/stdout.txt" || true
    done
done
timed "$RUNS/flashlab-fresh-375k" "$FLASHLAB" run --workload randwrite:bs=4k,qd=32,count=375000 \
    --precondition 0 --seed 15 --no-progress --json report.json
timed "$RUNS/flashlab-gc-6m" "$FLASHLAB" run --workload randwrite:bs=4k,qd=32,count=6e6 \
    --precondition 0 --seed 15 --no-progress --json report.json
# flashlab in a garbage-collection steady state (issue 15's reference scenario; MQSim's own
# preconditioning fails on this device, so it has no counterpart).
timed "$RUNS/flashlab-steady-1m" "$FLASHLAB" run --workload randwrite:bs=4k,qd=32,count=1e6 \
    --precondition 0.9 --seed 15 --no-progress --json report.json
timed "$RUNS/flashlab32-gc-9m" "$FLASHLAB" run --workload randwrite:bs=4k,qd=32,count=9e6 \
    --set geometry.blocks_per_plane=128 --precondition 0 --seed 15 --no-progress --json report.json

# (c) 2 million random 4 KiB writes, 4 GiB device with 14% over-provisioning on both.
TRACE=$RUNS/w2m-op14.trace
python3 "$HERE/gen_randwrite_trace.py" --count 2000000 --units 901775 \
    --interarrival-ns 100000 --seed 15 --out "$TRACE"
for bin in ssd ssd-O2; do
    d=$RUNS/ssdsim-2m-$bin; mkdir -p "$d"
    sed 's/^overprovide=0.10;/overprovide=0.14;/' "$SIMS/ssdsim/page.parameters" >"$d/page.parameters"
    ln -sf "$TRACE" "$d/w2m.trace"   # SSDSim takes names of at most 29 characters
    nice python3 "$HERE/run_ssdsim.py" --ssd "$SIMS/ssdsim/$bin" --dir "$d" --trace w2m.trace \
        --stall-s 20 --timeout-s "$LIMIT_S" | tee "$d/outcome.txt"
    grep -E "Command terminated|Elapsed|User time|Maximum resident" "$d/time.txt" || true
done
timed "$RUNS/flashlab-2m-4g" "$FLASHLAB" run --trace "$TRACE" --trace-format disksim-ns \
    --set trace.address_map=none --set geometry.blocks_per_plane=16 \
    --set ftl.over_provisioning=0.14 --precondition 0 --seed 15 --no-progress --json report.json
# The same trace on a flashlab device shaped like SSDSim's (2 channels x 2 chips x 2 dies x
# 2 planes, 20/200/1500 us, 40 MB/s buses: SSDSim's t_WC 25 ns per byte), 4 KiB pages
# (flashlab's 4 KiB mapping unit needs pages of at least 4 KiB; SSDSim's are 2 KiB).
timed "$RUNS/flashlab-2m-ssdsim-shape" "$FLASHLAB" run --trace "$TRACE" --trace-format disksim-ns \
    --set trace.address_map=none --set geometry.channels=2 --set geometry.chips_per_channel=2 \
    --set geometry.dies_per_chip=2 --set geometry.planes_per_die=2 \
    --set geometry.blocks_per_plane=1024 --set geometry.pages_per_block=64 \
    --set geometry.page_bytes=4096 --set timing.read_latency_ns=20000 \
    --set timing.program_latency_ns=200000 --set timing.erase_latency_ns=1500000 \
    --set timing.bus_mb_per_s=40 --set ftl.over_provisioning=0.14 \
    --precondition 0 --seed 15 --no-progress --json report.json
