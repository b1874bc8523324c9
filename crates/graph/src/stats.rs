//! Summary statistics of a graph, as `chatty info` reports them.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use rayon::prelude::*;

use crate::csr::{Graph, WeightType};

/// What `chatty info` prints.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphStats {
    /// Number of vertices.
    pub vertices: u64,
    /// Number of stored directed edges (an undirected edge counts twice, a self-loop once).
    pub edges: u64,
    /// Whether the graph is directed.
    pub directed: bool,
    /// The weight type.
    pub weight_type: WeightType,
    /// Edges from a vertex to itself.
    pub self_loops: u64,
    /// Edges that repeat an earlier (source, target) pair.
    pub parallel_edges: u64,
    /// Vertices with no in- or out-edge.
    pub isolated_vertices: u64,
    /// Largest out-degree.
    pub max_out_degree: u64,
    /// Largest in-degree.
    pub max_in_degree: u64,
    /// Whether the transpose is stored.
    pub has_transpose: bool,
}

/// Computes [`GraphStats`] in parallel.
pub fn stats(g: &Graph) -> GraphStats {
    let out = g.out_edges();
    let n = g.num_vertices();
    let in_degree: Vec<AtomicU32> = (0..n).into_par_iter().map(|_| AtomicU32::new(0)).collect();
    let (self_loops, parallel_edges, max_out) = (0..n as u32)
        .into_par_iter()
        .map(|v| {
            let nb = out.neighbors(v);
            for &t in nb {
                in_degree[t as usize].fetch_add(1, Relaxed);
            }
            let loops = nb.iter().filter(|&&t| t == v).count() as u64;
            let parallel = nb.windows(2).filter(|p| p[0] == p[1]).count() as u64;
            (loops, parallel, nb.len() as u64)
        })
        .reduce(|| (0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2.max(b.2)));
    let (max_in, isolated) = (0..n)
        .into_par_iter()
        .map(|v| {
            let d = in_degree[v].load(Relaxed) as u64;
            (d, (d == 0 && out.degree(v as u32) == 0) as u64)
        })
        .reduce(|| (0, 0), |a, b| (a.0.max(b.0), a.1 + b.1));
    GraphStats {
        vertices: n as u64,
        edges: g.num_edges(),
        directed: g.is_directed(),
        weight_type: g.weight_type(),
        self_loops,
        parallel_edges,
        isolated_vertices: isolated,
        max_out_degree: max_out,
        max_in_degree: max_in,
        has_transpose: g.directed && g.inc.is_some(),
    }
}
