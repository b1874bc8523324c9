//! The CPU engine: rayon threads over the in-memory CSR.

use std::sync::Arc;
use std::time::Instant;

use chatty_graph::{Graph, Progress};

use crate::engine::{Breakdown, Engine, EngineInfo, GraphInfo, HostGraph, Trial};
use crate::{pool, run_kernel, sssp, Algorithm, Params, Result};

/// Bytes per vertex a kernel allocates on the CPU (results, frontiers, per-thread
/// bins at their worst), for the admission check.
fn vertex_bytes(alg: Algorithm) -> u64 {
    match alg {
        Algorithm::Bfs => 13,  // depths, a sparse frontier and its successor, a bitmap
        Algorithm::Sssp => 20, // distances, bucket entries
        Algorithm::Pr => 20,   // scores, f32 contributions, out-weights (weighted)
        Algorithm::Wcc => 4,
        Algorithm::Bc => 25, // depth, σ (then δ's coefficient), scores, level lists, two level bitmaps
        Algorithm::Spmv => 16,
        Algorithm::Tc | Algorithm::Clustering => 32, // degrees, offsets, counts (and coefficients); oriented edges on top
        Algorithm::Kcore => 12,                      // degrees, the vertices left, a frontier
        Algorithm::Scc => 24,                        // labels, two counts, colours, two bitmaps, frontiers
        Algorithm::Lpa => 20,                        // degrees, order, colours, labels, colour classes
        Algorithm::Eigenvector | Algorithm::Katz => 16, // two score vectors
        Algorithm::Hits => 24,                       // authorities, hubs and the next authorities
        Algorithm::Degree => 8,
        // A level's weights, offsets, communities and totals, the input's place in it
        // and the random order; a level's edge lists on top.
        Algorithm::Louvain | Algorithm::Leiden => 96,
        // Scores, and each thread's queue and marks.
        Algorithm::Closeness => 8 + 8 * rayon::current_num_threads() as u64,
    }
}

/// Refuses an allocation the machine cannot hold, as the graph layer does.
fn check_memory(what: &str, bytes: u64) -> Result<()> {
    chatty_graph::check_memory(what, bytes).map_err(crate::Error::engine)
}

/// The CPU engine over a graph in memory.
pub struct CpuEngine {
    graph: Graph,
    /// The pool its kernels run in; `None`: the caller's (rayon's global pool).
    pool: Option<Arc<rayon::ThreadPool>>,
}

impl CpuEngine {
    /// The engine over `graph` (in-edges are built by [`Engine::prepare`] when a
    /// kernel pulls), running in the caller's thread pool.
    pub fn new(graph: Graph) -> CpuEngine {
        CpuEngine { graph, pool: None }
    }

    /// The engine over `graph`, running its kernels in `pool`.
    pub fn with_pool(graph: Graph, pool: Arc<rayon::ThreadPool>) -> CpuEngine {
        CpuEngine { graph, pool: Some(pool) }
    }

    /// The threads its kernels run on.
    pub fn threads(&self) -> usize {
        self.pool.as_ref().map_or_else(rayon::current_num_threads, |p| p.current_num_threads())
    }

    /// The graph.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }
}

impl Engine for CpuEngine {
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }

    fn info(&self) -> EngineInfo {
        EngineInfo { name: "cpu", devices: vec![format!("cpu ({} threads)", self.threads())], trial_timing: "wall time of the kernel" }
    }

    fn graph_info(&self) -> GraphInfo {
        GraphInfo::of(&self.graph)
    }

    fn out_degree(&self, v: u32) -> u64 {
        self.graph.out_edges().degree(v) as u64
    }

    fn prepare(&mut self, alg: Algorithm) -> Result<()> {
        if alg.wants_in_edges() {
            self.graph.build_in_edges().map_err(crate::Error::engine)?;
        }
        let (n, m) = (self.graph.num_vertices() as u64, self.graph.num_edges());
        // TC's oriented lists hold each undirected edge once: half the stored edges, or
        // all of a directed graph's.
        let edges = match alg {
            Algorithm::Tc | Algorithm::Clustering => 4 * m,
            // Level 0's lists (a directed graph's out- and in-edges merged), 12 bytes an
            // entry, and the 16-byte rows they are built from, alive together.
            Algorithm::Louvain | Algorithm::Leiden => 28 * if self.graph.is_directed() { 2 * m } else { m },
            _ => 0,
        };
        check_memory(&format!("{}'s arrays over {n} vertices", alg.name()), n * vertex_bytes(alg) + edges)?;
        if alg == Algorithm::Sssp {
            sssp::check_weights(&self.graph)?;
        }
        Ok(())
    }

    fn default_delta(&self) -> Option<f64> {
        Some(sssp::default_delta(&self.graph))
    }

    fn run(&self, alg: Algorithm, p: &Params, sources: &[u32], progress: &dyn Progress) -> Result<Trial> {
        let start = Instant::now();
        // On a worker: the kernel's parallel loops start inside the pool, not sent in
        // from this thread one at a time (`pool`).
        let wait = pool::wait_policy()?;
        let kernel = || pool::run_on_pool(wait, || run_kernel(&self.graph, alg, p, sources, progress));
        let (output, iterations, residual) = match &self.pool {
            Some(own) => own.install(kernel)?,
            None => kernel()?,
        };
        let seconds = start.elapsed().as_secs_f64();
        Ok(Trial {
            output,
            sources: sources.to_vec(),
            iterations,
            seconds,
            breakdown: Breakdown::default(),
            residual,
            transfers: Vec::new(),
            detail: serde_json::Value::Null,
        })
    }

    fn detail(&self) -> serde_json::Value {
        serde_json::json!({ "graph_bytes": self.graph.size_bytes() })
    }

    fn reference_graph(&self) -> Result<HostGraph<'_>> {
        Ok(HostGraph::Borrowed(&self.graph))
    }

    fn host_graph_mut(&mut self) -> Option<&mut Graph> {
        Some(&mut self.graph)
    }

    fn into_graph(self: Box<Self>) -> Option<Graph> {
        Some(self.graph)
    }
}
