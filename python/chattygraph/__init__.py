"""ChattyGraph from Python: graphs from NumPy, SciPy, networkx or files, and the
kernels (BFS, SSSP, PageRank, WCC, betweenness, SpMV on CPU threads or a GPU;
triangles, clustering, core numbers and strong components on CPU threads).

Every kernel returns a NumPy array indexed by vertex id (0 .. n-1); ``run`` also
returns the report ``chatty run --json`` prints, as a dict. Kernels release the GIL.

    >>> import chattygraph as cg, numpy as np
    >>> g = cg.Graph.from_edges(np.array([0, 1]), np.array([1, 2]))
    >>> cg.bfs(g, 0)
    array([0, 1, 2])
"""

from __future__ import annotations

import math
import os
import warnings
from typing import Any, Hashable, Iterable, Optional, Sequence, Union

import numpy as np

from . import _chattygraph as _native
from ._chattygraph import gpu_count
from ._errors import (ChattyError, ConvergenceError, DeviceError, FileError, InputError, NoPathError, OutOfMemoryError,
                      ParameterError, UnsupportedError)

__all__ = [
    "ChattyError",
    "ConvergenceError",
    "DeviceError",
    "FileError",
    "InputError",
    "NoPathError",
    "OutOfMemoryError",
    "ParameterError",
    "UnsupportedError",
    "Graph",
    "betweenness",
    "bfs",
    "bfs_edges",
    "clustering",
    "core_number",
    "eigenvector_centrality",
    "katz_centrality",
    "degree_centrality",
    "closeness_centrality",
    "gpu_count",
    "hits",
    "label_propagation",
    "leiden",
    "louvain",
    "pagerank",
    "predecessors",
    "read",
    "run",
    "spmv",
    "scc",
    "shortest_path",
    "sssp",
    "triangles",
    "wcc",
]

_U32_MAX = np.iinfo(np.uint32).max


def _ids(a: Any, what: str) -> np.ndarray:
    a = np.asarray(a)
    if a.ndim != 1:
        raise ParameterError(f"{what}: expected a one-dimensional array, got shape {a.shape}")
    if a.size and not np.issubdtype(a.dtype, np.integer):
        raise ParameterError(f"{what}: expected integer vertex ids, got {a.dtype}")
    if a.size and (a.min() < 0 or a.max() >= _U32_MAX):
        raise ParameterError(f"{what}: vertex ids must lie in 0 .. {_U32_MAX - 1}")
    return np.ascontiguousarray(a, dtype=np.uint32)


def _weights(w: Any, m: int) -> tuple[Optional[np.ndarray], str]:
    """Weights as raw 32-bit words: non-negative integers as u32, anything else as f32."""
    if w is None:
        return None, "int"
    w = np.asarray(w)
    if w.shape != (m,):
        raise ParameterError(f"weights: expected {m} values, got shape {w.shape}")
    if w.size == 0:
        return np.zeros(0, dtype=np.uint32), "int"
    if np.issubdtype(w.dtype, np.bool_) or not np.issubdtype(w.dtype, np.number):
        raise ParameterError(f"weights: expected numbers, got {w.dtype}")
    integral = np.issubdtype(w.dtype, np.integer) or bool(np.all(np.isfinite(w)) and np.all(w == np.floor(w)))
    if integral and w.min() >= 0 and w.max() <= _U32_MAX:
        return np.ascontiguousarray(w, dtype=np.uint32), "int"
    # Stored as 32-bit floats: a weight that is not finite, overflows or underflows
    # there is refused, as the CLI's readers refuse it (it would read as unreachable).
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        stored = np.ascontiguousarray(w, dtype=np.float32)
    bad = ~np.isfinite(stored) | ((stored == 0) & (w != 0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ParameterError(f"weights[{i}] = {w[i]!r} does not fit a 32-bit float (finite, magnitude 1.4e-45 to 3.4e38, or 0)")
    return stored.view(np.uint32), "float"


class Graph:
    """A graph in memory, its vertices 0 .. n-1 (``nodes`` names them when the graph
    came from networkx, or from a file whose ids have gaps or are labels). Kernels
    run on it through an engine kept between calls."""

    def __init__(self, native: "_native.Graph", nodes: Optional[Sequence[Hashable]] = None,
                 weight_kind: Optional[str] = None):
        self._g = native
        self.nodes = nodes
        #: How weights are stored: None (unweighted), "int" (exact) or "float" (32-bit).
        self.weight_kind = weight_kind if native.weighted else None
        # Whether networkx held a weight as a float, so that sums of them are floats.
        self._float_weights = False
        # Whether every weight is non-negative and stored exactly (integers, or floats a
        # 32-bit float holds exactly): then a path's f64 length is networkx's, bit for bit.
        self._exact_weights = True
        # Whether every weight is above 0 (weighted BC's Dijkstra needs it).
        self._positive_weights = True
        # networkx's neighbour order as CSR (offsets, targets), where it differs from
        # ours (sorted by id): traversal orders (bfs_edges) follow it.
        self._neighbor_order: Optional[tuple[np.ndarray, np.ndarray]] = None

    @classmethod
    def from_edges(
        cls,
        src: Any,
        dst: Any,
        weights: Any = None,
        n: Optional[int] = None,
        directed: bool = True,
    ) -> "Graph":
        """Edges ``src[i] -> dst[i]`` (undirected: both ways), over ``n`` vertices
        (default: the largest id + 1). Integer weights are stored exactly; other
        weights as 32-bit floats."""
        s, d = _ids(src, "src"), _ids(dst, "dst")
        if s.shape != d.shape:
            raise ParameterError(f"{s.size} sources but {d.size} targets")
        if n is None:
            n = int(max(s.max(initial=0), d.max(initial=0))) + 1 if s.size else 0
        w, kind = _weights(weights, s.size)
        return cls(_native.Graph.from_arrays(s, d, int(n), bool(directed), w, kind), weight_kind=kind)

    @classmethod
    def from_scipy(cls, a: Any, directed: bool = True) -> "Graph":
        """A SciPy sparse matrix or array: entry (i, j) is an edge i -> j weighing
        the entry (unweighted when every entry is 1)."""
        if a.shape[0] != a.shape[1]:
            raise ParameterError(f"an adjacency matrix is square, not {a.shape}")
        coo = a.tocoo()
        data = np.asarray(coo.data)
        weights = None if data.size == 0 or np.all(data == 1) else data
        return cls.from_edges(coo.row, coo.col, weights, n=a.shape[0], directed=directed)

    @classmethod
    def from_networkx(cls, g: Any, weight: Optional[str] = "weight", default: float = 1.0) -> "Graph":
        """A networkx Graph or DiGraph (not a multigraph). The adjacency is read in
        Rust; ``weight`` names the edge attribute (missing: ``default``; ``None``:
        unweighted); all-ones weights make an unweighted graph."""
        if g.is_multigraph():
            raise UnsupportedError("multigraphs are not supported: convert to a Graph or DiGraph first")
        nodes = list(g)
        # Nodes 0..n-1 in order (the common case) are their own ids: no index to look up.
        identity = all(type(v) is int and v == i for i, v in enumerate(nodes))
        index = None if identity else {v: i for i, v in enumerate(nodes)}
        adj = g._adj
        if type(adj) is not dict:
            # A view (a subgraph, a filtered graph): its adjacency as plain dicts.
            adj = {u: dict(nbrs) for u, nbrs in adj.items()}
        src, dst, w, floats = _native.edges_from_adjacency(adj, index, weight, float(default))
        if w is not None and (w.size == 0 or np.all(w == 1)):
            w = None
        directed = g.is_directed()
        wt, kind = _weights(w, src.size)
        # An undirected adjacency lists each edge both ways already: dedup drops the
        # copies the undirected build adds.
        native = _native.Graph.from_arrays(src, dst, len(nodes), directed, wt, kind, dedup=not directed)
        graph = cls(native, nodes, kind)
        graph._float_weights = floats
        if kind == "float":
            graph._exact_weights = bool(np.all(w >= 0) and np.array_equal(wt.view(np.float32).astype(np.float64), w))
        if w is not None:
            graph._positive_weights = bool(np.all(w > 0))
        # The adjacency comes grouped by source in id order; keep networkx's order of
        # each group only where it is not ours.
        if np.any((np.diff(dst.astype(np.int64)) < 0) & (np.diff(src) == 0)):
            offsets = np.zeros(len(nodes) + 1, dtype=np.uint64)
            np.cumsum(np.bincount(src, minlength=len(nodes)), out=offsets[1:])
            graph._neighbor_order = (offsets, dst)
        return graph

    def write(self, path: Union[str, os.PathLike], layout: Optional[str] = None, stripes: int = 1) -> None:
        """Writes the graph in the format its file name says (``.cgr``, ``.el``, ``.wel``,
        ...), or with ``layout="ssd"`` as an SSD layout (an index at ``path`` and
        ``stripes`` page files per side beside it) for ``engine="ssd"``."""
        self._g.write(os.fspath(path), layout, stripes)

    @property
    def n(self) -> int:
        return self._g.n

    @property
    def m(self) -> int:
        """Stored directed edges (an undirected edge counts twice)."""
        return self._g.m

    @property
    def directed(self) -> bool:
        return self._g.directed

    @property
    def weighted(self) -> bool:
        return self._g.weighted

    def csr(self) -> tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]:
        """The out-edges: offsets (n + 1), targets, weights as float64 or None."""
        return self._g.csr()

    def to_dict(self, values: np.ndarray) -> dict:
        """Per-vertex values keyed by node (networkx's names when it came from there)."""
        names: Iterable[Hashable] = self.nodes if self.nodes is not None else range(self.n)
        return dict(zip(names, values.tolist()))

    def vertex(self, node: Hashable) -> int:
        """The id of a node (the node itself unless the graph came from networkx): an
        integer from 0 to n - 1, never coerced (1.9, "2" and True are not ids, and -1
        is not the last vertex)."""
        if self.nodes is None:
            if isinstance(node, (bool, np.bool_)) or not isinstance(node, (int, np.integer)):
                raise ParameterError(f"node {node!r} is not a vertex id (an integer from 0 to {self.n - 1})")
            if not 0 <= int(node) < self.n:
                raise ParameterError(f"node {int(node)} is not in the graph (ids 0 to {self.n - 1})")
            return int(node)
        if not hasattr(self, "_index"):
            self._index = {v: i for i, v in enumerate(self.nodes)}
        try:
            return self._index[node]
        except KeyError:
            raise ParameterError(f"node {node!r} is not in the graph") from None

    def __repr__(self) -> str:
        return repr(self._g)


def read(path: Union[str, os.PathLike], format: Optional[str] = None, symmetrize: bool = False,
         dedup: bool = False, drop_self_loops: bool = False, mem_budget: Optional[int] = None,
         keep_id_range: bool = False, header: Optional[bool] = None) -> Graph:
    """Reads any input the CLI reads (edge lists, CSV, DIMACS, PACE, Matrix Market,
    SNAP, ``.cgr``; gzip), the format detected from the name and content unless given.
    Vertex ids are 0-based (a 1-based file's vertex 1 is 0). An edge list's vertices
    are the ids or labels that appear, as networkx reads them: where those are not
    0 .. n-1 (a SNAP file's ids with gaps, a CSV's ``alice,bob``), ``nodes`` holds
    them and every call takes and ``to_dict`` gives them; ``keep_id_range`` makes
    every id from 0 to the largest a vertex instead. ``header``: whether the first
    line is a header (default: decided for a CSV). An SSD layout
    (``Graph.write(..., layout="ssd")``, ``chatty convert --layout ssd``) is opened
    instead: its edges stay on disk and its kernels run on the SSD engine, within
    ``mem_budget`` bytes (default: the memory available)."""
    native = _native.Graph.read(os.fspath(path), format, symmetrize, dedup, drop_self_loops, mem_budget,
                                keep_id_range, header)
    return Graph(native, nodes=native.names, weight_kind=native.weight_type)


def run(g: Graph, algorithm: str, engine: str = "auto", threads: Optional[int] = None, **params: Any) -> tuple[np.ndarray, dict]:
    """Runs ``algorithm`` (bfs, sssp, pr, wcc, bc, spmv, tc, clustering, kcore, scc, lpa, eigenvector, katz, hits, degree, closeness, louvain, leiden) and returns (answer, report), hits's answer a tuple (hubs, authorities):
    the report is ``chatty run --json``'s object. ``engine``: auto (the SSD engine for
    an SSD layout; else a GPU when one is usable and either this process has started it
    or the work is over 16 M edges, BC's counted once per source, since a GPU's start
    costs about 0.4 s once per process; else the CPU), cpu, gpu or ssd (an SSD layout only);
    ``threads``: CPU threads (default: every core). With ``parents=True`` (bfs, sssp)
    it returns (answer, report, parents): see ``predecessors``."""
    answer, report, parents = _native.run(g._g, algorithm, engine, threads, **params)
    return (answer, report, parents) if params.get("parents") else (answer, report)


def bfs(g: Graph, source: int, *, engine: str = "auto", threads: Optional[int] = None) -> np.ndarray:
    """Hop distances from ``source`` (int64; -1 where unreachable)."""
    return run(g, "bfs", engine, threads, source=g.vertex(source))[0]


def bfs_edges(g: Graph, source: int, depth_limit: Optional[int] = None, *, engine: str = "auto",
              threads: Optional[int] = None) -> tuple[np.ndarray, np.ndarray]:
    """The BFS tree from ``source`` as (parents, children) arrays, in the order a
    queue-based BFS visits its edges (networkx's ``bfs_edges``: level by level,
    neighbours in the order networkx lists them for a graph from networkx), down to
    ``depth_limit`` levels. The depths come from the engine; the order from one pass."""
    s = g.vertex(source)
    if not 0 <= s < g.n:
        raise ParameterError(f"source {source} is not a vertex (the graph has {g.n})")
    limit = g.n if depth_limit is None else max(0, min(int(depth_limit), g.n))
    depths = run(g, "bfs", engine, threads, source=s)[0]
    order = g._neighbor_order or (None, None)
    return g._g.bfs_tree_edges(s, depths, limit, *order)


def sssp(g: Graph, source: int, *, delta: Optional[float] = None, engine: str = "auto",
         threads: Optional[int] = None) -> np.ndarray:
    """Shortest-path distances from ``source`` over the weights (float64; inf where
    unreachable); ``delta`` is delta-stepping's bucket width (default from the graph)."""
    return run(g, "sssp", engine, threads, source=g.vertex(source), delta=delta)[0]


def predecessors(g: Graph, source: int, *, weighted: bool = True, engine: str = "auto",
                 threads: Optional[int] = None) -> tuple[np.ndarray, np.ndarray]:
    """(distances, parents) from ``source``: ``sssp``'s distances over the weights, or
    with ``weighted=False`` (or an unweighted graph) ``bfs``'s hop counts, and each
    vertex's parent on a shortest path (int64: the smallest-id one where several are;
    the source is its own parent, -1 where unreachable)."""
    kernel = "sssp" if weighted and g.weighted else "bfs"
    dist, _, parents = run(g, kernel, engine, threads, source=g.vertex(source), parents=True)
    return dist, parents


def shortest_path(g: Graph, source: Hashable, target: Hashable, *, weighted: bool = True, engine: str = "auto",
                  threads: Optional[int] = None) -> list:
    """One shortest path from ``source`` to ``target``, as a list of nodes (networkx's
    ``shortest_path(G, source, target)``): the lightest, or the fewest edges with
    ``weighted=False``; where several are shortest, each vertex's smallest-id parent.
    Raises ``NoPathError`` when ``target`` is unreachable."""
    t = g.vertex(target)
    _, parents = predecessors(g, source, weighted=weighted, engine=engine, threads=threads)
    if parents[t] < 0:
        raise NoPathError(f"no path from {source!r} to {target!r}")
    path = [t]
    while parents[path[-1]] != path[-1]:
        path.append(int(parents[path[-1]]))
    names = g.nodes
    return [names[v] for v in reversed(path)] if names is not None else path[::-1]


def pagerank(g: Graph, alpha: float = 0.85, tol: float = 1e-6, max_iter: int = 100,
             personalization: Any = None, weighted: bool = False, *, engine: str = "auto",
             threads: Optional[int] = None) -> np.ndarray:
    """PageRank as networkx defines it: stops when the L1 change is below n * tol, or
    after max_iter iterations, when it raises ``ConvergenceError`` as networkx does (a
    ``RuntimeWarning`` says when the rule stopped it early while the scores still
    moved). ``personalization``: teleport weights, an array of n values or a dict
    keyed by node. ``weighted``: each vertex hands its score out in proportion to its
    out-edges' weights (networkx's ``weight='weight'``; CPU and SSD engines; weights
    must be non-negative)."""
    if isinstance(personalization, dict):
        p = np.zeros(g.n)
        for node, value in personalization.items():
            p[g.vertex(node)] = value
        personalization = p
    if personalization is not None:
        personalization = np.ascontiguousarray(personalization, dtype=np.float64)
    scores, report = run(g, "pr", engine, threads, damping=alpha, tol=tol, max_iter=max_iter, personalization=personalization,
                         weighted=weighted)
    if not report["result"].get("converged", True):
        raise ConvergenceError(report["caveat"])
    if report["caveat"]:
        warnings.warn(report["caveat"], RuntimeWarning, stacklevel=2)
    return scores


def wcc(g: Graph, *, engine: str = "auto", threads: Optional[int] = None) -> np.ndarray:
    """Weakly connected components: each vertex labelled with its component's smallest id."""
    return run(g, "wcc", engine, threads)[0]


def betweenness(g: Graph, sources: Union[None, int, str, Sequence[int]] = None, seed: Optional[int] = None,
                normalized: bool = False, weighted: bool = False, *, engine: str = "auto",
                threads: Optional[int] = None) -> np.ndarray:
    """Betweenness centrality (Brandes), scaled as networkx's ``betweenness_centrality``
    (endpoints excluded): from every vertex (``sources`` None or "all"), from
    ``sources`` vertices drawn at random from ``seed``, or from the vertices listed;
    undirected scores count each pair once; ``normalized`` divides by the (s, t)
    pairs. Sampled scores are rescaled as networkx 3.6 does. ``weighted``: shortest
    paths by weight, Dijkstra's (networkx's ``weight='weight'``; positive weights; CPU)."""
    n = g.n
    if sources is None or isinstance(sources, str):
        if sources not in (None, "all"):
            raise ParameterError(f"sources: a count, vertex ids or \"all\", not {sources!r}")
        listed = None
    elif isinstance(sources, (int, np.integer)):
        if not 0 < sources:
            raise ParameterError("sources: a positive count")
        listed = None if sources >= n else np.random.default_rng(seed).choice(n, int(sources), replace=False)
    else:
        listed = _ids(sources, "sources")
        if np.unique(listed).size != listed.size:
            raise ParameterError("sources: each vertex at most once")
    values = run(g, "bc", engine, threads, sources="all" if listed is None else listed, weighted=weighted)[0]
    return _rescale(values, n, normalized=normalized, directed=g.directed, sampled=listed)


def _rescale(values: np.ndarray, n: int, *, normalized: bool, directed: bool, sampled: Optional[np.ndarray]) -> np.ndarray:
    """networkx's ``_rescale`` for endpoints excluded, from the engines' scores (which
    halve an undirected graph's already, as ``betweenness_centrality_subset`` does):
    per (s, t) pair (normalized), sampled sources scaled apart from the rest."""
    pairs = n - 1
    if pairs < 2:
        return values
    # networkx's normalisation counts an undirected pair both ways.
    both_ways = 1 if directed else 2
    if sampled is None:
        if normalized:
            values *= both_ways / (pairs * (pairs - 1))
        return values
    k = sampled.size
    if normalized:
        source_scale = both_ways / ((k - 1) * (pairs - 1)) if k > 1 else math.nan
        other_scale = both_ways / (k * (pairs - 1))
    else:
        source_scale = pairs / (k - 1) if k > 1 else math.nan
        other_scale = pairs / k
    scale = np.full(n, other_scale)
    scale[sampled] = source_scale
    values *= scale
    return values


def spmv(g: Graph, x: Any = None, *, engine: str = "auto", threads: Optional[int] = None) -> np.ndarray:
    """y = A x: y[v] sums x[u] * w(u, v) over the in-edges of v (x: ones by default)."""
    if x is not None:
        x = np.ascontiguousarray(x, dtype=np.float64)
    return run(g, "spmv", engine, threads, x=x)[0]


def triangles(g: Graph, *, engine: str = "auto", threads: Optional[int] = None) -> np.ndarray:
    """The triangles on each vertex (int64; networkx's ``triangles``), of the undirected
    simple graph beneath ``g``: parallel edges and self-loops add none, and a directed
    graph counts as its symmetrised one. The graph's total is a third of the sum."""
    return run(g, "tc", engine, threads)[0]


def clustering(g: Graph, *, engine: str = "auto", threads: Optional[int] = None) -> np.ndarray:
    """The local clustering coefficient of each vertex of an undirected graph
    (networkx's ``clustering``, unweighted; its mean is ``average_clustering``)."""
    return run(g, "clustering", engine, threads)[0]


def core_number(g: Graph, *, engine: str = "auto", threads: Optional[int] = None) -> np.ndarray:
    """Each vertex's core number (int64; networkx's ``core_number``), with degrees of the
    simple graph: self-loops left out, in- plus out-degree on a directed graph. The
    vertices of the k-core are those whose core number is k or more."""
    return run(g, "kcore", engine, threads)[0]


def scc(g: Graph, *, engine: str = "auto", threads: Optional[int] = None) -> np.ndarray:
    """Strongly connected components: each vertex labelled with its component's
    smallest id (on an undirected graph, its connected component's)."""
    return run(g, "scc", engine, threads)[0]


def label_propagation(g: Graph, *, engine: str = "auto", threads: Optional[int] = None) -> np.ndarray:
    """Label propagation communities of an undirected graph, networkx's
    ``label_propagation_communities`` (semi-synchronous, over its greedy colouring)
    vertex for vertex: each vertex labelled with its community's smallest id."""
    return run(g, "lpa", engine, threads)[0]


def louvain(g: Graph, resolution: float = 1.0, threshold: float = 1e-7, max_level: Optional[int] = None,
            seed: Optional[int] = None, *, engine: str = "auto", threads: Optional[int] = None) -> tuple[np.ndarray, float]:
    """Louvain communities (networkx's ``louvain_communities``, directed graphs by
    directed modularity, weights summed over parallel edges): returns each vertex's
    community, labelled by its smallest id, and the partition's modularity at
    ``resolution``. Levels stop once one gains no more than ``threshold``, or after
    ``max_level``. Moves are decided in parallel over blocks of a ``seed``ed random
    order: the same seed gives the same partition on any thread count (where weights are
    integers), not networkx's."""
    labels, report = run(g, "louvain", engine, threads, resolution=resolution, threshold=threshold, max_level=max_level,
                         seed=seed)
    return labels, report["result"]["modularity"]


def leiden(g: Graph, resolution: float = 1.0, max_level: Optional[int] = None, seed: Optional[int] = None, *,
           engine: str = "auto", threads: Optional[int] = None) -> tuple[np.ndarray, float]:
    """Leiden communities (networkx's ``leiden_communities``, which networkx leaves to
    backends): Louvain with Traag's refinement, so every community is connected.
    Returns labels and modularity as ``louvain``."""
    labels, report = run(g, "leiden", engine, threads, resolution=resolution, max_level=max_level, seed=seed)
    return labels, report["result"]["modularity"]


def eigenvector_centrality(g: Graph, max_iter: int = 100, tol: float = 1e-6, *, engine: str = "auto",
                           threads: Optional[int] = None) -> np.ndarray:
    """Eigenvector centrality as networkx's ``eigenvector_centrality`` (unweighted):
    power iteration with A + I on the in-edges, unit L2 norm, stopping when the L1
    change is below n * tol; raises ``ConvergenceError`` after max_iter iterations
    without, as networkx raises ``PowerIterationFailedConvergence``."""
    scores, report = run(g, "eigenvector", engine, threads, tol=tol, max_iter=max_iter)
    if not report["result"].get("converged", True):
        raise ConvergenceError(report["caveat"])
    return scores


def katz_centrality(g: Graph, alpha: float = 0.1, beta: float = 1.0, max_iter: int = 1000, tol: float = 1e-6,
                    normalized: bool = True, *, engine: str = "auto", threads: Optional[int] = None) -> np.ndarray:
    """Katz centrality as networkx's ``katz_centrality`` (unweighted, scalar beta):
    from zeros, x = alpha * A^T x + beta until the L1 change is below n * tol, then
    scaled to unit L2 norm if ``normalized``; raises ``ConvergenceError`` after max_iter
    iterations without (alpha at or above 1/lambda_max diverges), as networkx raises
    ``PowerIterationFailedConvergence``."""
    scores, report = run(g, "katz", engine, threads, tol=tol, max_iter=max_iter, katz_alpha=alpha, katz_beta=beta,
                         normalized=normalized)
    if not report["result"].get("converged", True):
        raise ConvergenceError(report["caveat"])
    return scores


def hits(g: Graph, max_iter: int = 100, tol: float = 1e-8, weighted: bool = False, *, engine: str = "auto",
         threads: Optional[int] = None) -> tuple[np.ndarray, np.ndarray]:
    """HITS hubs and authorities as networkx's ``hits``, each summing to 1: power
    iteration on A^T A (``weighted``: A holds the edge weights, as networkx's adjacency
    matrix does) until the L1 change of the authorities scaled to a largest of 1 is
    below ``tol`` (networkx's ``_hits_scipy`` rule; ``hits`` itself runs ARPACK);
    raises ``ConvergenceError`` after max_iter iterations without. CPU."""
    (hubs, authorities), report = run(g, "hits", engine, threads, tol=tol / max(g.n, 1), max_iter=max_iter,
                                      weighted=weighted)
    if not report["result"].get("converged", True):
        raise ConvergenceError(report["caveat"])
    return hubs, authorities


def degree_centrality(g: Graph, kind: str = "total", *, engine: str = "auto", threads: Optional[int] = None) -> np.ndarray:
    """Degree centrality as networkx's ``degree_centrality`` (``kind="in"`` or ``"out"``:
    ``in_degree_centrality``, ``out_degree_centrality`` of a directed graph): the degree
    in networkx's simple graph over n - 1, a self-loop counted as networkx counts it."""
    return run(g, "degree", engine, threads, degree=kind)[0]


def closeness_centrality(g: Graph, wf_improved: bool = True, sources: Union[None, int, Sequence[int]] = None,
                         seed: Optional[int] = None, *, engine: str = "auto", threads: Optional[int] = None) -> np.ndarray:
    """Closeness centrality as networkx's ``closeness_centrality`` (hop distances into
    each vertex on a directed graph), exact: a BFS from every vertex. With ``sources``
    (a count drawn at random from ``seed`` among the vertices with out-edges, or vertex
    ids) it is estimated from their searches alone (Eppstein and Wang): a vertex that R
    of the K sources reach at total distance S gets R / S, times R·E / (K (n - 1)) with
    ``wf_improved`` (E the vertices with out-edges), exact when they are all E."""
    sampled = {}
    if sources is not None:
        if isinstance(sources, (int, np.integer)):
            if not 0 < sources:
                raise ParameterError("sources: a positive count")
            sampled["sources"] = int(sources)
        else:
            sampled["sources"] = _ids(sources, "sources")
    if seed is not None:
        sampled["seed"] = seed
    return run(g, "closeness", engine, threads, wf_improved=wf_improved, **sampled)[0]
