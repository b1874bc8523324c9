//! Shared bodies of the fuzz targets: parse, and if it parses, check the CSR; and the
//! checks a binary graph that loads must pass.

use std::path::Path;

use chatty_graph::{read::parse_bytes, Adjacency, BuildOptions, Format, Graph};

/// Parses `data` as `format` with each combination of transforms; a graph that
/// parses must have monotone offsets and in-range targets.
pub fn parse(format: Format, data: &[u8]) {
    // A tiny input may name vertex 10^9; the graph layer then refuses it as too large
    // for this budget instead of allocating gigabytes per run.
    std::env::set_var("CHATTY_MEMORY_LIMIT", "64M");
    for opts in [BuildOptions::default(), BuildOptions { symmetrize: true, dedup: true, drop_self_loops: true }] {
        if let Ok(g) = parse_bytes(Path::new("fuzz-input"), format, data, opts) {
            let out = g.out_edges();
            assert!(out.offsets().windows(2).all(|w| w[0] <= w[1]));
            assert!(out.targets().iter().all(|&t| (t as usize) < g.num_vertices()));
            assert_eq!(*out.offsets().last().unwrap(), g.num_edges());
        }
    }
}

/// What a binary graph that loads must be for the kernels to trust it, checked
/// exactly: targets in range, lists sorted, the stored transpose the transpose,
/// undirected symmetric, the input ids of a renumbered graph a permutation.
pub fn check_loaded(g: &Graph) {
    let n = g.num_vertices();
    let out = g.out_edges();
    for v in 0..n as u32 {
        let list = out.neighbors(v);
        assert!(list.iter().all(|&t| (t as usize) < n));
        assert!(list.windows(2).all(|p| p[0] <= p[1]), "vertex {v}: unsorted list loaded");
    }
    let edges = |adj: &Adjacency, reverse: bool| {
        let mut e: Vec<(u32, u32, u32)> = (0..n as u32)
            .flat_map(|u| {
                adj.range(u).map(move |i| {
                    let (a, b) = (u, adj.targets()[i]);
                    let w = adj.raw_weights().map_or(0, |w| w[i]);
                    if reverse { (b, a, w) } else { (a, b, w) }
                })
            })
            .collect();
        e.sort_unstable();
        e
    };
    if let Some(inc) = g.transpose_if_built() {
        assert_eq!(edges(inc, true), edges(out, false), "a transpose that is not the transpose loaded");
    }
    if !g.is_directed() {
        assert_eq!(edges(out, true), edges(out, false), "an asymmetric undirected graph loaded");
    }
    if let Some(order) = g.order() {
        let (input, stored) = (order.input_ids(), order.stored_ids());
        assert!(input.len() == n && stored.len() == n);
        assert!((0..n).all(|v| stored[input[v] as usize] as usize == v), "input ids that are not a permutation loaded");
    }
}
