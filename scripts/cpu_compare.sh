#!/usr/bin/env bash
# Two builds side by side on the CPU engine, in one call, taking turns round by round:
# every kernel on kron22 (scripts/gapbs_graphs.sh's) at each thread count, median of
# TRIALS trials from one source. For a refactor that must not change performance;
# prints one table last (the CPU half of gpu_compare.sh).
#
# usage: scripts/cpu_compare.sh BASELINE_BINARY CANDIDATE_BINARY
# Environment: OUT, THREADS (default "16"), KERNELS (default "bfs sssp pr wcc bc"),
# ROUNDS (default 2), TRIALS (default 5), WORK (graphs).
set -uo pipefail
BASE=$1 CAND=$2
OUT=${OUT:-/tmp/cpu-compare} WORK=${WORK:-/tmp/cpu-graphs}
mkdir -p "$OUT" "$WORK"
g=$WORK/kron22.cgr
[ -f "$g" ] || "$CAND" generate rmat -s 22 -e 16 --undirected --weights 255 -o "$g" -q
for round in $(seq "${ROUNDS:-2}"); do
    for t in ${THREADS:-16}; do
        for k in ${KERNELS:-bfs sssp pr wcc bc}; do
            for side in base cand; do
                bin=$BASE; [ $side = cand ] && bin=$CAND
                "$bin" run "$k" "$g" --engine cpu --threads "$t" -r 0 -n "${TRIALS:-5}" --json 2>> "$OUT/cpu-compare.log" |
                    sed "s/^{/{\"side\":\"$side\",\"round\":$round,\"threads\":$t,/" >> "$OUT/cpu.jsonl"
            done
        done
    done
done
python3 - "$OUT/cpu.jsonl" <<'PY'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    runs.setdefault((r["algorithm"], r["threads"], r["side"]), []).append(statistics.median(r["trial_seconds"]) * 1e3)
print(f'{"kernel":6} {"threads":>7} {"baseline ms (rounds)":>26} {"candidate ms (rounds)":>26} {"cand/base":>9}')
for (alg, t, side), base in sorted(runs.items()):
    if side != "base" or (alg, t, "cand") not in runs:
        continue
    cand = runs[(alg, t, "cand")]
    fmt = lambda v: " / ".join(f"{x:.2f}" for x in v)
    print(f'{alg:6} {t:7} {fmt(base):>26} {fmt(cand):>26} {min(cand) / min(base):9.3f}')
PY
