#!/usr/bin/env bash
# Tuning sweeps behind the GPU engine's defaults, on the GPU machine in one call:
# SSSP's delta on road and power-law graphs, blocks per SM of the persistent kernels
# (the cost of a level on road graphs), and BC from many sources. Prints one table
# (median kernel time of TRIALS trials, between CUDA events).
#
# usage: scripts/gpu_tune.sh
# Environment: CHATTY (default target/release/chatty), DATASETS (default
# .device-data/datasets), OUT, TRIALS (default 5).
set -uo pipefail
export NCCL_NVLS_ENABLE=0
CHATTY=${CHATTY:-target/release/chatty}
DATASETS=${DATASETS:-.device-data/datasets}
OUT=${OUT:-/tmp/gpu-tune}
TRIALS=${TRIALS:-5}
WORK=${WORK:-/tmp/gpu-graphs}
mkdir -p "$OUT" "$WORK"
# shellcheck source=scripts/device_graphs.sh
source "$(dirname "$0")/device_graphs.sh"
rows="$OUT/tune.csv"
echo "what,graph,algo,setting,kernel_ms,iterations,verification" > "$rows"

measure() { # what graph algo setting args...
    local what=$1 name=$2 a=$3 setting=$4
    shift 4
    "$CHATTY" run "$a" "$(bench_graph "$name")" --engine gpu --gpus 1 -n "$TRIALS" --json "$@" > "$OUT/last.json" 2> "$OUT/last.err" ||
        { echo "$what $name $a $setting failed: $(tail -2 "$OUT/last.err")"; return; }
    python3 - "$what" "$name" "$a" "$setting" "$OUT/last.json" >> "$rows" <<'PY'
import json, sys, statistics
what, name, alg, setting, path = sys.argv[1:]
j = json.load(open(path))
print(f'{what},{name},{alg},{setting},{statistics.median(j["trial_seconds"]) * 1e3:.3f},{j["iterations"]},{j["verification"]}')
PY
}

for d in 1000 4000 16000 64000 256000 1000000000; do measure delta moscow sssp "$d" --delta "$d" --verify; done
for d in 8 64 512 4096 32768 1000000000; do measure delta rmat22 sssp "$d" --delta "$d" --verify; done
measure default moscow sssp default --verify
measure default rmat22 sssp default --verify
measure default rmat22u sssp "(bfs)" --verify
for b in 1 2 4; do
    for g in moscow road-NE; do CHATTY_PERSISTENT_BLOCKS_PER_SM=$b measure blocks "$g" bfs "$b/SM"; done
    CHATTY_PERSISTENT_BLOCKS_PER_SM=$b measure blocks moscow sssp "$b/SM"
done
for g in rmat22u rmat22 road-NE moscow; do measure default "$g" wcc "" --verify; done
for b in 1 2 4 8; do CHATTY_PERSISTENT_BLOCKS_PER_SM=$b measure bc-blocks rmat22u bc "$b/SM"; done
TRIALS=2 measure bc path5k bc all --sources all --verify
TRIALS=2 measure bc rmat22u bc 64 --sources 64
TRIALS=2 measure bc road-NE bc 64 --sources 64
CHATTY_STEP_DRIVER=launch measure driver moscow sssp launch
python3 - "$rows" <<'PY'
import csv, sys
print(f'{"what":8} {"graph":9} {"algo":5} {"setting":>11} {"kernel ms":>10} {"iters":>7} {"us/iter":>8}  verification')
for r in csv.DictReader(open(sys.argv[1])):
    it = max(int(r["iterations"]), 1)
    print(f'{r["what"]:8} {r["graph"]:9} {r["algo"]:5} {r["setting"]:>11} {float(r["kernel_ms"]):10.3f} {it:7d} {float(r["kernel_ms"]) * 1e3 / it:8.2f}  {r["verification"]}')
PY
