//! The engine trait: what every engine (CPU, one GPU, several GPUs, SSD, and any
//! engine added later) implements so that one harness, one report and one set of
//! front ends (the CLI, Python) drive them all.

use std::ops::Deref;
use std::sync::Arc;

use chatty_graph::{Graph, Naming, Progress, VertexNames, VertexOrder, WeightType};
use serde::Serialize;

use crate::{Algorithm, Output, Params, Result};

/// What the report says about an engine.
#[derive(Clone, Debug, Serialize)]
pub struct EngineInfo {
    /// `cpu`, `gpu` or `ssd`.
    pub name: &'static str,
    /// What runs the kernels: thread count, GPU names, stripe files.
    pub devices: Vec<String>,
    /// What [`Trial::seconds`] measures on this engine.
    pub trial_timing: &'static str,
}

/// The graph an engine holds, as the report describes it.
#[derive(Clone, Debug, Serialize)]
pub struct GraphInfo {
    /// Vertices.
    pub n: usize,
    /// Stored directed edges.
    pub m: u64,
    /// Directed or undirected.
    pub directed: bool,
    /// Whether edges carry weights.
    pub weighted: bool,
    /// How they are stored (the report says only `weighted`).
    #[serde(skip)]
    pub weight_type: WeightType,
    /// The first vertex id of the input's numbering (1 for DIMACS, PACE and Matrix
    /// Market inputs); engines work 0-based, front ends show `id + id_base`.
    pub id_base: u32,
    /// Whether the graph is stored renumbered (`chatty convert --reorder`); the
    /// report, sources and answers still use the input's ids.
    #[serde(rename = "renumbered", serialize_with = "is_renumbered")]
    pub order: Option<Arc<VertexOrder>>,
    /// The input's names of the vertices, where they are not `id + id_base`.
    #[serde(rename = "named", serialize_with = "is_named")]
    pub names: Option<Arc<VertexNames>>,
}

fn is_named<S: serde::Serializer>(names: &Option<Arc<VertexNames>>, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_bool(names.is_some())
}

fn is_renumbered<S: serde::Serializer>(order: &Option<Arc<VertexOrder>>, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_bool(order.is_some())
}

impl GraphInfo {
    /// The figures of an in-memory graph.
    pub fn of(g: &Graph) -> GraphInfo {
        GraphInfo {
            n: g.num_vertices(),
            m: g.num_edges(),
            directed: g.is_directed(),
            weighted: g.weight_type() != WeightType::None,
            weight_type: g.weight_type(),
            id_base: g.id_base(),
            order: g.order().cloned(),
            names: g.names().cloned(),
        }
    }

    /// How the user names the vertices: the input's names or numbers from its id
    /// base; with `zero_based`, numbers from 0 whatever the input said.
    pub fn naming(&self, zero_based: bool) -> Naming {
        match (&self.names, zero_based) {
            (_, true) => Naming::From(0),
            (Some(names), false) => Naming::Names(names.clone()),
            (None, false) => Naming::From(self.id_base),
        }
    }
}

/// Bytes one transport moved between devices or processes during a trial.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Transfer {
    /// The transport's name.
    pub transport: String,
    /// How many exchanges used it.
    pub exchanges: u64,
    /// Bytes delivered.
    pub bytes: u64,
}

/// Where an engine's trial spent its wall time outside the kernels ([`Trial::seconds`]),
/// in seconds; all zero for a trial that is all kernel (the CPU engine: its arrays are
/// the answer). The harness adds the kernels and `other`, what is left of the trial's
/// end-to-end time, so the phases account for all of it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Breakdown {
    /// Allocating and initialising the trial's arrays and uploading its inputs.
    pub setup_seconds: f64,
    /// Of the kernels' time, host time spent exchanging values between devices.
    pub exchange_seconds: f64,
    /// Copying the answer into host memory (downloads, gathering parts, renumbering).
    pub download_seconds: f64,
}

/// One trial of one kernel: the answer, the engine's timing, and its statistics.
#[derive(Clone, Debug)]
pub struct Trial {
    /// The per-vertex values, in the graph's vertex ids.
    pub output: Output,
    /// The sources used (empty for kernels without one).
    pub sources: Vec<u32>,
    /// Levels (BFS), rounds (SSSP), iterations (PR), sources (BC), 1 otherwise.
    pub iterations: u64,
    /// Seconds of the engine's timed region ([`EngineInfo::trial_timing`]).
    pub seconds: f64,
    /// Where the trial's wall time went.
    pub breakdown: Breakdown,
    /// PageRank: the L1 change of its last iteration (how far from converged).
    pub residual: Option<f64>,
    /// Bytes moved between devices or processes, per transport (empty on one device).
    pub transfers: Vec<Transfer>,
    /// The engine's own figures (GPU upload and download times, SSD IO rounds...),
    /// serialised from the engine's typed statistics; the report's `detail`.
    pub detail: serde_json::Value,
}

/// An engine: it holds a graph (given to its constructor), readies itself for a
/// kernel once, and runs trials of it. Everything else (sources, defaults, trials,
/// verification, reports) is the [`crate::harness`]'s, shared by every engine.
pub trait Engine: Send + Sync {
    /// The engine's name and devices.
    fn info(&self) -> EngineInfo;
    /// The graph it holds.
    fn graph_info(&self) -> GraphInfo;
    /// Out-degree of `v`, for source picking and edge counts.
    fn out_degree(&self, v: u32) -> u64;
    /// Readies the engine for `alg` (transposes, uploads, memory admission), once
    /// before its trials; a kernel the engine does not have is an
    /// [`crate::Error::Unsupported`] here.
    fn prepare(&mut self, alg: Algorithm) -> Result<()>;
    /// The Δ its SSSP uses when none is given (`None`: its SSSP has no Δ).
    fn default_delta(&self) -> Option<f64>;
    /// Whether an untimed trial should come first (GPU clocks ramp up, memory pools
    /// fill, NCCL connects lazily).
    fn warm_up(&self) -> bool {
        false
    }
    /// One trial of `alg` from `sources` (picked by the harness); `p` has been
    /// checked and its defaults resolved. Long kernels report their sources,
    /// iterations or vertices reached to `progress`.
    fn run(&self, alg: Algorithm, p: &Params, sources: &[u32], progress: &dyn Progress) -> Result<Trial>;
    /// What a person reading the text report should see of a trial besides its time
    /// (IO per round, exchanges between GPUs), one line each.
    fn trial_lines(&self, _trial: &Trial) -> Vec<String> {
        Vec::new()
    }
    /// The graph as the sequential references read it, for `--verify`.
    fn reference_graph(&self) -> Result<HostGraph<'_>>;
    /// Each vertex's parent on a shortest path from `source`, from a BFS or SSSP
    /// trial's `output` in the engine's ids ([`crate::paths::parents`]): one pass over
    /// the graph the engine holds in host memory, or streams.
    fn parents(&self, source: u32, output: &Output) -> Result<Vec<u32>> {
        crate::paths::parents(&*self.reference_graph()?, source, output)
    }
    /// What [`Engine::reference_graph`] is, for the report.
    fn reference_name(&self) -> String {
        "the engine's input graph".into()
    }
    /// The engine's configuration for the report's `detail` (merged with the last
    /// trial's [`Trial::detail`]).
    fn detail(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
    /// The graph in host memory the engine runs on, where it holds one (CPU, GPU): the
    /// harness builds the in-edges a kernel reads there before [`Engine::prepare`], so
    /// that their time is reported alike for every engine.
    fn host_graph_mut(&mut self) -> Option<&mut Graph> {
        None
    }
    /// The graph back from an engine that holds it in host memory (CPU, GPU), freeing
    /// the engine's devices, so that another engine can take it without a reread.
    fn into_graph(self: Box<Self>) -> Option<Graph> {
        None
    }
    /// Notes for the user gathered since the last call (a fallback taken, a
    /// measurement made); the front end prints them.
    fn take_notes(&mut self) -> Vec<String> {
        Vec::new()
    }
    /// The engine as its own type, for a front end that drives settings only one
    /// engine has (`bench multi-gpu` switches the multi-GPU engine's transport
    /// between runs on one upload).
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
}

/// A graph in host memory, the engine's own or one it read for the purpose.
pub enum HostGraph<'a> {
    /// The engine holds it anyway.
    Borrowed(&'a Graph),
    /// Read for the caller (the SSD engine reads its pages back).
    Owned(Box<Graph>),
}

impl Deref for HostGraph<'_> {
    type Target = Graph;
    fn deref(&self) -> &Graph {
        match self {
            HostGraph::Borrowed(g) => g,
            HostGraph::Owned(g) => g,
        }
    }
}
