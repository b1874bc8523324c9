//! The builder, the transforms and the generators against naive references.

use chatty_graph::{build::BuildOptions, generate, stats, transform, GenOptions, Graph, NoProgress};
use proptest::prelude::*;

fn adjacency(g: &Graph) -> Vec<Vec<u32>> {
    (0..g.num_vertices() as u32).map(|v| g.out_edges().neighbors(v).to_vec()).collect()
}

/// Sorted adjacency lists of an edge list, the obvious way.
fn naive(n: usize, edges: &[(u32, u32)], symmetrize: bool, dedup: bool, drop_loops: bool) -> Vec<Vec<u32>> {
    let mut adj = vec![Vec::new(); n];
    for &(u, v) in edges {
        if drop_loops && u == v {
            continue;
        }
        adj[u as usize].push(v);
        if symmetrize && u != v {
            adj[v as usize].push(u);
        }
    }
    for a in &mut adj {
        a.sort();
        if dedup {
            a.dedup();
        }
    }
    adj
}

fn edge_lists() -> impl Strategy<Value = (usize, Vec<(u32, u32)>)> {
    (1usize..40).prop_flat_map(|n| (Just(n), prop::collection::vec((0..n as u32, 0..n as u32), 0..200)))
}

proptest! {
    #[test]
    fn builder_and_transforms_match_the_naive_construction((n, edges) in edge_lists(), sym: bool, dedup: bool, drop_loops: bool) {
        let g = chatty_graph::from_edges(n, &edges, true).unwrap();
        prop_assert_eq!(adjacency(&g), naive(n, &edges, false, false, false));
        let opts = BuildOptions { symmetrize: sym, dedup, drop_self_loops: drop_loops };
        let t = transform::rebuild(&g, opts).unwrap();
        prop_assert_eq!(adjacency(&t), naive(n, &edges, sym, dedup, drop_loops));
        prop_assert_eq!(t.is_directed(), !sym);

        let reversed: Vec<(u32, u32)> = edges.iter().map(|&(u, v)| (v, u)).collect();
        let g = g.with_in_edges();
        let inc: Vec<Vec<u32>> = (0..n as u32).map(|v| g.in_edges().neighbors(v).to_vec()).collect();
        prop_assert_eq!(inc, naive(n, &reversed, false, false, false));
    }

    /// An edge list read back names the same edges, whatever its ids: few or many,
    /// with gaps, beyond u32, or labels (each id spelled `v<id>`).
    #[test]
    fn edge_lists_read_back_as_the_same_named_edges(
        edges in prop::collection::vec((0u64..12, 0u64..12), 1..60),
        spread in prop::sample::select(vec![1u64, 7, 1 << 33]),
        labels: bool,
    ) {
        let name = |x: u64| if labels { format!("v{}", x * spread) } else { (x * spread).to_string() };
        let text: String = edges.iter().map(|&(u, v)| format!("{} {}\n", name(u), name(v))).collect();
        let g = chatty_graph::read::parse_bytes(std::path::Path::new("p.el"), chatty_graph::Format::EdgeList, text.as_bytes(), BuildOptions::default()).unwrap();
        let naming = g.naming();
        let mut read: Vec<(String, String)> = (0..g.num_vertices() as u32)
            .flat_map(|u| g.out_edges().neighbors(u).iter().map(move |&v| (u, v)).collect::<Vec<_>>())
            .map(|(u, v)| (naming.name(u).to_string(), naming.name(v).to_string()))
            .collect();
        let mut want: Vec<(String, String)> = edges.iter().map(|&(u, v)| (name(u), name(v))).collect();
        read.sort();
        want.sort();
        prop_assert_eq!(read, want);
        let appear: std::collections::BTreeSet<u64> = edges.iter().flat_map(|&(u, v)| [u, v]).collect();
        let dense = !labels && appear.len() as u64 == appear.last().unwrap() * spread + 1;
        prop_assert_eq!(g.num_vertices(), appear.len());
        prop_assert_eq!(g.names().is_none(), dense);
    }

    #[test]
    fn relabel_is_an_isomorphism((n, edges) in edge_lists(), seed: u64) {
        let g = chatty_graph::from_edges(n, &edges, true).unwrap();
        let mut perm: Vec<u32> = (0..n as u32).collect();
        let mut s = seed;
        for i in (1..n).rev() {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            perm.swap(i, (s >> 33) as usize % (i + 1));
        }
        let r = transform::relabel(&g, &perm).unwrap();
        let mapped: Vec<(u32, u32)> = edges.iter().map(|&(u, v)| (perm[u as usize], perm[v as usize])).collect();
        prop_assert_eq!(adjacency(&r), naive(n, &mapped, false, false, false));
    }
}

#[test]
fn relabel_moves_weights_with_their_edges() {
    let o = GenOptions { seed: 5, max_weight: Some(1000), undirected: false };
    let g = generate::rmat(12, 8, o, &NoProgress).unwrap().with_in_edges();
    let order = transform::degree_order(&g);
    let r = transform::relabel(&g, &order).unwrap();
    let triples = |g: &Graph, map: &dyn Fn(u32) -> u32| {
        let (a, w) = (g.out_edges(), g.out_edges().raw_weights().unwrap());
        let mut t: Vec<(u32, u32, u32)> = (0..g.num_vertices() as u32)
            .flat_map(|u| a.neighbors(u).iter().zip(&w[a.range(u)]).map(move |(&v, &x)| (map(u), map(v), x)))
            .collect();
        t.sort_unstable();
        t
    };
    assert_eq!(triples(&r, &|v| v), triples(&g, &|v| order[v as usize]));
    assert!((0..r.num_vertices() as u32).all(|v| r.out_edges().neighbors(v).is_sorted()));
    assert!(r.has_in_edges(), "the transpose is rebuilt");
}

#[test]
fn relabel_rejects_non_permutations() {
    let g = chatty_graph::from_edges(3, &[(0, 1)], true).unwrap();
    assert!(transform::relabel(&g, &[0, 0, 1]).is_err());
    assert!(transform::relabel(&g, &[0, 1]).is_err());
    let order = transform::degree_order(&chatty_graph::from_edges(3, &[(2, 0), (2, 1), (1, 0)], true).unwrap());
    assert_eq!(order, vec![2, 1, 0]);
}

fn opts(seed: u64) -> GenOptions {
    GenOptions { seed, max_weight: None, undirected: false }
}

#[test]
fn generators_are_deterministic_across_thread_counts() {
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let weighted = GenOptions { max_weight: Some(255), undirected: true, ..opts(7) };
    let a = generate::rmat(12, 8, weighted, &NoProgress).unwrap();
    let b = one.install(|| generate::rmat(12, 8, weighted, &NoProgress).unwrap());
    assert_eq!(a.out_edges().targets(), b.out_edges().targets());
    assert_eq!(a.out_edges().raw_weights(), b.out_edges().raw_weights());
    let c = generate::rmat(12, 8, GenOptions { seed: 8, ..weighted }, &NoProgress).unwrap();
    assert_ne!(a.out_edges().targets(), c.out_edges().targets());
}

#[test]
fn rmat_is_skewed_and_sized_as_asked() {
    let g = generate::rmat(14, 16, opts(1), &NoProgress).unwrap();
    assert_eq!((g.num_vertices(), g.num_edges()), (1 << 14, 16 << 14));
    let s = stats(&g);
    assert!(s.max_out_degree > 50 * 16, "R-MAT has hubs: max degree {}", s.max_out_degree);
    let u = generate::urand(14, 16, opts(1), &NoProgress).unwrap();
    assert!(stats(&u).max_out_degree < 64, "uniform graphs have no hubs");
    let sym = generate::rmat(10, 4, GenOptions { undirected: true, ..opts(1) }, &NoProgress).unwrap();
    assert!(!sym.is_directed());
    let loops = stats(&sym).self_loops;
    assert_eq!(sym.num_edges(), 2 * (4 << 10) - loops);
}

#[test]
fn grid_is_a_weighted_planar_lattice() {
    let g = generate::grid(5, 3, opts(3), &NoProgress).unwrap();
    assert!(!g.is_directed());
    assert_eq!(g.num_edges(), 2 * (4 * 3 + 5 * 2));
    assert_eq!(g.out_edges().neighbors(6), &[1, 5, 7, 11]);
    let w = g.out_edges();
    // Both directions of an edge carry the same weight.
    let weight = |u: u32, v: u32| w.range(u).find(|&e| w.targets()[e] == v).map(|e| w.weight_f64(e)).unwrap();
    assert_eq!(weight(6, 7), weight(7, 6));
    assert!((1.0..=1000.0).contains(&weight(6, 7)));
    assert!(generate::grid(0, 3, opts(3), &NoProgress).is_err());
    assert!(generate::rmat(40, 3, opts(3), &NoProgress).is_err());
}
