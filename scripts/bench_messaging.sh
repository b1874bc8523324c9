#!/usr/bin/env bash
# Device-initiated messaging on the GPU machine in one call (design.md §1.3, §6):
# `chatty bench messaging` (kernel- vs host-initiated ping-pong GPU-GPU and GPU-host
# from 4 B to 64 MiB, the raw mapped-memory round trip, the message rate with and
# without warp aggregation): JSON rows in $OUT/messaging.jsonl, the tables and the
# targets printed last.
#
# usage: scripts/bench_messaging.sh
# Environment: CHATTY (default target/release/chatty), OUT (results; the device tool
# sets it), MAX_BYTES (default 64M).
set -uo pipefail
export NCCL_NVLS_ENABLE=0
CHATTY=${CHATTY:-target/release/chatty}
OUT=${OUT:-/tmp/messaging}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/messaging-gpu.txt"
"$CHATTY" bench messaging --max-bytes "${MAX_BYTES:-64M}" --rows "$OUT/messaging.jsonl" 2> "$OUT/messaging.log" || { echo "bench messaging failed: $(tail -3 "$OUT/messaging.log")"; exit 1; }
