//! Kernels: eigenvector and Katz centrality, the power iterations of networkx's
//! `eigenvector_centrality` and `katz_centrality`, each with its reference and verifier.
//!
//! Eigenvector centrality, as networkx's `eigenvector_centrality` defines it:
//! power iteration with `A^T + I` (a vertex's score grows with the scores of the
//! vertices that point at it, and keeps its own, which makes the iteration converge on
//! bipartite graphs too), from scores `1/n`, normalised to unit L2 norm after each
//! step, stopping once the L1 change falls below `n × tolerance` (networkx's rule) or
//! after `max_iters` steps (then the report says it did not converge). Unweighted, as
//! networkx's default. Written over [`EdgeMapGraph::sum_in`], so the CPU and SSD
//! engines share it.
//!
//! Katz centrality, as networkx's `katz_centrality` defines it: from scores 0, each
//! step sets `x = alpha · A^T x + beta` (a vertex collects `alpha` times the scores of
//! the vertices that point at it, plus `beta`), stopping once the L1 change falls below
//! `n × tolerance`; the converged scores are scaled to unit L2 norm unless `normalized`
//! is off. Unweighted, over the same [`EdgeMapGraph::sum_in`].
//!
//! [1] Phillip Bonacich. "Factoring and weighting approaches to status scores and
//!     clique identification." Journal of Mathematical Sociology 2(1), 1972.
//! [2] Leo Katz. "A new status index derived from sociometric analysis."
//!     Psychometrika 18(1), 1953.

use rayon::prelude::*;

use chatty_graph::{Graph, Progress};

use crate::edge_map::{EdgeMapGraph, SumOptions};
use crate::{KatzParams, PrParams, Result};

/// The scores, the iterations run, and the L1 change of the last one.
pub fn eigenvector<G: EdgeMapGraph + ?Sized>(g: &G, p: PrParams, progress: &dyn Progress) -> Result<(Vec<f64>, u32, f64)> {
    let n = g.num_vertices();
    if n == 0 {
        return Ok((Vec::new(), 0, 0.0));
    }
    let mut x = vec![1.0 / n as f64; n];
    let mut next = vec![0.0; n];
    let stop = p.stop(n);
    let mut change = f64::INFINITY;
    progress.start("eigenvector: iterations", p.max_iters as u64);
    for iteration in 1..=p.max_iters {
        let last = &x;
        let squares: f64 = g.sum_in(
            &mut next,
            SumOptions::default(),
            last,
            |&score, _| score,
            |v, sum, out: &mut f64| {
                *out = last[v as usize] + sum;
                *out * *out
            },
        )?;
        let norm = match squares.sqrt() {
            0.0 => 1.0,
            norm => norm,
        };
        next.par_iter_mut().for_each(|y| *y /= norm);
        change = x.par_iter().zip(&next).map(|(a, b)| (a - b).abs()).sum();
        std::mem::swap(&mut x, &mut next);
        progress.advance(1);
        if change < stop {
            return Ok((x, iteration, change));
        }
    }
    Ok((x, p.max_iters, change))
}

/// The reference: networkx's loop, sequential, over the out-lists.
pub fn eigenvector_reference(g: &Graph, p: PrParams) -> Vec<f64> {
    let n = g.num_vertices();
    let mut x = vec![1.0 / n.max(1) as f64; n];
    for _ in 0..p.max_iters {
        let last = x.clone();
        for u in 0..n as u32 {
            for &v in g.out_edges().neighbors(u) {
                x[v as usize] += last[u as usize];
            }
        }
        let norm = x.iter().map(|a| a * a).sum::<f64>().sqrt();
        let norm = if norm == 0.0 { 1.0 } else { norm };
        x.iter_mut().for_each(|a| *a /= norm);
        if x.iter().zip(&last).map(|(a, b)| (a - b).abs()).sum::<f64>() < p.stop(n) {
            break;
        }
    }
    x
}

/// Checks scores against [`eigenvector_reference`] to 1e-9, relative to the largest.
pub fn verify_eigenvector(g: &Graph, p: PrParams, x: &[f64]) -> Result<()> {
    let want = eigenvector_reference(g, p);
    let scale = want.iter().fold(0.0f64, |m, &a| m.max(a.abs())).max(f64::MIN_POSITIVE);
    crate::first_mismatch(&want, x, |&a, &b| crate::same_value(a, b, 1e-9 * scale))
}

/// Katz scores, the iterations run, and the L1 change of the last one (scaled to unit
/// L2 norm only once converged, as networkx does).
pub fn katz<G: EdgeMapGraph + ?Sized>(g: &G, p: PrParams, k: KatzParams, progress: &dyn Progress) -> Result<(Vec<f64>, u32, f64)> {
    let n = g.num_vertices();
    let mut x = vec![0.0; n];
    let mut next = vec![0.0; n];
    let mut change = f64::INFINITY;
    progress.start("katz: iterations", p.max_iters as u64);
    for iteration in 1..=p.max_iters {
        let last = &x;
        change = g.sum_in(
            &mut next,
            SumOptions::default(),
            last,
            |&score, _| score,
            |v, sum, out: &mut f64| {
                *out = k.alpha * sum + k.beta;
                (*out - last[v as usize]).abs()
            },
        )?;
        std::mem::swap(&mut x, &mut next);
        progress.advance(1);
        if change < p.stop(n) {
            if k.normalized {
                normalise(&mut x);
            }
            return Ok((x, iteration, change));
        }
    }
    Ok((x, p.max_iters, change))
}

/// Scales `x` to unit L2 norm (a zero vector stays).
fn normalise(x: &mut [f64]) {
    let norm = x.par_iter().map(|a| a * a).sum::<f64>().sqrt();
    if norm > 0.0 {
        x.par_iter_mut().for_each(|a| *a /= norm);
    }
}

/// The reference: networkx's loop, sequential, over the out-lists.
pub fn katz_reference(g: &Graph, p: PrParams, k: KatzParams) -> Vec<f64> {
    let n = g.num_vertices();
    let mut x = vec![0.0; n];
    for _ in 0..p.max_iters {
        let last = std::mem::replace(&mut x, vec![0.0; n]);
        for u in 0..n as u32 {
            for &v in g.out_edges().neighbors(u) {
                x[v as usize] += last[u as usize];
            }
        }
        x.iter_mut().for_each(|a| *a = k.alpha * *a + k.beta);
        if x.iter().zip(&last).map(|(a, b)| (a - b).abs()).sum::<f64>() < p.stop(n) {
            if k.normalized {
                normalise(&mut x);
            }
            break;
        }
    }
    x
}

/// Checks scores against [`katz_reference`] to 1e-9, relative to the largest.
pub fn verify_katz(g: &Graph, p: PrParams, k: KatzParams, x: &[f64]) -> Result<()> {
    let want = katz_reference(g, p, k);
    let scale = want.iter().fold(0.0f64, |m, &a| m.max(a.abs())).max(f64::MIN_POSITIVE);
    crate::first_mismatch(&want, x, |&a, &b| crate::same_value(a, b, 1e-9 * scale))
}
