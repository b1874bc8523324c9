//! Shared body of the parser fuzz targets: parse, and if it parses, check the CSR.

use std::path::Path;

use chatty_graph::{read::parse_bytes, BuildOptions, Format};

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
