#!/usr/bin/env bash
# One GPU against GAPBS on all the host's cores, side by side in one call on the GPU
# machine: BFS, SSSP, PageRank, WCC, BC and TC on a Kronecker graph (GAPBS's parameters,
# scale 22, degree 16, undirected, weights 1..255) and on the Moscow road graph, plus
# BC from every source of a 5,000-vertex path. GAPBS is built there from its public
# source (never committed); both run on the same graph files, from the same source
# vertex. Ours: median kernel time between CUDA events (`trial_seconds`) and the
# median end-to-end trial; GAPBS: its "Average Time". Prints a markdown table last.
#
# usage: scripts/bench_gpu_vs_gapbs.sh GAPBS_SOURCE_DIR
# Environment: CHATTY (default target/release/chatty), DATASETS (default
# .device-data/datasets), OUT (the table and one archive of the logs: the device
# returns few files), WORK (graphs and logs, default /tmp/gapbs-graphs), TRIALS
# (default 8), PEER_PATH_BC (0: skip GAPBS's BC from 5,000 sources of the path, minutes).
set -uo pipefail
export NCCL_NVLS_ENABLE=0
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CHATTY=$(realpath "${CHATTY:-target/release/chatty}")
DATASETS=$(realpath "${DATASETS:-.device-data/datasets}")
OUT=${OUT:-/tmp/gpu-vs-gapbs}
WORK=${WORK:-/tmp/gapbs-graphs}
TRIALS=${TRIALS:-8}
LOGS=$WORK/logs
mkdir -p "$OUT" "$WORK/gapbs" "$LOGS"
cp -r "$1"/. "$WORK/gapbs/"
make -C "$WORK/gapbs" -j "$(nproc)" bfs sssp pr cc bc tc converter > "$LOGS/gapbs-build.log" 2>&1 || { echo "GAPBS build failed"; tail "$LOGS/gapbs-build.log"; exit 1; }
GAPBS=$WORK/gapbs
cd "$WORK"
# shellcheck source=scripts/gapbs_graphs.sh
source "$ROOT/scripts/gapbs_graphs.sh"
rows="$LOGS/rows.tsv"
: > "$rows"

ours() { # label graph algo args... -> "kernel_ms end_to_end_ms"
    local label=$1 g=$2 a=$3
    shift 3
    "$CHATTY" run "$a" "$g.cgr" -n "$TRIALS" --json "$@" > "$LOGS/ours-$label.json" 2> "$LOGS/ours-$label.err" || { echo "nan nan"; return; }
    python3 - "$LOGS/ours-$label.json" <<'PY'
import json, statistics, sys
j = json.load(open(sys.argv[1]))
print(f'{statistics.median(j["trial_seconds"]) * 1e3:.3f} {statistics.median(j["end_to_end_seconds"]) * 1e3:.3f}')
PY
}

theirs() { # label binary args... -> ms
    local label=$1 b=$2
    shift 2
    "$GAPBS/$b" "$@" -n "$TRIALS" > "$LOGS/gapbs-$label.log" 2>&1
    awk '/Average Time:/ {printf "%.3f\n", $3 * 1e3}' "$LOGS/gapbs-$label.log"
}

row() { # graph kernel ours-gpu "kernel e2e" ours-cpu-ms gapbs-ms note
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >> "$rows"
}

make_graph rmat22 2>> "$LOGS/generate.log"
make_graph road 2>> "$LOGS/generate.log"
make_graph path5k 2>> "$LOGS/generate.log"
"$CHATTY" generate rmat -s 22 -e 16 --undirected -o raw.cgr -q && "$CHATTY" convert raw.cgr -o unit22.cgr --dedup --drop-self-loops -q && rm raw.cgr
# Sources as chatty picks them (non-isolated); GAPBS takes the same with -r.
src=$("$CHATTY" run bfs rmat22.cgr --engine cpu -n 1 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["parameters"]["sources"][0])')
gpu=(--engine gpu --gpus 1)
cpu=(--engine cpu)
best() { printf '%s\n' "$@" | sort -g | head -1; }

row kron22 bfs "$(ours bfs rmat22 bfs "${gpu[@]}" -r "$src")" "$(ours bfs-cpu rmat22 bfs "${cpu[@]}" -r "$src" | cut -d' ' -f1)" "$(theirs bfs bfs -f rmat22.sg -r "$src")" "source $src"
row kron22 sssp "$(ours sssp rmat22 sssp "${gpu[@]}" -r "$src")" "$(ours sssp-cpu rmat22 sssp "${cpu[@]}" -r "$src" -d 2 | cut -d' ' -f1)" \
    "$(best "$(theirs sssp-d2 sssp -f rmat22.wsg -r "$src" -d 2)" "$(theirs sssp-d32 sssp -f rmat22.wsg -r "$src" -d 32)")" "weights 1..255; GAPBS best of -d 2, 32"
row kron22 "sssp (unit weights)" "$(ours sssp-unit unit22 sssp "${gpu[@]}" -r "$src")" "$(ours sssp-unit-cpu unit22 sssp "${cpu[@]}" -r "$src" | cut -d' ' -f1)" "n/a" "runs as a BFS; Gunrock 2.x: 12.3 ms (issue 18)"
row kron22 "pr (20 iterations)" "$(ours pr rmat22 pr "${gpu[@]}" --max-iters 20 --tolerance 0)" "$(ours pr-cpu rmat22 pr "${cpu[@]}" --max-iters 20 --tolerance 0 | cut -d' ' -f1)" "$(theirs pr pr -f rmat22.sg -i 20 -t 0)" ""
row kron22 wcc "$(ours wcc rmat22 wcc "${gpu[@]}")" "$(ours wcc-cpu rmat22 wcc "${cpu[@]}" | cut -d' ' -f1)" "$(theirs cc cc -f rmat22.sg)" "GAPBS cc: Afforest"
row kron22 "bc (1 source)" "$(ours bc rmat22 bc "${gpu[@]}" -r "$src")" "$(ours bc-cpu rmat22 bc "${cpu[@]}" -r "$src" | cut -d' ' -f1)" "$(theirs bc bc -f rmat22.sg -r "$src" -i 1)" ""
# Triangles: two trials (GAPBS's take seconds each); every vertex's count from the
# GPU compared with the CPU engine's (CI checks those against the reference).
gpu_tc=$(TRIALS=2 ours tc rmat22 tc "${gpu[@]}" -o tc-gpu.txt)
cpu_tc=$(TRIALS=2 ours tc-cpu rmat22 tc "${cpu[@]}" -o tc-cpu.txt | cut -d' ' -f1)
same=$(cmp -s tc-gpu.txt tc-cpu.txt && echo "every vertex's triangles = the CPU's" || echo "TRIANGLES DIFFER FROM THE CPU'S")
row kron22 tc "$gpu_tc" "$cpu_tc" "$(TRIALS=2 theirs tc tc -f rmat22.sg)" "$same; GAPBS's time includes its relabelling"
# Moscow: chatty numbers its vertices from 1 as the file does; GAPBS from 0.
row moscow bfs "$(ours road-bfs road bfs "${gpu[@]}" -r 1)" "$(ours road-bfs-cpu road bfs "${cpu[@]}" -r 1 | cut -d' ' -f1)" "$(theirs road-bfs bfs -f road.sg -r 0)" "source 0 (GAPBS's numbering)"
row moscow sssp "$(ours road-sssp road sssp "${gpu[@]}" -r 1)" "$(ours road-sssp-cpu road sssp "${cpu[@]}" -r 1 -d 2000 | cut -d' ' -f1)" \
    "$(best "$(theirs road-sssp-d64 sssp -f road.wsg -r 0 -d 64)" "$(theirs road-sssp-d2000 sssp -f road.wsg -r 0 -d 2000)" "$(theirs road-sssp-d50000 sssp -f road.wsg -r 0 -d 50000)")" "GAPBS best of -d 64, 2000, 50000"
row moscow "pr (20 iterations)" "$(ours road-pr road pr "${gpu[@]}" --max-iters 20 --tolerance 0)" "$(ours road-pr-cpu road pr "${cpu[@]}" --max-iters 20 --tolerance 0 | cut -d' ' -f1)" "$(theirs road-pr pr -f road.sg -i 20 -t 0)" ""
row moscow wcc "$(ours road-wcc road wcc "${gpu[@]}")" "$(ours road-wcc-cpu road wcc "${cpu[@]}" | cut -d' ' -f1)" "$(theirs road-cc cc -f road.sg)" ""
row moscow "bc (1 source)" "$(ours road-bc road bc "${gpu[@]}" -r 1)" "$(ours road-bc-cpu road bc "${cpu[@]}" -r 1 | cut -d' ' -f1)" "$(theirs road-bc bc -f road.sg -r 0 -i 1)" ""
TRIALS=1
peer_path=("not run" "GAPBS not run (PEER_PATH_BC=0: it takes minutes)")
[ "${PEER_PATH_BC:-1}" = 1 ] && peer_path=("$(theirs path-bc bc -f path5k.sg -i 5000)" "GAPBS: 5,000 random sources")
row path5k "bc (all 5,000 sources)" "$(ours path-bc path5k bc "${gpu[@]}" --sources all)" "$(ours path-bc-cpu path5k bc "${cpu[@]}" --sources all | cut -d' ' -f1)" "${peer_path[@]}"
python3 - "$rows" "$(nproc)" <<'PY' | tee "$OUT/table.md"
import csv, sys
cores = sys.argv[2]
print(f"| graph | kernel | ours, 1 GPU: kernel ms | end-to-end ms | ours, CPU {cores} threads ms | GAPBS {cores} threads ms | GAPBS / ours (GPU kernel) | note |")
print("|---|---|---|---|---|---|---|---|")
for g, k, ours, cpu, gapbs, note in csv.reader(open(sys.argv[1]), delimiter="\t"):
    kernel, e2e = (ours.split() + ["nan", "nan"])[:2]
    try:
        ratio = f"{float(gapbs) / float(kernel):.1f}x"
    except ValueError:
        ratio = "n/a"
    print(f"| {g} | {k} | {kernel} | {e2e} | {cpu} | {gapbs} | {ratio} | {note} |")
PY
tar czf "$OUT/logs.tgz" -C "$WORK" logs
