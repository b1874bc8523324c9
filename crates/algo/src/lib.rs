//! ChattyGraph's algorithms on CPU threads: the program model (frontiers,
//! [`edge_map`](edge_map::edge_map), [`vertex_map`](edge_map::vertex_map)), the six
//! kernels, and beside each kernel an independent sequential reference that
//! `--verify` and the tests compare against.
//!
//! # Brief overview
//!
//! - [`frontier::Frontier`]: a vertex subset, sparse ids or a dense bitmap.
//! - [`edge_map::EdgeMapGraph`]: what a kernel needs of a graph, implemented by the
//!   in-memory CSR here and by the SSD engine's striped pages: `edge_map` (an
//!   [`edge_map::EdgeOp`] along a frontier's edges, push or pull) and `sum_in`.
//! - Kernels, one module each, in GAPBS order (header with citations, kernel,
//!   reference, verifier), each written once over [`edge_map::EdgeMapGraph`]:
//!   [`bfs`], [`sssp`], [`pr`], [`wcc`], [`bc`], [`spmv`], then the structural ones,
//!   [`tc`] (and clustering), [`kcore`], [`scc`]; [`run_kernel`] dispatches.
//! - [`Engine`]: the one engine trait (CPU here as [`CpuEngine`]; GPU, multi-GPU and
//!   SSD in their crates), and [`harness`]: the one trial loop, verification and
//!   JSON report every engine shares.
//!
//! ```
//! use chatty_algo::{harness, Algorithm, CpuEngine, Engine, Params};
//! let g = chatty_graph::from_edges(4, &[(0, 1), (1, 2), (2, 3)], false).unwrap();
//! let mut cpu = CpuEngine::new(g);
//! let opts = harness::Options { trials: 1, verify: true, against: None };
//! let report = harness::run(&mut cpu, Algorithm::Bfs, &Params::default(), &opts, |_| {}).unwrap();
//! assert!(report.verification.as_ref().unwrap().is_ok());
//! ```
//!
//! This crate knows nothing of GPUs, SSDs or file formats.
#![deny(missing_docs)]

pub mod bc;
pub mod bc_weighted;
pub mod bfs;
pub mod centrality;
pub mod community;
mod cpu;
pub mod edge_map;
mod engine;
mod error;
pub mod frontier;
pub mod harness;
pub mod kcore;
pub mod lpa;
pub mod paths;
pub mod pool;
pub mod pr;
mod region;
pub mod renumber;
pub mod scc;
mod simple;
pub mod spmv;
pub mod sssp;
mod summary;
pub mod tc;
pub mod tuning;
pub mod wcc;

use chatty_graph::{Graph, Progress};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;

pub use cpu::CpuEngine;
pub use edge_map::{Direction, EdgeMapGraph};
pub use engine::{Breakdown, Engine, EngineInfo, GraphInfo, HostGraph, Transfer, Trial};
pub use error::{Error, Result};
pub use pr::{PrMethod, PrParams};
pub use sssp::Distances;
pub use summary::Summary;

/// The kernels.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// Breadth-first search: hop distances.
    Bfs,
    /// Single-source shortest paths.
    Sssp,
    /// PageRank.
    Pr,
    /// Weakly connected components.
    Wcc,
    /// Betweenness centrality.
    Bc,
    /// Sparse matrix times vector.
    Spmv,
    /// Triangle counting: the triangles on each vertex.
    Tc,
    /// Local clustering coefficients.
    Clustering,
    /// Core numbers (k-core decomposition).
    Kcore,
    /// Strongly connected components.
    Scc,
    /// Label propagation communities.
    Lpa,
    /// Eigenvector centrality.
    Eigenvector,
    /// Katz centrality.
    Katz,
    /// HITS hubs and authorities.
    Hits,
    /// Degree centrality.
    Degree,
    /// Closeness centrality.
    Closeness,
    /// Louvain communities.
    Louvain,
    /// Leiden communities.
    Leiden,
}

impl Algorithm {
    /// Every kernel, in the order the docs list them.
    pub const ALL: [Algorithm; 18] = [
        Algorithm::Bfs,
        Algorithm::Sssp,
        Algorithm::Pr,
        Algorithm::Wcc,
        Algorithm::Bc,
        Algorithm::Spmv,
        Algorithm::Tc,
        Algorithm::Clustering,
        Algorithm::Kcore,
        Algorithm::Scc,
        Algorithm::Lpa,
        Algorithm::Eigenvector,
        Algorithm::Katz,
        Algorithm::Hits,
        Algorithm::Degree,
        Algorithm::Closeness,
        Algorithm::Louvain,
        Algorithm::Leiden,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Bfs => "bfs",
            Algorithm::Sssp => "sssp",
            Algorithm::Pr => "pr",
            Algorithm::Wcc => "wcc",
            Algorithm::Bc => "bc",
            Algorithm::Spmv => "spmv",
            Algorithm::Tc => "tc",
            Algorithm::Clustering => "clustering",
            Algorithm::Kcore => "kcore",
            Algorithm::Scc => "scc",
            Algorithm::Lpa => "lpa",
            Algorithm::Eigenvector => "eigenvector",
            Algorithm::Katz => "katz",
            Algorithm::Hits => "hits",
            Algorithm::Degree => "degree",
            Algorithm::Closeness => "closeness",
            Algorithm::Louvain => "louvain",
            Algorithm::Leiden => "leiden",
        }
    }

    /// Parses a command-line name.
    pub fn from_name(s: &str) -> Option<Algorithm> {
        Algorithm::ALL.into_iter().find(|a| a.name() == s)
    }

    /// Whether the kernel takes a source vertex.
    pub fn has_source(self) -> bool {
        matches!(self, Algorithm::Bfs | Algorithm::Sssp | Algorithm::Bc)
    }

    /// Whether runs of the kernel with `p` start from sources: those that take one,
    /// and closeness estimated from a sample.
    pub fn starts_from_sources(self, p: &Params) -> bool {
        self.has_source() || (self == Algorithm::Closeness && matches!(p.bc_sources, BcSources::Random(_) | BcSources::List(_)))
    }

    /// Whether the kernel reads in-edges (pull), so a directed graph needs its transpose.
    pub fn wants_in_edges(self) -> bool {
        !matches!(self, Algorithm::Sssp | Algorithm::Bc)
    }

    /// The six kernels every engine has (the seeds' benchmarks). The others are written
    /// once for the CPU's adjacency or edge map: the MPI engine refuses them, the GPU
    /// engine runs tc, clustering, kcore and scc on one GPU (`chatty_gpu::has_kernel`).
    pub fn on_every_engine(self) -> bool {
        matches!(self, Algorithm::Bfs | Algorithm::Sssp | Algorithm::Pr | Algorithm::Wcc | Algorithm::Bc | Algorithm::Spmv)
    }

    /// The kernels that read whole neighbour lists at random (intersect or count
    /// them, or gather along out-edges as HITS's hub step does), which need the
    /// adjacency in memory: an engine that streams refuses them.
    pub fn reads_lists(self) -> bool {
        matches!(
            self,
            Algorithm::Tc
                | Algorithm::Clustering
                | Algorithm::Kcore
                | Algorithm::Lpa
                | Algorithm::Hits
                | Algorithm::Degree
                | Algorithm::Closeness
                | Algorithm::Louvain
                | Algorithm::Leiden
        )
    }

    /// What a run of the kernel on a directed graph should tell the user it did, where
    /// that is not what the kernel's name alone says.
    pub fn directed_note(self) -> Option<&'static str> {
        match self {
            Algorithm::Tc => Some("tc counts the triangles of the undirected simple graph beneath this directed one"),
            Algorithm::Kcore => Some("kcore counts in-degree plus out-degree, as networkx does on a DiGraph"),
            _ => None,
        }
    }

    /// An undirected graph's note, as [`Algorithm::directed_note`].
    pub fn undirected_note(self) -> Option<&'static str> {
        (self == Algorithm::Scc).then_some("scc: on an undirected graph the strong components are the weak ones (wcc)")
    }

    /// `--help`'s line for the kernel.
    pub fn describe(self) -> &'static str {
        match self {
            Algorithm::Bfs => "breadth-first search: hop distances from the source",
            Algorithm::Sssp => "single-source shortest paths",
            Algorithm::Pr => "PageRank (networkx's definition)",
            Algorithm::Wcc => "weakly connected components: the smallest id in each component",
            Algorithm::Bc => "betweenness centrality, Brandes, summed over the sources (networkx's subset scaling)",
            Algorithm::Spmv => "y = A·x, one sparse matrix-vector product",
            Algorithm::Tc => "triangle counting: the triangles on each vertex (of the undirected simple graph)",
            Algorithm::Clustering => "local clustering coefficient of each vertex (undirected graphs)",
            Algorithm::Kcore => "k-core decomposition: each vertex's core number",
            Algorithm::Scc => "strongly connected components: the smallest id in each component",
            Algorithm::Lpa => "label propagation communities, networkx's semi-synchronous ones: the smallest id in each",
            Algorithm::Eigenvector => "eigenvector centrality (networkx's, unweighted; --tolerance and --max-iters as PageRank's)",
            Algorithm::Katz => "Katz centrality (networkx's, unweighted; --katz-alpha, --katz-beta, --tolerance, --max-iters)",
            Algorithm::Hits => "HITS hubs and authorities (networkx's hits; --weighted, --tolerance, --max-iters)",
            Algorithm::Degree => "degree centrality (networkx's; --degree in, out or total)",
            Algorithm::Closeness => "closeness centrality (networkx's, hop distances into each vertex; --no-wf-improved)",
            Algorithm::Louvain => "Louvain communities, parallel: the smallest id in each, and the modularity (--resolution, --threshold, --max-level, --seed)",
            Algorithm::Leiden => "Leiden communities: Louvain with refinement, every community connected (--resolution, --max-level, --seed)",
        }
    }
}

/// Which sources BC sums over.
#[derive(Clone, Debug, PartialEq)]
pub enum BcSources {
    /// The trial's source (`--source`, or one picked at random).
    One,
    /// `k` sources picked at random from the seed.
    Random(usize),
    /// Every vertex.
    All,
    /// These vertices (a sample drawn by the caller, e.g. networkx's).
    List(Vec<u32>),
}

impl BcSources {
    /// How many sources a run sums over on `n` vertices.
    pub fn count(&self, n: usize) -> usize {
        match self {
            BcSources::One => 1,
            BcSources::Random(k) => (*k).min(n),
            BcSources::All => n,
            BcSources::List(v) => v.len(),
        }
    }
}

/// Parameters of a run; the defaults are design.md's.
#[derive(Clone, Debug)]
pub struct Params {
    /// The source; `None` picks a random vertex with out-edges per trial, from `seed`.
    pub source: Option<u32>,
    /// Seed for source picking.
    pub seed: u64,
    /// Δ for SSSP; `None` uses [`sssp::default_delta`].
    pub delta: Option<f64>,
    /// PageRank's parameters (the tolerance and iteration cap also eigenvector's and Katz's).
    pub pr: PrParams,
    /// Katz centrality's parameters.
    pub katz: KatzParams,
    /// Degree centrality: which degree (a directed graph's in, out or both).
    pub degree: DegreeKind,
    /// Closeness: Wasserman and Faust's scaling by the share of vertices reached
    /// (networkx's `wf_improved`, on).
    pub wf_improved: bool,
    /// Louvain's and Leiden's resolution, threshold and level cap (their seed is `seed`).
    pub community: community::CommunityParams,
    /// BC's sources.
    pub bc_sources: BcSources,
    /// SpMV's x (ones if `None`).
    pub x: Option<Vec<f64>>,
    /// PageRank's teleport weights, one per vertex (networkx's `personalization`;
    /// normalised; uniform if `None`).
    pub personalization: Option<Vec<f64>>,
    /// Direction policy of BFS.
    pub direction: Direction,
    /// BFS and SSSP: also find each vertex's parent on a shortest path
    /// ([`paths::parents`]), returned in the report.
    pub parents: bool,
    /// Read the edge weights where networkx's `weight='weight'` does: PageRank shares
    /// a score by out-weight, HITS weighs its matrix, BC takes shortest paths by weight
    /// (Dijkstra). An unweighted graph's edges weigh 1 either way.
    pub weighted: bool,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            source: None,
            seed: 27491095,
            delta: None,
            pr: PrParams::default(),
            katz: KatzParams::default(),
            degree: DegreeKind::Total,
            wf_improved: true,
            community: community::CommunityParams::default(),
            bc_sources: BcSources::One,
            x: None,
            personalization: None,
            direction: Direction::Auto,
            parents: false,
            weighted: false,
        }
    }
}

/// Katz centrality's parameters, networkx's `katz_centrality` arguments.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KatzParams {
    /// The attenuation factor (networkx's `alpha`, 0.1): the share of a neighbour's
    /// score a vertex collects; the iteration converges for alpha below 1/λ_max.
    pub alpha: f64,
    /// The score every vertex gets of its own (networkx's `beta`, 1.0).
    pub beta: f64,
    /// Scale the scores to unit L2 norm (networkx's `normalized`, on).
    pub normalized: bool,
}

impl Default for KatzParams {
    fn default() -> Self {
        KatzParams { alpha: 0.1, beta: 1.0, normalized: true }
    }
}

/// Which degree degree centrality counts (the same on an undirected graph).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DegreeKind {
    /// Edges into the vertex (networkx's `in_degree_centrality`).
    In,
    /// Edges out of it (`out_degree_centrality`).
    Out,
    /// Both (`degree_centrality`).
    Total,
}

impl DegreeKind {
    /// Every kind, by its name.
    pub const ALL: [DegreeKind; 3] = [DegreeKind::In, DegreeKind::Out, DegreeKind::Total];

    /// The name the CLI and Python take.
    pub fn name(self) -> &'static str {
        match self {
            DegreeKind::In => "in",
            DegreeKind::Out => "out",
            DegreeKind::Total => "total",
        }
    }

    /// The kind called `name`.
    pub fn from_name(name: &str) -> Option<DegreeKind> {
        DegreeKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// A kernel's result.
#[derive(Clone, Debug, PartialEq)]
pub enum Output {
    /// BFS depths ([`bfs::UNREACHED`] when unreachable).
    Depths(Vec<u32>),
    /// SSSP distances.
    Distances(Distances),
    /// PageRank, BC or SpMV values.
    Values(Vec<f64>),
    /// WCC and SCC labels.
    Labels(Vec<u32>),
    /// Triangles on each vertex.
    Triangles(Vec<u64>),
    /// Core numbers.
    Cores(Vec<u32>),
    /// HITS: each vertex's hub and authority scores.
    Hits {
        /// Hub scores (summing to 1).
        hubs: Vec<f64>,
        /// Authority scores (summing to 1).
        authorities: Vec<f64>,
    },
    /// Louvain's and Leiden's communities and their modularity.
    Communities {
        /// Each vertex's community, labelled by its smallest member.
        labels: Vec<u32>,
        /// The partition's modularity at the run's resolution.
        modularity: f64,
    },
}

impl Output {
    /// The number of vertices it has a value for.
    pub fn len(&self) -> usize {
        match self {
            Output::Depths(d) => d.len(),
            Output::Distances(Distances::Int(d)) => d.len(),
            Output::Distances(Distances::Float(d)) => d.len(),
            Output::Values(v) | Output::Hits { hubs: v, .. } => v.len(),
            Output::Labels(l) | Output::Communities { labels: l, .. } => l.len(),
            Output::Triangles(t) => t.len(),
            Output::Cores(c) => c.len(),
        }
    }

    /// Whether it has no values (a graph without vertices).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Edges a run examined, counted as stored directed edges: for BFS and SSSP the
/// out-edges of every reached vertex, for PR m per iteration, for BC m per source,
/// for WCC and SpMV m. Computed after the timed run, from its output.
pub const EDGES_COUNTING: &str = "stored directed edges examined: out-edges of reached vertices per source (bfs, sssp, bc), m per \
                                  iteration (pr, eigenvector, katz), m (wcc, spmv, tc, clustering, kcore, scc, lpa, degree, louvain, leiden), m per search (closeness: one from each vertex, or each sampled source)";

/// [`EDGES_COUNTING`]'s count for a trial on a graph of `m` edges and out-degrees `degree`.
pub fn edges_traversed(alg: Algorithm, m: u64, degree: impl Fn(u32) -> u64 + Sync, t: &Trial) -> u64 {
    let reached_edges = |n: usize, reached: &(dyn Fn(usize) -> bool + Sync)| -> u64 {
        (0..n).into_par_iter().filter(|&v| reached(v)).map(|v| degree(v as u32)).sum()
    };
    match &t.output {
        Output::Depths(d) => reached_edges(d.len(), &|v| d[v] != bfs::UNREACHED),
        Output::Distances(Distances::Int(d)) => reached_edges(d.len(), &|v| d[v] != u64::MAX),
        Output::Distances(Distances::Float(d)) => reached_edges(d.len(), &|v| d[v].is_finite()),
        _ if alg == Algorithm::Bc => m * t.sources.len() as u64,
        _ => m * t.iterations,
    }
}

/// The sources of trial `trial` on a graph of `n` vertices with out-degrees
/// `degree`: `--source` if given, else GAPBS-style random vertices with at least one
/// out-edge (any vertex if the graph has no edges), the same sequence on every engine.
/// BC's random sources are drawn without replacement; asking for as many as there are
/// such vertices, or more, takes them all.
pub fn pick_sources(alg: Algorithm, n: usize, degree: impl Fn(u32) -> u64, has_edges: bool, p: &Params, trial: u64) -> Result<Vec<u32>> {
    if n == 0 {
        return Err(Error::NoVertices);
    }
    // `bc_sources` is BC's and closeness's (its sample) alone: every other kernel has
    // one source.
    let bc_sources = if matches!(alg, Algorithm::Bc | Algorithm::Closeness) { &p.bc_sources } else { &BcSources::One };
    if let Some(s) = p.source {
        if s as usize >= n {
            return Err(Error::NotAVertex { vertex: s, n });
        }
        if *bc_sources == BcSources::One {
            return Ok(vec![s]);
        }
    }
    let count = match bc_sources {
        BcSources::All => return Ok((0..n as u32).collect()),
        BcSources::List(v) => {
            return match v.iter().find(|&&s| s as usize >= n) {
                Some(&s) => Err(Error::NotAVertex { vertex: s, n }),
                None => Ok(v.clone()),
            }
        }
        BcSources::One => 1,
        BcSources::Random(k) => *k,
    };
    let eligible = |v: u32| !has_edges || degree(v) > 0;
    if count > 1 {
        // A sample without replacement (rand's), reproducible from the seed and trial.
        let all: Vec<u32> = (0..n as u32).filter(|&v| eligible(v)).collect();
        if count >= all.len() {
            return Ok(all);
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(p.seed ^ (trial + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        return Ok(rand::seq::index::sample(&mut rng, all.len(), count).into_iter().map(|i| all[i]).collect());
    }
    // One source, GAPBS-style: the first vertex with out-edges of a SplitMix64 stream
    // (the sequence published benchmarks ran on).
    let mut x = p.seed ^ (trial + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut next = || {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    loop {
        let v = (next() % n as u64) as u32;
        if eligible(v) {
            return Ok(vec![v]);
        }
    }
}

/// Checks `p` against a graph of `n` vertices: the one check of kernel parameters,
/// which the harness makes before any trial on every engine, whichever front end
/// called it. Δ's default is resolved by the harness from [`Engine::default_delta`].
pub fn check_params(alg: Algorithm, n: usize, p: &Params) -> Result<()> {
    check_scalar_params(p)?;
    tuning::Tuning::get().check()?;
    if p.parents && !matches!(alg, Algorithm::Bfs | Algorithm::Sssp) {
        let problem = format!("come with distances, which bfs and sssp find and {} does not", alg.name());
        return Err(Error::Parameter { name: "parents", problem });
    }
    if alg == Algorithm::Spmv {
        if let Some(x) = &p.x {
            if x.len() != n {
                return Err(Error::Parameter { name: "x", problem: format!("has {} entries for {n} vertices", x.len()) });
            }
            if let Some(v) = x.iter().position(|v| !v.is_finite()) {
                return Err(Error::Parameter { name: "x", problem: format!("must be finite; x[{v}] is {}", x[v]) });
            }
        }
    }
    if let (Algorithm::Pr, Some(t)) = (alg, &p.personalization) {
        if t.len() != n {
            return Err(Error::Parameter { name: "personalization", problem: format!("has {} entries for {n} vertices", t.len()) });
        }
        if t.iter().any(|w| !w.is_finite() || *w < 0.0) || t.iter().sum::<f64>() <= 0.0 {
            let problem = "weights must be non-negative, finite, and not all zero".into();
            return Err(Error::Parameter { name: "personalization", problem });
        }
    }
    Ok(())
}

/// The part of [`check_params`] that needs no graph (Δ, PageRank's damping,
/// tolerance and iteration cap): a front end checks it before a long read.
pub fn check_scalar_params(p: &Params) -> Result<()> {
    if let Some(delta) = p.delta {
        if !(delta > 0.0 && delta.is_finite()) {
            return Err(Error::Parameter { name: "delta", problem: format!("must be positive and finite, not {delta}") });
        }
    }
    if !(p.pr.tolerance >= 0.0 && p.pr.tolerance.is_finite()) {
        return Err(Error::Parameter { name: "tolerance", problem: format!("must be non-negative and finite, not {}", p.pr.tolerance) });
    }
    if p.pr.max_iters == 0 {
        return Err(Error::Parameter { name: "max_iters", problem: "must be at least 1".into() });
    }
    for (name, value) in [("katz_alpha", p.katz.alpha), ("katz_beta", p.katz.beta)] {
        if !value.is_finite() {
            return Err(Error::Parameter { name, problem: format!("must be finite, not {value}") });
        }
    }
    if !(p.community.resolution >= 0.0 && p.community.resolution.is_finite()) {
        return Err(Error::Parameter {
            name: "resolution",
            problem: format!("must be non-negative and finite, not {}", p.community.resolution),
        });
    }
    if p.community.max_level == Some(0) {
        return Err(Error::Parameter { name: "max_level", problem: "must be a positive integer".into() });
    }
    if !p.community.threshold.is_finite() {
        return Err(Error::Parameter { name: "threshold", problem: format!("must be finite, not {}", p.community.threshold) });
    }
    if !(p.pr.damping > 0.0 && p.pr.damping < 1.0) {
        let problem = format!("(networkx's alpha) lies between 0 and 1, exclusive, not {}", p.pr.damping);
        return Err(Error::Parameter { name: "damping", problem });
    }
    Ok(())
}

/// SpMV's x: `p.x`, or all ones.
pub fn spmv_x(n: usize, p: &Params) -> std::borrow::Cow<'_, [f64]> {
    match &p.x {
        Some(x) => std::borrow::Cow::Borrowed(x),
        None => std::borrow::Cow::Owned(vec![1.0; n]),
    }
}

/// Runs `alg` on any [`EdgeMapGraph`] for the given sources; returns the output, the
/// iteration count (levels, rounds, iterations, or 1) and PageRank's residual. The strategy follows what
/// the graph offers: delta-stepping, Afforest and marked-successor Brandes need the
/// adjacency in memory ([`EdgeMapGraph::csr`]), Bellman–Ford, label propagation and
/// edge-map Brandes only stream.
pub fn run_kernel<G: EdgeMapGraph + ?Sized>(
    g: &G,
    alg: Algorithm,
    p: &Params,
    sources: &[u32],
    progress: &dyn Progress,
) -> Result<(Output, u64, Option<f64>)> {
    Ok(match alg {
        Algorithm::Bfs => {
            let (d, levels) = bfs::bfs(g, sources[0], p.direction, progress)?;
            (Output::Depths(d), levels as u64, None)
        }
        Algorithm::Sssp => {
            let method = match (g.csr(), p.delta) {
                (Some(_), Some(delta)) => sssp::Method::DeltaStepping(delta),
                (Some(csr), None) => sssp::Method::DeltaStepping(sssp::default_delta(csr)),
                (None, _) => sssp::Method::BellmanFord,
            };
            let (d, rounds) = sssp::sssp(g, sources[0], method)?;
            (Output::Distances(d), rounds, None)
        }
        Algorithm::Pr => {
            let (s, iters, residual) = pr::pagerank(g, p.pr, p.personalization.as_deref(), p.weighted, progress)?;
            (Output::Values(s), iters as u64, Some(residual))
        }
        Algorithm::Wcc => (Output::Labels(wcc::wcc(g)?), 1, None),
        Algorithm::Bc if weighs(g, p) => {
            (Output::Values(bc_weighted::bc(in_memory(g, alg)?, sources, progress)?), sources.len() as u64, None)
        }
        Algorithm::Bc => (Output::Values(bc::bc(g, sources, progress)?), sources.len() as u64, None),
        Algorithm::Spmv => (Output::Values(spmv::spmv(g, &spmv_x(g.num_vertices(), p))?), 1, None),
        Algorithm::Tc => (Output::Triangles(tc::triangles(in_memory(g, alg)?, progress)?.0), 1, None),
        Algorithm::Clustering => (Output::Values(tc::clustering(in_memory(g, alg)?, progress)?), 1, None),
        Algorithm::Kcore => (Output::Cores(kcore::core_numbers(in_memory(g, alg)?, progress)?), 1, None),
        Algorithm::Scc => (Output::Labels(scc::scc(g, progress)?), 1, None),
        Algorithm::Lpa => (Output::Labels(lpa::communities(in_memory(g, alg)?, progress)?), 1, None),
        Algorithm::Eigenvector => {
            let (x, iters, change) = centrality::eigenvector(g, p.pr, progress)?;
            (Output::Values(x), iters as u64, Some(change))
        }
        Algorithm::Katz => {
            let (x, iters, change) = centrality::katz(g, p.pr, p.katz, progress)?;
            (Output::Values(x), iters as u64, Some(change))
        }
        Algorithm::Hits => {
            let (hubs, authorities, iters, change) = centrality::hits(in_memory(g, alg)?, p.pr, p.weighted, progress)?;
            (Output::Hits { hubs, authorities }, iters as u64, Some(change))
        }
        Algorithm::Degree => (Output::Values(centrality::degree(in_memory(g, alg)?, p.degree)?), 1, None),
        // One iteration a search.
        Algorithm::Closeness => match closeness_pivots(p, sources) {
            Some(pivots) => {
                let x = centrality::closeness_sampled(in_memory(g, alg)?, pivots, p.wf_improved, progress);
                (Output::Values(x), pivots.len() as u64, None)
            }
            None => (Output::Values(centrality::closeness(in_memory(g, alg)?, p.wf_improved, progress)?), g.num_vertices() as u64, None),
        },
        Algorithm::Louvain | Algorithm::Leiden => {
            let method = community_method(alg);
            let (labels, modularity) = community::communities(in_memory(g, alg)?, method, p.community, p.seed, progress)?;
            (Output::Communities { labels, modularity }, 1, None)
        }
    })
}

/// Whether the run reads `g`'s weights: asked to, and it has some.
fn weighs<G: EdgeMapGraph + ?Sized>(g: &G, p: &Params) -> bool {
    p.weighted && g.weight_type() != chatty_graph::WeightType::None
}

/// Closeness's sources where it is estimated from a sample (`--sources K` or a
/// list); `None`: exact, from every vertex.
fn closeness_pivots<'a>(p: &Params, sources: &'a [u32]) -> Option<&'a [u32]> {
    Algorithm::Closeness.starts_from_sources(p).then_some(sources)
}

/// The community method a kernel names.
fn community_method(alg: Algorithm) -> community::Method {
    match alg {
        Algorithm::Leiden => community::Method::Leiden,
        _ => community::Method::Louvain,
    }
}

/// The adjacency in memory, which the kernels that intersect or count neighbour lists
/// read; an engine that only streams edges has none.
fn in_memory<G: EdgeMapGraph + ?Sized>(g: &G, alg: Algorithm) -> Result<&Graph> {
    g.csr().ok_or_else(|| Error::Unsupported(format!("{} needs the adjacency in memory, which this engine streams", alg.name())))
}

/// No value of `output` is NaN or infinite, but the distance of an unreached vertex
/// (`+inf`).
fn numbers_only(output: &Output) -> Result<()> {
    let bad = match output {
        Output::Values(v) => v.par_iter().position_first(|x| !x.is_finite()).map(|i| (i, v[i])),
        Output::Hits { hubs, authorities } => {
            [hubs, authorities].into_iter().find_map(|v| v.par_iter().position_first(|x| !x.is_finite()).map(|i| (i, v[i])))
        }
        Output::Distances(Distances::Float(d)) => d.par_iter().position_first(|x| x.is_nan() || *x == f64::NEG_INFINITY).map(|i| (i, d[i])),
        _ => None,
    };
    match bad {
        Some((v, x)) => Err(Error::Mismatch(format!("the value of vertex {v} is {x}, not a number"))),
        None => Ok(()),
    }
}

/// Checks a trial's output against the kernel's sequential reference, after checking
/// that every value is a number (a NaN passes every comparison with a tolerance, so it
/// is refused first, on every engine).
pub fn verify(alg: Algorithm, g: &Graph, p: &Params, sources: &[u32], output: &Output) -> Result<()> {
    numbers_only(output)?;
    match (alg, output) {
        (Algorithm::Bfs, Output::Depths(d)) => bfs::verify(g, sources[0], d),
        (Algorithm::Sssp, Output::Distances(d)) => sssp::verify(g, sources[0], d),
        (Algorithm::Pr, Output::Values(s)) => pr::verify(g, p.pr, p.personalization.as_deref(), p.weighted, s),
        (Algorithm::Wcc, Output::Labels(l)) => wcc::verify(g, l),
        (Algorithm::Bc, Output::Values(s)) if weighs(g, p) => bc_weighted::verify(g, sources, s),
        (Algorithm::Bc, Output::Values(s)) => bc::verify(g, sources, s),
        (Algorithm::Spmv, Output::Values(y)) => spmv::verify(g, &spmv_x(g.num_vertices(), p), y),
        (Algorithm::Tc, Output::Triangles(t)) => tc::verify(g, t),
        (Algorithm::Clustering, Output::Values(c)) => tc::verify_clustering(g, c),
        (Algorithm::Kcore, Output::Cores(c)) => kcore::verify(g, c),
        (Algorithm::Scc, Output::Labels(l)) => scc::verify(g, l),
        (Algorithm::Lpa, Output::Labels(l)) => lpa::verify(g, l),
        (Algorithm::Eigenvector, Output::Values(x)) => centrality::verify_eigenvector(g, p.pr, x),
        (Algorithm::Katz, Output::Values(x)) => centrality::verify_katz(g, p.pr, p.katz, x),
        (Algorithm::Hits, Output::Hits { hubs, authorities }) => centrality::verify_hits(g, p.pr, p.weighted, hubs, authorities),
        (Algorithm::Degree, Output::Values(x)) => centrality::verify_degree(g, p.degree, x),
        (Algorithm::Closeness, Output::Values(x)) => centrality::verify_closeness(g, p.wf_improved, closeness_pivots(p, sources), x),
        (Algorithm::Louvain | Algorithm::Leiden, Output::Communities { labels, modularity }) => {
            community::verify(g, community_method(alg), p.community, labels, *modularity)
        }
        _ => Err(Error::Mismatch(format!("{} produced the wrong kind of output", alg.name()))),
    }
}

/// A vector of `n` zeroes written by every pool thread: a kernel's per-trial arrays
/// come from blocks freed by the last trial, which glibc's `calloc` clears on one
/// thread (a 16 MB BFS queue was over a millisecond of a 12 ms search at 16 threads),
/// and written by all threads their pages are first touched near the cores that use
/// them. Small arrays are cleared on the calling thread.
pub(crate) fn zeroed_vec<T: bytemuck::Zeroable + Send>(n: usize) -> Vec<T> {
    const CHUNK_BYTES: usize = 1 << 20;
    let chunk = CHUNK_BYTES / std::mem::size_of::<T>().max(1);
    if n <= chunk {
        return bytemuck::zeroed_vec(n);
    }
    let mut v = Vec::with_capacity(n);
    v.spare_capacity_mut().par_chunks_mut(chunk).for_each(|c| {
        // SAFETY: all-zero bytes are a valid `T` (`Zeroable`), written within the chunk.
        unsafe { std::ptr::write_bytes(c.as_mut_ptr(), 0, c.len()) }
    });
    // SAFETY: the `n` elements were all written above.
    unsafe { v.set_len(n) };
    v
}

/// Whether two floats agree within `tolerance`: an infinity equals itself, as does
/// NaN (a NaN in x gives NaN in y on every engine; `inf - inf` is not within anything).
pub(crate) fn same_value(a: f64, b: f64, tolerance: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan()) || (a - b).abs() <= tolerance
}

/// The first index where `got` is farther from `want` than `relative` times the largest
/// of `want`'s finite magnitudes and `floor`, as an error.
pub(crate) fn close_to_largest(want: &[f64], got: &[f64], relative: f64, floor: f64) -> Result<()> {
    // The scale of the finite values: an overflow to inf must not widen the tolerance.
    let scale = want.iter().filter(|v| v.is_finite()).fold(floor, |m, v| m.max(v.abs()));
    first_mismatch(want, got, |&a, &b| same_value(a, b, relative * scale))
}

/// The first index where `want` and `got` disagree under `same`, as an error.
pub(crate) fn first_mismatch<T: PartialEq + std::fmt::Debug + Sync>(
    want: &[T],
    got: &[T],
    same: impl Fn(&T, &T) -> bool + Sync,
) -> Result<()> {
    if want.len() != got.len() {
        return Err(Error::Mismatch(format!("{} values, expected {}", got.len(), want.len())));
    }
    match (0..want.len()).into_par_iter().find_first(|&i| !same(&want[i], &got[i])) {
        None => Ok(()),
        Some(i) => {
            let bad = (0..want.len()).into_par_iter().filter(|&i| !same(&want[i], &got[i])).count();
            Err(Error::Mismatch(format!("vertex {i}: got {:?}, expected {:?} ({bad} vertices differ)", got[i], want[i])))
        }
    }
}
