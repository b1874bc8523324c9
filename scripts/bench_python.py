#!/usr/bin/env python3
"""networkx alone, networkx with backend="chatty", and networkit, end to end from a
networkx graph, in one run (docs/benchmarks/python.md).

usage: scripts/bench_python.py [--engine auto|cpu|gpu] [--graphs slashdot,road-NY,bremen,rmat20]
                               [--chatty target/release/chatty] [--k 8] [--rows out.csv]

Per graph and kernel: networkx's own time; the backend's first call (conversion from
the networkx graph included) and a repeated call (networkx's cache of the converted
graph); networkit's conversion (nk.nxadapter.nx2nk) plus its kernel, and a repeated
kernel. Every answer is checked against networkx's. Needs networkx, scipy,
chattygraph (pip install ./python) and networkit.
"""

import argparse
import csv
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import networkx as nx
import numpy as np

import chattygraph as cg
import chattygraph.nx as backend

try:
    import networkit as nk
except ImportError:  # the table says so
    nk = None

nx.config.warnings_to_ignore.add("cache")


def datasets() -> Path:
    if "CHATTY_DATASETS" in os.environ:
        return Path(os.environ["CHATTY_DATASETS"])
    here = Path(__file__).resolve().parent.parent
    return here.parent / "shared" / "datasets"


def to_networkx(g: cg.Graph, weighted: bool) -> nx.Graph:
    """A networkx DiGraph of a chattygraph graph (the benchmark's input; not timed)."""
    offsets, targets, weights = g.csr()
    src = np.repeat(np.arange(g.n), np.diff(offsets.astype(np.int64)))
    out = nx.DiGraph()
    out.add_nodes_from(range(g.n))
    if weighted and weights is not None:
        out.add_weighted_edges_from(zip(src.tolist(), targets.tolist(), weights.astype(np.int64).tolist()))
    else:
        out.add_edges_from(zip(src.tolist(), targets.tolist()))
    return out


def load(name: str, chatty: str) -> tuple[nx.DiGraph, bool]:
    d = datasets()
    if name == "slashdot":
        return to_networkx(cg.read(d / "social" / "soc-Slashdot0902.el.gz"), False), False
    if name == "road-NY":  # PACE: unweighted
        return to_networkx(cg.read(d / "road" / "USA-road-NY.pace.gr.gz"), False), False
    if name == "bremen":  # DIMACS: weighted
        return to_networkx(cg.read(d / "road" / "bremen-osm-d.gr.gz"), True), True
    if name == "rmat20":
        with tempfile.TemporaryDirectory() as t:
            path = Path(t) / "rmat20.cgr"
            subprocess.run([chatty, "generate", "rmat", "-s", "20", "-e", "8", "-o", str(path), "-q"], check=True)
            return to_networkx(cg.read(path), False), False
    raise SystemExit(f"unknown graph {name}")


def timed(f):
    start = time.perf_counter()
    value = f()
    return time.perf_counter() - start, value


def close(a: dict, b: dict, rel: float, absolute: float = 0.0) -> bool:
    return a.keys() == b.keys() and all(math.isclose(a[v], b[v], rel_tol=rel, abs_tol=absolute) for v in b)


def components(cs) -> set:
    return {frozenset(c) for c in cs}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", default="auto")
    ap.add_argument("--graphs", default="slashdot,road-NY,bremen,rmat20")
    ap.add_argument("--chatty", default="target/release/chatty")
    ap.add_argument("--k", type=int, default=8, help="betweenness sources")
    ap.add_argument("--rows")
    a = ap.parse_args()
    backend.ENGINE = a.engine
    rows = []
    for name in a.graphs.split(","):
        G, weighted = load(name, a.chatty)
        print(f"== {name}: {G.number_of_nodes()} nodes, {G.number_of_edges()} edges", flush=True)
        weight = "weight" if weighted else None
        kernels = {
            "pagerank": (lambda **kw: nx.pagerank(G, weight=None, **kw),
                         lambda h: nk.centrality.PageRank(h, damp=0.85, tol=1e-6),
                         lambda got, want: sum(abs(got[v] - want[v]) for v in want) < 20 * len(want) * 1e-6),
            "betweenness k": (lambda **kw: nx.betweenness_centrality(G, k=a.k, seed=1, weight=None, **kw),
                              None,
                              lambda got, want: close(got, want, 1e-9, 1e-12)),
            "dijkstra": (lambda **kw: nx.single_source_dijkstra_path_length(G, 0, weight=weight or "weight", **kw),
                         lambda h: nk.distance.Dijkstra(h, 0, storePaths=False),
                         lambda got, want: close(got, want, 1e-12)),
            "weakly cc": (lambda **kw: list(nx.weakly_connected_components(G, **kw)),
                          lambda h: nk.components.WeaklyConnectedComponents(h),
                          lambda got, want: components(got) == components(want)),
        }
        for kernel, (call, networkit_algo, agrees) in kernels.items():
            G.__networkx_cache__.clear()
            nx_s, want = timed(call)
            first_s, got = timed(lambda: call(backend="chatty"))
            again_s, again = timed(lambda: call(backend="chatty"))
            ok = agrees(got, want) and agrees(again, want)
            nk_first = nk_again = float("nan")
            if nk is not None and networkit_algo is not None:
                def networkit_run(h):
                    algo = networkit_algo(h)
                    algo.run()  # a fresh object each time: networkit 11.3's WCC crashes when run twice

                weight_attr = "weight" if weighted and kernel == "dijkstra" else None
                nk_first, h = timed(lambda: nk.nxadapter.nx2nk(G, weightAttr=weight_attr))
                nk_kernel, _ = timed(lambda: networkit_run(h))
                nk_first += nk_kernel
                nk_again, _ = timed(lambda: networkit_run(h))
            row = {
                "graph": name, "kernel": kernel, "engine": a.engine, "networkx_s": nx_s, "chatty_first_s": first_s,
                "chatty_again_s": again_s, "networkit_first_s": nk_first, "networkit_again_s": nk_again,
                "speedup_first": nx_s / first_s, "speedup_again": nx_s / again_s, "agrees": ok,
            }
            rows.append(row)
            print(f"{name:9} {kernel:14} networkx {nx_s:8.3f} s | chatty first {first_s:7.3f} s ({nx_s / first_s:6.1f}x) "
                  f"again {again_s:7.4f} s ({nx_s / again_s:7.1f}x) | networkit first {nk_first:7.3f} s again {nk_again:7.4f} s"
                  f" | {'agrees' if ok else 'DIFFERS'}", flush=True)
    if a.rows:
        with open(a.rows, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    return 0 if all(r["agrees"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
