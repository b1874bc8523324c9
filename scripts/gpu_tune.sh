#!/usr/bin/env bash
# Tuning sweeps behind the GPU engine's defaults, on the GPU machine in one call:
# SSSP's delta on road and power-law graphs, blocks per SM of the persistent kernels
# (the cost of a level on road graphs), and BC from many sources. Prints one table
# (median kernel time of TRIALS trials, between CUDA events).
#
# usage: scripts/gpu_tune.sh
# Environment: CHATTY (default target/release/chatty), DATASETS (default
# .device-data/datasets), OUT, TRIALS (default 5), SWEEPS (a comma-separated subset of
# delta,blocks,wcc,bc,driver,local,bcup,bcbits,bfschase; default all).
set -uo pipefail
export NCCL_NVLS_ENABLE=0
CHATTY=${CHATTY:-target/release/chatty}
DATASETS=${DATASETS:-.device-data/datasets}
OUT=${OUT:-/tmp/gpu-tune}
TRIALS=${TRIALS:-5}
WORK=${WORK:-/tmp/gpu-graphs}
SWEEPS=${SWEEPS:-delta,blocks,wcc,bc,driver,local,bcup,bcbits,bfschase}
mkdir -p "$OUT" "$WORK"
sweep() { [[ ",$SWEEPS," == *",$1,"* ]]; }
# shellcheck source=scripts/device_graphs.sh
source "$(dirname "$0")/device_graphs.sh"
rows="$OUT/tune.csv"
echo "what,graph,algo,setting,kernel_ms,iterations,verification" > "$rows"

measure() { # what graph algo setting args...
    local what=$1 name=$2 a=$3 setting=$4
    shift 4
    timeout "${RUN_TIMEOUT:-300}" "$CHATTY" run "$a" "$(bench_graph "$name")" --engine gpu --gpus 1 -n "$TRIALS" --json "$@" > "$OUT/last.json" 2> "$OUT/last.err" ||
        { echo "$what $name $a $setting failed: $(tail -2 "$OUT/last.err")"; return; }
    python3 - "$what" "$name" "$a" "$setting" "$OUT/last.json" >> "$rows" <<'PY'
import json, sys, statistics
what, name, alg, setting, path = sys.argv[1:]
j = json.load(open(path))
print(f'{what},{name},{alg},{setting},{statistics.median(j["trial_seconds"]) * 1e3:.3f},{j["iterations"]},{j["verification"]}')
PY
}

if sweep delta; then
    for d in 1000 4000 16000 64000 256000 1000000000; do measure delta moscow sssp "$d" --delta "$d" --verify; done
    for d in 8 64 512 4096 32768 1000000000; do measure delta rmat22 sssp "$d" --delta "$d" --verify; done
    measure default moscow sssp default --verify
    measure default rmat22 sssp default --verify
    measure default rmat22u sssp "(bfs)" --verify
fi
if sweep blocks; then
    for b in 1 2 4; do
        for g in moscow road-NE; do CHATTY_PERSISTENT_BLOCKS_PER_SM=$b measure blocks "$g" bfs "$b/SM"; done
        CHATTY_PERSISTENT_BLOCKS_PER_SM=$b measure blocks moscow sssp "$b/SM"
    done
    for b in 1 2 4 8; do CHATTY_PERSISTENT_BLOCKS_PER_SM=$b measure bc-blocks rmat22u bc "$b/SM"; done
fi
if sweep wcc; then
    for g in rmat22u rmat22 road-NE moscow; do measure default "$g" wcc "" --verify; done
fi
if sweep bc; then
    TRIALS=2 measure bc path5k bc all --sources all --verify
    TRIALS=2 measure bc rmat22u bc 64 --sources 64
    TRIALS=2 measure bc road-NE bc 64 --sources 64
fi
if sweep driver; then
    CHATTY_STEP_DRIVER=launch measure driver moscow sssp launch
fi
# SSSP's block-local rounds per step (CHATTY_SSSP_LOCAL_ROUNDS; 0: off).
if sweep local; then
    for r in 0 4 16 64 256 4096; do
        for g in moscow grid16m; do CHATTY_SSSP_LOCAL_ROUNDS=$r measure local "$g" sssp "r$r" --verify; done
        CHATTY_SSSP_LOCAL_ROUNDS=$r measure local rmat22 sssp "r$r"
    done
    for d in 4000 64000 1000000000; do
        for r in 0 64; do CHATTY_SSSP_LOCAL_ROUNDS=$r measure local moscow sssp "d$d r$r" --delta "$d"; done
    done
    CHATTY_STEP_DRIVER=launch measure local moscow sssp "launch" --verify
fi
# BC's bottom-up levels (CHATTY_BC_UP_SHARE: a level above pairs / share goes bottom-up; 0: never).
if sweep bcup; then
    for share in 0 8 20 50; do
        CHATTY_BC_UP_SHARE=$share measure bcup rmat22u bc "1/$share" --verify
        CHATTY_BC_UP_SHARE=$share measure bcup rmat22 bc "1/$share"
        CHATTY_BC_UP_SHARE=$share TRIALS=2 measure bcup road-NE bc "64 1/$share" --sources 64
    done
    TRIALS=2 measure bcup path5k bc all --sources all --verify
    TRIALS=2 measure bcup rmat22 bc "4 (verified)" --sources 4 --verify
fi
# BC's bitmaps (CHATTY_BC_BITS: 0 none, 1 forward sweep, 2 backward sweep, 3 both) on
# undirected, directed and road graphs, from one source and from 64 in one batch.
if sweep bcbits; then
    for bits in 0 1 2 3; do
        for g in rmat22u twitter web moscow; do CHATTY_BC_BITS=$bits measure bcbits "$g" bc "bits $bits" --verify; done
        CHATTY_BC_BITS=$bits TRIALS=2 measure bcbits rmat22u bc "64 bits $bits" --sources 64
        CHATTY_BC_BITS=$bits TRIALS=2 measure bcbits road-NE bc "64 bits $bits" --sources 64
    done
fi
# BFS as a hop-count near-far with the block-local chase (CHATTY_BFS_CHASE_DELTA: hops
# per threshold step; 0: level by level), with the chase's rounds per step.
if sweep bfschase; then
    for d in 0 4 16 64 256; do
        for g in moscow road-NE grid16m; do CHATTY_BFS_CHASE_DELTA=$d measure bfschase "$g" bfs "d$d" --verify; done
    done
    for r in 4 64; do
        for g in moscow road-NE grid16m; do CHATTY_SSSP_LOCAL_ROUNDS=$r CHATTY_BFS_CHASE_DELTA=16 measure bfschase "$g" bfs "d16 r$r"; done
    done
fi
python3 - "$rows" <<'PY'
import csv, sys
print(f'{"what":8} {"graph":9} {"algo":5} {"setting":>11} {"kernel ms":>10} {"iters":>7} {"us/iter":>8}  verification')
for r in csv.DictReader(open(sys.argv[1])):
    it = max(int(r["iterations"]), 1)
    print(f'{r["what"]:8} {r["graph"]:9} {r["algo"]:5} {r["setting"]:>11} {float(r["kernel_ms"]):10.3f} {it:7d} {float(r["kernel_ms"]) * 1e3 / it:8.2f}  {r["verification"]}')
PY
