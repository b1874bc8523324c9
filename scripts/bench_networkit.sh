#!/usr/bin/env bash
# The CPU engine against networkit on the same host, same graphs, same run: k-core
# (CoreDecomposition), strong components (StronglyConnectedComponents), label
# propagation (PLP: networkit's own variant, so the communities differ), degree and
# closeness centrality (exact), Louvain (PLM) and Leiden (ParallelLeiden) with the
# modularity each finds (both sides on the unweighted .sg), eigenvector and Katz
# centrality (Katz at alpha 1e-4, below 1/λ_max of the graphs here) and exact
# betweenness. networkit is installed from a wheel carried in (the
# GPU machine has no network; where SciPy is absent a stand-in lets it import, since
# nothing here converts to SciPy). Both sides read the same simple graph: GAPBS's .sg
# of scripts/gapbs_graphs.sh, loaded into networkit from NumPy arrays. Times are the
# median of TRIALS runs of the kernel alone, every thread of the host on both sides.
#
# usage: scripts/bench_networkit.sh GAPBS_SOURCE_DIR NETWORKIT_WHEEL_DIR
# Environment: CHATTY (default target/release/chatty), DATASETS (default
# .device-data/datasets), OUT, WORK (default /tmp/networkit-graphs), TRIALS (3), ROWS
# ("graph:kernel" pairs, default below).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CHATTY=$(realpath "${CHATTY:-target/release/chatty}")
DATASETS=$(realpath "${DATASETS:-.device-data/datasets}")
OUT=${OUT:-/tmp/networkit-bench}
WORK=${WORK:-/tmp/networkit-graphs}
TRIALS=${TRIALS:-3}
ROWS=${ROWS:-"kron22:kcore kron22:lpa kron22:degree kron22d:kcore kron22d:scc roadNE:kcore roadNE:lpa web:kcore web:scc twitter:kcore twitter:lpa enron:closeness"}
WHEELS=$(realpath "$2")
mkdir -p "$OUT" "$WORK/gapbs" "$WORK/site"
cp -r "$1"/. "$WORK/gapbs/"
make -C "$WORK/gapbs" -j "$(nproc)" converter > "$WORK/gapbs-build.log" 2>&1 || { echo "GAPBS build failed"; exit 1; }
GAPBS=$WORK/gapbs
python3 -m pip install --quiet --no-deps --no-index --target "$WORK/site" "$WHEELS"/*.whl || { echo "networkit install failed"; exit 1; }
cd "$WORK"
# shellcheck source=scripts/gapbs_graphs.sh
source "$ROOT/scripts/gapbs_graphs.sh"
rows=$OUT/rows.tsv
: > "$rows"
for pair in $ROWS; do
    g=${pair%%:*} k=${pair#*:}
    make_graph "$g" 2>> "$WORK/generate.log"
    # Communities on the unweighted simple graph networkit reads (the .cgr may be weighted).
    input=$g.cgr
    case $k in louvain | leiden) input=$g.sg ;; esac
    # Eigenvector and Katz stop once the L1 change is below 1e-9 (networkit's own stop
    # is an L2 change below 1e-9 and 1e-8: ours is at least as strict).
    n=$("$CHATTY" info "$input" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["vertices"])')
    args=()
    case $k in
        eigenvector) args=(--tolerance "$(python3 -c "print(1e-9 / $n)")" --max-iters 1000) ;;
        katz) args=(--katz-alpha 0.0001 --tolerance "$(python3 -c "print(1e-9 / $n)")" --max-iters 1000) ;;
        bc) args=(--sources all) ;;
    esac
    ours=$("$CHATTY" run "$k" "$input" "${args[@]}" --engine cpu -n "$TRIALS" --json 2> "$OUT/$g-$k.err" |
        python3 -c 'import json, statistics, sys; j = json.load(sys.stdin); print("%.4f" % statistics.median(j["trial_seconds"]), json.dumps(j["result"]))')
    theirs=$(PYTHONPATH=$WORK/site python3 - "$g.sg" "$k" "$TRIALS" <<'PY' 2>> "$OUT/networkit.err"
import importlib.abc, importlib.machinery, json, statistics, sys, time, types
try:
    import scipy  # noqa: F401
except ImportError:
    # networkit imports scipy.sparse, scipy.io and scipy.sparse.linalg at start-up for
    # conversions this benchmark does not use.
    class Stub(types.ModuleType):
        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            return type(name, (), {})
    class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, name, path, target=None):
            if name == "scipy" or name.startswith("scipy."):
                return importlib.machinery.ModuleSpec(name, self, is_package=True)
        def create_module(self, spec):
            return Stub(spec.name)
        def exec_module(self, module):
            module.__path__ = []
    sys.meta_path.insert(0, Finder())
import numpy as np
import networkit as nk

path, kernel, trials = sys.argv[1], sys.argv[2], int(sys.argv[3])
raw = open(path, "rb").read()
directed = raw[0] != 0
m, n = np.frombuffer(raw, dtype=np.int64, count=2, offset=1)
offsets = np.frombuffer(raw, dtype=np.int64, count=n + 1, offset=17)
targets = np.frombuffer(raw, dtype=np.int32, count=offsets[n], offset=17 + 8 * (n + 1)).astype(np.uint64)
sources = np.repeat(np.arange(n, dtype=np.uint64), np.diff(offsets))
if not directed:  # each edge is listed both ways
    keep = sources < targets
    sources, targets = sources[keep], targets[keep]
G = nk.graph.Graph(int(n), weighted=False, directed=directed)
G.addEdges((sources, targets), checkMultiEdge=False)
nk.setNumberOfThreads(nk.getMaxNumberOfThreads())
def make():
    if kernel == "kcore":
        return nk.centrality.CoreDecomposition(G)
    if kernel == "scc":
        return nk.components.StronglyConnectedComponents(G)
    if kernel == "lpa":
        return nk.community.PLP(G)
    if kernel == "degree":
        return nk.centrality.DegreeCentrality(G, normalized=True)
    if kernel == "closeness":
        return nk.centrality.Closeness(G, True, nk.centrality.ClosenessVariant.GENERALIZED)
    if kernel == "louvain":
        return nk.community.PLM(G, refine=False)
    if kernel == "leiden":
        return nk.community.ParallelLeiden(G)
    if kernel == "eigenvector":
        return nk.centrality.EigenvectorCentrality(G)
    if kernel == "katz":
        return nk.centrality.KatzCentrality(G, alpha=1e-4, beta=1.0)
    if kernel == "bc":
        return nk.centrality.Betweenness(G, normalized=False)
    raise SystemExit(f"no networkit kernel for {kernel}")
times = []
for _ in range(trials):
    a = make()
    start = time.perf_counter()
    a.run()
    times.append(time.perf_counter() - start)
if kernel == "kcore":
    result = {"degeneracy": int(max(a.scores()))}
elif kernel == "scc":
    result = {"count": a.numberOfComponents()}
elif kernel == "lpa":
    result = {"count": a.getPartition().numberOfSubsets()}
elif kernel in ("louvain", "leiden"):
    partition = a.getPartition()
    result = {"count": partition.numberOfSubsets(), "modularity": nk.community.Modularity().getQuality(partition, G)}
else:
    result = {"max": max(a.scores())}
print("%.4f" % statistics.median(times), json.dumps(result), nk.getMaxNumberOfThreads())
PY
)
    [ -n "$ours" ] || ours="nan {}"
    [ -n "$theirs" ] || theirs="nan {} 0"
    printf '%s\t%s\t%s\t%s\n' "$g" "$k" "$ours" "$theirs" >> "$rows"
done
python3 - "$rows" "$(nproc)" <<'PY' | tee "$OUT/table.md"
import csv, json, sys
print(f"| graph | kernel | chatty CPU, {sys.argv[2]} threads (s) | networkit (s) | networkit / chatty | chatty's result | networkit's result |")
print("|---|---|---|---|---|---|---|")
for g, k, ours, theirs in csv.reader(open(sys.argv[1]), delimiter="\t"):
    ot, oj = ours.split(" ", 1)
    tt, tj = theirs.split(" ", 1)
    tj = tj.rsplit(" ", 1)[0]
    ratio = "n/a" if "nan" in (ot, tt) else f"{float(tt) / float(ot):.2f}"
    def brief(j):
        d = json.loads(j)
        if "top" in d:
            d["max"] = d["top"][0][1]
        return ", ".join(f"{key} {d[key]:.6g}" if key in ("max", "modularity") else f"{key} {d[key]}"
                         for key in ("degeneracy", "count", "modularity", "max") if key in d)
    print(f"| {g} | {k} | {ot} | {tt} | {ratio} | {brief(oj)} | {brief(tj)} |")
PY
