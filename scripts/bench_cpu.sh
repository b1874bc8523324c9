#!/usr/bin/env bash
# CPU benchmark: every kernel side by side with GAPBS built from its public source on
# the same machine, in the same run, at several thread counts: for each graph, kernel
# and thread count, ours then GAPBS's (interleaved, so drift hits both). Prints a
# markdown table (seconds, average over trials, kernel time only, graph already
# loaded) and the geometric mean of GAPBS / chatty per thread count; writes logs.
#
# usage: scripts/bench_cpu.sh GAPBS_DIR [WORK_DIR]
#   GAPBS_DIR: a checkout of github.com/sbeamer/gapbs (built here when its binaries
#              are missing)
#   WORK_DIR:  where generated graphs and logs go (default: data/bench-cpu, git-ignored)
# Environment: CHATTY (binary; default: build target/release/chatty), TRIALS (default
# 5), GRAPHS (names in scripts/gapbs_graphs.sh; default: the issue-19 set below),
# THREADS (default "1 <cores>"), KERNELS (default "bfs sssp pr pr-gs wcc bc spmv").
#
# pr runs to the same stopping rule on both sides (GAPBS stops when the L1 change is
# below ε = 1e-4; ours when it is below N·tolerance, so tolerance = ε/N): pr is ours
# (Jacobi, the networkx iteration) against GAPBS's pr_spmv (Jacobi); pr-gs is ours
# with --pr-method gauss-seidel against GAPBS's pr (Gauss–Seidel). bfs and sssp
# search from the same source on both sides (GAPBS's -r set to the one ours drew):
# on a directed graph two random sources can reach very different parts. bc runs four
# sources on both sides, all the same vertex (ours' --sources S,S,S,S, GAPBS's -r S
# -i 4; S drawn as for bfs): each system drawing its own four compared different work
# on graphs of many components (ego-Twitter, cnr-2000).
set -euo pipefail
GAPBS=$(cd "$1" && pwd)
WORK=${2:-data/bench-cpu}
TRIALS=${TRIALS:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
THREADS=${THREADS:-"1 $(nproc)"}
KERNELS=${KERNELS:-"bfs sssp pr pr-gs wcc bc spmv"}
DATASETS=$(realpath "${CHATTY_DATASETS:-$ROOT/../shared/datasets}")
if [ -z "${CHATTY:-}" ]; then
    (cd "$ROOT" && cargo build --release --locked --bin chatty -q)
    CHATTY=$ROOT/target/release/chatty
fi
CHATTY=$(realpath "$CHATTY")
[ -x "$GAPBS/pr_spmv" ] || make -C "$GAPBS" -j "$(nproc)" bfs sssp pr pr_spmv cc bc converter > /dev/null
mkdir -p "$WORK"
cd "$WORK"

# shellcheck source=scripts/gapbs_graphs.sh
source "$ROOT/scripts/gapbs_graphs.sh"

delta_for() {
    case $1 in
        road | moscow | roadNE | grid) echo 2000 ;;
        *) echo 2 ;;
    esac
}

ours() { # threads row-name graph algo extra-args... -> average seconds
    local t=$1 name=$2 g=$3 a=$4
    shift 4
    local log="ours-$name-$g-$t"
    # A refusal (e.g. BC path counts beyond a double on the grid) is a row, not the end.
    if "$CHATTY" run "$a" "$g.cgr" -n "$TRIALS" --json --engine cpu --threads "$t" "$@" > "$log.json" 2> "$log.err"; then
        python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["average_seconds"])' "$log.json"
    else
        echo refused
    fi
}

theirs() { # threads binary graph-file extra-args... -> average seconds
    local t=$1 b=$2 f=$3
    shift 3
    OMP_NUM_THREADS=$t "$GAPBS/$b" -f "$f" -n "$TRIALS" "$@" > "gapbs-$b-$f-$t.log"
    awk '/Average Time:/ {print $3}' "gapbs-$b-$f-$t.log"
}

source_of() { # ours' row name, graph, threads -> the source it searched from, 0-based
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["parameters"]["sources"][0] - d["graph"]["id_base"])' "ours-$1-$2-$3.json"
}

bc_source() { # graph -> a source with out-edges, 0-based, drawn by ours as for bfs
    "$CHATTY" run bfs "$1.cgr" -n 1 --json --engine cpu > "bc-source-$1.json"
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["parameters"]["sources"][0] - d["graph"]["id_base"])' "bc-source-$1.json"
}

row() { # kernel graph threads ours gapbs ("n/a" where GAPBS has no such kernel)
    python3 -c '
import sys
k, g, t, o, p = sys.argv[1:]
if o == "refused":
    print(f"| {k} | {g} | {t} | refused | {p} | n/a |")
    sys.exit()
o = float(o)
if p == "n/a":
    print(f"| {k} | {g} | {t} | {o:.4f} | n/a | n/a |")
else:
    p = float(p)
    print(f"| {k} | {g} | {t} | {o:.4f} | {p:.4f} | {p / o:.2f} |")' "$@" | tee -a rows.md
}

pr_tolerance() { # graph -> ε / N
    "$CHATTY" info "$1.cgr" --json | python3 -c 'import json,sys; print(1e-4 / json.load(sys.stdin)["vertices"])'
}

footer() { # the geometric mean of GAPBS / chatty per thread count, over rows.md
    echo
    echo "| threads | rows | geometric mean of GAPBS / chatty |"
    echo "|---|---|---|"
    python3 - "$THREADS" rows.md <<'EOF'
import math, sys
rows = [l.strip("|\n").split("|") for l in open(sys.argv[2]) if l.startswith("|")]
for t in sys.argv[1].split():
    r = [float(c[5]) for c in rows if c[2].strip() == t and c[5].strip() != "n/a"]
    if r:
        print(f"| {t} | {len(r)} | {math.exp(sum(map(math.log, r)) / len(r)):.2f} |")
EOF
}
# Under `timeout`, the rows measured so far still get their footer.
trap 'footer; exit 143' TERM

GRAPHS=${GRAPHS:-"kron22 urand22 grid roadNE moscow twitter web"}
: > rows.md
echo "| kernel | graph | threads | chatty (s) | GAPBS (s) | GAPBS / chatty |"
echo "|---|---|---|---|---|---|"
for g in $GRAPHS; do
    make_graph "$g" 2>> generate.log
    tol=$(pr_tolerance "$g")
    for k in $KERNELS; do
        for t in $THREADS; do
            case $k in
                bfs)
                    o=$(ours "$t" bfs "$g" bfs)
                    row bfs "$g" "$t" "$o" "$(theirs "$t" bfs "$g.sg" -r "$(source_of bfs "$g" "$t")")"
                    ;;
                sssp)
                    [ -f "$g.wsg" ] || continue
                    d=$(delta_for "$g")
                    o=$(ours "$t" sssp "$g" sssp --delta "$d")
                    row sssp "$g" "$t" "$o" "$(theirs "$t" sssp "$g.wsg" -d "$d" -r "$(source_of sssp "$g" "$t")")"
                    ;;
                pr) row pr "$g" "$t" "$(ours "$t" pr "$g" pr --tolerance "$tol" --max-iters 1000)" "$(theirs "$t" pr_spmv "$g.sg" -t 1e-4 -i 1000)" ;;
                pr-gs)
                    [[ $("$CHATTY" run --help) == *--pr-method* ]] || continue # older builds
                    row pr-gs "$g" "$t" "$(ours "$t" pr-gs "$g" pr --tolerance "$tol" --max-iters 1000 --pr-method gauss-seidel)" \
                        "$(theirs "$t" pr "$g.sg" -t 1e-4 -i 1000)"
                    ;;
                wcc) row wcc "$g" "$t" "$(ours "$t" wcc "$g" wcc)" "$(theirs "$t" cc "$g.sg")" ;;
                bc)
                    s=$(bc_source "$g")
                    row bc "$g" "$t" "$(ours "$t" bc "$g" bc --zero-based --sources "$s,$s,$s,$s")" "$(theirs "$t" bc "$g.sg" -r "$s" -i 4)"
                    ;;
                spmv) row spmv "$g" "$t" "$(ours "$t" spmv "$g" spmv)" "n/a" ;;
            esac
        done
    done
done 2>&1
trap - TERM
footer
