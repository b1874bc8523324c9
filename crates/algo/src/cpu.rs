//! The CPU engine: rayon threads over the in-memory CSR.

use std::time::Instant;

use chatty_graph::Graph;

use crate::engine::{Engine, EngineInfo, GraphInfo, HostGraph, Trial};
use crate::{run_kernel, sssp, Algorithm, Params, Result};

/// The CPU engine over a graph in memory.
pub struct CpuEngine {
    graph: Graph,
}

impl CpuEngine {
    /// The engine over `graph` (in-edges are built by [`Engine::prepare`] when a
    /// kernel pulls).
    pub fn new(graph: Graph) -> CpuEngine {
        CpuEngine { graph }
    }

    /// The graph.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }
}

impl Engine for CpuEngine {
    fn info(&self) -> EngineInfo {
        EngineInfo {
            name: "cpu",
            devices: vec![format!("cpu ({} threads)", rayon::current_num_threads())],
            trial_timing: "wall time of the kernel",
        }
    }

    fn graph_info(&self) -> GraphInfo {
        GraphInfo::of(&self.graph)
    }

    fn out_degree(&self, v: u32) -> u64 {
        self.graph.out_edges().degree(v) as u64
    }

    fn prepare(&mut self, alg: Algorithm) -> Result<()> {
        if alg.wants_in_edges() {
            self.graph.build_in_edges();
        }
        if alg == Algorithm::Sssp {
            sssp::check_weights(&self.graph)?;
        }
        Ok(())
    }

    fn default_delta(&self) -> Option<f64> {
        Some(sssp::default_delta(&self.graph))
    }

    fn run(&self, alg: Algorithm, p: &Params, sources: &[u32]) -> Result<Trial> {
        let start = Instant::now();
        let (output, iterations) = run_kernel(&self.graph, alg, p, sources)?;
        let seconds = start.elapsed().as_secs_f64();
        Ok(Trial { output, sources: sources.to_vec(), iterations, seconds, transfers: Vec::new(), detail: serde_json::Value::Null })
    }

    fn detail(&self) -> serde_json::Value {
        serde_json::json!({ "graph_bytes": self.graph.size_bytes() })
    }

    fn reference_graph(&self) -> Result<HostGraph<'_>> {
        Ok(HostGraph::Borrowed(&self.graph))
    }
}
