#!/usr/bin/env bash
# The multi-GPU ablation on the GPU machine in one call: the transport calibration
# (cached for --comm auto), then `chatty bench multi-gpu` per graph (every kernel on
# one GPU, then on all GPUs under each transport and control mode, and GPU-driven
# (--mode async: peer stores; --mode gmpi: device-initiated messages) for bfs and
# sssp; verified against the CPU references except on rmat25/26), then the report
# (markdown tables, SVG charts) with its summary printed last.
#
# usage: scripts/bench_multi_gpu.sh
# Environment: CHATTY (default target/release/chatty), DATASETS (default
# .device-data/datasets), OUT (results; the device tool sets it), GRAPHS (names in
# device_graphs.sh), TRIALS (default 5), ROAD_TRIALS (default 3), CALIBRATE_MAX
# (largest calibrated message, default 256M), MODES (default bsp,async,gmpi),
# KERNELS and COMMS (override each graph's lists), DEVICES (CUDA ordinals of the
# multi-GPU rows, e.g. 0,0 for two parts on a one-GPU machine; default all GPUs).
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
    kernels=bfs,sssp,pr,wcc,spmv comms=auto,p2p,peer,nccl,uva,staged
    case $name in
        # Road networks: thousands of steps per run; both vertex orders, fewer modes.
        grid16m) kernels=bfs,pr,wcc comms=auto,p2p args=(--reorder none,bfs -n 2 --verify) ;;
        road-NE|moscow) kernels=bfs,sssp,pr,wcc comms=auto,p2p,nccl,staged args=(--reorder none,bfs -n "$ROAD_TRIALS" --verify) ;;
        # The CPU references are sequential: minutes per kernel at 0.5-1 G edges, so
        # the largest graphs rely on the GPU test suite and the smaller rows.
        rmat25|rmat26) args=(-n "$TRIALS") ;;
        *) args=(-n "$TRIALS" --verify) ;;
    esac
    args+=(--kernels "${KERNELS:-$kernels}" --comm "${COMMS:-$comms}" --mode "${MODES:-bsp,async,gmpi}")
    [ -n "${DEVICES:-}" ] && args+=(--devices "$DEVICES")
    echo "== $name"
    "$CHATTY" bench multi-gpu "$g" "${args[@]}" >> "$OUT/rows.jsonl" 2> >(tee -a "$OUT/bench.log" >&2)
done
"$CHATTY" bench multi-gpu-report "$OUT/rows.jsonl" --charts "$OUT/charts" > "$OUT/report.md"
tar czf "$OUT/charts.tgz" -C "$OUT" charts && rm -r "$OUT/charts"
sed -n '/## Summary/,/## Every/p' "$OUT/report.md"
