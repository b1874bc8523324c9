#!/usr/bin/env bash
# Wall time against kernel time (issue 25), in one call of the GPU machine: each row
# runs `chatty run ... --engine gpu --json` and reports the medians of the trials'
# kernel time and end-to-end time, the last trial's breakdown (set-up, kernels,
# exchanges, download) and the once-per-run upload in GB/s. With CHATTY_OLD set, the
# same rows run on that binary first (a baseline build), side by side.
#
# usage: scripts/bench_wall_time.sh
# Environment: CHATTY (default target/release/chatty), CHATTY_OLD (optional baseline),
# DATASETS (default .device-data/datasets), OUT (logs; the device tool sets it),
# TRIALS (default 5), SPLIT (the multi-GPU rows' --devices: default 0,1 with two GPUs,
# else 0,0: two parts on one GPU, which measures the split's overheads, not scaling),
# SPECS (graph:algo rows, default "rmat25:pr rmat25:bfs rmat25:spmv road-NE:bfs").
set -uo pipefail
export NCCL_NVLS_ENABLE=0
CHATTY=${CHATTY:-target/release/chatty}
DATASETS=${DATASETS:-.device-data/datasets}
OUT=${OUT:-/tmp/wall-time}
TRIALS=${TRIALS:-5}
WORK=${WORK:-/tmp/gpu-graphs}
mkdir -p "$OUT" "$WORK/wall"
gpus=$(nvidia-smi -L | wc -l)
SPLIT=${SPLIT:-$([ "$gpus" -ge 2 ] && echo 0,1 || echo 0,0)}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
echo "transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)" | tee -a "$OUT/gpu.txt"
# shellcheck source=scripts/device_graphs.sh
source "$(dirname "$0")/device_graphs.sh"
echo "build,graph,algo,gpus,kernel_ms,e2e_ms,setup_ms,exchange_ms,download_ms,other_ms,upload_s,upload_gb_s,prepare_s,upload_edges_s,upload_host_copy_s" > "$OUT/wall.csv"

row() { # build binary graph-name algo gpus-label gpu-flags...
    local build=$1 bin=$2 name=$3 alg=$4 label=$5
    shift 5
    local extra=() json="$WORK/wall/$build-$name-$alg-$label.json"
    case $alg in
        pr) extra=(--max-iters 10 --tolerance 0) ;;
        bfs | sssp) extra=(-r 1) ;;
    esac
    if ! "$bin" run "$alg" "$(bench_graph "$name")" --engine gpu "$@" -n "$TRIALS" --json "${extra[@]}" > "$json" 2> "$json.err"; then
        echo "FAIL $build $name $alg $label: $(cat "$json.err")"
        return
    fi
    grep "^gpus:" "$json.err" | sed "s/^/$build $name $alg $label: /"
    python3 - "$build" "$name" "$alg" "$label" "$json" >> "$OUT/wall.csv" <<'PY'
import json, statistics, sys
build, name, alg, label, path = sys.argv[1:]
j = json.load(open(path))
d = j.get("detail", {})
b = (j.get("breakdown") or [{}])[-1]
ms = lambda k: f'{b[k] * 1e3:.2f}' if k in b else ''
print(",".join([build, name, alg, label,
    f'{statistics.median(j["trial_seconds"]) * 1e3:.2f}', f'{statistics.median(j["end_to_end_seconds"]) * 1e3:.2f}',
    ms("setup_seconds"), ms("exchange_seconds"), ms("download_seconds"), ms("other_seconds"),
    f'{d.get("upload_seconds", 0):.3f}', f'{d["upload_gb_per_s"]:.1f}' if "upload_gb_per_s" in d else
    f'{d.get("upload_bytes", 0) / max(d.get("upload_seconds", 0), 1e-9) / 1e9:.1f}', f'{j.get("prepare_seconds", 0):.3f}',
    f'{d.get("upload_edges_seconds", 0):.3f}', f'{d.get("upload_host_copy_seconds", 0):.3f}']))
PY
}

for build in ${CHATTY_OLD:+old} new; do
    bin=$CHATTY
    [ "$build" = old ] && bin=$CHATTY_OLD
    for spec in ${SPECS:-rmat25:pr rmat25:bfs rmat25:spmv road-NE:bfs}; do
        name=${spec%%:*} alg=${spec#*:}
        row "$build" "$bin" "$name" "$alg" 1 --gpus 1
        row "$build" "$bin" "$name" "$alg" "${SPLIT//,/+}" --devices "$SPLIT"
        [ "$build" = new ] && [ "$gpus" -ge 2 ] && row "$build" "$bin" "$name" "$alg" auto
    done
done
tar czf "$OUT/wall-runs.tgz" -C "$WORK" wall
echo "== wall time: medians of $TRIALS trials; breakdown of the last trial; upload once per run"
python3 - "$OUT/wall.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cols = ["build", "graph", "algo", "gpus", "kernel_ms", "e2e_ms", "setup_ms", "exchange_ms", "download_ms", "other_ms", "upload_s", "upload_gb_s", "prepare_s", "upload_edges_s", "upload_host_copy_s"]
print(" ".join(f"{c:>11}" for c in cols))
for r in rows:
    print(" ".join(f"{r[c]:>11}" for c in cols))
PY
