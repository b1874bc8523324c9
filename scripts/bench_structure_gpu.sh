#!/usr/bin/env bash
# The structure kernels on one GPU against the CPU engine on all the host's cores and
# GAPBS's tc, side by side in one call on the GPU machine (docs/benchmarks/structure.md):
# for each graph, tc, kcore and scc on the GPU, then on the CPU, then GAPBS's tc on
# undirected graphs (GAPBS has no k-core or SCC). Each answer from the GPU is compared
# with the CPU engine's, vertex by vertex (CI checks the CPU's against the sequential
# references). Ours: median kernel time (`trial_seconds`); GAPBS: its "Average Time".
# Prints a markdown table last.
#
# usage: scripts/bench_structure_gpu.sh GAPBS_SOURCE_DIR
# Environment: CHATTY (default target/release/chatty), DATASETS (default
# .device-data/datasets), OUT (the table and an archive of the logs), WORK (graphs and
# logs, default /tmp/structure-graphs), GRAPHS (names in scripts/gapbs_graphs.sh,
# default "kron22 urand22 roadNE twitter websym web"), KERNELS (default "tc kcore
# scc"; louvain runs on the unweighted .sg and compares modularity), TRIALS (default 3; tc's CPU and GAPBS rows take 2 on kron22, seconds each).
set -uo pipefail
export NCCL_NVLS_ENABLE=0
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CHATTY=$(realpath "${CHATTY:-target/release/chatty}")
DATASETS=$(realpath "${DATASETS:-.device-data/datasets}")
OUT=${OUT:-/tmp/structure-gpu}
WORK=${WORK:-/tmp/structure-graphs}
GRAPHS=${GRAPHS:-"kron22 urand22 roadNE twitter websym web"}
KERNELS=${KERNELS:-"tc kcore scc"}
TRIALS=${TRIALS:-3}
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

ours() { # label graph kernel trials args... -> median kernel ms
    local label=$1 g=$2 a=$3 n=$4 input=$2.cgr
    shift 4
    # Communities on the unweighted simple graph, as bench_networkit.sh runs them.
    [ "$a" = louvain ] && input=$g.sg
    "$CHATTY" run "$a" "$input" -n "$n" --json -o "$label.out" "$@" > "$LOGS/$label.json" 2> "$LOGS/$label.err" || { echo nan; return; }
    python3 -c 'import json, statistics, sys; print("%.3f" % (statistics.median(json.load(open(sys.argv[1]))["trial_seconds"]) * 1e3))' "$LOGS/$label.json"
}

for g in $GRAPHS; do
    make_graph "$g" 2>> "$LOGS/generate.log"
    directed=$("$CHATTY" info "$g.cgr" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["directed"])')
    for k in $KERNELS; do
        [ "$k" = tc ] && [ "$directed" = True ] && continue # GAPBS counts undirected graphs only
        n=$TRIALS
        [ "$k" = tc ] && [ "$g" = kron22 ] && n=2
        gpu=$(ours "$g-$k-gpu" "$g" "$k" "$n" --engine gpu --gpus 1)
        cpu=$(ours "$g-$k-cpu" "$g" "$k" "$n" --engine cpu)
        same=$(cmp -s "$g-$k-gpu.out" "$g-$k-cpu.out" && echo "same answer" || echo "ANSWERS DIFFER")
        if [ "$k" = louvain ]; then # partitions differ; their modularity is compared
            same=$(python3 -c 'import json, sys; q = [json.load(open(f))["result"]["modularity"] for f in sys.argv[1:]]; print(f"modularity {q[0]:.6f} / {q[1]:.6f}")' "$LOGS/$g-$k-gpu.json" "$LOGS/$g-$k-cpu.json" 2> /dev/null || echo "no answer")
        fi
        peer=n/a
        if [ "$k" = tc ]; then
            "$GAPBS/tc" -f "$g.sg" -n "$n" > "$LOGS/$g-tc-gapbs.log" 2>&1
            peer=$(awk '/Average Time:/ {printf "%.3f\n", $3 * 1e3}' "$LOGS/$g-tc-gapbs.log")
        fi
        summary=$(python3 - "$LOGS/$g-$k-cpu.json" <<'PY' 2> /dev/null
import json, sys
r = json.load(open(sys.argv[1]))["result"]
if "modularity" in r:
    print(f'{r["count"]:,} communities')
elif "triangles" in r:
    print(f'{r["triangles"]:,} triangles')
elif "degeneracy" in r:
    print(f'degeneracy {r["degeneracy"]}')
else:
    print(f'{r["count"]:,} components, the largest {r["largest"][0][1]:,}')
PY
)
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$g" "$k" "$gpu" "$cpu" "${peer:-nan}" "$same" "$summary" >> "$rows"
        rm -f "$g-$k-gpu.out" "$g-$k-cpu.out"
    done
done
python3 - "$rows" "$(nproc)" <<'PY' | tee "$OUT/table.md"
import csv, math, sys
cores = sys.argv[2]
def ratio(a, b):
    try:
        r = float(a) / float(b)
    except (ValueError, ZeroDivisionError):
        return "n/a"
    return f"{r:.1f}x" if math.isfinite(r) else "n/a"
print(f"| graph | kernel | 1 GPU ms | CPU {cores} threads ms | CPU / GPU | GAPBS {cores} threads ms | GAPBS / GPU | GPU vs CPU | result |")
print("|---|---|---|---|---|---|---|---|---|")
for g, k, gpu, cpu, peer, same, result in csv.reader(open(sys.argv[1]), delimiter="\t"):
    print(f"| {g} | {k} | {gpu} | {cpu} | {ratio(cpu, gpu)} | {peer} | {ratio(peer, gpu)} | {same} | {result} |")
PY
tar czf "$OUT/logs.tgz" -C "$WORK" logs
