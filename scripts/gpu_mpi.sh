#!/usr/bin/env bash
# The GPU engine across processes (`mpirun -np P chatty run ... --engine gpu`), on the
# GPU machine in one call, with a short table last:
# - correctness: every kernel on every dataset and on generated graphs, on 2 and 3
#   processes (sharing the GPUs there are; 2 processes with two parts each; with two
#   GPUs or more, 2 processes exchanging through NCCL; bfs and sssp with --mode gmpi,
#   device-initiated messages across processes, on the generated graphs), --verify
#   against the CPU references, and the exact kernels' answers (bfs, sssp, wcc)
#   byte-equal to one GPU's;
# - bench: kernel time of one GPU, of two parts in one process (--devices 0,0 or 0,1)
#   and of two processes with one part each, side by side.
#
# - faults: a watchdog firing under mpirun, and rank 1 killed mid-run, with host-driven
#   and with GMPI levels (every rank must end with an error, promptly, with no output
#   file).
#
# usage: scripts/gpu_mpi.sh [correctness|bench|faults|all]   (default all)
# Environment: CHATTY (a build with `--features mpi`, default target/release/chatty),
# DATASETS (default .device-data/datasets), OUT (logs), TRIALS (default 5),
# BENCH_GRAPHS (device_graphs.sh names, default rmat22 road-NE).
set -uo pipefail
export NCCL_NVLS_ENABLE=0
MODE=${1:-all}
CHATTY=${CHATTY:-target/release/chatty}
DATASETS=${DATASETS:-.device-data/datasets}
OUT=${OUT:-/tmp/gpu-mpi}
TRIALS=${TRIALS:-5}
WORK=${WORK:-/tmp/gpu-graphs}
mkdir -p "$OUT" "$WORK/mpi"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpi() { mpirun --oversubscribe --bind-to none --timeout 300 -x NCCL_NVLS_ENABLE -np "$@"; }
GPUS=$(nvidia-smi -L | wc -l)
# Two parts: on two GPUs where there are two, else both on GPU 0.
PAIR=$([ "$GPUS" -ge 2 ] && echo 0,1 || echo 0,0)
# shellcheck source=scripts/device_graphs.sh
source "$(dirname "$0")/device_graphs.sh"
fails=0

correctness() {
    echo "== correctness: every kernel across processes, --verify, exact answers equal to one GPU's"
    local graphs
    mapfile -t graphs < <(correctness_graphs)
    local pass=0 common=(--source 0 --zero-based --sources 3 --verify -n 2)
    for g in "${graphs[@]}"; do
        local name
        name=$(basename "$g" | sed 's/\..*//')
        local kernels=bfs,sssp,pr,wcc,bc,spmv
        if ! "$CHATTY" run "$kernels" "$g" --engine gpu --gpus 1 -o "$WORK/mpi/$name.one.txt" "${common[@]}" > "$OUT/one.log" 2>&1; then
            # SSSP refuses negative weights on every engine.
            grep -q "non-negative weights" "$OUT/one.log" && kernels=bfs,pr,wcc,bc,spmv
            "$CHATTY" run "$kernels" "$g" --engine gpu --gpus 1 -o "$WORK/mpi/$name.one.txt" "${common[@]}" > "$OUT/one.log" 2>&1 \
                || { echo "one GPU failed on $name: $(tail -3 "$OUT/one.log")"; fails=$((fails + 1)); continue; }
        fi
        local setups=("2" "3" "2 --devices $PAIR" "2 --partition bfs")
        # NCCL across processes needs a GPU per rank (it refuses two ranks on one).
        [ "$GPUS" -ge 2 ] && setups+=("2 --comm nccl")
        # GMPI's levels across processes (bfs and sssp), on the generated graphs: two
        # processes on one GPU time-slice, so a level costs milliseconds there.
        [[ $name == c-* ]] && setups+=("2 --mode gmpi" "2 --mode gmpi --partition bfs")
        for setup in "${setups[@]}"; do
            set -- $setup
            local np=$1
            shift
            local these=$kernels
            [[ $setup == *gmpi* ]] && these=$(echo "$kernels" | tr , '\n' | grep -E '^(bfs|sssp)$' | paste -sd,)
            local label="np$np${1:+ $*}"
            local tag
            tag=$(echo "$label" | tr ' ,' '__')
            if mpi "$np" "$CHATTY" run "$these" "$g" --engine gpu -o "$WORK/mpi/$name.$tag.txt" "${common[@]}" "$@" > "$OUT/job.log" 2>&1 \
                && [ "$(grep -c 'Verification:        PASS' "$OUT/job.log")" = $((2 * $(echo "$these" | tr , '\n' | wc -l))) ]; then
                local same=1
                for a in bfs sssp wcc; do
                    [[ ,$these, == *,$a,* && -f "$WORK/mpi/$name.one.$a.txt" ]] || continue
                    cmp -s "$WORK/mpi/$name.one.$a.txt" "$WORK/mpi/$name.$tag.$a.txt" || { same=0; echo "DIFF $a $name $label"; }
                done
                if [ $same = 1 ]; then pass=$((pass + 1)); else fails=$((fails + 1)); fi
            else
                fails=$((fails + 1))
                echo "FAIL $name $label: $(grep -E 'error|FAIL|panicked' "$OUT/job.log" | head -3)" | tee -a "$OUT/failures.txt"
                cp "$OUT/job.log" "$WORK/mpi/fail-$name-$tag.log"
            fi
        done
    done
    echo "correctness: $pass of $((pass + fails)) runs passed"
}

bench() {
    echo "== bench: one GPU, two parts in one process ($PAIR), two processes; median kernel ms of $TRIALS"
    echo "graph,algo,setup,kernel_ms,end_to_end_ms,iterations" > "$OUT/mpi-bench.csv"
    for name in ${BENCH_GRAPHS:-rmat22 road-NE}; do
        local g
        g=$(bench_graph "$name")
        for a in bfs sssp pr wcc spmv; do
            local extra=()
            case $a in
                pr) extra=(--max-iters 20 --tolerance 0) ;;
            esac
            for setup in one pair np2; do
                local cmd=("$CHATTY" run "$a" "$g" --engine gpu -n "$TRIALS" --source 0 --zero-based --json "${extra[@]}")
                case $setup in
                    one) cmd+=(--gpus 1) ;;
                    pair) cmd+=(--devices "$PAIR") ;;
                    np2) cmd=(mpi 2 "${cmd[@]}") ;;
                esac
                "${cmd[@]}" > "$WORK/mpi/b.json" 2> "$OUT/b.err" || { echo "bench $name $a $setup failed: $(tail -2 "$OUT/b.err")"; continue; }
                python3 - "$name" "$a" "$setup" "$WORK/mpi/b.json" >> "$OUT/mpi-bench.csv" <<'PY'
import json, sys, statistics
name, alg, setup, path = sys.argv[1:]
j = json.load(open(path))
print(f'{name},{alg},{setup},{statistics.median(j["trial_seconds"])*1e3:.3f},{statistics.median(j["end_to_end_seconds"])*1e3:.3f},{j["iterations"]}')
PY
            done
        done
    done
    python3 - "$OUT/mpi-bench.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(f'{"graph":8} {"algo":5} {"setup":5} {"kernel ms":>10} {"e2e ms":>9} {"steps":>6}')
for r in rows:
    print(f'{r["graph"]:8} {r["algo"]:5} {r["setup"]:5} {float(r["kernel_ms"]):10.3f} {float(r["end_to_end_ms"]):9.3f} {r["iterations"]:>6}')
PY
}

faults() {
    echo "== faults: a watchdog firing on the ranks, a rank killed mid-run (host-driven and GMPI levels)"
    local g
    g=$(bench_graph road-NE)
    local t0 rc mode
    for mode in bsp gmpi; do
        t0=$(date +%s%N)
        mpi 2 "$CHATTY" run bfs "$g" --engine gpu --mode $mode --watchdog 0.000001 -n 3 > "$OUT/watchdog.log" 2>&1
        rc=$?
        echo "watchdog, --mode $mode: exit $rc after $(( ($(date +%s%N) - t0) / 1000000 )) ms: $(grep -m1 'error' "$OUT/watchdog.log")"
        [ $rc -ne 0 ] && grep -qE "watchdog|gmpi" "$OUT/watchdog.log" || fails=$((fails + 1))
        rm -f "$WORK/mpi/killed.txt"
        mpi 2 "$CHATTY" run bfs "$g" --engine gpu --mode $mode -n 300 -o "$WORK/mpi/killed.txt" > "$OUT/kill.log" 2>&1 &
        local job=$!
        sleep 10
        local p
        for p in $(pgrep -f "run bfs $g --engine gpu --mode $mode -n 300"); do
            tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1' && kill -9 "$p"
        done
        t0=$(date +%s%N)
        for _ in $(seq 300); do kill -0 $job 2>/dev/null || break; sleep 0.1; done
        wait $job
        rc=$?
        local left
        left=$(pgrep -fc "run bfs $g --engine gpu --mode $mode -n 300")
        echo "killed rank 1, --mode $mode: exit $rc, $(( ($(date +%s%N) - t0) / 1000000 )) ms after the kill; processes left ${left:-0}; output file $([ -e "$WORK/mpi/killed.txt" ] && echo written || echo none)"
        [ $rc -ne 0 ] && [ "${left:-0}" = 0 ] && [ ! -e "$WORK/mpi/killed.txt" ] || fails=$((fails + 1))
    done
}

case $MODE in
    correctness) correctness ;;
    bench) bench ;;
    faults) faults ;;
    *) correctness; bench; faults ;;
esac
# Few files come back from the device: the failures' logs travel as one archive.
ls "$WORK"/mpi/fail-*.log > /dev/null 2>&1 && tar czf "$OUT/mpi-failures.tgz" -C "$WORK/mpi" $(cd "$WORK/mpi" && ls fail-*.log)
echo "gpu_mpi: $fails failures"
exit $((fails > 0))
