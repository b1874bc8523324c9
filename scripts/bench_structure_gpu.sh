#!/usr/bin/env bash
# Triangle counting on one GPU against GAPBS's tc and our CPU engine on all the host's
# cores, side by side in one call on the GPU machine, on the graphs of
# docs/benchmarks/structure.md (the same simple graph for both systems, made by
# scripts/gapbs_graphs.sh). GAPBS is built there from its public source (never
# committed). Ours: median kernel time (`trial_seconds`: CUDA events around the
# orientation and the count) and median end-to-end trial; GAPBS: its "Average Time"
# (relabelling included, as its trials time it). Prints a markdown table last.
#
# usage: scripts/bench_structure_gpu.sh GAPBS_SOURCE_DIR
# Environment: CHATTY (default target/release/chatty), DATASETS (default
# .device-data/datasets), OUT (the table and an archive of the logs), WORK (graphs and
# logs, default /tmp/structure-graphs), TRIALS (default 3), GRAPHS (default below).
set -uo pipefail
export NCCL_NVLS_ENABLE=0
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CHATTY=$(realpath "${CHATTY:-target/release/chatty}")
DATASETS=$(realpath "${DATASETS:-.device-data/datasets}")
OUT=${OUT:-/tmp/structure-gpu}
WORK=${WORK:-/tmp/structure-graphs}
TRIALS=${TRIALS:-3}
GRAPHS=${GRAPHS:-kron22 urand22 roadNE twitter websym}
LOGS=$WORK/logs
mkdir -p "$OUT" "$WORK/gapbs" "$LOGS"
cp -r "$1"/. "$WORK/gapbs/"
make -C "$WORK/gapbs" -j "$(nproc)" tc converter > "$LOGS/gapbs-build.log" 2>&1 || { echo "GAPBS build failed"; tail "$LOGS/gapbs-build.log"; exit 1; }
GAPBS=$WORK/gapbs
cd "$WORK"
# shellcheck source=scripts/gapbs_graphs.sh
source "$ROOT/scripts/gapbs_graphs.sh"
rows="$LOGS/rows.tsv"
: > "$rows"

ours() { # label graph kernel args... -> "kernel_s end_to_end_s triangles"
    local label=$1 g=$2 a=$3
    shift 3
    "$CHATTY" run "$a" "$g.cgr" -n "$TRIALS" --json "$@" > "$LOGS/ours-$label.json" 2> "$LOGS/ours-$label.err" || { echo "nan nan nan"; return; }
    python3 - "$LOGS/ours-$label.json" <<'PY'
import json, statistics, sys
j = json.load(open(sys.argv[1]))
print(f'{statistics.median(j["trial_seconds"]):.4f} {statistics.median(j["end_to_end_seconds"]):.4f} {j["result"].get("triangles", "-")}')
PY
}

for g in $GRAPHS; do
    make_graph "$g" 2>> "$LOGS/generate.log"
    "$GAPBS/tc" -f "$g.sg" -n "$TRIALS" > "$LOGS/gapbs-$g.log" 2>&1
    gapbs=$(awk '/Average Time:/ {printf "%.4f", $3}' "$LOGS/gapbs-$g.log")
    gapbs_count=$(awk '/ triangles/ {print $1}' "$LOGS/gapbs-$g.log" | tail -1)
    # Every vertex's count, GPU against CPU (whose kernel CI checks against the
    # sequential reference; the reference itself takes minutes on kron22).
    read -r gk ge gt < <(ours "gpu-$g" "$g" tc --engine gpu --gpus 1 -o "$g.gpu.txt")
    read -r ck _ ct < <(ours "cpu-$g" "$g" tc --engine cpu -o "$g.cpu.txt")
    read -r lk _ _ < <(ours "gpu-clustering-$g" "$g" clustering --engine gpu --gpus 1)
    verdict=$(cmp -s "$g.gpu.txt" "$g.cpu.txt" && echo "every vertex = CPU" || echo "DIFFERS")
    rm -f "$g.gpu.txt" "$g.cpu.txt"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$g" "$gt" "$ct" "$gapbs_count" "$gk" "$ge" "$ck" "$gapbs" "$lk" "$verdict" >> "$rows"
done
python3 - "$rows" "$(nproc)" <<'PY' | tee "$OUT/table.md"
import csv, sys
cores = sys.argv[2]
print(f"| graph | triangles (GPU / CPU / GAPBS) | GPU tc kernel s | GPU end-to-end s | CPU {cores} threads s | GAPBS {cores} threads s | GAPBS / GPU kernel | GPU clustering s | per vertex |")
print("|---|---|---|---|---|---|---|---|---|")
for g, gt, ct, bt, gk, ge, ck, b, lk, v in csv.reader(open(sys.argv[1]), delimiter="\t"):
    try:
        ratio = f"{float(b) / float(gk):.1f}x"
    except ValueError:
        ratio = "n/a"
    print(f"| {g} | {gt} / {ct} / {bt} | {gk} | {ge} | {ck} | {b} | {ratio} | {lk} | {v} |")
PY
tar czf "$OUT/logs.tgz" -C "$WORK" logs
