#!/usr/bin/env bash
# The GPU suite, run on the GPU machine in one call: the correctness suite (every
# kernel on every dataset and on generated graphs, --engine gpu --verify against the
# CPU references; on several GPUs that is the multi-GPU engine) and the single-GPU
# benchmark (--gpus 1), with a compact table printed last.
#
# usage: scripts/gpu_suite.sh [correctness|bench|messaging|all]   (default all)
# (messaging: scripts/bench_messaging.sh; the multi-GPU ablation, longer than one
# device call, is scripts/bench_multi_gpu.sh)
# Environment: CHATTY (binary, default target/release/chatty), DATASETS (default
# .device-data/datasets), OUT (logs; the device tool sets it), BENCH_GRAPHS (names
# below, default all), TRIALS (default 5).
set -uo pipefail
export NCCL_NVLS_ENABLE=0
MODE=${1:-all}
CHATTY=${CHATTY:-target/release/chatty}
DATASETS=${DATASETS:-.device-data/datasets}
OUT=${OUT:-/tmp/gpu-suite}
TRIALS=${TRIALS:-5}
WORK=${WORK:-/tmp/gpu-graphs}
mkdir -p "$OUT" "$WORK"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
ALGS="bfs sssp pr wcc bc spmv"
# shellcheck source=scripts/device_graphs.sh
source "$(dirname "$0")/device_graphs.sh"
fails=0

correctness() {
    echo "== correctness (Rust): every kernel on every dataset and generated graphs, GPU vs CPU references"
    if [ -n "${GPU_TEST:-}" ]; then
        # A crash attaches this debugger to print every thread's stack (report_crashes).
        CHATTY_CRASH_DEBUGGER=${CHATTY_CRASH_DEBUGGER:-$(command -v cuda-gdb || command -v gdb)}
        export CHATTY_CRASH_DEBUGGER
        # --nocapture names the graph each multi-GPU check is on, so a crash says where;
        # a death by signal (status over 128) is reported as such.
        CHATTY_DATASETS=$DATASETS "$GPU_TEST" --nocapture --test-threads 1 > "$OUT/gpu-test.log" 2>&1
        local status=$?
        grep -E "^test |GPU vs CPU|panicked|test result" "$OUT/gpu-test.log"
        if [ $status -gt 128 ]; then
            echo "the GPU test binary died by signal $((status - 128)) after: $(grep -E 'vs CPU|^test ' "$OUT/gpu-test.log" | tail -1)"
        fi
        grep -q "test result: ok" "$OUT/gpu-test.log" || fails=$((fails + 1))
    fi
    [ -n "${QUICK:-}" ] && return
    echo "== correctness (CLI): --engine gpu --verify against the CPU references"
    local graphs
    mapfile -t graphs < <(correctness_graphs)
    local pass=0
    for g in "${graphs[@]}"; do
        for a in $ALGS; do
            local extra=""
            [ "$a" = bc ] && extra="--sources 3"
            if "$CHATTY" run "$a" "$g" --engine gpu --gpus all --verify -n 2 --json $extra > "$OUT/last.json" 2> "$OUT/last.err"; then
                pass=$((pass + 1))
            elif grep -q "non-negative weights" "$OUT/last.err"; then
                pass=$((pass + 1)) # SSSP refuses negative weights on both engines
            else
                fails=$((fails + 1))
                echo "FAIL $a $(basename "$g"): $(cat "$OUT/last.err") $(grep -o '"verification":"[^"]*"' "$OUT/last.json")" | tee -a "$OUT/failures.txt"
            fi
        done
    done
    echo "correctness: $pass passed, $fails failed"
}

bench() {
    echo "== benchmark: $TRIALS trials each, kernel time between CUDA events"
    [ -f "$OUT/bench.csv" ] || echo "graph,algo,n,m,kernel_s,end_to_end_s,upload_s,iterations,edges,verification" > "$OUT/bench.csv"
    for name in ${BENCH_GRAPHS:-rmat22 rmat24 rmat24sym urand24 grid16m road-NE moscow twitter web rmat26}; do
        local g
        g=$(bench_graph "$name")
        for a in ${BENCH_ALGS:-$ALGS}; do
            local extra=""
            case $a in
                sssp) case $name in grid16m|road-NE|moscow) extra="--delta 2000" ;; *) extra="--delta 64" ;; esac ;;
                pr) extra="--max-iters 20 --tolerance 0" ;;
            esac
            [ "$name" = rmat26 ] && [ "$a" = bc ] && continue
            local tag=${BENCH_TAG:-}
            local runs="$WORK/runs"
            mkdir -p "$runs"
            "$CHATTY" run "$a" "$g" --engine gpu --gpus 1 -n "$TRIALS" --json $extra > "$runs/$name-$a$tag.json" 2> "$runs/$name-$a$tag.err" || { echo "bench $name $a failed: $(cat "$runs/$name-$a$tag.err")"; continue; }
            python3 - "$name$tag" "$a" "$runs/$name-$a$tag.json" >> "$OUT/bench.csv" <<'PY'
import json, sys, statistics
name, alg, path = sys.argv[1:]
j = json.load(open(path))
k = statistics.median(j["trial_seconds"])
e = statistics.median(j["end_to_end_seconds"])
print(f'{name},{alg},{j["graph"]["n"]},{j["graph"]["m"]},{k:.6f},{e:.6f},{j.get("detail", j).get("upload_seconds", j.get("upload_seconds", 0)):.4f},{j["iterations"]},{j["edges_traversed"]},{j["verification"]}')
PY
        done
    done
}

case $MODE in
    correctness) correctness ;;
    bench) bench ;;
    messaging) bash "$(dirname "$0")/bench_messaging.sh" || fails=$((fails + 1)) ;;
    *) correctness; bench; bash "$(dirname "$0")/bench_messaging.sh" || fails=$((fails + 1)) ;;
esac
# Few files come back from the device: the per-run JSON travels as one archive.
[ -d "$WORK/runs" ] && tar czf "$OUT/runs.tgz" -C "$WORK" runs
if [ -f "$OUT/bench.csv" ]; then
    echo "== table (median of trials; GTEPS = stored directed edges examined / kernel time)"
    python3 - "$OUT/bench.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(f'{"graph":10} {"algo":5} {"kernel ms":>10} {"e2e ms":>9} {"iters":>6} {"GTEPS":>7} {"us/iter":>8}')
for r in rows:
    k = float(r["kernel_s"]); it = max(int(r["iterations"]), 1)
    print(f'{r["graph"]:10} {r["algo"]:5} {k*1e3:10.3f} {float(r["end_to_end_s"])*1e3:9.3f} {it:6d} {int(r["edges"])/k/1e9:7.2f} {k/it*1e6:8.2f}')
PY
fi
echo "suite: $fails failures (correctness, messaging)"
exit $((fails > 0))
