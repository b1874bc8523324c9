//! How many GPUs a run uses when the user leaves it to the engine (`--gpus auto`): the
//! fewest that are not slower end to end, as measured on two H200s (NVLink).
//!
//! - A graph that does not fit on one GPU is split over all of them.
//! - PageRank on large power-law graphs is split: its iterations are long and dense,
//!   so the kernel gain (1.66× on rmat25, 1.72× on rmat26) outweighs the per-trial set-up.
//! - Everything else stays on one GPU: BFS and SpMV gain 1–2 ms of kernel on rmat25,
//!   less than a split's set-up and gather; SSSP and WCC have persistent single-GPU
//!   kernels the split engine lacks; road-like graphs (low mean degree, thousands of
//!   levels) pay a host round trip per level on several GPUs (0.12–0.56× of one);
//!   BC runs on one GPU.

use chatty_algo::Algorithm;
use chatty_graph::Graph;

use crate::DeviceGraph;

/// Fewer edges than this: a split's set-up and exchanges cost more than it saves.
const SPLIT_FROM_EDGES: u64 = 1 << 28;
/// Below this mean degree a graph is deep and sparse (road-like): per-level exchanges dominate.
const SPLIT_FROM_MEAN_DEGREE: f64 = 8.0;

/// The engine's choice of GPU count, and why, in words for the user.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuChoice {
    /// GPUs to use (1 ..= available).
    pub gpus: usize,
    /// Why, e.g. "pr on 536,870,912 edges, mean degree 16: splits well".
    pub why: String,
}

/// How many of `available` GPUs to run `algs` on `g` with, given the free bytes of
/// one GPU.
pub fn choose_gpus(g: &Graph, algs: &[Algorithm], available: usize, free_on_one: u64) -> GpuChoice {
    let one = |why: String| GpuChoice { gpus: 1, why };
    if available <= 1 {
        return one("this machine has one GPU".into());
    }
    let needed = DeviceGraph::bytes_needed(g);
    if algs.contains(&Algorithm::Bc) {
        return one("bc runs on one GPU".into());
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

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(n: u32, degree: u32) -> Graph {
        let edges: Vec<(u32, u32)> = (0..n).flat_map(|v| (1..=degree).map(move |d| (v, (v + d) % n))).collect();
        chatty_graph::from_edges(n as usize, &edges, true)
    }

    #[test]
    fn one_gpu_unless_the_run_splits_well_or_does_not_fit() {
        let g = graph(1000, 4);
        let big = u64::MAX;
        assert_eq!(choose_gpus(&g, &[Algorithm::Pr], 1, big).gpus, 1);
        assert_eq!(choose_gpus(&g, &[Algorithm::Pr], 2, big).gpus, 1, "small graph");
        assert_eq!(choose_gpus(&g, &[Algorithm::Bfs], 4, big).gpus, 1);
        let tight = choose_gpus(&g, &[Algorithm::Bfs], 4, 1000);
        assert_eq!(tight.gpus, 4, "does not fit: {}", tight.why);
        assert_eq!(choose_gpus(&g, &[Algorithm::Bc], 4, 1000).gpus, 1, "bc runs on one GPU");
    }
}
