#!/usr/bin/env bash
# Two builds side by side on the GPU machine, in one call: the single-GPU benchmark of
# gpu_suite.sh (every kernel, TRIALS trials) and `bench multi-gpu` (PageRank and BFS,
# --comm auto, threads), graph by graph, the baseline first, then the candidate. For
# a refactor that must not change performance; prints one table last.
#
# usage: scripts/gpu_compare.sh BASELINE_BINARY CANDIDATE_BINARY
# Environment: DATASETS (default .device-data/datasets), OUT, GRAPHS (default
# "rmat24 road-NE"), MULTI_GRAPHS (default rmat25), DEVICES (multi-GPU parts, default
# every GPU; 0,0 puts two parts on one GPU), TRIALS (default 5).
set -uo pipefail
export NCCL_NVLS_ENABLE=0
BASE=$1 CAND=$2
OUT=${OUT:-/tmp/gpu-compare}
export DATASETS=${DATASETS:-.device-data/datasets} TRIALS=${TRIALS:-5} WORK=${WORK:-/tmp/gpu-graphs}
mkdir -p "$OUT" "$WORK"
here=$(dirname "$0")
for name in ${GRAPHS:-rmat24 road-NE}; do
    for side in base cand; do
        bin=$BASE; [ $side = cand ] && bin=$CAND
        CHATTY=$bin BENCH_GRAPHS=$name BENCH_TAG=-$side bash "$here/gpu_suite.sh" bench > /dev/null 2>> "$OUT/compare.log"
    done
done
CHATTY=$CAND
# shellcheck source=scripts/device_graphs.sh
source "$here/device_graphs.sh"
for name in ${MULTI_GRAPHS:-rmat25}; do
    g=$(bench_graph "$name")
    for side in base cand; do
        bin=$BASE; [ $side = cand ] && bin=$CAND
        args=(--kernels pr,bfs --comm auto --control threads -n "$TRIALS")
        [ -n "${DEVICES:-}" ] && args+=(--devices "$DEVICES")
        "$bin" bench multi-gpu "$g" "${args[@]}" 2>> "$OUT/compare.log" | sed "s/^{/{\"side\":\"$side\",/" >> "$OUT/multi.jsonl"
    done
done
python3 - "$OUT/bench.csv" "$OUT/multi.jsonl" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ms = {}
for r in rows:
    name, side = r["graph"].rsplit("-", 1)
    ms[(name, r["algo"], side)] = float(r["kernel_s"]) * 1e3
print(f'{"graph":10} {"kernel":6} {"baseline ms":>12} {"candidate ms":>13} {"cand/base":>10}')
for (name, alg, side), v in ms.items():
    if side == "base" and (name, alg, "cand") in ms:
        c = ms[(name, alg, "cand")]
        print(f'{name:10} {alg:6} {v:12.3f} {c:13.3f} {c / v:10.3f}')
for l in open(sys.argv[2]):
    r = json.loads(l)
    print(f'{r["graph"]:10} {r["kernel"]:6} {r["side"]:>4} {r["gpus"]} part(s) {r["comm"]:>5}: {r["seconds"] * 1e3:9.3f} ms (devices {r.get("devices")})')
PY
