//! Kernel: PageRank. Returns scores that sum to 1: damping 0.85, uniform teleport,
//! the mass of dangling vertices (no out-edges) spread like the teleport; the networkx
//! definition and parameters: iterates until the L1 norm of the change between
//! iterations is below N·tolerance (networkx's `tol`, per vertex) or the iteration
//! cap is reached.
//!
//! Pull (gather) form: each vertex sums `score/out_degree` of its in-neighbours
//! ([`EdgeMapGraph::sum_in`]: no atomics and sequential writes in memory, binned
//! gathers on the SSD engine), and the same pass finishes it: new score, change,
//! its next contribution. [`PrMethod::Jacobi`] reads last iteration's contributions
//! (networkx's iteration, the same whatever the thread count); [`PrMethod::GaussSeidel`]
//! reads and writes one array, so a vertex sees the scores already updated in this
//! iteration (GAPBS's `pr` [3]) and converges in fewer iterations.
//!
//! [1] Lawrence Page, Sergey Brin, Rajeev Motwani, Terry Winograd. "The PageRank
//!     Citation Ranking: Bringing Order to the Web." Stanford InfoLab, 1999.
//! [2] Scott Beamer, Krste Asanović, David Patterson. "The GAP Benchmark Suite."
//!     arXiv:1508.03619, 2015.
//! [3] GAPBS `src/pr.cc`, `PageRankPullGS`.
//! [4] Gianna Del Corso, Antonio Gullì, Francesco Romani. "Fast PageRank Computation
//!     via a Sparse Linear System." Internet Mathematics 2(3), 2005.
//!
//! Weighted (`weighted`, [`crate::Params::weighted`]; networkx's `weight='weight'`): a vertex hands its
//! score out in proportion to its out-edges' weights, `score · w / out-weight` along
//! each, and a vertex whose out-edges weigh 0 in all is dangling, as networkx's
//! row-normalised adjacency has it.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};

use rayon::prelude::*;

use chatty_graph::{Graph, Progress, WeightType};

use crate::edge_map::{EdgeMapGraph, EdgeMapOptions, EdgeOp, Edges, SumOptions};
use crate::frontier::Frontier;
use crate::{Error, Result};

/// How an iteration uses the scores computed before it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum PrMethod {
    /// Every vertex reads last iteration's scores (networkx's iteration).
    #[default]
    Jacobi,
    /// Vertices read the newest scores, some from this iteration: fewer iterations
    /// to the tolerance, the same fixed point; the order depends on the threads.
    /// Engines that gather every sum before finishing any vertex (SSD) iterate as
    /// Jacobi.
    GaussSeidel,
}

impl PrMethod {
    /// Every method, as `--pr-method` lists them.
    pub const ALL: [PrMethod; 2] = [PrMethod::Jacobi, PrMethod::GaussSeidel];

    /// The `--pr-method` name.
    pub fn name(self) -> &'static str {
        match self {
            PrMethod::Jacobi => "jacobi",
            PrMethod::GaussSeidel => "gauss-seidel",
        }
    }
}

/// PageRank's parameters.
#[derive(Copy, Clone, Debug)]
pub struct PrParams {
    /// Damping factor (0.85).
    pub damping: f64,
    /// Stop when the L1 change summed over all vertices falls below this times the
    /// number of vertices (networkx's `tol`).
    pub tolerance: f64,
    /// Stop after this many iterations at most.
    pub max_iters: u32,
    /// Jacobi (the default) or Gauss–Seidel.
    pub method: PrMethod,
}

impl PrParams {
    /// Whether an iteration that changed the scores by `change` (L1) on `n` vertices
    /// has converged: networkx's `err < N * tol`. Every engine stops by this rule.
    pub fn converged(&self, change: f64, n: usize) -> bool {
        change < self.stop(n)
    }

    /// The L1 change below which iterations on `n` vertices stop.
    pub fn stop(&self, n: usize) -> f64 {
        self.tolerance * n as f64
    }

    /// The share of the whole mass an iteration hands out like the teleport: the
    /// teleport's own, `1 - damping`, and the `dangling` mass (of vertices without
    /// out-edges) damped, which networkx spreads the same way. A vertex's score is
    /// this times its teleport share, plus `damping` times its in-neighbours' sum.
    /// Every engine computes its iterations from this.
    pub fn spread(&self, dangling: f64) -> f64 {
        (1.0 - self.damping) + self.damping * dangling
    }

    /// PageRank's iteration control, the same on every engine: `step(i)` runs
    /// iteration `i` (from 1) and returns how much it changed the scores (L1, summed
    /// over every vertex); iterations stop once one has converged
    /// ([`PrParams::converged`]) or after `max_iters`, and none run on an empty graph.
    /// Returns the iterations run and the last one's change.
    pub fn iterate<E>(
        &self,
        n: usize,
        progress: &dyn Progress,
        mut step: impl FnMut(u32) -> std::result::Result<f64, E>,
    ) -> std::result::Result<(u32, f64), E> {
        let (mut iters, mut change) = (0, 0.0);
        progress.start("pr: iterations (at most)", self.max_iters as u64);
        while iters < self.max_iters && n > 0 {
            iters += 1;
            progress.advance(1);
            change = step(iters)?;
            if self.converged(change, n) {
                break;
            }
        }
        Ok((iters, change))
    }
}

impl Default for PrParams {
    fn default() -> Self {
        PrParams { damping: 0.85, tolerance: 1e-6, max_iters: 100, method: PrMethod::Jacobi }
    }
}

/// The teleport's share at each vertex: `weights` (non-negative, finite, not all zero)
/// normalised to sum 1, as networkx normalises `personalization`. Safe over every
/// finite input: each weight is divided by the largest first, so no sum overflows
/// (two weights of 1e308) and no reciprocal does (one weight of 1e-320). The MPI
/// engine shares it.
pub fn teleport_shares(weights: &[f64]) -> Vec<f64> {
    let largest = weights.par_iter().copied().reduce(|| 0.0, f64::max);
    let sum: f64 = weights.par_iter().map(|&w| w / largest).sum();
    weights.par_iter().map(|&w| w / largest / sum).collect()
}

/// Where the random surfer teleports (and dangling mass goes): `personalization`
/// normalised to sum 1 ([`teleport_shares`]), or uniform. The shares are computed
/// once: a division per vertex and iteration was 10% of a road graph's iteration
/// (perf, moscow, one thread).
enum Teleport {
    Uniform(f64),
    Weighted(Vec<f64>),
}

impl Teleport {
    fn new(personalization: Option<&[f64]>, n: usize) -> Teleport {
        match personalization {
            Some(weights) => Teleport::Weighted(teleport_shares(weights)),
            None => Teleport::Uniform(1.0 / n as f64),
        }
    }

    #[inline]
    fn at(&self, v: usize) -> f64 {
        match self {
            Teleport::Uniform(share) => *share,
            Teleport::Weighted(shares) => shares[v],
        }
    }
}

/// What an iteration sums over the vertices: the L1 change of the scores and the
/// scores' total.
#[derive(Copy, Clone, Default)]
struct Totals {
    change: f64,
    total: f64,
}

impl std::iter::Sum for Totals {
    fn sum<I: Iterator<Item = Totals>>(iter: I) -> Totals {
        iter.fold(Totals::default(), |a, b| Totals { change: a.change + b.change, total: a.total + b.total })
    }
}

/// A vertex's contribution to its out-neighbours: `score` over its `out_degree`, in
/// single precision (what the gather reads). A division per vertex, not an array of
/// inverse degrees: one array fewer to fill per run and to read per iteration. The
/// degree's reciprocal times the score, not the score divided: the division does not
/// wait for the score, so where the next vertex reads this contribution (Gauss–Seidel,
/// in a road graph's order) it is not on that chain (Gauss–Seidel on road-NE, one
/// thread: 7% faster; Jacobi, which contributes in a pass of its own, unchanged). In
/// f64, rounded to f32 once: with the reciprocal, the score and the product each
/// rounded to f32, the Python package's networkx cross-check (L1 within 1e-8 at
/// tol 1e-12) missed by 8e-8. A dangling vertex's contribution (infinite, or NaN at a
/// zero score) is never read: no edge leaves it, so the division needs no guard.
#[inline]
fn contribution(out_degree: u64, score: f64) -> f32 {
    // Through i64: one instruction where u64 to f64 takes six without AVX-512.
    ((1.0 / out_degree as i64 as f64) * score) as f32
}

/// What a vertex's score is shared out by: its out-degree (the out-edge offsets), or
/// its out-weight (weighted PageRank), where a zero makes it dangling. A weighted
/// contribution is read times the edge's weight.
#[derive(Copy, Clone)]
enum OutShare<'a> {
    Degrees(&'a [u64]),
    Weights(&'a [f64]),
}

impl OutShare<'_> {
    /// `v`'s contribution at `score` (Gauss–Seidel's, as each vertex finishes).
    #[inline]
    fn contribution(self, v: usize, score: f64) -> f32 {
        match self {
            OutShare::Degrees(offsets) => contribution(offsets[v + 1] - offsets[v], score),
            OutShare::Weights(weights) => weighted_contribution(weights[v], score),
        }
    }
}

/// A vertex's contribution per unit of weight. A dangling vertex's edges (if any) weigh
/// 0, and its contribution is read times 0: 0, not infinite, so that the product is 0
/// rather than NaN.
#[inline]
fn weighted_contribution(out_weight: f64, score: f64) -> f32 {
    match out_weight > 0.0 {
        true => ((1.0 / out_weight) * score) as f32,
        false => 0.0,
    }
}

/// Each vertex's out-weight, by one pass over every edge; refuses a negative or
/// non-finite weight, with which networkx's shares would not be a distribution.
/// Integer and single-precision weights add up exactly in f64 (up to 2^53 / 2^29 of
/// their unit), so the order the threads add them in does not show.
fn out_weights<G: EdgeMapGraph + ?Sized>(g: &G) -> Result<Vec<f64>> {
    struct AddWeight<'a> {
        sums: &'a [AtomicU64],
        kind: WeightType,
        bad: &'a AtomicBool,
    }
    impl EdgeOp for AddWeight<'_> {
        fn update(&self, src: u32, dst: u32, w: u32) -> bool {
            self.update_atomic(src, dst, w)
        }
        fn update_atomic(&self, src: u32, _dst: u32, w: u32) -> bool {
            let w = self.kind.value(w);
            if !(w >= 0.0 && w.is_finite()) {
                self.bad.store(true, Relaxed);
            }
            crate::bc::add_f64(&self.sums[src as usize], w);
            false
        }
    }
    let n = g.num_vertices();
    let sums: Vec<AtomicU64> = (0..n).into_par_iter().map(|_| AtomicU64::new(0)).collect();
    let bad = AtomicBool::new(false);
    g.edge_map(Edges::Out, Frontier::all(n), &AddWeight { sums: &sums, kind: g.weight_type(), bad: &bad }, EdgeMapOptions::PUSH)?;
    if bad.into_inner() {
        return Err(Error::Unsupported("weighted PageRank needs non-negative, finite edge weights (as networkx's shares)".into()));
    }
    Ok(sums.into_par_iter().map(|s| f64::from_bits(s.into_inner())).collect())
}

/// PageRank by pull iterations, scores shared by out-weight where `weighted`; returns
/// (scores, iterations, the L1 change of the last iteration).
pub fn pagerank<G: EdgeMapGraph + ?Sized>(
    g: &G,
    p: PrParams,
    personalization: Option<&[f64]>,
    weighted: bool,
    progress: &dyn Progress,
) -> Result<(Vec<f64>, u32, f64)> {
    let n = g.num_vertices();
    if n == 0 {
        return Ok((Vec::new(), 0, 0.0));
    }
    let weights = (weighted && g.weight_type() != WeightType::None).then(|| out_weights(g)).transpose()?;
    let share = match &weights {
        Some(w) => OutShare::Weights(w),
        None => OutShare::Degrees(g.out_offsets()),
    };
    // The teleport as a closure the compiler sees through: matching the enum per
    // vertex and iteration cost 4 of moscow's 89 instructions a vertex.
    match Teleport::new(personalization, n) {
        Teleport::Uniform(share_at) => by_weight(g, p, share, move |_| share_at, progress),
        Teleport::Weighted(shares) => {
            let shares: &[f64] = &shares;
            by_weight(g, p, share, move |v| shares[v], progress)
        }
    }
}

/// [`run_iterations`] with the gather's reading of an edge for `share`: one closure
/// per weight type, so that each inner loop knows its conversion (as SpMV's).
fn by_weight<G: EdgeMapGraph + ?Sized>(
    g: &G,
    p: PrParams,
    share: OutShare,
    teleport: impl Fn(usize) -> f64 + Sync + Copy,
    progress: &dyn Progress,
) -> Result<(Vec<f64>, u32, f64)> {
    match (share, g.weight_type()) {
        (OutShare::Degrees(_), _) | (_, WeightType::None) => run_iterations(g, p, share, teleport, |c, _| c as f64, progress),
        (_, WeightType::Int) => run_iterations(g, p, share, teleport, |c, w| c as f64 * WeightType::Int.value(w), progress),
        (_, WeightType::Float) => run_iterations(g, p, share, teleport, |c, w| c as f64 * WeightType::Float.value(w), progress),
    }
}

/// [`pagerank`]'s iterations on a non-empty graph, `teleport(v)` the teleport's share at
/// v, `along(c, w)` what a contribution `c` brings along an edge of weight word `w`.
fn run_iterations<G: EdgeMapGraph + ?Sized>(
    g: &G,
    p: PrParams,
    share: OutShare,
    teleport: impl Fn(usize) -> f64 + Sync + Copy,
    along: impl Fn(f32, u32) -> f64 + Sync + Copy,
    progress: &dyn Progress,
) -> Result<(Vec<f64>, u32, f64)> {
    let n = g.num_vertices();
    // Every array is first written by the pool's threads, so its pages sit near the
    // threads that use them (NUMA) and are not faulted in by one thread.
    let mut score: Vec<f64> = (0..n).into_par_iter().map(|_| 1.0 / n as f64).collect();
    // Contributions are gathered once per edge from random vertices: f32 halves the
    // bytes (and TLB reach) of the gather (measured 1.7x faster per iteration on
    // rmat-20); scores and sums stay f64. Jacobi fills a plain array from the scores
    // in a streaming pass before each gather (as GAPBS's `pr_spmv`), so the gather
    // loop only sums and finishes. Gauss–Seidel updates a vertex's contribution as
    // soon as its score is known, while other threads read it: atomics, which cost
    // the plain gather an instruction per edge.
    let mut plain: Vec<f32> = crate::zeroed_vec(n);
    let mut dangling: Vec<Vec<u32>> = vec![Vec::new(); n.div_ceil(CONTRIBUTION_CHUNK)];
    let mut contribute = |c: &mut [f32], score: &[f64], list_now: bool| contribute(c, score, share, &mut dangling, list_now);
    let shared: Option<Vec<AtomicU32>> = (p.method == PrMethod::GaussSeidel).then(|| {
        contribute(&mut plain, &score, false);
        std::mem::take(&mut plain).into_par_iter().map(|c| AtomicU32::new(c.to_bits())).collect()
    });
    let settle = |old: &mut f64, x: f64| Totals { change: (x - std::mem::replace(old, x)).abs(), total: x };
    let weighted = matches!(share, OutShare::Weights(_));
    let (iters, residual) = p.iterate(n, progress, |iter| {
        // Teleport and dangling mass, both spread like the teleport. Gauss–Seidel,
        // whose in-place updates would lag a global dangling mass (measured: 24
        // iterations against Jacobi's 9 on rmat-12), solves y = (1 - d)·t + d·A·y
        // instead, whose y scaled to sum 1 is the same PageRank [4]; its change is
        // measured on that scale.
        let spread = match shared {
            None => p.spread(contribute(&mut plain, &score, iter == 1)),
            Some(_) => 1.0 - p.damping,
        };
        // Closures that copy what they read (here and below): `sum_in` copies them
        // into each chunk's frame, where their captures stay in registers.
        let score_of = move |v: u32, sum: f64| spread * teleport(v as usize) + p.damping * sum;
        let options = SumOptions { weighted, fresh: shared.is_some() };
        let totals = match &shared {
            None => g.sum_in(&mut score, options, &plain, move |&c, w| along(c, w), move |v, sum, old| settle(old, score_of(v, sum)))?,
            Some(shared) => {
                let shared: &[AtomicU32] = shared;
                g.sum_in(
                    &mut score,
                    options,
                    shared,
                    move |c, w| along(f32::from_bits(c.load(Relaxed)), w),
                    move |v, sum, old| {
                        let x = score_of(v, sum);
                        shared[v as usize].store(share.contribution(v as usize, x).to_bits(), Relaxed);
                        settle(old, x)
                    },
                )?
            }
        };
        Ok(totals.change / totals.total)
    })?;
    if shared.is_some() {
        let total: f64 = score.par_iter().sum();
        score.par_iter_mut().for_each(|s| *s /= total);
    }
    Ok((score, iters, residual))
}

/// Vertices a chunk of [`contribute`]'s pass.
const CONTRIBUTION_CHUNK: usize = 4096;

/// Fills `c` with each vertex's contribution (its score over its out-degree or
/// out-weight, `share`), returning the dangling vertices' total score (their lists in
/// `dangling` made first when `list_now`).
///
/// The dangling mass is summed over lists of the dangling vertices made once: summed
/// over every vertex in the contribution pass, its chain of additions (4 cycles a
/// vertex) held that pass to 1.5x GAPBS's time (moscow, one thread; now 0.6x). Each
/// chunk of the pass sums its own list after its contributions, in the same parallel
/// loop: a loop of its own cost a fork-join an iteration, 27-35 µs at 16 threads on
/// the 16-core host (moscow's iteration: 472 µs). A chunk's list holds its dangling
/// vertices numbered from the chunk's first; most are empty and allocate nothing.
/// The first pass makes each chunk's list after its contributions, from offsets still
/// in cache: a pass of its own read them all again (the 2048² grid's trial, one
/// thread, dev VM: 75-77 ms then, 71-73 now). Gauss–Seidel spreads no dangling mass
/// (`run_iterations`), so it lists none.
fn contribute(c: &mut [f32], score: &[f64], share: OutShare, dangling: &mut [Vec<u32>], list_now: bool) -> f64 {
    const CHUNK: usize = CONTRIBUTION_CHUNK;
    let n = score.len();
    (c.par_chunks_mut(CHUNK).zip(score.par_chunks(CHUNK)).zip(dangling.par_iter_mut()).enumerate())
        .map(|(i, ((c, s), list))| {
            match share {
                OutShare::Degrees(offsets) => {
                    let ends = &offsets[i * CHUNK..=n.min((i + 1) * CHUNK)];
                    for ((c, &s), (&a, &b)) in c.iter_mut().zip(s).zip(ends.iter().zip(&ends[1..])) {
                        *c = contribution(b - a, s);
                    }
                    if list_now {
                        list_dangling(ends.windows(2).map(|ab| ab[0] == ab[1]), list);
                    }
                }
                OutShare::Weights(weights) => {
                    let weights = &weights[i * CHUNK..n.min((i + 1) * CHUNK)];
                    for ((c, &s), &w) in c.iter_mut().zip(s).zip(weights) {
                        *c = weighted_contribution(w, s);
                    }
                    if list_now {
                        list_dangling(weights.iter().map(|&w| w == 0.0), list);
                    }
                }
            }
            list.iter().map(|&k| s[k as usize]).sum::<f64>()
        })
        .sum()
}

/// Appends to `list` the places (numbered from 0) where `dangles` holds. Out of line:
/// inlined into the contribution pass, whose later iterations skip it, it slowed
/// those iterations on cnr-2000 by 3-4%.
#[cold]
#[inline(never)]
fn list_dangling(dangles: impl Iterator<Item = bool>, list: &mut Vec<u32>) {
    list.extend(dangles.enumerate().filter(|&(_, d)| d).map(|(k, _)| k as u32));
}

/// The reference: the same iteration written sequentially in push form, with the
/// same stopping rule (shared by out-weight where `weighted`).
pub fn reference(g: &Graph, p: PrParams, personalization: Option<&[f64]>, weighted: bool) -> Vec<f64> {
    let n = g.num_vertices();
    let teleport = Teleport::new(personalization, n);
    let out = g.out_edges();
    let weight = |e: usize| if weighted { out.weight_f64(e) } else { 1.0 };
    let out_weight: Vec<f64> = (0..n as u32).map(|u| out.range(u).map(weight).sum()).collect();
    let mut score = vec![1.0 / n.max(1) as f64; n];
    for _ in 0..p.max_iters {
        let mut next = vec![0.0; n];
        let mut dangling = 0.0;
        for u in 0..n as u32 {
            if out_weight[u as usize] == 0.0 {
                dangling += score[u as usize];
                continue;
            }
            for e in out.range(u) {
                next[out.targets()[e] as usize] += score[u as usize] * weight(e) / out_weight[u as usize];
            }
        }
        let mut change = 0.0;
        for v in 0..n {
            let x = (1.0 - p.damping) * teleport.at(v) + p.damping * (next[v] + dangling * teleport.at(v));
            change += (x - score[v]).abs();
            score[v] = x;
        }
        if p.converged(change, n) {
            break;
        }
    }
    score
}

/// Checks scores against [`reference`]: L1 distance within 1e-4 and sum 1. Gauss–Seidel
/// stops at another iteration than the (Jacobi) reference: each is within
/// `change · d / (1 - d)` of the fixed point (both iterations contract the L1 error
/// by the damping factor d), so the two may differ by twice that.
pub fn verify(g: &Graph, p: PrParams, personalization: Option<&[f64]>, weighted: bool, got: &[f64]) -> Result<()> {
    let want = reference(g, p, personalization, weighted);
    let l1: f64 = want.iter().zip(got).map(|(a, b)| (a - b).abs()).sum();
    let sum: f64 = got.iter().sum();
    let bound = match p.method {
        PrMethod::Jacobi => 1e-4,
        PrMethod::GaussSeidel => f64::max(1e-4, 2.0 * p.tolerance * got.len() as f64 * p.damping / (1.0 - p.damping)),
    };
    if got.len() != want.len() || l1 > bound {
        return Err(crate::Error::Mismatch(format!("L1 distance to the reference is {l1:e}")));
    }
    if !got.is_empty() && (sum - 1.0).abs() > 1e-6 {
        return Err(crate::Error::Mismatch(format!("scores sum to {sum}, not 1")));
    }
    Ok(())
}
