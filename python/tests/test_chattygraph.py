"""The chattygraph package against networkx (the independent reference) on generated
graphs and the shared datasets; bad input raises ChattyError. Under CI=true the
datasets must be present."""

import math
import os
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import chattygraph as cg

# The backend tests reuse networkx's converted-graph cache on purpose.
nx.config.warnings_to_ignore.add("cache")


def datasets():
    if "CHATTY_DATASETS" in os.environ:
        return Path(os.environ["CHATTY_DATASETS"])
    for d in [Path.cwd(), *Path.cwd().parents, *Path(__file__).resolve().parents]:
        for c in (d / "shared" / "datasets", d.parent / "shared" / "datasets"):
            if (c / "README.md").is_file():
                return c
    if os.environ.get("CI") in ("true", "1"):
        raise RuntimeError("CI=true but the shared datasets are missing (set CHATTY_DATASETS)")
    pytest.skip("shared datasets not found")


def weighted_digraph(n=300, p=0.02, seed=7):
    g = nx.gnp_random_graph(n, p, seed=seed, directed=True)
    rng = np.random.default_rng(seed)
    for u, v in g.edges:
        g[u][v]["weight"] = int(rng.integers(1, 20))
    return g


GRAPHS = {
    "karate": lambda: nx.karate_club_graph(),
    "digraph": weighted_digraph,
    "forest": lambda: nx.disjoint_union(nx.path_graph(40), nx.star_graph(9)),
}


@pytest.fixture(params=sorted(GRAPHS))
def pair(request):
    g = GRAPHS[request.param]()
    return g, cg.Graph.from_networkx(g)


def by_node(h, values):
    return h.to_dict(values)


def test_bfs_and_sssp_match_networkx(pair):
    g, h = pair
    source = next(iter(g))
    got = by_node(h, cg.bfs(h, source, engine="cpu"))
    want = nx.single_source_shortest_path_length(g, source)
    assert {v: d for v, d in got.items() if d >= 0} == want
    assert all(got[v] == -1 for v in g if v not in want)
    got = by_node(h, cg.sssp(h, source, engine="cpu"))
    want = nx.single_source_dijkstra_path_length(g, source)
    assert all(math.isclose(got[v], want[v]) for v in want)
    assert all(math.isinf(got[v]) for v in g if v not in want)


def test_pagerank_wcc_and_betweenness_match_networkx(pair):
    g, h = pair
    got = by_node(h, cg.pagerank(h, tol=1e-10, max_iter=1000, engine="cpu"))
    want = nx.pagerank(g, weight=None, tol=1e-10, max_iter=1000)
    # Both stop once an iteration changes less than n * tol: each is within a few
    # times that of the fixed point.
    assert sum(abs(got[v] - want[v]) for v in g) < 20 * len(g) * 1e-10
    labels = by_node(h, cg.wcc(h, engine="cpu"))
    comps = list(nx.weakly_connected_components(g) if g.is_directed() else nx.connected_components(g))
    assert len(set(labels.values())) == len(comps)
    assert all(len({labels[v] for v in c}) == 1 for c in comps)
    for normalized in (False, True):
        got = by_node(h, cg.betweenness(h, normalized=normalized, engine="cpu"))
        want = nx.betweenness_centrality(g, normalized=normalized, weight=None)
        assert all(math.isclose(got[v], want[v], rel_tol=1e-9, abs_tol=1e-9) for v in g), normalized


def test_personalized_pagerank_and_spmv():
    g = weighted_digraph()
    h = cg.Graph.from_networkx(g)
    favoured = {0: 1.0, 5: 3.0}
    got = by_node(h, cg.pagerank(h, personalization=favoured, tol=1e-12, max_iter=1000))
    want = nx.pagerank(g, personalization=favoured, weight=None, tol=1e-12, max_iter=1000)
    assert sum(abs(got[v] - want[v]) for v in g) < 1e-8
    x = np.arange(h.n, dtype=float)
    y = cg.spmv(h, x)
    a = nx.to_scipy_sparse_array(g, nodelist=h.nodes, weight="weight").T
    assert np.allclose(y, a @ x)


def test_weighted_pagerank_matches_networkx():
    # Integer weights, float weights (as f32: relative 6e-8 each), zero-weight edges
    # (their source dangles) and vertices without edges; directed and undirected. The
    # contributions are gathered as f32 (as unweighted): L1 within about 1e-8.
    g = weighted_digraph()
    floats = nx.gnp_random_graph(400, 0.02, seed=3)
    rng = np.random.default_rng(3)
    for a, b in floats.edges:
        floats[a][b]["weight"] = float(rng.choice([0.0, 0.25, 1.5, 3.75]))
    floats.add_nodes_from(range(400, 410))
    for graph, bound in ((g, 1e-7), (floats, 1e-6)):
        want = nx.pagerank(graph, tol=1e-12, max_iter=1000)
        h = cg.Graph.from_networkx(graph)
        got = by_node(h, cg.pagerank(h, tol=1e-12, max_iter=1000, weighted=True, engine="cpu"))
        assert sum(abs(got[v] - want[v]) for v in graph) < bound
        got = nx.pagerank(graph, tol=1e-12, max_iter=1000, backend="chatty")
        assert sum(abs(got[v] - want[v]) for v in graph) < bound
        unweighted = nx.pagerank(graph, weight=None, tol=1e-12, max_iter=1000)
        assert sum(abs(unweighted[v] - want[v]) for v in graph) > 1e-3


def test_float_weight_dijkstra_through_the_backend():
    # Float weights a 32-bit float holds exactly sum to networkx's f64 distances, bit
    # for bit; others (0.1) are declined, so networkx answers them itself.
    from chattygraph.nx import BackendInterface as B

    rng = np.random.default_rng(11)
    g = nx.gnp_random_graph(1500, 0.004, seed=11, directed=True)
    for u, v in g.edges:
        g[u][v]["weight"] = float(rng.choice([0.5, 0.25, 1.75, 3.125, 2.0 ** -20]))
    converted = B.convert_from_nx(g, edge_attrs={"weight": 1})
    assert converted.cg._exact_weights
    got = B.single_source_dijkstra_path_length(converted, 0)
    assert got == nx.single_source_dijkstra_path_length(g, 0)
    assert [type(got[v]) for v in sorted(got)] == [type(x) for _, x in sorted(nx.single_source_dijkstra_path_length(g, 0).items())]
    assert nx.single_source_dijkstra_path_length(g, 0, backend="chatty") == nx.single_source_dijkstra_path_length(g, 0)
    g[0][next(iter(g[0]))]["weight"] = 0.1
    inexact = B.convert_from_nx(g, edge_attrs={"weight": 1})
    with pytest.raises(NotImplementedError, match="32-bit float does not hold exactly"):
        B.single_source_dijkstra_path_length(inexact, 0)


def test_weighted_betweenness_matches_networkx():
    # Dijkstra's paths with ties (small integer weights make many), directed and
    # undirected, every source and networkx's own sample of k; float weights held
    # exactly; zero weights stay in networkx.
    g = weighted_digraph(n=400, p=0.015)
    for u, v in g.edges:
        g[u][v]["weight"] = g[u][v]["weight"] % 3 + 1
    u = g.to_undirected()
    for graph in (g, u):
        want = nx.betweenness_centrality(graph, weight="weight")
        got = by_node(cg.Graph.from_networkx(graph), cg.betweenness(cg.Graph.from_networkx(graph), normalized=True,
                                                                    weighted=True, engine="cpu"))
        assert all(math.isclose(got[v], want[v], rel_tol=1e-9, abs_tol=1e-12) for v in graph)
        got = nx.betweenness_centrality(graph, weight="weight", k=40, seed=5, backend="chatty")
        want = nx.betweenness_centrality(graph, weight="weight", k=40, seed=5)
        assert all(math.isclose(got[v], want[v], rel_tol=1e-9, abs_tol=1e-12) for v in graph)
    halves = nx.DiGraph(g)
    for a, b in halves.edges:
        halves[a][b]["weight"] = halves[a][b]["weight"] / 2
    got = nx.betweenness_centrality(halves, weight="weight", backend="chatty")
    want = nx.betweenness_centrality(halves, weight="weight")
    assert all(math.isclose(got[v], want[v], rel_tol=1e-9, abs_tol=1e-12) for v in g)
    from chattygraph.nx import BackendInterface as B

    halves[0][next(iter(halves[0]))]["weight"] = 0.0
    with pytest.raises(NotImplementedError, match="zero or negative"):
        B.betweenness_centrality(B.convert_from_nx(halves, edge_attrs={"weight": 1}), weight="weight")


def test_hits_matches_networkx():
    # networkx's hits finds the singular vectors by ARPACK; ours by power iteration
    # to a tighter stop: the same scores, weighted (networkx's default) or not.
    g = weighted_digraph(n=500, p=0.01)
    g.add_nodes_from(range(500, 505))
    h = cg.Graph.from_networkx(g)
    for weighted in (True, False):
        view = g if weighted else nx.DiGraph(g.edges)
        view.add_nodes_from(g)
        want_h, want_a = nx.hits(view, tol=1e-12, max_iter=1000)
        hubs, authorities = cg.hits(h, tol=1e-14, max_iter=10000, weighted=weighted, engine="cpu")
        for got, want in ((hubs, want_h), (authorities, want_a)):
            got = by_node(h, got)
            assert all(math.isclose(got[v], want[v], rel_tol=1e-6, abs_tol=1e-9) for v in g), weighted
    got_h, got_a = nx.hits(g, tol=1e-12, max_iter=10000, backend="chatty")
    want_h, want_a = nx.hits(g, tol=1e-12, max_iter=1000)
    assert all(math.isclose(got_a[v], want_a[v], rel_tol=1e-6, abs_tol=1e-9) for v in g)
    with pytest.raises(cg.ConvergenceError):
        cg.hits(cg.Graph.from_networkx(nx.path_graph(50)), max_iter=1)


def test_a_networkx_graph_scipy_and_arrays_build_the_same_graph():
    g = weighted_digraph()
    h = cg.Graph.from_networkx(g)
    a = nx.to_scipy_sparse_array(g, nodelist=h.nodes, weight="weight")
    s = cg.Graph.from_scipy(a)
    coo = a.tocoo()
    e = cg.Graph.from_edges(coo.row, coo.col, coo.data, n=h.n)
    for other in (s, e):
        for mine, theirs in zip(h.csr(), other.csr()):
            assert np.array_equal(mine, theirs)
    assert h.weighted and (h.n, h.m) == (g.number_of_nodes(), g.number_of_edges())
    u = cg.Graph.from_networkx(nx.karate_club_graph(), weight=None)
    assert not u.directed and u.m == 2 * 78


def test_float_weights_and_threads():
    g = nx.gnp_random_graph(200, 0.05, seed=3)
    rng = np.random.default_rng(3)
    for u, v in g.edges:
        g[u][v]["weight"] = float(rng.uniform(0.5, 2.0))
    h = cg.Graph.from_networkx(g)
    got = by_node(h, cg.sssp(h, 0, threads=1))
    want = nx.single_source_dijkstra_path_length(g, 0)
    # 32-bit float weights: sums agree to about 1e-6 relative.
    assert all(math.isclose(got[v], want[v], rel_tol=1e-5) for v in want)


def test_datasets_read_run_write_and_report(tmp_path):
    d = datasets()
    path = d / "social" / "wiki-Vote.txt.gz"
    h = cg.read(path)
    g = nx.read_edgelist(path, create_using=nx.DiGraph, nodetype=int)
    assert h.m == g.number_of_edges()
    # The vertices are the ids that appear, as networkx reads them; nodes names them.
    assert h.n == g.number_of_nodes() == 7115 and sorted(g) == h.nodes
    pr, report = cg.run(h, "pr", engine="cpu", tol=1e-10)
    assert report["engine"] == "cpu" and report["algorithm"] == "pr" and report["graph"]["n"] == h.n
    assert report["breakdown"][0]["kernel_seconds"] > 0
    assert report["result"]["top"][0][0] == 4037
    want = nx.pagerank(g, weight=None, tol=1e-10)
    assert sum(abs(score - want[v]) for v, score in h.to_dict(pr).items()) < 20 * h.n * 1e-10
    assert len(set(cg.wcc(h).tolist())) == nx.number_weakly_connected_components(g) == 24
    assert cg.bfs(h, 8297)[h.vertex(8297)] == 0
    with pytest.raises(cg.ParameterError):
        cg.bfs(h, 0)
    assert cg.read(path, keep_id_range=True).n == 8298
    h.write(tmp_path / "g.cgr")
    again = cg.read(tmp_path / "g.cgr")
    assert again.nodes == h.nodes
    for mine, theirs in zip(h.csr(), again.csr()):
        assert (mine is None and theirs is None) or np.array_equal(mine, theirs)
    people = tmp_path / "people.csv"
    people.write_text("source,target,weight\nalice,bob,2\nbob,carl,3.5\n")
    p = cg.read(people)
    assert p.nodes == ["alice", "bob", "carl"] and p.to_dict(cg.sssp(p, "alice")) == {"alice": 0, "bob": 2, "carl": 5.5}
    road = cg.read(d / "road" / "USA-road-NY.pace.gr.gz")
    dist = cg.sssp(road, 0, engine="cpu")
    assert np.isfinite(dist).sum() > 0.99 * road.n


def test_bad_input_raises_chatty_error(tmp_path):
    with pytest.raises(cg.ChattyError, match="integer vertex ids"):
        cg.Graph.from_edges([0.5], [1])
    with pytest.raises(cg.ChattyError, match="vertex ids must lie"):
        cg.Graph.from_edges([-1], [1])
    with pytest.raises(cg.ChattyError, match="not below n = 2"):
        cg.Graph.from_edges([0, 1], [1, 2], n=2)
    with pytest.raises(cg.ChattyError, match="2 sources but 1 targets"):
        cg.Graph.from_edges([0, 1], [1])
    with pytest.raises(cg.ChattyError, match="weights: expected 2 values"):
        cg.Graph.from_edges([0, 1], [1, 2], weights=[1.0])
    h = cg.Graph.from_edges([0, 1], [1, 2])
    with pytest.raises(cg.ChattyError, match="source"):
        cg.run(h, "bfs", source=7)
    with pytest.raises(cg.ChattyError, match="algorithm `nope`"):
        cg.run(h, "nope")
    with pytest.raises(cg.ChattyError, match="engine `tpu`"):
        cg.bfs(h, 0, engine="tpu")
    with pytest.raises(cg.ChattyError, match="threads"):
        cg.bfs(h, 0, threads=0)
    if cg.gpu_count() == 0:
        with pytest.raises(cg.ChattyError):
            cg.bfs(h, 0, engine="gpu")
        assert cg.bfs(h, 0, engine="cpu").tolist() == [0, 1, 2], "the graph survives a failed engine switch"
    bad = tmp_path / "bad.el"
    bad.write_text("0 1\n2 x\n")
    with pytest.raises(cg.ChattyError, match="bad.el:2"):
        cg.read(bad)
    with pytest.raises(cg.ChattyError):
        cg.read(tmp_path / "missing.el")
    with pytest.raises(cg.ChattyError, match="multigraphs"):
        cg.Graph.from_networkx(nx.MultiGraph([(0, 1)]))


def test_the_networkx_backend_answers_as_networkx_and_declines_what_it_cannot():
    g = weighted_digraph(n=2000, p=0.003)
    u = g.to_undirected()
    got = nx.pagerank(g, weight=None, backend="chatty")
    want = nx.pagerank(g, weight=None)
    assert sum(abs(got[v] - want[v]) for v in g) < 20 * len(g) * 1e-6
    assert nx.single_source_dijkstra_path_length(g, 0, backend="chatty") == nx.single_source_dijkstra_path_length(g, 0)
    # Float weights of integral value sum to floats, as in networkx (the source's own 0 an int).
    f = nx.DiGraph([(0, 1, {"weight": 2.0}), (1, 2, {"weight": 3.0}), (0, 3, {"weight": 1.0})])
    got, want = nx.single_source_dijkstra_path_length(f, 0, backend="chatty"), nx.single_source_dijkstra_path_length(f, 0)
    assert got == want and [type(got[v]) for v in sorted(got)] == [type(want[v]) for v in sorted(want)], (got, want)
    assert nx.single_source_shortest_path_length(g, 0, backend="chatty") == nx.single_source_shortest_path_length(g, 0)
    assert sorted(map(sorted, nx.connected_components(u, backend="chatty"))) == sorted(map(sorted, nx.connected_components(u)))
    assert nx.number_weakly_connected_components(g, backend="chatty") == nx.number_weakly_connected_components(g)
    got = nx.betweenness_centrality(u, backend="chatty")
    want = nx.betweenness_centrality(u)
    assert all(math.isclose(got[v], want[v], rel_tol=1e-9, abs_tol=1e-12) for v in u)
    from chattygraph.nx import BackendInterface as B

    converted = B.convert_from_nx(g, edge_attrs={"weight": 1})
    negative = nx.DiGraph([(0, 1, {"weight": 0.5}), (1, 0, {"weight": -1.0})])
    with pytest.raises(NotImplementedError, match="non-negative"):
        B.pagerank(B.convert_from_nx(negative, edge_attrs={"weight": 1}))
    # weight=None answers in hops on any conversion networkx hands over (it caches them).
    want = nx.single_source_dijkstra_path_length(g, 0, weight=None)
    for conversion in (converted, B.convert_from_nx(g)):
        assert B.single_source_dijkstra_path_length(conversion, 0, weight=None) == want
    for normalized in (False, True):
        got = nx.betweenness_centrality(u, k=50, seed=3, normalized=normalized, backend="chatty")
        want = nx.betweenness_centrality(u, k=50, seed=3, normalized=normalized)
        assert all(math.isclose(got[v], want[v], rel_tol=1e-9, abs_tol=1e-12) for v in u), "the same sample"
    with pytest.raises(NotImplementedError, match="endpoints"):
        B.betweenness_centrality(converted, endpoints=True)
    with pytest.raises(nx.NodeNotFound):
        B.single_source_shortest_path_length(converted, "nope")
    back = B.convert_to_nx(converted)
    assert nx.utils.edges_equal(back.edges(data="weight"), g.edges(data="weight"))
    assert B.should_run("pagerank", (nx.path_graph(10),), {}) is not True, "small graphs stay in networkx"


def test_bfs_edges_and_tree_follow_networkx_order():
    # Nodes and edges inserted in a shuffled order: networkx's neighbour order is not
    # ours (sorted ids), and bfs_edges must list edges in networkx's.
    rng = np.random.default_rng(11)
    base = nx.gnm_random_graph(1500, 6000, seed=5)
    nodes = [f"v{i}" for i in rng.permutation(1500)]
    edges = [(f"v{u}", f"v{v}") for u, v in base.edges]
    rng.shuffle(edges)
    for g in (nx.Graph(), nx.DiGraph()):
        g.add_nodes_from(nodes)
        g.add_edges_from(edges)
        for source in (nodes[0], nodes[7]):
            for limit in (None, 0, 1, 3):
                want = list(nx.bfs_edges(g, source, depth_limit=limit))
                assert list(nx.bfs_edges(g, source, depth_limit=limit, backend="chatty")) == want
            tree = nx.bfs_tree(g, source, backend="chatty")
            assert list(tree.edges) == list(nx.bfs_tree(g, source).edges) and source in tree
    h = cg.Graph.from_networkx(g)
    parents, children = cg.bfs_edges(h, nodes[0], depth_limit=2, engine="cpu")
    assert [(h.nodes[u], h.nodes[v]) for u, v in zip(parents, children)] == list(nx.bfs_edges(g, nodes[0], depth_limit=2))
    from chattygraph.nx import BackendInterface as B

    converted = B.convert_from_nx(g)
    with pytest.raises(NotImplementedError, match="sort_neighbors"):
        B.bfs_edges(converted, nodes[0], sort_neighbors=sorted)
    with pytest.raises(NotImplementedError, match="reverse"):
        B.bfs_tree(converted, nodes[0], reverse=True)
    with pytest.raises(nx.NetworkXError, match="not in the graph"):
        list(B.bfs_edges(converted, "nope"))
    with pytest.raises(cg.ChattyError):
        cg.bfs_edges(cg.Graph.from_edges([0], [1]), 5)


def test_paths_match_networkx_where_its_tie_rules_allow():
    from chattygraph.nx import BackendInterface as B

    # Weights from a wide range: ties between equally near predecessors are rare,
    # so networkx's heap order never decides and every call answers.
    g = weighted_digraph(n=1200, p=0.004, seed=21)
    rng = np.random.default_rng(4)
    for u, v in g.edges:
        g[u][v]["weight"] = int(rng.integers(1, 1_000_000))
    h = cg.Graph.from_networkx(g)
    dist, parents = cg.predecessors(h, 0, engine="cpu")
    want = nx.single_source_dijkstra_path_length(g, 0)
    for v in range(h.n):
        if v not in want:
            assert parents[v] == -1 and math.isinf(dist[v])
        elif v != 0:
            assert dist[parents[v]] + g[parents[v]][v]["weight"] == dist[v] == want[v]
    assert parents[0] == 0
    target = max(want, key=want.get)
    path = cg.shortest_path(h, 0, target)
    assert path == nx.shortest_path(g, 0, target, weight="weight")
    assert len(cg.shortest_path(h, 0, target, weighted=False)) - 1 == nx.shortest_path_length(g, 0, target)
    with pytest.raises(cg.NoPathError):
        cg.shortest_path(cg.Graph.from_edges([0], [1], n=3), 0, 2)

    converted = B.convert_from_nx(g, edge_attrs={"weight": 1})
    assert B.single_source_dijkstra_path(converted, 0) == nx.single_source_dijkstra_path(g, 0)
    assert B.single_source_dijkstra_path(converted, 0, cutoff=3_000_000) == nx.single_source_dijkstra_path(g, 0, cutoff=3_000_000)
    assert B.dijkstra_predecessor_and_distance(converted, 0) == nx.dijkstra_predecessor_and_distance(g, 0)
    for t in list(want)[:50]:
        assert B.shortest_path(converted, 0, t, weight="weight") == nx.shortest_path(g, 0, t, weight="weight")
    unreached = next(v for v in g if v not in want)
    with pytest.raises(nx.NetworkXNoPath):
        B.shortest_path(converted, 0, unreached, weight="weight")
    with pytest.raises(nx.NodeNotFound):
        B.shortest_path(converted, 0, "nope", weight="weight")
    # Hops, in networkx's visit order: names, both directednesses, cutoffs.
    for graph in (nx.relabel_nodes(g, {v: f"v{v}" for v in g}), nx.relabel_nodes(g.to_undirected(), {v: f"v{v}" for v in g})):
        plain = B.convert_from_nx(graph)
        for cutoff in (None, 0, 2):
            assert B.single_source_shortest_path(plain, "v0", cutoff) == nx.single_source_shortest_path(graph, "v0", cutoff)
        assert list(B.bfs_predecessors(plain, "v0", depth_limit=3)) == list(nx.bfs_predecessors(graph, "v0", depth_limit=3))
        assert B.shortest_path(plain, "v0") == nx.shortest_path(graph, "v0")
    # Equal weights tie everywhere: networkx's heap would decide, so the calls decline.
    ties = B.convert_from_nx(nx.grid_2d_graph(30, 30), edge_attrs={"weight": 1})
    with pytest.raises(NotImplementedError, match="equally near"):
        B.dijkstra_predecessor_and_distance(ties, (0, 0))
    with pytest.raises(NotImplementedError, match="several shortest paths"):
        B.shortest_path(ties, (0, 0), (29, 29), weight="weight")


def test_an_ssd_layout_runs_on_the_ssd_engine_and_answers_as_the_cpu(tmp_path):
    g = cg.Graph.from_networkx(weighted_digraph(n=1500, p=0.004))
    g.write(tmp_path / "g.ssd", layout="ssd", stripes=2)
    s = cg.read(tmp_path / "g.ssd", mem_budget=1 << 30)
    assert (s.n, s.m, s.directed, s.weighted) == (g.n, g.m, g.directed, g.weighted)
    assert np.array_equal(cg.bfs(s, 0, engine="ssd"), cg.bfs(g, 0, engine="cpu"))
    assert np.array_equal(cg.sssp(s, 0), cg.sssp(g, 0, engine="cpu"))
    for weighted in (True, False):
        streamed, in_memory = cg.predecessors(s, 0, weighted=weighted), cg.predecessors(g, 0, weighted=weighted, engine="cpu")
        assert all(np.array_equal(a, b) for a, b in zip(streamed, in_memory)), "the same tree: smallest-id parents"
    assert np.array_equal(cg.wcc(s), cg.wcc(g, engine="cpu"))
    assert np.abs(cg.pagerank(s) - cg.pagerank(g, engine="cpu")).sum() < 1e-9
    assert np.allclose(cg.betweenness(s, sources=10, seed=3), cg.betweenness(g, sources=10, seed=3, engine="cpu"))
    assert cg.run(s, "wcc")[1]["engine"] == "ssd"
    with pytest.raises(cg.ChattyError, match="SSD layout"):
        cg.bfs(s, 0, engine="cpu")
    with pytest.raises(cg.ChattyError, match="SSD layout"):
        s.csr()
    with pytest.raises(cg.ChattyError, match="engine='ssd' runs on an SSD layout"):
        cg.bfs(g, 0, engine="ssd")
    with pytest.raises(cg.ChattyError, match="needs"):
        cg.read(tmp_path / "g.ssd", mem_budget=1000)
    with pytest.raises(cg.ChattyError, match="layout `zip`"):
        g.write(tmp_path / "h.ssd", layout="zip")
    assert not (tmp_path / "h.ssd").exists()


def test_a_graph_stored_renumbered_reads_back_in_its_input_ids(tmp_path):
    chatty = Path(__file__).resolve().parents[2] / "target" / "release" / "chatty"
    if not chatty.is_file():
        if os.environ.get("CI") in ("true", "1"):
            raise RuntimeError("CI=true but target/release/chatty is missing (scripts/test builds it first)")
        pytest.skip("build the chatty binary first (cargo build --release)")
    import subprocess

    g = cg.Graph.from_networkx(nx.disjoint_union(weighted_digraph(n=400, p=0.01), weighted_digraph(n=50, p=0.05, seed=3)))
    g.write(tmp_path / "g.cgr")
    subprocess.run([chatty, "convert", tmp_path / "g.cgr", "-o", tmp_path / "d.cgr", "--reorder", "degree"], check=True, capture_output=True)
    d = cg.read(tmp_path / "d.cgr")
    for mine, theirs in zip(g.csr(), d.csr()):
        assert (mine is None and theirs is None) or np.array_equal(mine, theirs)
    assert np.array_equal(cg.bfs(d, 3), cg.bfs(g, 3))
    assert np.array_equal(cg.wcc(d), cg.wcc(g))
    assert np.abs(cg.pagerank(d) - cg.pagerank(g)).sum() < 1e-12


def _chatty_binary():
    chatty = Path(__file__).resolve().parents[2] / "target" / "release" / "chatty"
    if not chatty.is_file():
        if os.environ.get("CI") in ("true", "1"):
            raise RuntimeError("CI=true but target/release/chatty is missing (scripts/test builds it first)")
        pytest.skip("build the chatty binary first (cargo build --release)")
    return chatty


@pytest.mark.parametrize("threads", [1, 2])
def test_python_and_the_cli_give_the_same_answers_bit_for_bit(tmp_path, threads):
    """Both front ends open the engine through `chatty::open` and run the one harness:
    the same engine and parameters give the same bits (BC on several threads to
    rounding: its threads add their sources' scores in the order they finish)."""
    import subprocess

    chatty = _chatty_binary()
    g = cg.Graph.from_networkx(weighted_digraph(n=600, p=0.01))
    g.write(tmp_path / "g.cgr")
    runs = {
        "pr": ({}, ["--alpha", "0.9"], {"damping": 0.9}),
        "bfs": ({}, ["-r", "3"], {"source": 3}),
        "sssp": ({}, ["-r", "3"], {"source": 3}),
        "wcc": ({}, [], {}),
        "bc": ({}, ["--sources", "7", "--seed", "5"], {"sources": 7, "seed": 5}),
        "spmv": ({}, [], {}),
    }
    for alg, (_, flags, params) in runs.items():
        out = tmp_path / f"{alg}.txt"
        subprocess.run([chatty, "run", alg, tmp_path / "g.cgr", "--engine", "cpu", "--threads", str(threads), "-o", out, *flags],
                       check=True, capture_output=True)
        cli = [line.split()[1] for line in out.read_text().splitlines()]
        cli = np.array([float(x) for x in cli])
        mine, report = cg.run(g, alg, engine="cpu", threads=threads, **params)
        assert report["engine"] == "cpu" and report["devices"] == [f"cpu ({threads} threads)"], report
        if alg == "bfs":
            mine = mine.astype(float)
        if alg == "bc" and threads > 1:
            # Threads sum their sources' scores in the order they finish.
            assert np.allclose(cli, mine, rtol=1e-12, atol=0), alg
        else:
            assert np.array_equal(cli, mine), alg


def test_parameters_are_checked_as_the_cli_checks_them():
    g = cg.Graph.from_networkx(weighted_digraph(n=50, p=0.1))
    for alpha in (1.5, 0.0, 1.0, -0.2, float("nan")):
        with pytest.raises(cg.ParameterError, match="damping"):
            cg.pagerank(g, alpha=alpha)
        with pytest.raises(ValueError):
            cg.pagerank(g, alpha=alpha)
    with pytest.raises(cg.ParameterError, match="tolerance"):
        cg.pagerank(g, tol=float("nan"))
    with pytest.raises(cg.ParameterError, match="delta"):
        cg.sssp(g, 0, delta=float("inf"))
    with pytest.raises(cg.ParameterError, match="threads"):
        cg.pagerank(g, threads=0)
    # Capped at the stated multiple of the cores, with a warning, not 100,000 threads.
    with pytest.warns(RuntimeWarning, match="threads 100000 capped at"):
        scores, report = cg.run(g, "pr", engine="cpu", threads=100000)
    assert report["devices"] == [f"cpu ({4 * len(os.sched_getaffinity(0))} threads)"]
    assert abs(scores.sum() - 1) < 1e-6
    # RAYON_NUM_THREADS, which sizes the default pool, is held to the same cap.
    import subprocess
    import sys

    def imported_with(size):
        script = "import chattygraph as cg; print(cg.bfs(cg.Graph.from_edges([0, 1], [1, 2]), 0).tolist())"
        return subprocess.run([sys.executable, "-W", "always", "-c", script], env={**os.environ, "RAYON_NUM_THREADS": size},
                              capture_output=True, text=True, timeout=120)

    done = imported_with("100000")
    assert done.returncode == 0 and "[0, 1, 2]" in done.stdout and "RAYON_NUM_THREADS 100000 capped at" in done.stderr, done
    done = imported_with("many")
    assert done.returncode != 0 and "expected a thread count" in done.stderr, done


def test_pagerank_says_when_it_did_not_converge_or_stopped_early():
    g = cg.Graph.from_networkx(weighted_digraph(n=400, p=0.02))
    with pytest.raises(cg.ConvergenceError, match="did not converge in 2 iterations"):
        cg.pagerank(g, max_iter=2)
    with pytest.raises(ArithmeticError):
        cg.pagerank(g, max_iter=2)
    with pytest.warns(RuntimeWarning, match="stopped after 1 iterations by networkx's rule"):
        cg.pagerank(g, tol=1e-2)
    scores, report = cg.run(g, "pr", max_iter=2)
    assert report["result"]["converged"] is False and "did not converge" in report["caveat"]
    scores, report = cg.run(g, "pr", tol=1e-10, max_iter=1000)
    assert report["result"]["converged"] is True and report["caveat"] is None


def test_vertex_ids_are_never_coerced_and_odd_cutoffs_answer_as_networkx():
    g = cg.Graph.from_edges([0, 1, 2], [1, 2, 3])
    for node in (1.9, "2", -1, True, 4, np.float64(1.0)):
        with pytest.raises(cg.ParameterError, match="not"):
            cg.bfs(g, node)
    assert cg.bfs(g, np.int64(1)).tolist() == cg.bfs(g, 1).tolist()
    # Cutoffs that are numbers of at least 0 run here; the others are declined, so that
    # networkx answers them (with fallback on, as scripts/test runs its suite).
    d = weighted_digraph(n=200, p=0.02)
    for cutoff in (0, 2, 2.0, float("inf")):
        assert nx.single_source_shortest_path_length(d, 0, cutoff=cutoff, backend="chatty") == nx.single_source_shortest_path_length(
            d, 0, cutoff=cutoff
        )
    for cutoff in (0, 2, 2.5, 30.5, float("inf")):
        assert nx.single_source_dijkstra_path_length(d, 0, cutoff=cutoff, backend="chatty") == nx.single_source_dijkstra_path_length(
            d, 0, cutoff=cutoff
        )
    with pytest.raises(NotImplementedError):
        nx.single_source_shortest_path_length(d, 0, cutoff=2.5, backend="chatty")
    for cutoff in (-1, float("nan"), "3"):
        for function in (nx.single_source_shortest_path_length, nx.single_source_dijkstra_path_length):
            with pytest.raises(NotImplementedError):
                function(d, 0, cutoff=cutoff, backend="chatty")


def test_weights_that_do_not_fit_a_32_bit_float_are_refused():
    for bad in (1e39, -1e39, float("nan"), float("inf"), 1e-50):
        with pytest.raises(cg.ParameterError, match="32-bit float"):
            cg.Graph.from_edges([0, 1], [1, 2], weights=[0.5, bad])
    g = cg.Graph.from_edges([0, 1], [1, 2], weights=[0.5, 3e38])
    assert g.weight_kind == "float" and cg.sssp(g, 0)[2] == np.float32(0.5) + np.float32(3e38)


def test_errors_are_typed():
    g = cg.Graph.from_edges([0, 1], [1, 2])
    with pytest.raises(cg.UnsupportedError):
        cg.bfs(g, 0, engine="ssd")
    with pytest.raises(NotImplementedError):
        cg.bfs(g, 0, engine="ssd")
    with pytest.raises(cg.FileError):
        cg.read("/nonexistent/graph.el")
    with pytest.raises(OSError):
        cg.read("/nonexistent/graph.el")
    with pytest.raises(cg.ParameterError):
        cg.run(g, "nope")
    if cg.gpu_count() == 0:
        with pytest.raises(cg.DeviceError):
            cg.bfs(g, 0, engine="gpu")


def test_triangles_clustering_cores_and_strong_components_match_networkx():
    """The four structural kernels, through the package and through the backend, on
    graphs with string labels, self-loops and isolated nodes."""
    u = nx.powerlaw_cluster_graph(3000, 4, 0.3, seed=5)
    u.add_edge(7, 7)
    u.add_node("alone")
    h = cg.Graph.from_networkx(u)
    simple = u.copy()
    simple.remove_edges_from(list(nx.selfloop_edges(simple)))
    assert h.to_dict(cg.triangles(h)) == nx.triangles(u)
    want = nx.clustering(u)
    assert all(abs(c - want[v]) <= 1e-12 for v, c in h.to_dict(cg.clustering(h)).items())
    assert h.to_dict(cg.core_number(h)) == nx.core_number(simple)
    d = weighted_digraph(n=3000, p=0.0007)
    hd = cg.Graph.from_networkx(d)
    labels = hd.to_dict(cg.scc(hd))
    for comp in nx.strongly_connected_components(d):
        assert {labels[v] for v in comp} == {min(comp)}
    assert hd.to_dict(cg.core_number(hd)) == nx.core_number(d)
    assert hd.to_dict(cg.triangles(hd)) == nx.triangles(d.to_undirected())
    with pytest.raises(cg.UnsupportedError, match="directed"):
        cg.clustering(hd)
    # The backend: networkx's answers and answer shapes, its error for self-loops.
    assert nx.triangles(u, backend="chatty") == nx.triangles(u)
    assert nx.triangles(u, 0, backend="chatty") == nx.triangles(u, 0)
    assert nx.clustering(u, [0, 1, "alone"], backend="chatty") == nx.clustering(u, [0, 1, "alone"])
    assert nx.average_clustering(u, backend="chatty") == nx.average_clustering(u)
    assert nx.core_number(simple, backend="chatty") == nx.core_number(simple)
    with pytest.raises(nx.NetworkXNotImplemented, match="self loops"):
        nx.core_number(u, backend="chatty")
    got = list(nx.strongly_connected_components(d, backend="chatty"))
    assert sorted(map(sorted, got)) == sorted(map(sorted, nx.strongly_connected_components(d)))
    assert nx.number_strongly_connected_components(d, backend="chatty") == nx.number_strongly_connected_components(d)
    assert nx.is_strongly_connected(d, backend="chatty") == nx.is_strongly_connected(d)
    # Sinks first: networkx's condensation numbers the nodes in that order.
    position = {v: i for i, comp in enumerate(got) for v in comp}
    assert all(position[a] >= position[b] for a, b in d.edges)


def test_label_propagation_matches_networkx_vertex_for_vertex():
    from chattygraph.nx import BackendInterface as B

    with_loops = nx.gnm_random_graph(400, 1500, seed=9)
    with_loops.add_edges_from([(3, 3), (17, 17), (250, 250)])
    graphs = {
        "karate": nx.karate_club_graph(),
        "caveman": nx.connected_caveman_graph(12, 7),
        "forest": nx.disjoint_union(nx.path_graph(40), nx.star_graph(9)),
        "power-law": nx.barabasi_albert_graph(3000, 3, seed=2),
        "self-loops": with_loops,
        "isolated": nx.disjoint_union(nx.empty_graph(5), nx.cycle_graph(12)),
    }
    for name, g in graphs.items():
        want = sorted(sorted(c) for c in nx.community.label_propagation_communities(g))
        got = sorted(sorted(c) for c in B.label_propagation_communities(B.convert_from_nx(g)))
        assert got == want, name
        labels = cg.label_propagation(cg.Graph.from_networkx(g), engine="cpu")
        assert sorted(sorted(np.flatnonzero(labels == c).tolist()) for c in np.unique(labels)) == want, name
    with pytest.raises(nx.NetworkXNotImplemented):
        B.label_propagation_communities(B.convert_from_nx(nx.DiGraph([(0, 1)])))
    with pytest.raises(cg.UnsupportedError, match="undirected"):
        cg.label_propagation(cg.Graph.from_edges([0], [1]))


def test_eigenvector_centrality_matches_networkx():
    from chattygraph.nx import BackendInterface as B

    loops = nx.gnm_random_graph(300, 1200, seed=4)
    loops.add_edges_from([(1, 1), (7, 7)])
    graphs = {
        "karate": nx.karate_club_graph(),
        "digraph": nx.gnm_random_graph(500, 4000, seed=5, directed=True),
        "self-loops": loops,
        "isolated": nx.disjoint_union(nx.empty_graph(4), nx.complete_graph(6)),
        "bipartite path": nx.path_graph(50),
    }
    for name, g in graphs.items():
        try:
            want = nx.eigenvector_centrality(g)
        except nx.PowerIterationFailedConvergence:
            with pytest.raises(cg.ConvergenceError):
                cg.eigenvector_centrality(cg.Graph.from_networkx(g), engine="cpu")
            with pytest.raises(nx.PowerIterationFailedConvergence):
                B.eigenvector_centrality(B.convert_from_nx(g))
            continue
        got = B.eigenvector_centrality(B.convert_from_nx(g))
        top = max(want.values())
        assert all(abs(got[v] - want[v]) <= 1e-9 * top for v in g), name
    g = nx.path_graph(10)
    with pytest.raises(nx.PowerIterationFailedConvergence):
        B.eigenvector_centrality(B.convert_from_nx(g), max_iter=2)
    with pytest.raises(NotImplementedError, match="nstart"):
        B.eigenvector_centrality(B.convert_from_nx(g), nstart={0: 1})


def test_katz_centrality_matches_networkx():
    from chattygraph.nx import BackendInterface as B

    loops = nx.gnm_random_graph(300, 1200, seed=6)
    loops.add_edges_from([(1, 1), (7, 7)])
    graphs = {
        "karate": (nx.karate_club_graph(), 0.05),
        "digraph": (nx.gnm_random_graph(500, 4000, seed=7, directed=True), 0.05),
        "self-loops": (loops, 0.05),
        "isolated": (nx.disjoint_union(nx.empty_graph(4), nx.complete_graph(6)), 0.1),
        "diverges": (nx.complete_graph(30), 0.1),
    }
    for name, (g, alpha) in graphs.items():
        for beta, normalized in [(1.0, True), (0.3, False), (-2.0, True)]:
            try:
                want = nx.katz_centrality(g, alpha=alpha, beta=beta, normalized=normalized)
            except nx.PowerIterationFailedConvergence:
                with pytest.raises(cg.ConvergenceError, match="katz-alpha"):
                    cg.katz_centrality(cg.Graph.from_networkx(g), alpha=alpha, beta=beta, engine="cpu")
                with pytest.raises(nx.PowerIterationFailedConvergence):
                    B.katz_centrality(B.convert_from_nx(g), alpha=alpha, beta=beta)
                continue
            got = B.katz_centrality(B.convert_from_nx(g), alpha=alpha, beta=beta, normalized=normalized)
            top = max(abs(x) for x in want.values())
            assert all(abs(got[v] - want[v]) <= 1e-9 * top for v in g), (name, beta, normalized)
            exact = nx.katz_centrality_numpy(g, alpha=alpha, beta=beta, normalized=normalized)
            got = B.katz_centrality_numpy(B.convert_from_nx(g), alpha=alpha, beta=beta, normalized=normalized)
            assert all(abs(got[v] - exact[v]) <= 1e-9 * top for v in g), (name, beta, normalized)
    g = B.convert_from_nx(nx.path_graph(10))
    with pytest.raises(nx.PowerIterationFailedConvergence):
        B.katz_centrality(g, max_iter=2)
    with pytest.raises(nx.NetworkXError, match="every node"):
        B.katz_centrality(g, beta={0: 1.0})
    with pytest.raises(NotImplementedError, match="per node"):
        B.katz_centrality(g, beta=dict.fromkeys(range(10), 1.0))
    with pytest.raises(cg.ParameterError, match="katz_alpha"):
        cg.katz_centrality(cg.Graph.from_networkx(nx.path_graph(3)), alpha=float("nan"))


def test_degree_and_closeness_centrality_match_networkx():
    from chattygraph.nx import BackendInterface as B

    loops = nx.gnm_random_graph(200, 600, seed=8)
    loops.add_edges_from([(1, 1), (7, 7)])
    dloops = nx.gnm_random_graph(200, 900, seed=9, directed=True)
    dloops.add_edges_from([(3, 3), (4, 3), (3, 4)])
    graphs = {
        "karate": nx.karate_club_graph(),
        "self-loops": loops,
        "directed": dloops,
        "isolated": nx.disjoint_union(nx.empty_graph(4), nx.path_graph(6)),
        "one vertex": nx.empty_graph(1),
        "directed path": nx.path_graph(8, create_using=nx.DiGraph),
    }
    for name, g in graphs.items():
        G = B.convert_from_nx(g)
        assert B.degree_centrality(G) == nx.degree_centrality(g), name
        if g.is_directed():
            assert B.in_degree_centrality(G) == nx.in_degree_centrality(g), name
            assert B.out_degree_centrality(G) == nx.out_degree_centrality(g), name
        for wf in (True, False):
            assert B.closeness_centrality(G, wf_improved=wf) == nx.closeness_centrality(g, wf_improved=wf), (name, wf)
    with pytest.raises(NotImplementedError, match="one vertex"):
        B.closeness_centrality(B.convert_from_nx(nx.path_graph(3)), u=1)
    with pytest.raises(cg.ParameterError, match="degree `sideways`"):
        cg.degree_centrality(cg.Graph.from_networkx(nx.path_graph(3)), "sideways")


def test_sampled_closeness_estimates_networkx():
    g = nx.connected_watts_strogatz_graph(400, 6, 0.1, seed=3)
    G = cg.Graph.from_networkx(g)
    exact = nx.closeness_centrality(g)
    want = np.array([exact[v] for v in range(400)])
    # From every vertex: the exact values.
    assert np.array_equal(cg.closeness_centrality(G, sources=400), want)
    # From 64: an estimate, close to them, the same for a seed.
    estimate = cg.closeness_centrality(G, sources=64, seed=5)
    assert np.median(np.abs(estimate - want) / want) < 0.05
    assert np.array_equal(estimate, cg.closeness_centrality(G, sources=64, seed=5))
    with pytest.raises(cg.ParameterError, match="positive count"):
        cg.closeness_centrality(G, sources=0)


def test_eigenvector_centrality_numpy_matches_networkx():
    from chattygraph.nx import BackendInterface as B

    strongly = nx.gnm_random_graph(300, 3000, seed=10, directed=True)
    strongly = strongly.subgraph(max(nx.strongly_connected_components(strongly), key=len)).copy()
    for name, g in {"karate": nx.karate_club_graph(), "cycle": nx.cycle_graph(9), "strongly connected": strongly}.items():
        want = nx.eigenvector_centrality_numpy(g)
        got = B.eigenvector_centrality_numpy(B.convert_from_nx(g))
        assert all(abs(got[v] - want[v]) <= 1e-9 for v in g), name
    with pytest.raises(nx.AmbiguousSolution):
        B.eigenvector_centrality_numpy(B.convert_from_nx(nx.disjoint_union(nx.path_graph(3), nx.path_graph(3))))
    with pytest.raises(nx.NetworkXPointlessConcept):
        B.eigenvector_centrality_numpy(B.convert_from_nx(nx.Graph()))


def test_iterations_on_an_empty_graph_converge_at_once():
    empty = cg.Graph.from_edges([], [], n=0)
    assert len(cg.eigenvector_centrality(empty, engine="cpu")) == 0
    assert len(cg.katz_centrality(empty, engine="cpu")) == 0


def _community_graphs():
    """Graphs with known community structure, undirected and directed, weighted, with
    isolated vertices and self-loops."""
    lfr = nx.LFR_benchmark_graph(250, 3, 1.5, 0.009, average_degree=5, min_community=20, seed=10)
    lfr = nx.Graph(lfr)
    planted = nx.planted_partition_graph(8, 40, 0.3, 0.02, seed=3)
    weighted = nx.karate_club_graph()
    weighted.add_nodes_from(range(34, 40))  # isolated
    weighted.add_edge(5, 5, weight=3)
    directed = nx.DiGraph(nx.gn_graph(300, seed=1234))
    caveman = nx.relaxed_caveman_graph(20, 8, 0.1, seed=7).to_directed()
    return [("lfr", lfr, None), ("planted", planted, None), ("karate weighted", weighted, "weight"),
            ("gn directed", directed, None), ("caveman directed", caveman, None)]


@pytest.mark.parametrize("method", ["louvain", "leiden"])
def test_communities_reach_networkx_modularity(method):
    for name, G, weight in _community_graphs():
        if method == "leiden" and G.is_directed():
            continue
        g = cg.Graph.from_networkx(G, weight=weight)
        ours = sorted(getattr(cg, method)(g, seed=s)[1] for s in range(5))
        labels, q = getattr(cg, method)(g, seed=5)
        members: dict = {}
        for node, label in zip(G.nodes, labels.tolist()):
            members.setdefault(label, set()).add(node)
        partition = list(members.values())
        assert nx.community.is_partition(G, partition)
        assert q == pytest.approx(nx.community.modularity(G, partition, weight=weight), rel=1e-9, abs=1e-12), name
        if method == "leiden":
            assert all(nx.is_connected(G.subgraph(c)) for c in partition), name
        # Both are randomised: the medians of five seeds.
        theirs = sorted(nx.community.modularity(G, nx.community.louvain_communities(G, weight=weight, seed=s), weight=weight)
                        for s in range(5))
        assert ours[2] >= theirs[2] - 1e-9, f"{name}: {ours} against networkx's {theirs}"


def test_communities_parameters_and_determinism():
    G = nx.planted_partition_graph(8, 40, 0.3, 0.02, seed=3)
    g = cg.Graph.from_networkx(G)
    one, q1 = cg.louvain(g, seed=11, threads=1)
    two, q2 = cg.louvain(g, seed=11, threads=2)
    assert (one == two).all() and q1 == q2
    coarse = len(set(cg.louvain(g, resolution=0.2, seed=1)[0].tolist()))
    fine = len(set(cg.louvain(g, resolution=5.0, seed=1)[0].tolist()))
    assert coarse < fine
    with pytest.raises(cg.ParameterError):
        cg.louvain(g, max_level=0)
    with pytest.raises(cg.ParameterError):
        cg.leiden(g, resolution=-1.0)
    labels, q = cg.louvain(cg.Graph.from_edges([], [], n=5))
    assert labels.tolist() == [0, 1, 2, 3, 4] and q == 0.0
