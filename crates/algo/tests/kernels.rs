//! Every kernel against its sequential reference: edge cases, generated graphs and
//! every dataset, through every strategy the engine can pick.

use chatty_algo::edge_map::{EdgeMapOptions, EdgeOp, Edges, SumOptions};
use chatty_algo::frontier::Frontier;
use chatty_algo::{
    paths, pick_sources, run_kernel, verify, Algorithm, BcSources, Direction, EdgeMapGraph, Error, Output, Params, PrMethod, PrParams,
};
use chatty_graph::{
    datasets, from_edges, from_weighted_edges, generate, read_graph, GenOptions, Graph, NoProgress, ReadOptions, WeightType,
};

/// The in-memory graph seen as an engine that only streams (as the SSD engine
/// does): no adjacency to hand out, so every kernel takes its edge-map strategy.
struct Streaming<'a>(&'a Graph);

impl EdgeMapGraph for Streaming<'_> {
    fn num_vertices(&self) -> usize {
        self.0.num_vertices()
    }
    fn num_edges(&self) -> u64 {
        self.0.num_edges()
    }
    fn is_directed(&self) -> bool {
        self.0.is_directed()
    }
    fn weight_type(&self) -> WeightType {
        self.0.weight_type()
    }
    fn out_offsets(&self) -> &[u64] {
        self.0.out_edges().offsets()
    }
    fn csr(&self) -> Option<&Graph> {
        None
    }
    fn edge_map<O: EdgeOp>(&self, edges: Edges, frontier: Frontier, op: &O, opts: EdgeMapOptions) -> Result<Frontier, Error> {
        self.0.edge_map(edges, frontier, op, opts)
    }
    fn sum_in<S, T, R, F, A>(&self, out: &mut [T], opts: SumOptions, source: &[S], value: F, finish: A) -> Result<R, Error>
    where
        S: Sync,
        T: Send,
        R: Send + std::iter::Sum<R>,
        F: Fn(&S, u32) -> f64 + Sync + Copy,
        A: Fn(u32, f64, &mut T) -> R + Sync + Copy,
    {
        self.0.sum_in(out, opts, source, value, finish)
    }
}

/// One trial on `g` (sources picked as the harness does); returns the output and sources.
fn run_on<G: EdgeMapGraph + ?Sized>(alg: Algorithm, g: &G, p: &Params, trial: u64) -> Result<(Output, Vec<u32>), Error> {
    let sources = if alg.starts_from_sources(p) {
        pick_sources(alg, g.num_vertices(), |v| g.out_degree(v), g.num_edges() > 0, p, trial)?
    } else {
        Vec::new()
    };
    let (output, _, _) = run_kernel(g, alg, p, &sources, &NoProgress)?;
    Ok((output, sources))
}

fn run(alg: Algorithm, g: &Graph, p: &Params, trial: u64) -> Result<(Output, Vec<u32>), Error> {
    run_on(alg, g, p, trial)
}

/// Runs every kernel on `g` (BFS in each direction, several sources) and checks it.
fn check_all(label: &str, g: Graph) {
    check_trials(label, g, 2)
}

/// [`check_all`] with `trials` sources per kernel, through both strategies (in
/// memory and streaming). SSSP on a graph with negative weights must refuse to run.
fn check_trials(label: &str, g: Graph, trials: u64) {
    let g = g.with_in_edges();
    for alg in Algorithm::ALL {
        // Closeness searches from every vertex (n × m work, the reference as much again):
        // the datasets of up to a few billion edge visits check it.
        if alg == Algorithm::Closeness && g.num_vertices() as u64 * g.num_edges() > 2_000_000_000 {
            continue;
        }
        if matches!(alg, Algorithm::Louvain | Algorithm::Leiden) && chatty_algo::sssp::check_weights(&g).is_err() {
            assert!(
                matches!(run(alg, &g, &Params::default(), 0), Err(Error::Unsupported(_))),
                "{label}: {} on negative weights",
                alg.name()
            );
            continue;
        }
        if alg == Algorithm::Sssp && chatty_algo::sssp::check_weights(&g).is_err() {
            assert!(matches!(run(alg, &g, &Params::default(), 0), Err(Error::NegativeWeight(_))), "{label}");
            assert!(matches!(run_on(alg, &Streaming(&g), &Params::default(), 0), Err(Error::NegativeWeight(_))), "{label} streaming");
            continue;
        }
        let directions: &[Direction] =
            if alg == Algorithm::Bfs { &[Direction::Auto, Direction::Push, Direction::Pull] } else { &[Direction::Auto] };
        for &direction in directions {
            let p = Params { direction, ..Params::default() };
            for trial in 0..trials {
                let check = |how: &str, r: Result<(Output, Vec<u32>), Error>| {
                    let (output, sources) = r.unwrap_or_else(|e| panic!("{label} {} {how}: {e}", alg.name()));
                    if let Err(e) = verify(alg, &g, &p, &sources, &output) {
                        panic!("{label}: {} {how} ({direction:?}, trial {trial}) differs from the reference: {e}", alg.name());
                    }
                    if matches!(alg, Algorithm::Bfs | Algorithm::Sssp) {
                        let tree = paths::parents(&g, sources[0], &output).unwrap_or_else(|e| panic!("{label} {} {how}: {e}", alg.name()));
                        paths::verify(&g, sources[0], &output, &tree)
                            .unwrap_or_else(|e| panic!("{label} {} {how} parents: {e}", alg.name()));
                        let streamed = paths::parents(&Streaming(&g), sources[0], &output).unwrap();
                        assert_eq!(streamed, tree, "{label} {} {how}: the same tree streamed", alg.name());
                    }
                };
                if matches!(alg, Algorithm::Clustering | Algorithm::Lpa) && g.is_directed() {
                    assert!(matches!(run(alg, &g, &p, trial), Err(Error::Unsupported(_))), "{label}: {} on a directed graph", alg.name());
                    continue;
                }
                check("in memory", run(alg, &g, &p, trial));
                match alg.reads_lists() {
                    // They read adjacency lists at random: a streaming engine has none.
                    true => assert!(matches!(run_on(alg, &Streaming(&g), &p, trial), Err(Error::Unsupported(_))), "{label}"),
                    false => check("streaming", run_on(alg, &Streaming(&g), &p, trial)),
                }
            }
        }
    }
}

#[test]
fn tiny_and_degenerate_graphs() {
    check_all("one vertex", from_edges(1, &[], true).unwrap());
    check_all("one self-loop", from_edges(1, &[(0, 0)], false).unwrap());
    check_all("isolated vertices", from_edges(6, &[(1, 2)], true).unwrap());
    check_all("self-loops and parallel edges", from_edges(4, &[(0, 1), (0, 1), (1, 1), (1, 2), (2, 0), (2, 0), (3, 3)], true).unwrap());
    check_all("two components, undirected", from_edges(7, &[(0, 1), (1, 2), (4, 5), (5, 6), (6, 4)], false).unwrap());
    check_all("two components, directed", from_edges(7, &[(0, 1), (2, 1), (4, 5), (6, 5)], true).unwrap());
    check_all(
        "weighted with ties",
        from_weighted_edges(5, &[(0, 1, 2), (0, 2, 1), (2, 1, 1), (1, 3, 0), (3, 4, 5), (2, 4, 7)], true).unwrap(),
    );
}

/// Label propagation on graphs whose networkx answer is known: two triangles joined
/// by an edge are two communities, a star is one, lone vertices keep their own.
#[test]
fn lpa_known_answers() {
    let lpa = |n: usize, edges: &[(u32, u32)]| {
        let g = from_edges(n, edges, false).unwrap();
        let (output, _) = run(Algorithm::Lpa, &g, &Params::default(), 0).unwrap();
        verify(Algorithm::Lpa, &g, &Params::default(), &[], &output).unwrap();
        output
    };
    assert_eq!(lpa(6, &[(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 5), (5, 3)]), Output::Labels(vec![0, 0, 0, 3, 3, 3]));
    assert_eq!(lpa(5, &[(0, 1), (0, 2), (0, 3), (0, 4)]), Output::Labels(vec![0; 5]));
    assert_eq!(lpa(3, &[(1, 1)]), Output::Labels(vec![0, 1, 2]), "isolated vertices and a self-loop keep their own");
}

/// Zachary's karate club (networkx's `karate_club_graph`, unweighted).
const KARATE: &[(u32, u32)] = &[
    (0, 1),
    (0, 2),
    (0, 3),
    (0, 4),
    (0, 5),
    (0, 6),
    (0, 7),
    (0, 8),
    (0, 10),
    (0, 11),
    (0, 12),
    (0, 13),
    (0, 17),
    (0, 19),
    (0, 21),
    (0, 31),
    (1, 2),
    (1, 3),
    (1, 7),
    (1, 13),
    (1, 17),
    (1, 19),
    (1, 21),
    (1, 30),
    (2, 3),
    (2, 7),
    (2, 8),
    (2, 9),
    (2, 13),
    (2, 27),
    (2, 28),
    (2, 32),
    (3, 7),
    (3, 12),
    (3, 13),
    (4, 6),
    (4, 10),
    (5, 6),
    (5, 10),
    (5, 16),
    (6, 16),
    (8, 30),
    (8, 32),
    (8, 33),
    (9, 33),
    (13, 33),
    (14, 32),
    (14, 33),
    (15, 32),
    (15, 33),
    (18, 32),
    (18, 33),
    (19, 33),
    (20, 32),
    (20, 33),
    (22, 32),
    (22, 33),
    (23, 25),
    (23, 27),
    (23, 29),
    (23, 32),
    (23, 33),
    (24, 25),
    (24, 27),
    (24, 31),
    (25, 31),
    (26, 29),
    (26, 33),
    (27, 33),
    (28, 31),
    (28, 33),
    (29, 32),
    (29, 33),
    (30, 32),
    (30, 33),
    (31, 32),
    (31, 33),
    (32, 33),
];

/// Louvain and Leiden on graphs whose best partition is known: two triangles joined
/// by an edge, and Zachary's karate club, where networkx's Louvain
/// finds four communities of modularity 0.4188.
#[test]
fn communities_known_answers() {
    let run_method = |alg: Algorithm, g: &Graph| {
        let (output, _) = run(alg, g, &Params::default(), 0).unwrap();
        verify(alg, g, &Params::default(), &[], &output).unwrap_or_else(|e| panic!("{}: {e}", alg.name()));
        match output {
            Output::Communities { labels, modularity } => (labels, modularity),
            other => panic!("{other:?}"),
        }
    };
    let triangles = from_edges(6, &[(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 5), (5, 3)], false).unwrap();
    for alg in [Algorithm::Louvain, Algorithm::Leiden] {
        let (labels, q) = run_method(alg, &triangles);
        assert_eq!(labels, vec![0, 0, 0, 3, 3, 3], "{}", alg.name());
        assert!((q - 5.0 / 14.0).abs() < 1e-12, "{}: {q}", alg.name());
        let (labels, q) = run_method(alg, &from_edges(34, KARATE, false).unwrap());
        assert!(q > 0.4188 - 1e-9, "{} on karate: {q}", alg.name());
        assert_eq!(labels.iter().collect::<std::collections::HashSet<_>>().len(), 4, "{}", alg.name());
    }
}

#[test]
fn empty_graph_is_an_error_for_source_kernels_and_empty_for_the_rest() {
    let g = from_edges(0, &[], true).unwrap().with_in_edges();
    for alg in Algorithm::ALL {
        let r = run(alg, &g, &Params::default(), 0);
        if matches!(alg, Algorithm::Clustering | Algorithm::Lpa) {
            assert!(matches!(r, Err(Error::Unsupported(_))), "{} on a directed graph", alg.name());
        } else if alg.has_source() {
            assert!(matches!(r, Err(Error::NoVertices)));
        } else {
            let (output, _) = r.unwrap();
            assert!(output.is_empty(), "{}", alg.name());
        }
    }
}

#[test]
fn a_source_without_out_edges_reaches_only_itself() {
    let g = from_edges(4, &[(0, 1), (1, 2)], true).unwrap().with_in_edges();
    let p = Params { source: Some(3), ..Params::default() };
    let (output, _) = run(Algorithm::Bfs, &g, &p, 0).unwrap();
    assert_eq!(output, Output::Depths(vec![u32::MAX, u32::MAX, u32::MAX, 0]));
    let (output, sources) = run(Algorithm::Sssp, &g, &p, 0).unwrap();
    assert!(verify(Algorithm::Sssp, &g, &p, &sources, &output).is_ok());
    let bad = Params { source: Some(9), ..Params::default() };
    assert!(matches!(run(Algorithm::Bfs, &g, &bad, 0), Err(Error::NotAVertex { vertex: 9, n: 4 })));
}

#[test]
fn known_answers() {
    // Path 0-1-2-3: BC of the middle vertices, summed over all sources.
    let path = from_edges(4, &[(0, 1), (1, 2), (2, 3)], false).unwrap();
    let p = Params { bc_sources: BcSources::All, ..Params::default() };
    let (output, _) = run(Algorithm::Bc, &path, &p, 0).unwrap();
    assert_eq!(output, Output::Values(vec![0.0, 4.0, 4.0, 0.0]));
    // PageRank of a directed 3-cycle is uniform.
    let cycle = from_edges(3, &[(0, 1), (1, 2), (2, 0)], true).unwrap().with_in_edges();
    let (Output::Values(s), _) = run(Algorithm::Pr, &cycle, &Params::default(), 0).unwrap() else { panic!() };
    assert!(s.iter().all(|x| (x - 1.0 / 3.0).abs() < 1e-7), "{s:?}"); // f32 contributions
                                                                      // WCC labels are the smallest id of the component.
    let g = from_edges(5, &[(4, 3), (3, 1), (2, 0)], true).unwrap().with_in_edges();
    assert_eq!(run(Algorithm::Wcc, &g, &Params::default(), 0).unwrap().0, Output::Labels(vec![0, 1, 0, 1, 1]));
    // SSSP prefers two light edges over one heavy one.
    let w = from_weighted_edges(3, &[(0, 2, 10), (0, 1, 3), (1, 2, 4)], true).unwrap();
    let p = Params { source: Some(0), delta: Some(2.0), ..Params::default() };
    assert_eq!(run(Algorithm::Sssp, &w, &p, 0).unwrap().0, Output::Distances(chatty_algo::Distances::Int(vec![0, 3, 7])));
}

/// HITS on Langville and Meyer's example (networkx's test_hits: nodes 1..6 as 0..5),
/// weighted or not (unit weights), and its weights read when asked for.
#[test]
fn hits_known_answers() {
    let edges = [(1, 3), (1, 5), (2, 1), (3, 5), (5, 4), (5, 3), (6, 5)];
    let plain = from_edges(6, &edges.map(|(u, v)| (u - 1, v - 1)), true).unwrap().with_in_edges();
    let unit = from_weighted_edges(6, &edges.map(|(u, v)| (u - 1, v - 1, 1)), true).unwrap().with_in_edges();
    let p = Params { pr: PrParams { tolerance: 1e-12, ..PrParams::default() }, weighted: true, ..Params::default() };
    let want_a = [0.0, 0.0, 0.366025, 0.133975, 0.5, 0.0];
    let want_h = [0.366025, 0.0, 0.211325, 0.0, 0.211325, 0.211325];
    for g in [&plain, &unit] {
        let (Output::Hits { hubs, authorities }, _) = run(Algorithm::Hits, g, &p, 0).unwrap() else { panic!() };
        assert!(hubs.iter().zip(want_h).all(|(x, y)| (x - y).abs() < 1e-6), "{hubs:?}");
        assert!(authorities.iter().zip(want_a).all(|(x, y)| (x - y).abs() < 1e-6), "{authorities:?}");
    }
    // Doubling the edge 5 → 4 raises 4's authority when weighted, not otherwise.
    let heavy =
        from_weighted_edges(6, &edges.map(|(u, v)| (u - 1, v - 1, if (u, v) == (5, 4) { 2 } else { 1 })), true).unwrap().with_in_edges();
    let (Output::Hits { authorities, .. }, _) = run(Algorithm::Hits, &heavy, &p, 0).unwrap() else { panic!() };
    assert!(authorities[3] > want_a[3] + 0.01, "{authorities:?}");
    let unweighted = Params { weighted: false, ..p.clone() };
    let (Output::Hits { authorities, .. }, _) = run(Algorithm::Hits, &heavy, &unweighted, 0).unwrap() else { panic!() };
    assert!((authorities[3] - want_a[3]).abs() < 1e-6, "{authorities:?}");
}

#[test]
fn structural_kernels_known_answers() {
    let answer = |alg, g: &Graph| run(alg, g, &Params::default(), 0).unwrap().0;
    // K4 with a pendant vertex 4 on 3, a self-loop on 0 and a parallel edge 1-2.
    let g = from_edges(5, &[(0, 1), (0, 2), (0, 3), (1, 2), (1, 2), (1, 3), (2, 3), (3, 4), (0, 0)], false).unwrap().with_in_edges();
    assert_eq!(answer(Algorithm::Tc, &g), Output::Triangles(vec![3, 3, 3, 3, 0]));
    assert_eq!(answer(Algorithm::Clustering, &g), Output::Values(vec![1.0, 1.0, 1.0, 0.5, 0.0]));
    assert_eq!(answer(Algorithm::Kcore, &g), Output::Cores(vec![3, 3, 3, 3, 1]));
    assert_eq!(answer(Algorithm::Scc, &g), Output::Labels(vec![0, 0, 0, 0, 0]));
    // Directed: the cycle 0 → 1 → 2 → 0 with a chord back 1 → 0, a two-cycle 3 ⇄ 4
    // entered from 2, and 5 alone with a self-loop. One triangle (0, 1, 2) whatever the
    // directions; degrees are in plus out, so the pair 0 ⇄ 1 counts twice (and 4 ⇄ 3,
    // whose peeling at k = 2 takes everything but 5).
    let d = from_edges(6, &[(0, 1), (1, 2), (2, 0), (1, 0), (2, 3), (3, 4), (4, 3), (5, 5)], true).unwrap().with_in_edges();
    assert_eq!(answer(Algorithm::Tc, &d), Output::Triangles(vec![1, 1, 1, 0, 0, 0]));
    assert_eq!(answer(Algorithm::Scc, &d), Output::Labels(vec![0, 0, 0, 3, 3, 5]));
    assert_eq!(answer(Algorithm::Kcore, &d), Output::Cores(vec![2, 2, 2, 2, 2, 0]));
    // networkx's core_number
}

#[test]
fn generated_graphs() {
    let o = |seed, w: Option<u32>, undirected| GenOptions { seed, max_weight: w, undirected };
    check_all("rmat-12 directed", generate::rmat(12, 8, o(1, Some(255), false), &NoProgress).unwrap());
    check_all("rmat-12 undirected", generate::rmat(12, 8, o(2, Some(255), true), &NoProgress).unwrap());
    check_all("urand-12", generate::urand(12, 4, o(3, None, false), &NoProgress).unwrap());
    check_all("grid 60x40", generate::grid(60, 40, o(4, None, true), &NoProgress).unwrap());
}

#[test]
fn sssp_with_float_weights_and_several_deltas() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("f.wel");
    std::fs::write(&p, "0 1 0.5\n1 2 0.25\n0 2 1.0\n2 3 2.5\n3 0 0.1\n").unwrap();
    let g = read_graph(&p, ReadOptions::default(), &NoProgress).unwrap();
    let grid = generate::grid(30, 30, GenOptions { seed: 9, max_weight: Some(50), undirected: true }, &NoProgress).unwrap();
    for delta in [0.1, 1.0, 7.0, 1000.0] {
        for g in [&g, &grid] {
            let p = Params { delta: Some(delta), source: Some(0), ..Params::default() };
            let (output, sources) = run(Algorithm::Sssp, g, &p, 0).unwrap();
            verify(Algorithm::Sssp, g, &p, &sources, &output).unwrap_or_else(|e| panic!("delta {delta}: {e}"));
        }
    }
}

#[test]
fn bc_over_several_and_all_sources() {
    let g = generate::rmat(9, 4, GenOptions { seed: 5, max_weight: None, undirected: false }, &NoProgress).unwrap();
    for sources in [BcSources::Random(5), BcSources::All, BcSources::List(vec![3, 0, 17])] {
        let p = Params { bc_sources: sources.clone(), ..Params::default() };
        let (output, chosen) = run(Algorithm::Bc, &g, &p, 0).unwrap();
        verify(Algorithm::Bc, &g, &p, &chosen, &output).unwrap_or_else(|e| panic!("{sources:?}: {e}"));
        let mut unique = chosen.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), chosen.len(), "sources are drawn without replacement");
    }
    let listed = Params { bc_sources: BcSources::List(vec![3, 0, 17]), ..Params::default() };
    assert_eq!(run(Algorithm::Bc, &g, &listed, 0).unwrap().1, vec![3, 0, 17], "listed sources are taken as given");
    let beyond = Params { bc_sources: BcSources::List(vec![g.num_vertices() as u32]), ..Params::default() };
    assert!(run(Algorithm::Bc, &g, &beyond, 0).is_err(), "a listed source must be a vertex");
    let too_many = Params { bc_sources: BcSources::Random(g.num_vertices() + 1), ..Params::default() };
    let (_, chosen) = run(Algorithm::Bc, &g, &too_many, 0).unwrap();
    let with_edges = (0..g.num_vertices() as u32).filter(|&v| g.out_edges().degree(v) > 0).count();
    assert_eq!(chosen.len(), with_edges, "more sources than vertices with out-edges takes them all");
}

/// One thread takes shortcuts (BFS, BC, SSSP and WCC write with plain stores, no
/// compare-and-swap): every kernel in a pool of one still gets the reference's answers.
#[test]
fn every_kernel_in_a_pool_of_one_thread() {
    let o = |seed, max_weight, undirected| GenOptions { seed, max_weight, undirected };
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    pool.install(|| {
        check_all("rmat-12 weighted, one thread", generate::rmat(12, 8, o(11, Some(255), false), &NoProgress).unwrap());
        check_all("grid 80x50 weighted, one thread", generate::grid(80, 50, o(12, Some(100), true), &NoProgress).unwrap());
    });
}

/// WCC's links race (compare-and-swap on roots, path halving with plain stores on
/// the others): many more threads than cores interleave them, and every run still
/// gets the reference's components.
#[test]
fn wcc_with_more_threads_than_cores() {
    let o = |seed, undirected| GenOptions { seed, max_weight: None, undirected };
    let graphs = [
        ("rmat-15", generate::rmat(15, 16, o(21, true), &NoProgress).unwrap()),
        ("rmat-13 directed", generate::rmat(13, 4, o(22, false), &NoProgress).unwrap().with_in_edges()),
        ("urand-15", generate::urand(15, 8, o(23, true), &NoProgress).unwrap()),
        ("grid 600x400", generate::grid(600, 400, o(24, true), &NoProgress).unwrap()),
    ];
    let pool = rayon::ThreadPoolBuilder::new().num_threads(12).build().unwrap();
    for (label, g) in &graphs {
        for trial in 0..10 {
            let (output, chosen) = pool.install(|| run(Algorithm::Wcc, g, &Params::default(), trial)).unwrap();
            verify(Algorithm::Wcc, g, &Params::default(), &chosen, &output).unwrap_or_else(|e| panic!("{label}, run {trial}: {e}"));
        }
    }
}

/// A few sources on a deep graph (a long grid: thousands of small levels) run one per
/// thread in a pool of two or more, and get the reference's scores.
#[test]
fn bc_from_a_few_sources_on_a_deep_graph() {
    let g = generate::grid(3000, 3, GenOptions { seed: 6, max_weight: None, undirected: true }, &NoProgress).unwrap();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    for sources in [vec![0], vec![0, 4500], vec![8999, 1, 3000, 6001]] {
        let p = Params { bc_sources: BcSources::List(sources.clone()), ..Params::default() };
        let (output, chosen) = pool.install(|| run(Algorithm::Bc, &g, &p, 0)).unwrap();
        verify(Algorithm::Bc, &g, &p, &chosen, &output).unwrap_or_else(|e| panic!("{sources:?}: {e}"));
    }
}

#[test]
fn every_kernel_on_every_dataset() {
    let Some(dir) = datasets::for_test() else { return };
    let files = [
        "road/USA-road-NY.pace.gr.gz",
        "road/USA-road-BAY.pace.gr.gz",
        "road/USA-road-COL.pace.gr.gz",
        "road/USA-road-FLA.pace.gr.gz",
        "road/USA-road-NW.pace.gr.gz",
        "road/USA-road-NE.pace.gr.gz",
        "road/bremen-osm-d.gr.gz",
        "road/bremen-osm-t.gr.gz",
        "road/moscow-osm.gr.gz",
        "social/soc-Slashdot0902.el.gz",
        "social/ego-Twitter.undirected.el.gz",
        "social/email-Enron.el.gz",
        "social/cit-HepPh.el.gz",
        "social/wiki-Vote.txt.gz",
        "web/cnr-2000.el.gz",
        "matrix/bcsstk13.mtx.gz",
    ];
    for f in files {
        let g = read_graph(&dir.join(f), ReadOptions::default(), &NoProgress).unwrap();
        check_trials(f, g, 1);
    }
}

#[test]
fn component_counts_match_the_datasets_readme() {
    let Some(dir) = datasets::for_test() else { return };
    // (file, components, largest); wiki-Vote's vertices are the 7,115 ids it uses.
    let expect = [
        ("road/bremen-osm-d.gr.gz", 343, 33_419),
        ("road/moscow-osm.gr.gz", 440, 404_060),
        ("social/email-Enron.el.gz", 1_065, 33_696),
        ("social/wiki-Vote.txt.gz", 24, 7_066),
        ("social/cit-HepPh.el.gz", 61, 0),
        ("social/soc-Slashdot0902.el.gz", 1, 82_168),
        ("web/cnr-2000.el.gz", 1, 325_557),
        ("road/USA-road-NE.pace.gr.gz", 1, 1_524_453),
    ];
    for (f, comps, largest) in expect {
        let g = read_graph(&dir.join(f), ReadOptions::default(), &NoProgress).unwrap().with_in_edges();
        let (Output::Labels(l), _) = run(Algorithm::Wcc, &g, &Params::default(), 0).unwrap() else { panic!() };
        let mut size = std::collections::HashMap::new();
        l.iter().for_each(|&c| *size.entry(c).or_insert(0usize) += 1);
        assert_eq!(size.len(), comps, "{f}");
        if f != "social/cit-HepPh.el.gz" {
            assert_eq!(*size.values().max().unwrap(), largest, "{f}");
        }
    }
}

/// The operators by themselves: push and pull reach the same vertices, and
/// vertex_map visits every member of a frontier once.
#[test]
fn program_model_operators() {
    use chatty_algo::edge_map::{edge_map, vertex_map, EdgeMapOptions, EdgeOp};
    use chatty_algo::frontier::Frontier;
    use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

    /// Marks every vertex reached, once.
    struct Reach(Vec<AtomicU32>);
    impl EdgeOp for Reach {
        fn cond(&self, v: u32) -> bool {
            self.0[v as usize].load(Relaxed) == 0
        }
        fn update(&self, _: u32, v: u32, _: u32) -> bool {
            self.0[v as usize].store(1, Relaxed);
            true
        }
        fn update_atomic(&self, _: u32, v: u32, _: u32) -> bool {
            self.0[v as usize].compare_exchange(0, 1, Relaxed, Relaxed).is_ok()
        }
    }
    let g = generate::rmat(10, 8, GenOptions { seed: 3, max_weight: None, undirected: false }, &NoProgress).unwrap().with_in_edges();
    let n = g.num_vertices();
    let mut reached = Vec::new();
    for direction in [Direction::Push, Direction::Pull] {
        let op = Reach((0..n).map(|_| AtomicU32::new(0)).collect());
        let mut next = edge_map(&g, Frontier::all(n), &op, EdgeMapOptions { direction, ..Default::default() });
        let mut ids = next.ids().to_vec();
        ids.sort();
        reached.push(ids);
    }
    assert_eq!(reached[0], reached[1]);
    let visits = AtomicU32::new(0);
    let mut all = Frontier::all(n);
    vertex_map(&mut all, |_| {
        visits.fetch_add(1, Relaxed);
    });
    assert_eq!(visits.into_inner() as usize, n);
}

/// The harness over the CPU engine: trials, verification, the report's summary.
#[test]
fn harness_runs_trials_and_verifies() {
    use chatty_algo::{harness, CpuEngine, Summary};
    let g = generate::grid(20, 10, GenOptions { seed: 1, max_weight: Some(9), undirected: true }, &NoProgress).unwrap();
    let mut cpu = CpuEngine::new(g);
    let opts = harness::Options { trials: 3, verify: true, against: None };
    let mut seen = 0;
    let r = harness::run(&mut cpu, Algorithm::Wcc, &Params::default(), &opts, |e| {
        assert!(e.verification.unwrap().is_ok());
        seen += 1;
    })
    .unwrap();
    assert_eq!(seen, 3);
    assert_eq!(r.trial_seconds.len(), 3);
    assert_eq!(r.last.output.summary(3), Summary::Components { count: 1, largest: vec![(0, 200)] });
    let r = harness::run(&mut cpu, Algorithm::Sssp, &Params { source: Some(0), ..Params::default() }, &opts, |_| {}).unwrap();
    assert!(r.params.delta.is_some(), "the default delta is resolved once");
    assert_eq!(r.verification, Some(Ok(())));
}

/// Long kernels say how far they are: BC per source, PageRank per iteration, BFS per
/// vertex reached, on both strategies.
#[test]
fn kernels_report_progress() {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    use std::sync::Mutex;
    #[derive(Default)]
    struct Recorded {
        phases: Mutex<Vec<(String, u64)>>,
        done: AtomicU64,
    }
    impl chatty_graph::Progress for Recorded {
        fn start(&self, message: &str, total: u64) {
            self.phases.lock().unwrap().push((message.to_string(), total));
            self.done.store(0, Relaxed);
        }
        fn advance(&self, delta: u64) {
            self.done.fetch_add(delta, Relaxed);
        }
    }
    let g = generate::rmat(9, 4, GenOptions { seed: 2, max_weight: None, undirected: true }, &NoProgress).unwrap();
    for streaming in [false, true] {
        let run = |alg, p: &Params, sources: &[u32], rec: &Recorded| {
            if streaming {
                run_kernel(&Streaming(&g), alg, p, sources, rec).unwrap()
            } else {
                run_kernel(&g, alg, p, sources, rec).unwrap()
            }
        };
        let rec = Recorded::default();
        run(Algorithm::Bc, &Params::default(), &[1, 2, 3, 4, 5], &rec);
        assert_eq!((rec.phases.lock().unwrap()[0].1, rec.done.load(Relaxed)), (5, 5));
        let rec = Recorded::default();
        let (_, iterations, _) = run(Algorithm::Pr, &Params::default(), &[], &rec);
        assert_eq!(rec.done.load(Relaxed), iterations);
        let rec = Recorded::default();
        let (Output::Depths(d), _, _) = run(Algorithm::Bfs, &Params::default(), &[1], &rec) else { panic!() };
        assert_eq!(rec.done.load(Relaxed), d.iter().filter(|&&x| x != u32::MAX).count() as u64);
    }
}

/// PageRank with a personalization (networkx's): both strategies match the reference,
/// and the teleport weights move the scores toward the favoured vertices.
#[test]
fn personalized_pagerank() {
    let g = generate::rmat(10, 6, GenOptions { seed: 8, max_weight: None, undirected: false }, &NoProgress).unwrap().with_in_edges();
    let n = g.num_vertices();
    let mut t = vec![0.0; n];
    t[3] = 2.0;
    t[700] = 1.0;
    let p = Params { personalization: Some(t), ..Params::default() };
    chatty_algo::check_params(Algorithm::Pr, n, &p).unwrap();
    let (personal, _) = run(Algorithm::Pr, &g, &p, 0).unwrap();
    verify(Algorithm::Pr, &g, &p, &[], &personal).unwrap();
    let (streamed, _) = run_on(Algorithm::Pr, &Streaming(&g), &p, 0).unwrap();
    verify(Algorithm::Pr, &g, &p, &[], &streamed).unwrap();
    let (uniform, _) = run(Algorithm::Pr, &g, &Params::default(), 0).unwrap();
    let (Output::Values(a), Output::Values(b)) = (&personal, &uniform) else { panic!() };
    assert!(a[3] > 2.0 * b[3] && a[700] > 2.0 * b[700], "{} vs {}, {} vs {}", a[3], b[3], a[700], b[700]);
    for bad in [vec![0.0; n], vec![1.0; n - 1], {
        let mut v = vec![1.0; n];
        v[0] = -1.0;
        v
    }] {
        assert!(chatty_algo::check_params(Algorithm::Pr, n, &Params { personalization: Some(bad), ..Params::default() }).is_err());
    }
}

/// Personalization weights anywhere in the finite range give the scores their
/// proportions give: two of 1e308 (whose sum overflows) as two of 1, one of 1e-320
/// (whose reciprocal overflows) as one of 1; and a score that is not a number never
/// passes verification, on any kernel that answers values.
#[test]
fn extreme_personalizations_normalise_and_nan_never_verifies() {
    let g = generate::rmat(9, 6, GenOptions { seed: 3, max_weight: None, undirected: true }, &NoProgress).unwrap();
    let n = g.num_vertices();
    let scores = |at: &[(usize, f64)]| {
        let mut t = vec![0.0; n];
        for &(v, w) in at {
            t[v] = w;
        }
        let p = Params { personalization: Some(t), ..Params::default() };
        chatty_algo::check_params(Algorithm::Pr, n, &p).unwrap();
        let (out, _) = run(Algorithm::Pr, &g, &p, 0).unwrap();
        verify(Algorithm::Pr, &g, &p, &[], &out).unwrap();
        let Output::Values(s) = out else { panic!() };
        s
    };
    assert_eq!(scores(&[(5, 1e308), (9, 1e308)]), scores(&[(5, 1.0), (9, 1.0)]));
    assert_eq!(scores(&[(5, 1e-320)]), scores(&[(5, 1.0)]));
    for s in [scores(&[(5, 1e308), (9, 1e308)]), scores(&[(5, 1e-320)])] {
        assert!(s.iter().all(|x| x.is_finite()) && (s.iter().sum::<f64>() - 1.0).abs() < 1e-6);
    }
    let (good, _) = run(Algorithm::Pr, &g, &Params::default(), 0).unwrap();
    let Output::Values(mut bad) = good else { panic!() };
    for poison in [f64::NAN, f64::INFINITY] {
        bad[17] = poison;
        for alg in [Algorithm::Pr, Algorithm::Bc, Algorithm::Spmv] {
            let e = verify(alg, &g, &Params::default(), &[0], &Output::Values(bad.clone())).unwrap_err().to_string();
            assert!(e.contains("vertex 17") && e.contains("not a number"), "{alg:?}: {e}");
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.wel");
    std::fs::write(&path, "0 1 0.5\n1 2 0.25\n").unwrap();
    let f = read_graph(&path, ReadOptions::default(), &NoProgress).unwrap();
    let p = Params { source: Some(0), ..Params::default() };
    let (Output::Distances(chatty_algo::Distances::Float(mut d)), sources) = run(Algorithm::Sssp, &f, &p, 0).unwrap() else { panic!() };
    d[2] = f64::NAN;
    assert!(verify(Algorithm::Sssp, &f, &p, &sources, &Output::Distances(chatty_algo::Distances::Float(d))).is_err());
}

/// Gauss–Seidel PageRank reaches the reference's fixed point (within the bound its
/// stopping rule allows) and sums to 1 on the datasets and generated graphs, in fewer
/// iterations than Jacobi on those without dangling vertices.
/// Weighted PageRank (networkx's `weight='weight'`): a vertex's score goes out in
/// proportion to its out-edges' weights, on integer and float weights, by both
/// iterations and through the streaming strategy; out-edges of weight 0 leave a
/// vertex dangling; a negative weight is refused.
#[test]
fn weighted_pagerank() {
    let weighted = Params { pr: PrParams { tolerance: 1e-12, ..PrParams::default() }, weighted: true, ..Params::default() };
    // 0 → 1 weighs 3, 0 → 2 weighs 1: 1 gains three times what 2 gains over 0's score.
    let fork = from_weighted_edges(3, &[(0, 1, 3), (0, 2, 1)], true).unwrap().with_in_edges();
    let (Output::Values(x), _) = run(Algorithm::Pr, &fork, &weighted, 0).unwrap() else { panic!() };
    assert!(((x[1] - x[0]) - 3.0 * (x[2] - x[0])).abs() < 1e-12, "{x:?}");
    let (Output::Values(plain), _) = run(Algorithm::Pr, &fork, &Params::default(), 0).unwrap() else { panic!() };
    assert!((plain[1] - plain[2]).abs() < 1e-12, "{plain:?}");
    // 0's only out-edge weighs 0: it dangles, and the scores are uniform.
    let zero = from_weighted_edges(2, &[(0, 1, 0)], true).unwrap().with_in_edges();
    let (Output::Values(x), _) = run(Algorithm::Pr, &zero, &weighted, 0).unwrap() else { panic!() };
    assert!((x[0] - 0.5).abs() < 1e-9 && (x[1] - 0.5).abs() < 1e-9, "{x:?}");
    let d = tempfile::tempdir().unwrap();
    let floats = d.path().join("f.wel");
    std::fs::write(&floats, "0 1 0.5\n1 2 0.25\n0 2 1.5\n2 3 2.5\n3 0 0.1\n3 1 4\n").unwrap();
    let negative = d.path().join("n.mtx");
    std::fs::write(&negative, "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 0.5\n2 1 -1\n").unwrap();
    let rmat = generate::rmat(10, 8, GenOptions { seed: 5, max_weight: Some(9), undirected: false }, &NoProgress).unwrap();
    let grid = generate::grid(20, 20, GenOptions { seed: 6, max_weight: Some(40), undirected: true }, &NoProgress).unwrap();
    for (label, g) in [("floats", read_graph(&floats, ReadOptions::default(), &NoProgress).unwrap()), ("rmat", rmat), ("grid", grid)] {
        let g = g.with_in_edges();
        let gs = Params { pr: PrParams { method: PrMethod::GaussSeidel, ..weighted.pr }, ..weighted.clone() };
        for p in [&weighted, &gs] {
            let (x, _) = run(Algorithm::Pr, &g, p, 0).unwrap();
            verify(Algorithm::Pr, &g, p, &[], &x).unwrap_or_else(|e| panic!("{label} {:?}: {e}", p.pr.method));
        }
        let (x, _) = run_on(Algorithm::Pr, &Streaming(&g), &weighted, 0).unwrap();
        verify(Algorithm::Pr, &g, &weighted, &[], &x).unwrap_or_else(|e| panic!("{label} streaming: {e}"));
        // The unweighted answer is another one (the weights differ).
        assert!(verify(Algorithm::Pr, &g, &Params { weighted: false, ..weighted.clone() }, &[], &x).is_err());
    }
    let g = read_graph(&negative, ReadOptions::default(), &NoProgress).unwrap().with_in_edges();
    let e = run(Algorithm::Pr, &g, &weighted, 0).unwrap_err();
    assert!(e.to_string().contains("non-negative"), "{e}");
}

/// Weighted BC (Dijkstra's paths): a heavy direct edge sends the paths through the
/// middle vertex; every source and a few against networkx's procedure on integer and
/// float weights, directed and undirected; zero and negative weights are refused.
#[test]
fn weighted_bc() {
    let weighted = |sources| Params { bc_sources: sources, weighted: true, ..Params::default() };
    let triangle = from_weighted_edges(3, &[(0, 1, 1), (1, 2, 1), (0, 2, 5)], false).unwrap();
    let (Output::Values(x), _) = run(Algorithm::Bc, &triangle, &weighted(BcSources::All), 0).unwrap() else { panic!() };
    assert_eq!(x, [0.0, 2.0, 0.0]);
    let (Output::Values(x), _) = run(Algorithm::Bc, &triangle, &Params { weighted: false, ..weighted(BcSources::All) }, 0).unwrap() else {
        panic!()
    };
    assert_eq!(x, [0.0, 0.0, 0.0]);
    let d = tempfile::tempdir().unwrap();
    let floats = d.path().join("f.wel");
    // Two paths of 1.0 from 0 to 3 (0.5 + 0.5 and 0.25 + 0.75): ties counted as networkx counts them.
    std::fs::write(&floats, "0 1 0.5\n1 3 0.5\n0 2 0.25\n2 3 0.75\n3 4 1.5\n0 4 2.5\n4 0 0.125\n").unwrap();
    let o = |seed, w: Option<u32>, undirected| GenOptions { seed, max_weight: w, undirected };
    let graphs = [
        ("floats", read_graph(&floats, ReadOptions::default(), &NoProgress).unwrap()),
        ("rmat directed", generate::rmat(9, 8, o(3, Some(5), false), &NoProgress).unwrap()),
        ("rmat undirected", generate::rmat(9, 8, o(4, Some(3), true), &NoProgress).unwrap()),
        ("grid", generate::grid(12, 10, o(5, Some(4), true), &NoProgress).unwrap()),
    ];
    for (label, g) in graphs {
        for sources in [BcSources::All, BcSources::Random(5)] {
            let p = weighted(sources);
            let (x, picked) = run(Algorithm::Bc, &g, &p, 0).unwrap();
            verify(Algorithm::Bc, &g, &p, &picked, &x).unwrap_or_else(|e| panic!("{label}: {e}"));
        }
    }
    for (weights, what) in
        [("0 1 0\n1 2 1\n", "zero"), ("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 -1\n2 3 1\n", "negative")]
    {
        let f = d.path().join(if what == "zero" { "z.wel" } else { "n.mtx" });
        std::fs::write(&f, weights).unwrap();
        let g = read_graph(&f, ReadOptions::default(), &NoProgress).unwrap();
        let e = run(Algorithm::Bc, &g, &weighted(BcSources::All), 0).unwrap_err();
        assert!(e.to_string().contains("positive, finite edge weights"), "{what}: {e}");
    }
}

#[test]
fn gauss_seidel_pagerank_converges_to_the_same_scores_sooner() {
    let mut graphs: Vec<(String, Graph)> = vec![
        ("rmat12".into(), generate::rmat(12, 8, GenOptions { seed: 3, max_weight: None, undirected: false }, &NoProgress).unwrap()),
        ("grid".into(), generate::grid(60, 40, GenOptions { seed: 4, max_weight: None, undirected: true }, &NoProgress).unwrap()),
    ];
    if let Some(dir) = datasets::for_test() {
        for f in ["road/USA-road-NY.pace.gr.gz", "social/wiki-Vote.txt.gz", "web/cnr-2000.el.gz"] {
            graphs.push((f.into(), read_graph(&dir.join(f), ReadOptions::default(), &NoProgress).unwrap()));
        }
    }
    for (label, g) in graphs {
        let g = g.with_in_edges();
        let n = g.num_vertices();
        let jacobi = Params { pr: PrParams { tolerance: 1e-4 / n as f64, max_iters: 1000, ..PrParams::default() }, ..Params::default() };
        let gs = Params { pr: PrParams { method: PrMethod::GaussSeidel, ..jacobi.pr }, ..Params::default() };
        let (Output::Values(scores), _) = run(Algorithm::Pr, &g, &gs, 0).unwrap() else { panic!() };
        assert!((scores.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{label}");
        verify(Algorithm::Pr, &g, &gs, &[], &Output::Values(scores)).unwrap_or_else(|e| panic!("{label}: {e}"));
        let (_, gs_iters, _) = run_kernel(&g, Algorithm::Pr, &gs, &[], &NoProgress).unwrap();
        let (_, jacobi_iters, _) = run_kernel(&g, Algorithm::Pr, &jacobi, &[], &NoProgress).unwrap();
        // In-place updates pay off where no mass leaks to dangling vertices (measured:
        // NY 19 iterations against 35, cnr-2000 24 against 35, rmat-12 17 against 9).
        if (0..n as u32).all(|v| g.out_edges().degree(v) > 0) {
            assert!(gs_iters < jacobi_iters, "{label}: Gauss–Seidel {gs_iters} iterations, Jacobi {jacobi_iters}");
        }
    }
}

#[test]
fn bc_one_source_per_thread_matches_the_level_synchronous_sweep_both_ways() {
    let o = |undirected| GenOptions { seed: 9, max_weight: None, undirected };
    let path: Vec<(u32, u32)> = (0..999).map(|i| (i, i + 1)).collect();
    let graphs = [
        ("path", from_edges(1000, &path, false).unwrap()),
        ("grid", generate::grid(40, 30, o(true), &NoProgress).unwrap()),
        ("rmat", generate::rmat(10, 8, o(false), &NoProgress).unwrap()),
        // With in-edges, the sweep's large levels go bottom-up.
        ("rmat with in-edges", generate::rmat(10, 8, o(false), &NoProgress).unwrap().with_in_edges()),
        ("undirected rmat", generate::rmat(11, 16, o(true), &NoProgress).unwrap()),
    ];
    for (name, g) in &graphs {
        let sources: Vec<u32> = (0..g.num_vertices() as u32).step_by(7).collect();
        assert!(chatty_algo::bc::by_source_pays(g.num_vertices(), sources.len()), "{name}");
        let by_source = chatty_algo::bc::brandes_by_source(g, &sources, usize::MAX, &NoProgress);
        let level = chatty_algo::bc::brandes_levels(g, &sources, &NoProgress);
        let want = chatty_algo::bc::reference(g, &sources);
        for (v, (a, b)) in by_source.iter().zip(&level).enumerate() {
            let scale = want[v].abs().max(1.0);
            assert!((a - want[v]).abs() <= 1e-9 * scale && (b - want[v]).abs() <= 1e-9 * scale, "{name} vertex {v}: {a} {b} {}", want[v]);
        }
    }
}

#[test]
fn bc_path_counts_beyond_a_double_are_an_error_never_a_score() {
    // From a corner of a 600 x 600 grid, the far corner has C(1198, 599) > 1e358
    // shortest paths; vertices about 1,030 steps away still count theirs.
    let g = generate::grid(600, 600, GenOptions { seed: 1, max_weight: None, undirected: true }, &NoProgress).unwrap();
    let sources = [0u32];
    let runs = [
        ("by source", chatty_algo::bc::brandes_by_source(&g, &sources, usize::MAX, &NoProgress)),
        ("levels", chatty_algo::bc::brandes_levels(&g, &sources, &NoProgress)),
        ("edge map", chatty_algo::bc::brandes_edge_map(&g, &sources, &NoProgress).unwrap()),
        ("reference", chatty_algo::bc::reference(&g, &sources)),
    ];
    for (name, scores) in runs {
        assert!(scores.iter().any(|x| x.is_nan()), "{name}: an overflowed path count must poison the scores");
    }
    let mut cpu = chatty_algo::CpuEngine::new(g);
    let p = Params { bc_sources: BcSources::List(vec![0]), ..Params::default() };
    let Err(err) = chatty_algo::harness::run(&mut cpu, Algorithm::Bc, &p, &chatty_algo::harness::Options::default(), |_| {}) else {
        panic!("an overflow passed for scores");
    };
    assert!(matches!(err, Error::PathCountOverflow), "{err}");
    assert!(err.to_string().contains("more shortest paths from a source than a double can count"));
}

/// networkx's `generic_bfs_edges`, written out: a queue of (parent, its neighbours).
fn queue_bfs_edges(adj: &[Vec<u32>], source: u32, limit: u32) -> Vec<(u32, u32)> {
    let mut seen = vec![false; adj.len()];
    seen[source as usize] = true;
    let (mut level, mut edges) = (vec![source], Vec::new());
    for _ in 0..limit {
        let mut next = Vec::new();
        for &u in &level {
            for &v in &adj[u as usize] {
                if !seen[v as usize] {
                    seen[v as usize] = true;
                    next.push(v);
                    edges.push((u, v));
                }
            }
        }
        level = next;
    }
    edges
}

#[test]
fn bfs_tree_in_visit_order_matches_a_queue_bfs_over_any_neighbour_order() {
    use rand::{seq::SliceRandom, SeedableRng};
    let o = |seed, undirected| GenOptions { seed, max_weight: None, undirected };
    for (label, g) in [
        ("rmat-12 directed", generate::rmat(12, 8, o(1, false), &NoProgress).unwrap()),
        ("rmat-12 undirected", generate::rmat(12, 8, o(2, true), &NoProgress).unwrap()),
        ("grid", generate::grid(40, 30, o(3, true), &NoProgress).unwrap()),
    ] {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(9);
        // Neighbours in the graph's order, and shuffled (a networkx insertion order).
        let sorted: Vec<Vec<u32>> = (0..g.num_vertices() as u32).map(|u| g.out_edges().neighbors(u).to_vec()).collect();
        let mut shuffled = sorted.clone();
        shuffled.iter_mut().for_each(|a| a.shuffle(&mut rng));
        for adj in [&sorted, &shuffled] {
            for source in [0, 17, g.num_vertices() as u32 - 1] {
                let depth = chatty_algo::bfs::reference(&g, source);
                for limit in [0, 1, 3, u32::MAX] {
                    let ours = chatty_algo::bfs::tree_edges_in_visit_order(|u| &adj[u as usize], source, &depth, limit);
                    let expected = queue_bfs_edges(adj, source, limit.min(g.num_vertices() as u32));
                    assert_eq!(ours, expected, "{label}: source {source}, limit {limit}");
                }
            }
        }
    }
}

/// A graph stored renumbered answers as its input does: the harness maps sources,
/// `x` and personalisation in and every answer out, and verifies against either the
/// stored graph or the input.
#[test]
fn a_renumbered_graph_answers_in_the_input_ids() {
    use chatty_algo::{harness, CpuEngine};
    use std::sync::Arc;
    let close = |a: &Output, b: &Output, what: &str| match (a, b) {
        (Output::Values(a), Output::Values(b)) => {
            for (v, (x, y)) in a.iter().zip(b).enumerate() {
                assert!((x - y).abs() <= 1e-9 * x.abs().max(1.0), "{what}: vertex {v}: {x} against {y}");
            }
        }
        _ => assert_eq!(a, b, "{what}"),
    };
    for directed in [false, true] {
        let opts = GenOptions { seed: 5, max_weight: Some(20), undirected: !directed };
        let g = Arc::new(generate::rmat(11, 6, opts, &NoProgress).unwrap().with_in_edges());
        let n = g.num_vertices();
        let renumbered = chatty_graph::transform::renumber(&g, chatty_graph::transform::degree_order(&g)).unwrap();
        let input = chatty_graph::transform::relabel(&g, &(0..n as u32).collect::<Vec<_>>()).unwrap();
        let mut plain = CpuEngine::new(input);
        let mut stored = CpuEngine::new(renumbered);
        let ramp: Vec<f64> = (0..n).map(|v| 1.0 + (v % 7) as f64).collect();
        let cases = [
            (Algorithm::Bfs, Params { source: Some(3), ..Params::default() }),
            (Algorithm::Bfs, Params::default()),
            (Algorithm::Sssp, Params { source: Some(3), ..Params::default() }),
            (Algorithm::Sssp, Params { source: Some(3), parents: true, ..Params::default() }),
            (Algorithm::Bfs, Params { parents: true, ..Params::default() }),
            (Algorithm::Wcc, Params::default()),
            (Algorithm::Pr, Params { personalization: Some(ramp.clone()), ..Params::default() }),
            (Algorithm::Bc, Params { bc_sources: BcSources::List(vec![1, 2, 3, 700]), ..Params::default() }),
            (Algorithm::Bc, Params { bc_sources: BcSources::Random(5), ..Params::default() }),
            (Algorithm::Spmv, Params { x: Some(ramp.clone()), ..Params::default() }),
        ];
        for (alg, p) in cases {
            let what = format!("{} directed {directed}", alg.name());
            let verify = harness::Options { trials: 2, verify: true, against: None };
            let want = harness::run(&mut plain, alg, &p, &verify, |_| {}).unwrap();
            let got = harness::run(&mut stored, alg, &p, &verify, |_| {}).unwrap();
            assert_eq!(got.verification, Some(Ok(())), "{what}");
            assert_eq!(got.last.sources, want.last.sources, "{what}: the same sources, in the input's ids");
            assert_eq!(got.edges_traversed, want.edges_traversed, "{what}");
            close(&got.last.output, &want.last.output, &what);
            let against = harness::Options { trials: 1, verify: true, against: Some(("the input".into(), g.clone())) };
            let checked = harness::run(&mut stored, alg, &p, &against, |_| {}).unwrap();
            assert_eq!(checked.verification, Some(Ok(())), "{what}: against the input");
        }
        // Ids beyond the graph are refused in the input's terms, not mapped.
        let once = harness::Options { trials: 1, verify: false, against: None };
        let beyond = n as u32 + 5;
        for (alg, p) in [
            (Algorithm::Bfs, Params { source: Some(beyond), ..Params::default() }),
            (Algorithm::Bc, Params { bc_sources: BcSources::List(vec![1, beyond]), ..Params::default() }),
            (Algorithm::Spmv, Params { x: Some(vec![1.0; 3]), ..Params::default() }),
        ] {
            let Err(e) = harness::run(&mut stored, alg, &p, &once, |_| {}) else {
                panic!("{} accepted an id beyond the graph", alg.name())
            };
            assert!(e.to_string().contains(&beyond.to_string()) || e.to_string().contains("3 entries"), "{e}");
        }
    }
}

/// Strong components where trimming finds nothing and colouring needs many rounds:
/// a chain of two-cycles and triangles whose ids grow along the chain (each round
/// places only the first component still left), and the same chain with its ids
/// reversed; then the sinks-first order of every generated graph's components.
#[test]
fn scc_on_chains_of_cycles_and_in_sinks_first_order() {
    let mut edges = Vec::new();
    let mut v = 0u32;
    for i in 0..300u32 {
        let size = 2 + i % 2;
        (0..size).for_each(|k| edges.push((v + k, v + (k + 1) % size)));
        edges.push((v, v + size)); // into the next component
        v += size;
    }
    let n = v as usize + 1;
    let reversed: Vec<(u32, u32)> = edges.iter().map(|&(a, b)| (v - a, v - b)).collect();
    for (label, edges) in [("ascending", edges), ("descending", reversed)] {
        let g = from_edges(n, &edges, true).unwrap().with_in_edges();
        let (output, _) = run(Algorithm::Scc, &g, &Params::default(), 0).unwrap();
        verify(Algorithm::Scc, &g, &Params::default(), &[], &output).unwrap_or_else(|e| panic!("{label}: {e}"));
    }
    let o = |seed| GenOptions { seed, max_weight: None, undirected: false };
    for g in [generate::rmat(10, 3, o(5), &NoProgress).unwrap(), generate::urand(10, 2, o(6), &NoProgress).unwrap()] {
        let labels = chatty_algo::scc::reference(&g);
        let order = chatty_algo::scc::sinks_first(&g, &labels);
        let mut position = vec![usize::MAX; g.num_vertices()];
        order.iter().enumerate().for_each(|(i, &c)| position[c as usize] = i);
        let mut components: Vec<u32> = labels.clone();
        components.sort_unstable();
        components.dedup();
        assert_eq!(order.len(), components.len(), "every component once");
        for u in 0..g.num_vertices() as u32 {
            for &w in g.out_edges().neighbors(u) {
                let (a, b) = (labels[u as usize], labels[w as usize]);
                assert!(a == b || position[a as usize] > position[b as usize], "edge {u} -> {w} leads from {a} to a later {b}");
            }
        }
    }
}

/// Parents on known graphs: the smallest-id tight in-neighbour, zero-weight edges
/// reached in rounds (a zero-weight cycle included), the path walked back; and trees
/// the verifier refuses.
#[test]
fn parents_on_known_graphs_and_trees_the_verifier_refuses() {
    use chatty_algo::paths::NO_PARENT;
    use chatty_algo::{harness, CpuEngine, Distances};
    // 0 -3-> 1 -1-> 2 -0-> 3 -0-> 4 -0-> 3 (a zero cycle), 0 -4-> 2 (a tie with 1's), 0 -9-> 4; 5 -> 6 unreached.
    let edges = [(0, 1, 3), (1, 2, 1), (0, 2, 4), (2, 3, 0), (3, 4, 0), (4, 3, 0), (0, 4, 9), (5, 6, 1)];
    let g = from_weighted_edges(7, &edges, true).unwrap().with_in_edges();
    let (output, _, _) = run_kernel(&g, Algorithm::Sssp, &Params::default(), &[0], &NoProgress).unwrap();
    assert_eq!(output, Output::Distances(Distances::Int(vec![0, 3, 4, 4, 4, u64::MAX, u64::MAX])));
    let tree = paths::parents(&g, 0, &output).unwrap();
    assert_eq!(tree, vec![0, 0, 0, 2, 3, NO_PARENT, NO_PARENT], "2's parents tie (0 and 1): the smaller wins");
    assert_eq!(paths::parents(&Streaming(&g), 0, &output).unwrap(), tree);
    paths::verify(&g, 0, &output, &tree).unwrap();
    assert_eq!(paths::path(&tree, 4), Some(vec![0, 2, 3, 4]));
    assert_eq!(paths::path(&tree, 0), Some(vec![0]));
    assert_eq!(paths::path(&tree, 6), None);
    let refused = |t: &[u32], why: &str| assert!(paths::verify(&g, 0, &output, t).is_err(), "{why}");
    refused(&[0, 0, 1, 4, 3, NO_PARENT, NO_PARENT], "3 and 4 each other's parent: a cycle");
    refused(&[0, 0, 0, 2, 2, NO_PARENT, NO_PARENT], "no edge 2 -> 4");
    refused(&[0, 0, 0, 2, 0, NO_PARENT, NO_PARENT], "0 -> 4 weighs 9, not 4");
    refused(&[0, 0, 0, 2, 3, 5, NO_PARENT], "an unreached vertex with a parent");
    refused(&[1, 0, 0, 2, 3, NO_PARENT, NO_PARENT], "the source is its own parent");
    // Distances that are not shortest-path ones have no tree.
    let wrong = Output::Distances(Distances::Int(vec![0, 3, 4, 4, 5, u64::MAX, u64::MAX]));
    assert!(matches!(paths::parents(&g, 0, &wrong), Err(Error::Mismatch(_))));
    // BFS on the same graph: hop counts, the tree through the smallest ids.
    let (depths, _, _) = run_kernel(&g, Algorithm::Bfs, &Params::default(), &[0], &NoProgress).unwrap();
    assert_eq!(paths::parents(&g, 0, &depths).unwrap(), vec![0, 0, 0, 2, 0, NO_PARENT, NO_PARENT]);
    // Through the harness, verified; refused for kernels without distances.
    let mut cpu = CpuEngine::new(g);
    let opts = harness::Options { trials: 2, verify: true, against: None };
    let report =
        harness::run(&mut cpu, Algorithm::Sssp, &Params { source: Some(0), parents: true, ..Params::default() }, &opts, |_| {}).unwrap();
    assert_eq!(report.verification, Some(Ok(())));
    assert_eq!(report.parents.as_deref(), Some(&tree[..]));
    let pr = harness::run(&mut cpu, Algorithm::Pr, &Params { parents: true, ..Params::default() }, &opts, |_| {});
    assert!(matches!(pr, Err(Error::Parameter { name: "parents", .. })));
}

/// Closeness estimated from sampled sources matches its sequential reference, and
/// from every vertex with out-edges it is the exact closeness, bit for bit.
#[test]
fn sampled_closeness() {
    let o = |seed, undirected| GenOptions { seed, max_weight: None, undirected };
    let graphs = [
        ("rmat-11 directed", generate::rmat(11, 4, o(31, false), &NoProgress).unwrap().with_in_edges()),
        ("rmat-11", generate::rmat(11, 8, o(32, true), &NoProgress).unwrap()),
        ("grid 40x30", generate::grid(40, 30, o(33, true), &NoProgress).unwrap()),
    ];
    for (label, g) in &graphs {
        for wf_improved in [true, false] {
            let exact = Params { wf_improved, ..Params::default() };
            let (Output::Values(want), _) = run(Algorithm::Closeness, g, &exact, 0).unwrap() else { panic!("closeness answers values") };
            for k in [1, 16, 100] {
                let p = Params { bc_sources: BcSources::Random(k), ..exact.clone() };
                let (output, chosen) = run(Algorithm::Closeness, g, &p, 0).unwrap();
                assert_eq!(chosen.len(), k, "{label}: {k} sources");
                verify(Algorithm::Closeness, g, &p, &chosen, &output).unwrap_or_else(|e| panic!("{label}, {k} sources: {e}"));
            }
            let every = Params { bc_sources: BcSources::Random(g.num_vertices()), ..exact.clone() };
            let (Output::Values(got), _) = run(Algorithm::Closeness, g, &every, 0).unwrap() else { panic!("closeness answers values") };
            assert_eq!(got, want, "{label}: sampled from every vertex with out-edges is exact");
        }
    }
}
