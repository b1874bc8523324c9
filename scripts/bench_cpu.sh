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
# THREADS (default "1 <cores>"), KERNELS (default "bfs sssp pr pr-gs wcc bc spmv"; also
# tc, against GAPBS's tc on undirected graphs, and kcore and scc, which GAPBS lacks),
# ROUNDS (default 1), BASE (another chatty binary, e.g. the build before a change: run
# beside the two in every round, its median and base / chatty added to each row and
# their geometric mean to the footer).
#
# ROUNDS=R runs each pair R times, the order swapped every round (ours first in odd
# rounds, GAPBS first in even ones); a row quotes each side's median and the spread
# (slowest / fastest round) of each, so a row a loaded host moved is seen as such:
# the lent host has moved GAPBS's own row 2-8x between runs of one call. The footer's
# "steady" mean keeps only rows whose two spreads are both below 1.25.
#
# pr runs to the same stopping rule on both sides (GAPBS stops when the L1 change is
# below ε = 1e-4; ours when it is below N·tolerance, so tolerance = ε/N): pr is ours
# (Jacobi, the networkx iteration) against GAPBS's pr_spmv (Jacobi); pr-gs is ours
# with --pr-method gauss-seidel against GAPBS's pr (Gauss–Seidel). bfs, sssp and bc
# search from one source S per graph, the same on both sides and in every trial (S is
# the first one ours draws; ours' -r S, GAPBS's -r S): on a directed graph two random
# sources can reach very different parts, and on a road one search can be twice
# another's depth. Before session 30 ours drew a new source each trial while GAPBS
# searched from ours' last one, so bfs and sssp rows compared different work. bc runs
# four sources on both sides, all S (ours' --sources S,S,S,S, GAPBS's -i 4).
set -euo pipefail
GAPBS=$(cd "$1" && pwd)
WORK=${2:-data/bench-cpu}
TRIALS=${TRIALS:-5}
ROUNDS=${ROUNDS:-1}
BASE=${BASE:+$(realpath "$BASE")}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
THREADS=${THREADS:-"1 $(nproc)"}
KERNELS=${KERNELS:-"bfs sssp pr pr-gs wcc bc spmv"}
DATASETS=$(realpath "${CHATTY_DATASETS:-$ROOT/../shared/datasets}")
if [ -z "${CHATTY:-}" ]; then
    (cd "$ROOT" && cargo build --release --locked --bin chatty -q)
    CHATTY=$ROOT/target/release/chatty
fi
CHATTY=$(realpath "$CHATTY")
[ -x "$GAPBS/tc" ] || make -C "$GAPBS" -j "$(nproc)" bfs sssp pr pr_spmv cc bc tc converter > /dev/null
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

ours() { # round threads row-name graph algo extra-args... -> average seconds ($BIN, default $CHATTY)
    local r=$1 t=$2 name=$3 g=$4 a=$5
    shift 5
    local log="${LOG:-ours}-$name-$g-$t-r$r"
    # A refusal (e.g. BC path counts beyond a double on the grid) is a row, not the end.
    if "${BIN:-$CHATTY}" run "$a" "$g.cgr" -n "$TRIALS" --json --engine cpu --threads "$t" "$@" > "$log.json" 2> "$log.err"; then
        python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["average_seconds"])' "$log.json"
    else
        echo refused
    fi
}

theirs() { # round threads binary graph-file extra-args... -> average seconds
    local r=$1 t=$2 b=$3 f=$4
    shift 4
    OMP_NUM_THREADS=$t "$GAPBS/$b" -f "$f" -n "$TRIALS" "$@" > "gapbs-$b-$f-$t-r$r.log"
    awk '/Average Time:/ {print $3}' "gapbs-$b-$f-$t-r$r.log"
}

# pair KERNEL GRAPH THREADS OURS-COMMAND THEIRS-COMMAND: both commands (ours, theirs
# above, without their round; BASE's between them) ROUNDS times, order reversed every
# round, then the row.
pair() {
    local k=$1 g=$2 t=$3 mine=$4 peer=$5 r o=() p=() b=()
    for r in $(seq "$ROUNDS"); do
        if ((r % 2)); then
            o+=("$(eval "ours $r $t $mine")")
            [ -z "$BASE" ] || b+=("$(eval "BIN=\"\$BASE\" LOG=base ours $r $t $mine")")
            p+=("$(eval "theirs $r $t $peer")")
        else
            p+=("$(eval "theirs $r $t $peer")")
            [ -z "$BASE" ] || b+=("$(eval "BIN=\"\$BASE\" LOG=base ours $r $t $mine")")
            o+=("$(eval "ours $r $t $mine")")
        fi
    done
    row "$k" "$g" "$t" "${o[*]}" "${p[*]}" "${b[*]}"
}

drawn_source() { # graph -> the source ours draws first (a vertex with out-edges), 0-based
    "$CHATTY" run bfs "$1.cgr" -n 1 --json --engine cpu > "source-$1.json"
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["parameters"]["sources"][0] - d["graph"]["id_base"])' "source-$1.json"
}

row() { # kernel graph threads "ours' rounds" "GAPBS's rounds" ("n/a" where GAPBS has no such kernel) ["BASE's rounds"]
    python3 -c '
import statistics, sys
k, g, t, o, p, b = sys.argv[1:]
def spread(x):
    return f"{max(x) / min(x):.2f}" if len(x) > 1 else "-"
def base(om):
    if not b.split():
        return ""
    if "refused" in b.split() or om is None:
        return " refused | n/a |"
    bm = statistics.median(float(x) for x in b.split())
    return f" {bm:.4f} | {bm / om:.2f} |"
if "refused" in o.split():
    print(f"| {k} | {g} | {t} | refused | {p.split()[0]} | n/a | - | - |{base(None)}")
    sys.exit()
o = [float(x) for x in o.split()]
om = statistics.median(o)
if p.split()[0] == "n/a":
    print(f"| {k} | {g} | {t} | {om:.4f} | n/a | n/a | {spread(o)} | - |{base(om)}")
else:
    p = [float(x) for x in p.split()]
    pm = statistics.median(p)
    print(f"| {k} | {g} | {t} | {om:.4f} | {pm:.4f} | {pm / om:.2f} | {spread(o)} | {spread(p)} |{base(om)}")' "$1" "$2" "$3" "$4" "$5" "${6:-}" | tee -a rows.md
}

alone() { # kernel graph threads: ours (and BASE's) only, where GAPBS has no such kernel
    local k=$1 g=$2 t=$3 o=() b=() r
    for r in $(seq "$ROUNDS"); do
        o+=("$(ours "$r" "$t" "$k" "$g" "$k")")
        [ -z "$BASE" ] || b+=("$(BIN=$BASE LOG=base ours "$r" "$t" "$k" "$g" "$k")")
    done
    row "$k" "$g" "$t" "${o[*]}" "n/a" "${b[*]}"
}

pr_tolerance() { # graph -> ε / N
    "$CHATTY" info "$1.cgr" --json | python3 -c 'import json,sys; print(1e-4 / json.load(sys.stdin)["vertices"])'
}

footer() { # the geometric mean of GAPBS / chatty (and base / chatty) per thread count, over rows.md
    echo
    echo "| threads | rows | geometric mean of GAPBS / chatty | steady rows | their geometric mean |${BASE:+ base / chatty |}"
    echo "|---|---|---|---|---|${BASE:+---|}"
    python3 - "$THREADS" rows.md <<'EOF'
import math, sys
rows = [[c.strip() for c in l.strip("|\n").split("|")] for l in open(sys.argv[2]) if l.startswith("|")]
def mean(r):
    return f"{math.exp(sum(map(math.log, r)) / len(r)):.2f}" if r else "-"
def steady(c):
    return all(s != "-" and float(s) < 1.25 for s in c[6:8])
for t in sys.argv[1].split():
    r = [c for c in rows if c[2] == t and c[5] != "n/a"]
    b = [float(c[9]) for c in rows if c[2] == t and len(c) > 9 and c[9] != "n/a"]
    if r:
        s = [c for c in r if steady(c)]
        print(f"| {t} | {len(r)} | {mean([float(c[5]) for c in r])} | {len(s)} | {mean([float(c[5]) for c in s])} |" + (f" {mean(b)} |" if b else ""))
EOF
}
# Under `timeout`, the rows measured so far still get their footer.
trap 'footer; exit 143' TERM

GRAPHS=${GRAPHS:-"kron22 urand22 grid roadNE moscow twitter web"}
: > rows.md
echo "| kernel | graph | threads | chatty (s) | GAPBS (s) | GAPBS / chatty | chatty's spread | GAPBS's spread |${BASE:+ base (s) | base / chatty |}"
echo "|---|---|---|---|---|---|---|---|${BASE:+---|---|}"
for g in $GRAPHS; do
    make_graph "$g" 2>> generate.log
    tol=$(pr_tolerance "$g")
    case " $KERNELS " in *" bfs "* | *" sssp "* | *" bc "*) s=$(drawn_source "$g") ;; esac
    for k in $KERNELS; do
        for t in $THREADS; do
            case $k in
                bfs) pair bfs "$g" "$t" 'bfs "$g" bfs --zero-based -r "$s"' 'bfs "$g.sg" -r "$s"' ;;
                sssp)
                    [ -f "$g.wsg" ] || continue
                    d=$(delta_for "$g")
                    pair sssp "$g" "$t" 'sssp "$g" sssp --zero-based -r "$s" --delta "$d"' 'sssp "$g.wsg" -d "$d" -r "$s"'
                    ;;
                pr) pair pr "$g" "$t" 'pr "$g" pr --tolerance "$tol" --max-iters 1000' 'pr_spmv "$g.sg" -t 1e-4 -i 1000' ;;
                pr-gs)
                    [[ $("$CHATTY" run --help) == *--pr-method* ]] || continue # older builds
                    pair pr-gs "$g" "$t" 'pr-gs "$g" pr --tolerance "$tol" --max-iters 1000 --pr-method gauss-seidel' 'pr "$g.sg" -t 1e-4 -i 1000'
                    ;;
                wcc) pair wcc "$g" "$t" 'wcc "$g" wcc' 'cc "$g.sg"' ;;
                bc)
                    pair bc "$g" "$t" 'bc "$g" bc --zero-based --sources "$s,$s,$s,$s"' 'bc "$g.sg" -r "$s" -i 4'
                    ;;
                tc)
                    # GAPBS counts undirected graphs only (a directed one exits 254).
                    if "$CHATTY" info "$g.cgr" --json | grep -q '"directed":false'; then
                        pair tc "$g" "$t" 'tc "$g" tc' 'tc "$g.sg"'
                    else
                        alone tc "$g" "$t"
                    fi
                    ;;
                spmv | kcore | scc) alone "$k" "$g" "$t" ;;
            esac
        done
    done
done 2>&1
trap - TERM
footer
