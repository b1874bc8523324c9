//! ChattyGraph's algorithms on CPU threads: the program model (frontiers,
//! [`edge_map`](edge_map::edge_map), [`vertex_map`](edge_map::vertex_map)), the six
//! kernels, and beside each kernel an independent sequential reference that
//! `--verify` and the tests compare against.
//!
//! # Brief overview
//!
//! - [`frontier::Frontier`]: a vertex subset, sparse ids or a dense bitmap.
//! - [`edge_map::edge_map`]: apply an [`edge_map::EdgeOp`] (`cond`, `update`,
//!   `update_atomic`) along the edges leaving a frontier; the operator picks push or
//!   pull from the frontier's size.
//! - Kernels, one module each, in GAPBS order (header with citations, kernel,
//!   reference, verifier): [`bfs`], [`sssp`], [`pr`], [`wcc`], [`bc`], [`spmv`].
//! - [`Algorithm`], [`Params`], [`run`], [`verify`]: one entry point per engine
//!   for the command line.
//!
//! ```
//! use chatty_algo::{run, verify, Algorithm, Params};
//! let g = chatty_graph::from_edges(4, &[(0, 1), (1, 2), (2, 3)], false);
//! let r = run(Algorithm::Bfs, &g, &Params::default(), 0).unwrap();
//! assert!(verify(Algorithm::Bfs, &g, &Params::default(), &r).is_ok());
//! ```
//!
//! This crate knows nothing of GPUs, SSDs or file formats.
#![deny(missing_docs)]

pub mod bc;
pub mod bfs;
pub mod edge_map;
pub mod frontier;
pub mod pr;
pub mod spmv;
pub mod sssp;
pub mod wcc;

use chatty_graph::Graph;
use rayon::prelude::*;

pub use edge_map::Direction;
pub use pr::PrParams;
pub use sssp::Distances;

/// The kernels.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
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
}

impl Algorithm {
    /// Every kernel, in the order the docs list them.
    pub const ALL: [Algorithm; 6] = [Algorithm::Bfs, Algorithm::Sssp, Algorithm::Pr, Algorithm::Wcc, Algorithm::Bc, Algorithm::Spmv];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Bfs => "bfs",
            Algorithm::Sssp => "sssp",
            Algorithm::Pr => "pr",
            Algorithm::Wcc => "wcc",
            Algorithm::Bc => "bc",
            Algorithm::Spmv => "spmv",
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

    /// Whether the kernel reads in-edges (pull), so a directed graph needs its transpose.
    pub fn wants_in_edges(self) -> bool {
        matches!(self, Algorithm::Bfs | Algorithm::Pr | Algorithm::Wcc | Algorithm::Spmv)
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
    /// PageRank's parameters.
    pub pr: PrParams,
    /// BC's sources.
    pub bc_sources: BcSources,
    /// SpMV's x (ones if `None`).
    pub x: Option<Vec<f64>>,
    /// Direction policy of BFS.
    pub direction: Direction,
}

impl Default for Params {
    fn default() -> Self {
        Params { source: None, seed: 27491095, delta: None, pr: PrParams::default(), bc_sources: BcSources::One, x: None, direction: Direction::Auto }
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
    /// WCC labels.
    Labels(Vec<u32>),
}

/// What one trial produced.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// The values.
    pub output: Output,
    /// The sources used (empty for kernels without one).
    pub sources: Vec<u32>,
    /// Levels (BFS), bucket rounds (SSSP), iterations (PR), 1 otherwise.
    pub iterations: u64,
}

/// Edges a run examined, counted as stored directed edges: for BFS and SSSP the
/// out-edges of every reached vertex, for PR m per iteration, for BC m per source,
/// for WCC and SpMV m. Computed after the timed run, from its output.
pub fn edges_traversed(alg: Algorithm, g: &Graph, r: &RunResult) -> u64 {
    edges_traversed_by(alg, g.num_edges(), |v| g.out_edges().degree(v as u32) as u64, r)
}

/// [`edges_traversed`] for any engine: `m` edges, out-degrees `degree`.
pub fn edges_traversed_by(alg: Algorithm, m: u64, degree: impl Fn(usize) -> u64 + Sync, r: &RunResult) -> u64 {
    let reached_edges = |n: usize, reached: &(dyn Fn(usize) -> bool + Sync)| -> u64 {
        (0..n).into_par_iter().filter(|&v| reached(v)).map(&degree).sum()
    };
    match &r.output {
        Output::Depths(d) => reached_edges(d.len(), &|v| d[v] != bfs::UNREACHED),
        Output::Distances(Distances::Int(d)) => reached_edges(d.len(), &|v| d[v] != u64::MAX),
        Output::Distances(Distances::Float(d)) => reached_edges(d.len(), &|v| d[v].is_finite()),
        _ if alg == Algorithm::Bc => m * r.sources.len() as u64,
        _ => m * r.iterations,
    }
}

/// The sources of trial `trial`: `--source` if given, else GAPBS-style random
/// vertices with at least one out-edge, the same sequence for the kernel and `verify`.
pub fn pick_sources(g: &Graph, p: &Params, trial: u64) -> Result<Vec<u32>, String> {
    pick_sources_by(g.num_vertices(), |v| g.out_edges().degree(v) as u64, g.num_edges() > 0, p, trial)
}

/// [`pick_sources`] for any engine: `n` vertices with out-degrees `degree`.
pub fn pick_sources_by(n: usize, degree: impl Fn(u32) -> u64, has_edges: bool, p: &Params, trial: u64) -> Result<Vec<u32>, String> {
    if n == 0 {
        return Err("the graph has no vertices".into());
    }
    if let Some(s) = p.source {
        if s as usize >= n {
            return Err(format!("source {s} is not a vertex (the graph has {n})"));
        }
        if p.bc_sources == BcSources::One {
            return Ok(vec![s]);
        }
    }
    let count = match p.bc_sources {
        BcSources::All => return Ok((0..n as u32).collect()),
        BcSources::One => 1,
        BcSources::Random(k) => k,
    };
    let mut x = p.seed ^ (trial + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut next = || {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    Ok((0..count)
        .map(|_| loop {
            let v = (next() % n as u64) as u32;
            if !has_edges || degree(v) > 0 {
                break v;
            }
        })
        .collect())
}

/// SpMV's x: `p.x` checked against the graph, or all ones. Shared by every engine.
pub fn spmv_x<'a>(g: &Graph, p: &'a Params) -> Result<std::borrow::Cow<'a, [f64]>, String> {
    spmv_x_for(g.num_vertices(), p)
}

/// [`spmv_x`] for a graph of `n` vertices held anywhere.
pub fn spmv_x_for(n: usize, p: &Params) -> Result<std::borrow::Cow<'_, [f64]>, String> {
    match &p.x {
        Some(x) if x.len() != n => Err(format!("x has {} entries for {n} vertices", x.len())),
        Some(x) => Ok(std::borrow::Cow::Borrowed(x)),
        None => Ok(std::borrow::Cow::Owned(vec![1.0; n])),
    }
}

/// SSSP's Δ: `p.delta` checked, or [`sssp::default_delta`] (a pass over the weights,
/// so callers timing trials resolve it once beforehand). Shared by every engine.
pub fn sssp_delta(g: &Graph, p: &Params) -> Result<f64, String> {
    let delta = p.delta.unwrap_or_else(|| sssp::default_delta(g));
    if delta.is_nan() || delta <= 0.0 {
        return Err(format!("delta must be positive, got {delta}"));
    }
    Ok(delta)
}

/// Runs one trial of `alg` on `g` (which must have in-edges if
/// [`Algorithm::wants_in_edges`] and it is directed).
pub fn run(alg: Algorithm, g: &Graph, p: &Params, trial: u64) -> Result<RunResult, String> {
    let sources = if alg.has_source() { pick_sources(g, p, trial)? } else { Vec::new() };
    let (output, iterations) = match alg {
        Algorithm::Bfs => {
            let (d, levels) = bfs::bfs(g, sources[0], p.direction);
            (Output::Depths(d), levels as u64)
        }
        Algorithm::Sssp => {
            sssp::check_weights(g)?;
            let (d, rounds) = sssp::sssp(g, sources[0], sssp_delta(g, p)?);
            (Output::Distances(d), rounds)
        }
        Algorithm::Pr => {
            let (s, iters) = pr::pagerank(g, p.pr);
            (Output::Values(s), iters as u64)
        }
        Algorithm::Wcc => (Output::Labels(wcc::wcc(g)), 1),
        Algorithm::Bc => {
            let s = bc::bc(g, &sources);
            (Output::Values(s), sources.len() as u64)
        }
        Algorithm::Spmv => (Output::Values(spmv::spmv(g, &spmv_x(g, p)?)), 1),
    };
    Ok(RunResult { output, sources, iterations })
}

/// Checks `r` against the kernel's sequential reference.
pub fn verify(alg: Algorithm, g: &Graph, p: &Params, r: &RunResult) -> Result<(), String> {
    match (alg, &r.output) {
        (Algorithm::Bfs, Output::Depths(d)) => bfs::verify(g, r.sources[0], d),
        (Algorithm::Sssp, Output::Distances(d)) => sssp::verify(g, r.sources[0], d),
        (Algorithm::Pr, Output::Values(s)) => pr::verify(g, p.pr, s),
        (Algorithm::Wcc, Output::Labels(l)) => wcc::verify(g, l),
        (Algorithm::Bc, Output::Values(s)) => bc::verify(g, &r.sources, s),
        (Algorithm::Spmv, Output::Values(y)) => spmv::verify(g, &spmv_x(g, p)?, y),
        _ => Err(format!("{} produced the wrong kind of output", alg.name())),
    }
}

/// The first index where `want` and `got` disagree under `same`, as an error message.
pub(crate) fn first_mismatch<T: PartialEq + std::fmt::Debug + Sync>(want: &[T], got: &[T], same: impl Fn(&T, &T) -> bool + Sync) -> Result<(), String> {
    if want.len() != got.len() {
        return Err(format!("{} values, expected {}", got.len(), want.len()));
    }
    match (0..want.len()).into_par_iter().find_first(|&i| !same(&want[i], &got[i])) {
        None => Ok(()),
        Some(i) => {
            let bad = (0..want.len()).into_par_iter().filter(|&i| !same(&want[i], &got[i])).count();
            Err(format!("vertex {i}: got {:?}, expected {:?} ({bad} vertices differ)", got[i], want[i]))
        }
    }
}
