//! The choices the multi-GPU engine makes when the user leaves them to it, from
//! measurements on two H200s (NVLink; `docs/benchmarks/multi-gpu.md`):
//! how many GPUs a run uses (`--gpus auto`: the fewest that are not slower end to end),
//! who sequences a split run's levels (`--mode auto`) and the order its parts are cut
//! in (`--reorder auto`).
//!
//! GPUs (`--gpus auto`):
//!
//! - A graph that does not fit on one GPU is split over all of them.
//! - PageRank on large power-law graphs is split: its iterations are long and dense,
//!   so the kernel gain (1.66× on rmat25, 1.72× on rmat26) outweighs the per-trial set-up.
//! - Everything else stays on one GPU: BFS and SpMV gain 1–2 ms of kernel on rmat25,
//!   less than a split's set-up and gather; SSSP and WCC have persistent single-GPU
//!   kernels the split engine lacks; road-like graphs (low mean degree, thousands of
//!   levels) pay a host round trip per level on several GPUs (0.12–0.56× of one).
//! - BC does not split the graph: from at least [`BC_SOURCES_PER_GPU`] sources a GPU it
//!   runs on every GPU, each holding the whole graph and running a share of the
//!   sources (a source costs milliseconds on a large graph: kron22 about 3 ms each in
//!   batches of 64; the scores' sum per trial costs a pass over n values); from fewer,
//!   or mixed with other kernels, on one.

use chatty_algo::Algorithm;
use chatty_graph::Graph;

use super::Mode;
use crate::{DeviceGraph, Order};

/// Fewer edges than this: a split's set-up and exchanges cost more than it saves.
const SPLIT_FROM_EDGES: u64 = 1 << 28;
/// Below this mean degree a graph is deep and sparse (road-like): per-level exchanges dominate.
const SPLIT_FROM_MEAN_DEGREE: f64 = 8.0;
/// BC sources per GPU from which BC runs on every GPU.
pub const BC_SOURCES_PER_GPU: u64 = 4;

/// The engine's choice of GPU count, and why, in words for the user.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuChoice {
    /// GPUs to use (1 ..= available).
    pub gpus: usize,
    /// Why, e.g. "pr on 536,870,912 edges, mean degree 16: splits well".
    pub why: String,
}

/// How many of `available` GPUs to run `algs` on `g` with (`bc_sources`: BC's source
/// count when it is among them), given the free bytes of one GPU.
pub fn choose_gpus(g: &Graph, algs: &[Algorithm], bc_sources: Option<u64>, available: usize, free_on_one: u64) -> GpuChoice {
    let one = |why: String| GpuChoice { gpus: 1, why };
    if available <= 1 {
        return one("this machine has one GPU".into());
    }
    let needed = DeviceGraph::bytes_needed(g);
    if let Some(sources) = bc_sources {
        if algs.iter().any(|&a| a != Algorithm::Bc) {
            return one("bc with other kernels: one GPU".into());
        }
        if sources < BC_SOURCES_PER_GPU * available as u64 {
            return one(format!("bc from {sources} sources: fewer than {BC_SOURCES_PER_GPU} a GPU"));
        }
        return GpuChoice { gpus: available, why: format!("bc from {sources} sources: each GPU runs a share on its copy of the graph") };
    }
    if let Some(alg) = algs.iter().find(|&&a| !crate::run::splits(a)) {
        return one(format!("{} runs on one GPU", alg.name()));
    }
    if needed > free_on_one {
        return GpuChoice {
            gpus: available,
            why: format!("the graph needs {} MiB of GPU memory, one GPU has {} MiB free", needed >> 20, free_on_one >> 20),
        };
    }
    let m = g.num_edges();
    let mean_degree = m as f64 / g.num_vertices().max(1) as f64;
    let names = algs.iter().map(|a| a.name()).collect::<Vec<_>>().join(",");
    if let Some(alg) = algs.iter().find(|&&a| a != Algorithm::Pr) {
        return one(format!("{} runs faster end to end on one GPU", alg.name()));
    }
    if m < SPLIT_FROM_EDGES {
        return one(format!("{m} edges: below {SPLIT_FROM_EDGES} a split costs more than it saves"));
    }
    if mean_degree < SPLIT_FROM_MEAN_DEGREE {
        return one(format!("mean degree {mean_degree:.1}: a deep, sparse graph spends a split's time exchanging levels"));
    }
    GpuChoice { gpus: available, why: format!("{names} on {m} edges, mean degree {mean_degree:.1}: splits well") }
}

/// `--mode auto` for `alg` on a split graph that is `road_like` (mean degree below 8):
/// host-driven rounds (`bsp`) everywhere, as measured since those rounds chase within
/// blocks in breadth-first order (two parts of one H200, kernel ms, bsp / async / gmpi,
/// `docs/benchmarks/data/gpu-mpi/session20-call4-rows.txt`): moscow bfs 5.3 / 7.5 /
/// 11.4 and sssp 14.1 / 86.0 / 105.5, road-NE bfs 9.3 / 15.8 / 21.7, a 1024² grid bfs
/// 16.2 / 21.9 / 34.7 and sssp 23.5 / 177.7 / 196.9; rmat20 bfs 0.61 / 4.3 / 4.2
/// (levels few and heavy; the GPU-driven kernel is top-down only). The GPU-driven
/// modes stay for the user to ask for; on two GPUs a host round trip costs more than
/// between two parts of one, which a two-GPU measurement may change this for.
pub fn choose_mode(alg: Algorithm, road_like: bool) -> (Mode, String) {
    let why = match (alg, road_like) {
        (Algorithm::Bfs | Algorithm::Sssp, true) => "deep and sparse: host-driven rounds chase within blocks, fewer than the levels",
        (Algorithm::Bfs | Algorithm::Sssp, false) => "levels are few and heavy (mean degree 8 or more)",
        _ => "only bfs and sssp run GPU-driven",
    };
    (Mode::Bsp, why.into())
}

/// `--reorder auto` for a split of `g`: breadth-first where it is road-like, which
/// cuts the parts' shared boundary by one to two orders of magnitude (two parts:
/// moscow 136,113 → 2,583 boundary vertices, road-NE 780,805 → 4,029), else the
/// graph's own order (power-law graphs share a boundary in any order, and
/// renumbering costs a pass over the edges).
pub fn choose_order(g: &Graph) -> (Order, String) {
    match crate::device_graph::road_like(g.num_vertices(), g.num_edges()) {
        true => (Order::Bfs, "a road-like graph: breadth-first order keeps neighbours in one part".into()),
        false => (Order::Natural, "mean degree 8 or more: the graph's own order".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(n: u32, degree: u32) -> Graph {
        let edges: Vec<(u32, u32)> = (0..n).flat_map(|v| (1..=degree).map(move |d| (v, (v + d) % n))).collect();
        chatty_graph::from_edges(n as usize, &edges, true).unwrap()
    }

    #[test]
    fn one_gpu_unless_the_run_splits_well_or_does_not_fit() {
        let g = graph(1000, 4);
        let big = u64::MAX;
        assert_eq!(choose_gpus(&g, &[Algorithm::Pr], None, 1, big).gpus, 1);
        assert_eq!(choose_gpus(&g, &[Algorithm::Pr], None, 2, big).gpus, 1, "small graph");
        assert_eq!(choose_gpus(&g, &[Algorithm::Bfs], None, 4, big).gpus, 1);
        let tight = choose_gpus(&g, &[Algorithm::Bfs], None, 4, 1000);
        assert_eq!(tight.gpus, 4, "does not fit: {}", tight.why);
        assert_eq!(choose_gpus(&g, &[Algorithm::Bc], Some(15), 4, big).gpus, 1, "a few sources");
        assert_eq!(choose_gpus(&g, &[Algorithm::Bc], Some(16), 4, big).gpus, 4, "a share of the sources each");
        assert_eq!(choose_gpus(&g, &[Algorithm::Bc, Algorithm::Bfs], Some(1000), 4, big).gpus, 1, "mixed kernels");
    }

    #[test]
    fn road_like_graphs_are_cut_in_breadth_first_order_and_run_host_driven() {
        for (alg, road_like) in [(Algorithm::Bfs, true), (Algorithm::Sssp, false), (Algorithm::Pr, true)] {
            assert_eq!(choose_mode(alg, road_like).0, Mode::Bsp, "measured fastest on every graph");
        }
        assert_eq!(choose_order(&graph(1000, 2)).0, Order::Bfs);
        assert_eq!(choose_order(&graph(1000, 8)).0, Order::Natural);
    }
}
