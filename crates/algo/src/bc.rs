//! Kernel: BC. Returns the Brandes dependency of every vertex summed over the chosen
//! sources, not normalised (hop counts: weights are ignored).
//!
//! Per source, a level-synchronous parallel BFS counts shortest paths (`sigma`,
//! added atomically as f64 bit patterns), records the vertices of each level and
//! marks each DAG edge (to a vertex one level deeper) in a bitmap; the backward sweep
//! then walks the levels deepest first, each vertex pulling
//! `sigma[u] / sigma[v] · (1 + delta[v])` from the successors the bitmap names, so it
//! needs no atomics and no second look at depths.
//!
//! [1] Ulrik Brandes. "A Faster Algorithm for Betweenness Centrality." Journal of
//!     Mathematical Sociology 25(2), 2001.
//! [2] David Bader, Kamesh Madduri. "Parallel Algorithms for Evaluating Centrality
//!     Indices in Real-world Networks." ICPP 2006.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

use rayon::prelude::*;

use chatty_graph::Graph;

use crate::frontier::Bitmap;

const UNSEEN: u32 = u32::MAX;

fn add_f64(cell: &AtomicU64, x: f64) {
    let mut old = cell.load(Relaxed);
    loop {
        let new = (f64::from_bits(old) + x).to_bits();
        match cell.compare_exchange_weak(old, new, Relaxed, Relaxed) {
            Ok(_) => return,
            Err(seen) => old = seen,
        }
    }
}

/// Brandes dependencies summed over `sources`.
pub fn bc(g: &Graph, sources: &[u32]) -> Vec<f64> {
    let n = g.num_vertices();
    let out = g.out_edges();
    let score: Vec<AtomicU64> = (0..n).into_par_iter().map(|_| AtomicU64::new(0)).collect();
    let depth: Vec<AtomicU32> = (0..n).into_par_iter().map(|_| AtomicU32::new(UNSEEN)).collect();
    let sigma: Vec<AtomicU64> = (0..n).into_par_iter().map(|_| AtomicU64::new(0)).collect();
    let delta: Vec<AtomicU64> = (0..n).into_par_iter().map(|_| AtomicU64::new(0)).collect();
    // One bit per edge: set when the edge joins a vertex to one a level deeper, so the
    // backward sweep reads a bitmap instead of every neighbour's depth (GAPBS's trick).
    let successors = Bitmap::new(out.num_edges() as usize);
    for &s in sources {
        depth.par_iter().for_each(|d| d.store(UNSEEN, Relaxed));
        sigma.par_iter().for_each(|x| x.store(0, Relaxed));
        delta.par_iter().for_each(|x| x.store(0, Relaxed));
        depth[s as usize].store(0, Relaxed);
        sigma[s as usize].store(1f64.to_bits(), Relaxed);
        successors.clear();
        let mut levels = vec![vec![s]];
        loop {
            let d = levels.len() as u32;
            let next: Vec<u32> = levels[d as usize - 1]
                .par_chunks(64)
                .flat_map_iter(|chunk| {
                    let mut found = Vec::new();
                    for &u in chunk {
                        let su = f64::from_bits(sigma[u as usize].load(Relaxed));
                        for e in out.range(u) {
                            let v = out.targets()[e];
                            let dv = depth[v as usize].load(Relaxed);
                            if dv == UNSEEN && depth[v as usize].compare_exchange(UNSEEN, d, Relaxed, Relaxed).is_ok() {
                                found.push(v);
                            }
                            if depth[v as usize].load(Relaxed) == d {
                                add_f64(&sigma[v as usize], su);
                                successors.set(e);
                            }
                        }
                    }
                    found
                })
                .collect();
            if next.is_empty() {
                break;
            }
            levels.push(next);
        }
        for level in levels.iter().rev() {
            level.par_iter().for_each(|&u| {
                let su = f64::from_bits(sigma[u as usize].load(Relaxed));
                let mut du = 0.0;
                for e in out.range(u).filter(|&e| successors.get(e)) {
                    let v = out.targets()[e] as usize;
                    du += su / f64::from_bits(sigma[v].load(Relaxed)) * (1.0 + f64::from_bits(delta[v].load(Relaxed)));
                }
                delta[u as usize].store(du.to_bits(), Relaxed);
                if u != s {
                    score[u as usize].store((f64::from_bits(score[u as usize].load(Relaxed)) + du).to_bits(), Relaxed);
                }
            });
        }
    }
    score.into_iter().map(|x| f64::from_bits(x.into_inner())).collect()
}

/// The reference: Brandes' sequential algorithm with a queue and a stack.
pub fn reference(g: &Graph, sources: &[u32]) -> Vec<f64> {
    let n = g.num_vertices();
    let mut score = vec![0.0; n];
    for &s in sources {
        let mut dist = vec![-1i64; n];
        let mut sigma = vec![0.0; n];
        let mut delta = vec![0.0; n];
        let mut order = Vec::new();
        let mut queue = VecDeque::from([s]);
        dist[s as usize] = 0;
        sigma[s as usize] = 1.0;
        while let Some(u) = queue.pop_front() {
            order.push(u);
            for &v in g.out_edges().neighbors(u) {
                if dist[v as usize] < 0 {
                    dist[v as usize] = dist[u as usize] + 1;
                    queue.push_back(v);
                }
                if dist[v as usize] == dist[u as usize] + 1 {
                    sigma[v as usize] += sigma[u as usize];
                }
            }
        }
        for &u in order.iter().rev() {
            for &v in g.out_edges().neighbors(u) {
                if dist[v as usize] == dist[u as usize] + 1 {
                    delta[u as usize] += sigma[u as usize] / sigma[v as usize] * (1.0 + delta[v as usize]);
                }
            }
            if u != s {
                score[u as usize] += delta[u as usize];
            }
        }
    }
    score
}

/// Checks scores against [`reference`] within 1e-9 relative to the largest score.
pub fn verify(g: &Graph, sources: &[u32], got: &[f64]) -> Result<(), String> {
    let want = reference(g, sources);
    let scale = want.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    crate::first_mismatch(&want, got, |a, b| (a - b).abs() <= 1e-9 * scale)
}
