//! GAPBS's serialized graphs (`.sg`, `.wsg`): files written by GAPBS's own
//! `converter` (b5e3e19) read back as the graph we build from the same edge list,
//! and damaged files refused with a message, never a panic or a wrong graph.
//!
//! The fixtures in `data/gapbs/`, from `r7.wel` (`chatty generate rmat -s 7 -e 8
//! --weights 20`, comments removed): `converter -f r7.wel -wb r7.wsg` (directed,
//! weighted), `converter -f r7.el -b r7.sg` (the same without weights), and
//! `converter -f r7.wel -s -b r7u.sg` (symmetrised). GAPBS's builder drops self-loops
//! and parallel edges (keeping the lightest), as `--dedup --drop-self-loops` do.

use std::path::{Path, PathBuf};

use chatty_graph::{read_graph, Adjacency, BuildOptions, Graph, NoProgress, ReadOptions};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/gapbs").join(name)
}

fn read(path: &Path) -> chatty_graph::Result<Graph> {
    read_graph(path, ReadOptions::default(), &NoProgress)
}

/// The edge list as GAPBS builds it: every id up to the largest a vertex.
fn ours(symmetrize: bool) -> Graph {
    let build = BuildOptions { symmetrize, dedup: true, drop_self_loops: true };
    let ids = chatty_graph::read::IdOptions { keep_id_range: true, header: None };
    read_graph(&fixture("r7.wel"), ReadOptions { build, ids, ..ReadOptions::default() }, &NoProgress).unwrap()
}

fn same_lists(a: &Adjacency, b: &Adjacency, weights: bool, what: &str) {
    assert_eq!(a.offsets(), b.offsets(), "{what}: offsets");
    assert_eq!(a.targets(), b.targets(), "{what}: targets");
    if weights {
        assert_eq!(a.raw_weights(), b.raw_weights(), "{what}: weights");
    }
}

#[test]
fn gapbs_files_read_as_the_graph_of_their_edge_list() {
    let directed = ours(false).with_in_edges();
    let wsg = read(&fixture("r7.wsg")).unwrap();
    assert!(wsg.is_directed() && wsg.weight_type() == chatty_graph::WeightType::Int);
    same_lists(wsg.out_edges(), directed.out_edges(), true, "wsg");
    same_lists(wsg.transpose_if_built().expect("the file's in-edges"), directed.in_edges(), true, "wsg in-edges");
    let sg = read(&fixture("r7.sg")).unwrap();
    assert!(sg.is_directed() && sg.weight_type() == chatty_graph::WeightType::None);
    same_lists(sg.out_edges(), directed.out_edges(), false, "sg");
    let undirected = read(&fixture("r7u.sg")).unwrap();
    assert!(!undirected.is_directed());
    same_lists(undirected.out_edges(), ours(true).out_edges(), false, "undirected sg");
    assert_eq!((undirected.num_vertices(), undirected.num_edges()), (128, 1200), "GAPBS: 128 nodes and 600 undirected edges");
}

/// Writes `bytes` as `name` in a temporary directory and reads it.
fn read_bytes(dir: &Path, name: &str, bytes: &[u8]) -> chatty_graph::Result<Graph> {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    read(&path)
}

#[test]
fn damaged_gapbs_files_are_refused_by_name() {
    let d = tempfile::tempdir().unwrap();
    let wsg = std::fs::read(fixture("r7.wsg")).unwrap();
    let refused = |bytes: &[u8], needle: &str| {
        let e = read_bytes(d.path(), "g.wsg", bytes).err().unwrap_or_else(|| panic!("accepted; expected `{needle}`"));
        assert!(e.to_string().contains(needle), "`{e}` should mention `{needle}`");
    };
    refused(&wsg[..10], "shorter than");
    refused(&wsg[..wsg.len() - 1], "truncated");
    refused(&[&wsg[..], &[0]].concat(), "truncated, or not a GAPBS");
    let mut b = wsg.clone();
    b[0] = 7;
    refused(&b, "not 0 or 1");
    let (n, m) = (128usize, 712usize);
    let target = |i: usize| 17 + (n + 1) * 8 + i * 8;
    let mut b = wsg.clone();
    b[target(3)..target(3) + 4].copy_from_slice(&(-5i32).to_le_bytes());
    refused(&b, "negative id");
    let mut b = wsg.clone();
    b[target(3)..target(3) + 4].copy_from_slice(&(n as i32).to_le_bytes());
    refused(&b, "only 128 vertices");
    // An out-edge's weight changed: the in-edges no longer hold its transpose.
    let mut b = wsg.clone();
    b[target(5) + 4] ^= 1;
    refused(&b, "transpose");
    let mut b = wsg.clone();
    b[17 + 8 * 4..17 + 8 * 5].copy_from_slice(&(-1i64).to_le_bytes());
    refused(&b, "negative");
    // The header's edge count, off by one: the size no longer matches.
    let mut b = wsg.clone();
    b[1..9].copy_from_slice(&(m as i64 + 1).to_le_bytes());
    refused(&b, "truncated");
    // A .sg named as .wsg (or the reverse) has the wrong size for its header.
    refused(&std::fs::read(fixture("r7.sg")).unwrap(), "truncated");
    // Negative weights are kept, as 32-bit floats.
    let mut b = wsg.clone();
    for side in 0..2 {
        let at = |i: usize| side * ((n + 1) * 8 + m * 8) + target(i) + 4;
        for i in 0..m {
            let w = i32::from_le_bytes(b[at(i)..at(i) + 4].try_into().unwrap());
            b[at(i)..at(i) + 4].copy_from_slice(&(-w).to_le_bytes());
        }
    }
    let g = read_bytes(d.path(), "neg.wsg", &b).unwrap();
    assert_eq!(g.weight_type(), chatty_graph::WeightType::Float);
    assert_eq!(g.out_edges().weight_f64(0), -(ours(false).out_edges().weight_f64(0)));
}

/// Random damage: every mutated file is refused or read as a graph whose lists are
/// sorted, in range, and (directed) transposed by its in-edges.
#[test]
fn mutated_gapbs_files_never_panic_nor_load_inconsistent() {
    use rand_core::{RngCore, SeedableRng};
    let d = tempfile::tempdir().unwrap();
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
    let mut below = |k: usize| (rng.next_u64() % k as u64) as usize;
    for name in ["r7.wsg", "r7.sg", "r7u.sg"] {
        let clean = std::fs::read(fixture(name)).unwrap();
        for _ in 0..300 {
            let mut b = clean.clone();
            for _ in 0..1 + below(3) {
                let i = below(b.len());
                b[i] = below(256) as u8;
            }
            if below(5) == 0 {
                let keep = below(b.len());
                b.truncate(keep);
            }
            let Ok(g) = read_bytes(d.path(), name, &b) else { continue };
            let n = g.num_vertices();
            let out = g.out_edges();
            for v in 0..n as u32 {
                let list = out.neighbors(v);
                assert!(list.iter().all(|&t| (t as usize) < n) && list.windows(2).all(|p| p[0] <= p[1]), "{name}: vertex {v}");
            }
            if let Some(inc) = g.transpose_if_built() {
                assert_eq!(inc.num_edges(), out.num_edges(), "{name}");
            }
        }
    }
}
