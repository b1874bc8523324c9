//! Distributed PageRank and SpMV: pulls over the owned vertices' in-edges. PageRank
//! (the networkx definition and stopping rule of [`chatty_algo::pr`]) sends every
//! boundary vertex's contribution to its readers each iteration (all of them change,
//! so the halo's dense form) and sums the dangling mass and the change over ranks;
//! SpMV reads `x`, which every rank holds, and exchanges nothing.

use chatty_algo::PrParams;
use rayon::prelude::*;

use std::sync::atomic::Ordering::Relaxed;

use crate::atomic::as_atomic_f32;
use crate::comm::Comm;
use crate::graph::LocalGraph;
use crate::halo::Halo;
use crate::DistError;

/// Scores (valid for the owned vertices), iterations, and the last iteration's L1 change.
pub fn pagerank(
    g: &LocalGraph,
    comm: &Comm,
    halo: &Halo,
    p: PrParams,
    personalization: Option<&[f64]>,
) -> Result<(Vec<f64>, u64, f64), DistError> {
    let (n, own) = (g.n, g.own());
    let lo = own.start as usize;
    if n == 0 {
        return Ok((Vec::new(), 0, 0.0));
    }
    let shares = personalization.map(chatty_algo::pr::teleport_shares);
    let teleport = |v: usize| shares.as_ref().map_or(1.0 / n as f64, |s| s[v]);
    let mut score = vec![1.0 / n as f64; own.len()];
    let mut next = vec![0.0; own.len()];
    // f32 contributions, as the CPU engine gathers them; ghosts' from the halo.
    let mut contrib = vec![0.0f32; n];
    let (iters, residual) = p.iterate(n, &chatty_graph::NoProgress, |_| {
        let dangling: f64 = contrib[own.start as usize..own.end as usize]
            .par_iter_mut()
            .zip(&score)
            .enumerate()
            .map(|(i, (c, s))| {
                let d = g.out_degree((lo + i) as u32);
                *c = if d > 0 { (s / d as f64) as f32 } else { 0.0 };
                if d == 0 {
                    *s
                } else {
                    0.0
                }
            })
            .sum();
        let parcels = halo.pack_all(|v| contrib[v as usize]);
        let cells = as_atomic_f32(&mut contrib);
        halo.deliver(comm, parcels, |v, c: f32| {
            cells[v as usize].store(c.to_bits(), Relaxed);
            false
        })?;
        let [dangling] = comm.sum_f64([dangling]);
        let spread = p.spread(dangling);
        let inc = g.inc();
        let change: f64 = next
            .par_iter_mut()
            .zip(&score)
            .enumerate()
            .map(|(i, (x, old))| {
                let v = lo + i;
                let sum: f64 = inc.neighbors(v as u32).iter().map(|&u| contrib[u as usize] as f64).sum();
                *x = spread * teleport(v) + p.damping * sum;
                (*x - old).abs()
            })
            .sum();
        let [change] = comm.sum_f64([change]);
        std::mem::swap(&mut score, &mut next);
        Ok::<_, DistError>(change)
    })?;
    Ok((score, iters as u64, residual))
}

/// `y = A·x` for the owned rows (`y[v]` sums `w(u → v) · x[u]` over in-edges).
pub fn spmv(g: &LocalGraph, x: &[f64]) -> Vec<f64> {
    let inc = g.inc();
    g.own()
        .into_par_iter()
        .map(|v| {
            let edges = inc.range(v);
            let targets = &inc.targets()[edges.clone()];
            match inc.raw_weights() {
                // Folded from +0: an empty sum is 0, as on every other engine (`sum` starts at -0).
                Some(w) => targets.iter().zip(&w[edges]).fold(0.0, |s, (&u, &w)| s + g.weight_type.value(w) * x[u as usize]),
                None => targets.iter().fold(0.0, |s, &u| s + x[u as usize]),
            }
        })
        .collect()
}
