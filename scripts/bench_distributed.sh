#!/usr/bin/env bash
# The multi-process engine on one host: every kernel on kron22, urand22 and a road
# graph, as 1 rank x 16 threads, 2 x 8 and 4 x 4 (`--engine mpi` under mpirun), beside
# the CPU engine with 16 threads, in one run. Times are the engine's trial time
# (average over trials, graph loaded; PageRank runs 20 iterations: networkx's
# tolerance stops it after one on 4M vertices; for mpi the kernel with its exchanges, the
# answer's gather to every rank beside it); bytes per exchange and boundary vertices
# updated vs values sent come from the JSON report; then the time to start with each
# `--distribute` (shared, mpi, multicast) on kron22. Prints markdown tables.
#
# usage: scripts/bench_distributed.sh [WORK_DIR]
#   WORK_DIR: generated graphs, JSON logs and the table (default: data/bench-distributed)
# Environment: CHATTY (a binary built with `--features mpi`; default target/release/chatty),
#   TRIALS (default 5), SCALE (of kron and urand; default 22), CORES (default 16), ROAD (a road graph file; default USA-road-NE
#   from the datasets, else a generated 2000 x 2000 grid), PARTS (kernels, distribute, or both,
#   comma-separated; default both).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CHATTY=$(realpath "${CHATTY:-$ROOT/target/release/chatty}")
WORK=${1:-data/bench-distributed}
TRIALS=${TRIALS:-5}
SCALE=${SCALE:-22}
CORES=${CORES:-16}
DATASETS=${CHATTY_DATASETS:-$ROOT/../shared/datasets}
PARTS=${PARTS:-kernels,distribute}
part() { [[ ",$PARTS," == *",$1,"* ]]; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none NCCL_NVLS_ENABLE=0
ROAD=$(realpath -m "${ROAD:-$DATASETS/road/USA-road-NE.pace.gr.gz}")
mkdir -p "$WORK"
cd "$WORK"

[ -f kron22.cgr ] || "$CHATTY" generate rmat --scale "$SCALE" --edge-factor 16 --undirected -o kron22.cgr
part kernels && [ ! -f urand22.cgr ] && "$CHATTY" generate urand --scale "$SCALE" --edge-factor 16 --undirected -o urand22.cgr
if part kernels && [ ! -f road.cgr ]; then
    if [ -f "$ROAD" ]; then "$CHATTY" convert "$ROAD" -o road.cgr; else "$CHATTY" generate grid --width 2000 --height 2000 -o road.cgr; fi
fi

KERNELS=bfs,sssp,pr,wcc,bc,spmv
run() { # label ranks threads graph
    local label=$1 ranks=$2 threads=$3 g=$4
    if [ "$label" = cpu ]; then
        "$CHATTY" run $KERNELS "$g.cgr" --engine cpu --threads "$threads" -n "$TRIALS" --source 0 --zero-based --tolerance 0 --max-iters 20 --json > "$g-$label.json"
    else
        mpirun --oversubscribe --bind-to none -np "$ranks" "$CHATTY" run $KERNELS "$g.cgr" --engine mpi --threads "$threads" -n "$TRIALS" --source 0 --zero-based --tolerance 0 --max-iters 20 --json > "$g-$label.json"
    fi
}

for g in kron22 urand22 road; do
    part kernels || break
    run cpu 1 "$CORES" $g
    run 1x$CORES 1 "$CORES" $g
    run 2x$((CORES / 2)) 2 $((CORES / 2)) $g
    run 4x$((CORES / 4)) 4 $((CORES / 4)) $g
done

# Distribution to 2 and 4 receiving ranks (3 and 5 ranks): every rank mapping the
# shared file (checks split across ranks), rank 0 reading, checking and sending each
# rank its rows, and rank 0 multicasting the file to a directory per rank (on one
# host each rank is its own "place"; on a cluster, --local-dir names each node's disk).
export CHATTY_BROADCAST_KEY=${CHATTY_BROADCAST_KEY:-bench}
for receivers in 2 4; do
    part distribute || break
    ranks=$((receivers + 1))
    for how in shared mpi multicast; do
        extra=()
        [ $how = multicast ] && extra=(--local-dir "$PWD/copies/%r")
        mpirun --oversubscribe --bind-to none -np $ranks "$CHATTY" run spmv kron22.cgr --engine mpi --distribute $how "${extra[@]}" \
            --threads $((CORES / ranks)) -n 1 --json > "distribute-$how-$receivers.json"
        rm -rf copies
    done
done

python3 - "$CORES" "$PARTS" <<'PY' | tee table.md
import json, sys
cores, parts = int(sys.argv[1]), sys.argv[2].split(",")
labels = ["cpu", f"1x{cores}", f"2x{cores // 2}", f"4x{cores // 4}"]
def reports(path):
    dec, text, out = json.JSONDecoder(), open(path).read(), []
    i = 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        obj, i = dec.raw_decode(text, i)
        out.append(obj)
    return {r["algorithm"]: r for r in out}
if "kernels" in parts:
    print(f"| graph | kernel | CPU engine {cores} threads (ms) | " + " | ".join(f"mpi {l} (ms)" for l in labels[1:])
          + f" | {labels[2]} / 1x{cores} | {labels[2]}: gather (ms) | {labels[2]}: MB per exchange | {labels[2]}: boundary updated / values sent |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for g in ["kron22", "urand22", "road"]:
        runs = {l: reports(f"{g}-{l}.json") for l in labels}
        for alg in ["bfs", "sssp", "pr", "wcc", "bc", "spmv"]:
            t = {l: runs[l][alg]["average_seconds"] * 1e3 for l in labels}
            two = runs[labels[2]][alg]
            tr = two["transports"][0] if two["transports"] else {"exchanges": 0, "bytes": 0}
            per = tr["bytes"] / tr["exchanges"] / 1e6 if tr["exchanges"] else 0.0
            d = two["detail"]
            print(f"| {g} | {alg} | {t['cpu']:.1f} | " + " | ".join(f"{t[l]:.1f}" for l in labels[1:])
                  + f" | {t[labels[2]] / t[labels[1]]:.2f} | {two['breakdown'][-1]['download_seconds'] * 1e3:.1f} | {per:.2f} | {d.get('vertices_updated', 0)} / {d.get('vertices_sent', 0)} |")
    print()
if "distribute" in parts:
    print("| receiving ranks | --distribute shared: load (s) | --distribute mpi: load (s) | --distribute multicast: load (s) | of which the multicast (s) | multicast MB/s per receiver |")
    print("|---:|---:|---:|---:|---:|---:|")
    for receivers in [2, 4]:
        r = {h: reports(f"distribute-{h}-{receivers}.json")["spmv"] for h in ["shared", "mpi", "multicast"]}
        m = r["multicast"]["detail"]["multicast"]
        print(f"| {receivers} | {r['shared']['load_seconds']:.2f} | {r['mpi']['load_seconds']:.2f} | {r['multicast']['load_seconds']:.2f} "
              f"| {m['seconds']:.2f} | {m['bytes'] / m['seconds'] / 1e6:.0f} |")
PY
