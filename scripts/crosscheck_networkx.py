#!/usr/bin/env python3
"""Cross-check chatty's CPU kernels against networkx on small generated and real graphs.

Usage: scripts/crosscheck_networkx.py [path/to/chatty]
Needs networkx (pip install networkx). Exits non-zero on the first disagreement.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

import networkx as nx

CHATTY = sys.argv[1] if len(sys.argv) > 1 else "target/release/chatty"


def chatty(*args):
    out = subprocess.run([CHATTY, *args], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"chatty {' '.join(args)} failed:\n{out.stdout}{out.stderr}")
    return out.stdout


def values(path, cast=float):
    vals = {}
    with open(path) as f:
        for line in f:
            v, x = line.split()
            vals[int(v)] = cast(x) if x not in ("inf", "-1") else None
    return vals


def load_el(path, directed):
    g = nx.DiGraph() if directed else nx.Graph()
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            p = line.split()
            g.add_edge(int(p[0]), int(p[1]), weight=int(p[2]) if len(p) > 2 else 1)
    return g


def check(name, graph_file, directed, weighted, n):
    g = load_el(graph_file, directed)
    g.add_nodes_from(range(n))
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out.txt")
        src = next(v for v in range(n) if g.degree(v) > 0)

        chatty("run", "bfs", graph_file, "-r", str(src), "-o", out, "-q")
        want = nx.single_source_shortest_path_length(g, src)
        got = values(out, int)
        assert all(got[v] == want.get(v) for v in range(n)), f"{name}: bfs differs"

        chatty("run", "sssp", graph_file, "-r", str(src), "-o", out, "-q")
        want = nx.single_source_dijkstra_path_length(g, src, weight="weight")
        got = values(out, float)
        assert all(got[v] == want.get(v) for v in range(n)), f"{name}: sssp differs"

        chatty("run", "pr", graph_file, "-o", out, "-q", "--tolerance", "1e-10", "--max-iters", "1000")
        want = nx.pagerank(g, alpha=0.85, tol=1e-12, max_iter=1000, weight=None)
        got = values(out)
        l1 = sum(abs(got[v] - want[v]) for v in range(n))
        assert l1 < 1e-6, f"{name}: pagerank L1 {l1}"
        # Both with their defaults (alpha 0.85, tol 1e-6 per vertex, 100 iterations;
        # chatty's PageRank ignores weights, so networkx's does too): the same top 10,
        # scores within networkx's own stopping error.
        chatty("run", "pagerank", graph_file, "-o", out, "-q")
        want = nx.pagerank(g, weight=None)
        got = values(out)
        # Same top 10 up to exact ties (a grid's symmetric corners): every vertex of
        # ours is in networkx's top 10 by score.
        ours = sorted(range(n), key=lambda v: (-got[v], v))[:10]
        tenth = sorted(want.values(), reverse=True)[9]
        assert all(want[v] >= tenth - 1e-12 for v in ours), f"{name}: pagerank top-10 with defaults {ours} vs networkx {tenth}"
        # Personalized: teleport to three vertices, weights 3:2:1.
        favoured = {0: 3.0, n // 2: 2.0, n - 1: 1.0}
        weights = os.path.join(d, "teleport.txt")
        with open(weights, "w") as f:
            f.writelines(f"{v} {w}\n" for v, w in favoured.items())
        chatty("run", "pr", graph_file, "-o", out, "-q", "--personalization", weights, "--tolerance", "1e-10", "--max-iters", "1000")
        want = nx.pagerank(g, personalization=favoured, tol=1e-12, max_iter=1000, weight=None)
        got = values(out)
        assert sum(abs(got[v] - want[v]) for v in range(n)) < 1e-6, f"{name}: personalized pagerank differs"
        assert sum(abs(got[v] - want[v]) for v in range(n)) < n * 1e-6, f"{name}: pagerank with defaults"

        chatty("run", "wcc", graph_file, "-o", out, "-q")
        got = values(out, int)
        comps = nx.weakly_connected_components(g) if directed else nx.connected_components(g)
        for c in comps:
            assert all(got[v] == min(c) for v in c), f"{name}: wcc differs"

        chatty("run", "bc", graph_file, "--sources", "all", "-o", out, "-q")
        want = nx.betweenness_centrality(g, normalized=False, weight=None)
        got = values(out)
        assert all(math.isclose(got[v], want[v], rel_tol=1e-9, abs_tol=1e-9) for v in range(n)), f"{name}: bc differs"

        chatty("run", "spmv", graph_file, "-o", out, "-q")
        got = values(out)
        for v in range(n):
            preds = g.predecessors(v) if directed else g.neighbors(v)
            want_v = sum(g[u][v]["weight"] for u in preds)
            assert math.isclose(got[v], want_v, rel_tol=1e-12), f"{name}: spmv differs at {v}"
    print(f"networkx agrees on {name}: bfs sssp pr wcc bc spmv")


def check_structure(name, path):
    """Triangles, clustering, label propagation, core numbers and strong components against networkx, on
    a file that keeps its parallel edges and self-loops: chatty answers for the simple
    graph networkx holds (core_number refuses self-loops: they are dropped for it)."""
    with tempfile.TemporaryDirectory() as d:
        el = os.path.join(d, "g.el")
        chatty("convert", path, "-o", el, "-q")
        directed = json.loads(chatty("info", el, "--json"))["directed"]
        g = load_el(el, directed)
        out = os.path.join(d, "out.txt")
        chatty("run", "tc", el, "-o", out, "-q")
        got = values(out, int)
        g.add_nodes_from(got)
        simple = g.copy()
        simple.remove_edges_from(list(nx.selfloop_edges(simple)))
        assert got == nx.triangles(simple.to_undirected()), f"{name}: tc differs"
        if not directed:
            chatty("run", "clustering", el, "-o", out, "-q")
            got, want = values(out), nx.clustering(g)
            assert all(abs(got[v] - want[v]) <= 1e-12 for v in want), f"{name}: clustering differs"
            # Label propagation starts from networkx's node order: chatty's ids, ascending.
            chatty("run", "lpa", el, "-o", out, "-q")
            got = values(out, int)
            ordered = nx.Graph()
            ordered.add_nodes_from(sorted(g))
            ordered.add_edges_from(g.edges)
            for c in nx.community.label_propagation_communities(ordered):
                smallest = min(c)
                assert all(got[v] == smallest for v in c), f"{name}: lpa differs"
        chatty("run", "kcore", el, "-o", out, "-q")
        assert values(out, int) == nx.core_number(simple), f"{name}: kcore differs"
        chatty("run", "scc", el, "-o", out, "-q")
        got = values(out, int)
        comps = nx.strongly_connected_components(g) if directed else nx.connected_components(g)
        for c in comps:
            smallest = min(c)
            assert all(got[v] == smallest for v in c), f"{name}: scc differs"
    print(f"networkx agrees on {name}: tc{'' if directed else ' clustering lpa'} kcore scc")


def check_dataset(name, path):
    """On a real graph: PageRank's top 10 with networkx's defaults, component sizes,
    the BFS depth histogram (from the JSON summary) and BC summed over the sources
    chatty sampled (networkx's betweenness_centrality_subset over the same sources)."""
    with tempfile.TemporaryDirectory() as d:
        el = os.path.join(d, "g.el")
        # networkx graphs have no parallel edges or self-loops: drop them for the comparison.
        chatty("convert", path, "-o", el, "--dedup", "--drop-self-loops", "-q")
        info = json.loads(chatty("info", el, "--json"))
        directed = info["directed"]
        g = load_el(el, directed)
        out = os.path.join(d, "out.txt")
        chatty("run", "pagerank", el, "-o", out, "-q")
        got = values(out)
        # The vertices, named as the file names them (wiki-Vote's ids have gaps).
        vertices = list(got)
        assert len(vertices) == info["vertices"], f"{name}: {len(vertices)} answers for {info['vertices']} vertices"
        g.add_nodes_from(vertices)
        want = nx.pagerank(g, weight=None)
        tenth = sorted(want.values(), reverse=True)[9]
        ours = sorted(vertices, key=lambda v: (-got[v], v))[:10]
        assert all(want[v] >= tenth - 1e-12 for v in ours), f"{name}: pagerank top 10 {ours}"
        report = json.loads(chatty("run", "wcc", el, "--json", "--top", "5"))["result"]
        comps = nx.weakly_connected_components(g) if directed else nx.connected_components(g)
        sizes = sorted((len(c) for c in comps), reverse=True)
        assert report["count"] == len(sizes), f"{name}: {report['count']} components, networkx {len(sizes)}"
        assert [s for _, s in report["largest"]] == sizes[:5], f"{name}: component sizes"
        src = max(vertices, key=lambda v: g.out_degree(v) if directed else g.degree(v))
        report = json.loads(chatty("run", "bfs", el, "--json", "-r", str(src)))["result"]
        depth = nx.single_source_shortest_path_length(g, src)
        histogram = [0] * (max(depth.values()) + 1)
        for x in depth.values():
            histogram[x] += 1
        assert report["histogram"] == histogram, f"{name}: bfs depth histogram"
        report = json.loads(chatty("run", "bc", el, "--json", "--sources", "6", "-o", out))
        sources = report["parameters"]["sources"]
        want = nx.betweenness_centrality_subset(g, sources=sources, targets=list(g.nodes), normalized=False, weight=None)
        got = values(out)
        assert all(math.isclose(got[v], want[v], rel_tol=1e-9, abs_tol=1e-9) for v in vertices), f"{name}: bc on sampled sources"
    print(f"networkx agrees on {name}: pagerank top 10, components, bfs histogram, bc on {len(sources)} sampled sources")


def main():
    with tempfile.TemporaryDirectory() as d:
        cases = [
            ("rmat-9 directed", ["rmat", "--scale", "9", "--edge-factor", "6", "--weights", "20"], True, 512),
            ("rmat-9 undirected", ["rmat", "--scale", "9", "--edge-factor", "4", "--weights", "20", "--undirected"], False, 512),
            ("grid 20x15", ["grid", "--width", "20", "--height", "15"], False, 300),
        ]
        for name, gen, directed, n in cases:
            raw = os.path.join(d, "raw.cgr")
            path = os.path.join(d, "g.wel")
            chatty("generate", *gen, "-o", raw, "-q")
            # networkx graphs have no parallel edges or self-loops: drop them for the comparison.
            chatty("convert", raw, "-o", path, "--dedup", "--drop-self-loops", "-q")
            check(name, path, directed, True, n)
            check_structure(name, raw)
    datasets = os.environ.get("CHATTY_DATASETS", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "datasets"))
    for name, rel in [("wiki-Vote", "social/wiki-Vote.txt.gz"), ("email-Enron", "social/email-Enron.el.gz"), ("USA-road-NY", "road/USA-road-NY.pace.gr.gz")]:
        path = os.path.join(datasets, rel)
        if os.path.exists(path):
            check_dataset(name, path)
            check_structure(name, path)
        elif os.environ.get("CI") == "true":
            sys.exit(f"CI=true but the dataset {path} is missing")
        else:
            print(f"note: {path} not found; skipping it")


if __name__ == "__main__":
    main()
