#!/usr/bin/env bash
# CPU benchmark: every kernel on rmat 20 and 22, urand 22, a road grid, and the road,
# social and web datasets, side by side with GAPBS built from its public source on
# the same machine, in the same run. Prints a markdown table (times in seconds,
# average over trials, kernel time only, graph already loaded) and writes logs.
#
# usage: scripts/bench_cpu.sh GAPBS_DIR [WORK_DIR]
#   GAPBS_DIR: a built checkout of github.com/sbeamer/gapbs (make bfs sssp pr cc bc converter)
#   WORK_DIR:  where generated graphs and logs go (default: data/bench-cpu, git-ignored)
# Environment: TRIALS (default 8), GRAPHS (default: all, space-separated names below).
set -euo pipefail
GAPBS=$(cd "$1" && pwd)
WORK=${2:-data/bench-cpu}
TRIALS=${TRIALS:-8}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CHATTY=$ROOT/target/release/chatty
DATASETS=${CHATTY_DATASETS:-$ROOT/../shared/datasets}
mkdir -p "$WORK"
cd "$WORK"
(cd "$ROOT" && cargo build --release --locked --bin chatty -q)

# shellcheck source=scripts/gapbs_graphs.sh
source "$ROOT/scripts/gapbs_graphs.sh"

delta_for() {
    case $1 in
        road|grid) echo 2000 ;;
        *) echo 2 ;;
    esac
}

ours() { # algo graph extra-args...
    local a=$1 g=$2
    shift 2
    "$CHATTY" run "$a" "$g.cgr" -n "$TRIALS" --json --engine cpu "$@" > "ours-$a-$g.json"
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["average_seconds"])' "ours-$a-$g.json"
}

theirs() { # binary graph-file extra-args...
    local b=$1 f=$2
    shift 2
    "$GAPBS/$b" -f "$f" -n "$TRIALS" "$@" > "gapbs-$b-$f.log"
    awk '/Average Time:/ {print $3}' "gapbs-$b-$f.log"
}

row() { # kernel graph ours gapbs ("n/a" where GAPBS has no such kernel)
    python3 -c '
import sys
k, g, o, t = sys.argv[1:]
o = float(o)
if t == "n/a":
    print(f"| {k} | {g} | {o:.4f} | n/a | n/a |")
else:
    t = float(t)
    print(f"| {k} | {g} | {o:.4f} | {t:.4f} | {t / o:.2f} |")' "$@"
}

GRAPHS=${GRAPHS:-"rmat20 rmat22 urand22 grid road roadNE social web"}
echo "| kernel | graph | chatty (s) | GAPBS (s) | GAPBS / chatty |"
echo "|---|---|---|---|---|"
for g in $GRAPHS; do
    make_graph "$g"
    row bfs "$g" "$(ours bfs "$g")" "$(theirs bfs "$g.sg")"
    if [ -f "$g.wsg" ]; then
        d=$(delta_for "$g")
        row sssp "$g" "$(ours sssp "$g" --delta "$d")" "$(theirs sssp "$g.wsg" -d "$d")"
    fi
    row pr "$g" "$(ours pr "$g" --tolerance 1e-4 --max-iters 1000)" "$(theirs pr "$g.sg" -t 1e-4 -i 1000)"
    row wcc "$g" "$(ours wcc "$g")" "$(theirs cc "$g.sg")"
    row bc "$g" "$(ours bc "$g" --sources 4)" "$(theirs bc "$g.sg" -i 4)"
    row spmv "$g" "$(ours spmv "$g")" "n/a"
done 2>&1
