#!/usr/bin/env bash
# The multi-GPU ablation on the GPU machine in one call: the transport calibration
# (cached for --comm auto), then `chatty bench multi-gpu` per graph (every kernel on
# one GPU, then on all GPUs under each transport and control mode, and GPU-driven
# (--mode async) for bfs and sssp; verified against the CPU references except on
# rmat25/26), then the report (markdown tables, SVG charts) with its summary printed last.
#
# usage: scripts/bench_multi_gpu.sh
# Environment: CHATTY (default target/release/chatty), DATASETS (default
# .device-data/datasets), OUT (results; the device tool sets it), GRAPHS (names in
# device_graphs.sh), TRIALS (default 5), ROAD_TRIALS (default 3), CALIBRATE_MAX
# (largest calibrated message, default 256M).
set -uo pipefail
export NCCL_NVLS_ENABLE=0
CHATTY=${CHATTY:-target/release/chatty}
DATASETS=${DATASETS:-.device-data/datasets}
OUT=${OUT:-/tmp/multi-gpu}
WORK=${WORK:-/tmp/gpu-graphs}
TRIALS=${TRIALS:-5}
ROAD_TRIALS=${ROAD_TRIALS:-3}
mkdir -p "$OUT" "$WORK"
# shellcheck source=scripts/device_graphs.sh
source "$(dirname "$0")/device_graphs.sh"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
"$CHATTY" topo > "$OUT/topo.txt" 2>&1
"$CHATTY" topo --calibrate --max-bytes "${CALIBRATE_MAX:-256M}" --json > "$OUT/calibration.json" 2> "$OUT/calibration.log" || echo "calibration failed: $(tail -1 "$OUT/calibration.log")"
for name in ${GRAPHS:-rmat25 rmat24 road-NE grid16m twitter web moscow rmat26}; do
    g=$(bench_graph "$name")
    case $name in
        # Road networks: thousands of steps per run; both vertex orders, fewer modes.
        grid16m) args=(--kernels bfs,pr,wcc --comm auto,p2p --partition natural,bfs -n 2 --verify --mode bsp,async) ;;
        road-NE|moscow) args=(--kernels bfs,sssp,pr,wcc --comm auto,p2p,nccl,staged --partition natural,bfs -n "$ROAD_TRIALS" --verify --mode bsp,async) ;;
        # The CPU references are sequential: minutes per kernel at 0.5-1 G edges, so
        # the largest graphs rely on the GPU test suite and the smaller rows.
        rmat25|rmat26) args=(-n "$TRIALS" --mode bsp,async) ;;
        *) args=(-n "$TRIALS" --verify --mode bsp,async) ;;
    esac
    echo "== $name"
    "$CHATTY" bench multi-gpu "$g" "${args[@]}" >> "$OUT/rows.jsonl" 2> >(tee -a "$OUT/bench.log" >&2)
done
"$CHATTY" bench multi-gpu-report "$OUT/rows.jsonl" --charts "$OUT/charts" > "$OUT/report.md"
tar czf "$OUT/charts.tgz" -C "$OUT" charts && rm -r "$OUT/charts"
sed -n '/## Summary/,/## Every/p' "$OUT/report.md"
