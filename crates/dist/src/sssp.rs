//! Distributed delta-stepping (Meyer and Sanders, "Δ-stepping: a parallelizable
//! shortest path algorithm", J. Algorithms 2003; distributed as in Chakaravarthy et
//! al., "Scalable Single Source Shortest Path Algorithms for Massively Parallel
//! Systems", IPDPS 2014). Every rank keeps lazy buckets of the vertices (its own and
//! ghosts) whose distance dropped; all ranks work on the smallest non-empty bucket
//! anywhere (one all-reduce per round), relaxing the in-edges of their own vertices
//! from the bucket's members ([`PushRows`]), and send improved distances to readers.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering::Relaxed;

use bytemuck::Pod;
use chatty_algo::Distances;
use chatty_graph::WeightType;
use rayon::prelude::*;

use crate::atomic::as_atomic_u64;
use crate::comm::Comm;
use crate::graph::LocalGraph;
use crate::halo::Halo;
use crate::push::PushRows;
use crate::DistError;

/// A distance: `u64` for integer (and unit) weights, `f64` for float weights, kept
/// as `u64` bits (non-negative `f64`s order like their bits, so one atomic min serves).
trait Distance: Pod + PartialOrd + Send + Sync {
    const INF: Self;
    const ZERO: Self;
    fn weight(raw: u32, weighted: bool) -> Self;
    fn add(self, w: Self) -> Self;
    fn bucket(self, delta: f64) -> u64;
    fn to_bits(self) -> u64;
    fn from_bits(bits: u64) -> Self;
}

impl Distance for u64 {
    const INF: u64 = u64::MAX;
    const ZERO: u64 = 0;
    fn weight(raw: u32, weighted: bool) -> u64 {
        if weighted {
            raw as u64
        } else {
            1
        }
    }
    fn add(self, w: u64) -> u64 {
        self.saturating_add(w)
    }
    fn bucket(self, delta: f64) -> u64 {
        self / (delta as u64).max(1)
    }
    fn to_bits(self) -> u64 {
        self
    }
    fn from_bits(bits: u64) -> u64 {
        bits
    }
}

impl Distance for f64 {
    const INF: f64 = f64::INFINITY;
    const ZERO: f64 = 0.0;
    fn weight(raw: u32, _: bool) -> f64 {
        f32::from_bits(raw) as f64
    }
    fn add(self, w: f64) -> f64 {
        self + w
    }
    fn bucket(self, delta: f64) -> u64 {
        (self / delta) as u64
    }
    fn to_bits(self) -> u64 {
        f64::to_bits(self)
    }
    fn from_bits(bits: u64) -> f64 {
        f64::from_bits(bits)
    }
}

/// Shortest distances from `source` (valid for the owned vertices) and the rounds.
pub fn sssp(g: &LocalGraph, comm: &Comm, halo: &Halo, push: &PushRows, source: u32, delta: f64) -> Result<(Distances, u64), DistError> {
    Ok(match g.weight_type {
        WeightType::Float => {
            let (d, rounds) = delta_stepping::<f64>(g, comm, halo, push, source, delta)?;
            (Distances::Float(d), rounds)
        }
        _ => {
            let (d, rounds) = delta_stepping::<u64>(g, comm, halo, push, source, delta)?;
            (Distances::Int(d), rounds)
        }
    })
}

fn delta_stepping<D: Distance>(
    g: &LocalGraph,
    comm: &Comm,
    halo: &Halo,
    push: &PushRows,
    source: u32,
    delta: f64,
) -> Result<(Vec<D>, u64), DistError> {
    let weighted = g.weight_type != WeightType::None;
    let mut bits = vec![D::INF.to_bits(); g.n];
    bits[source as usize] = D::ZERO.to_bits();
    let mut buckets: BTreeMap<u64, Vec<u32>> = BTreeMap::from([(0, vec![source])]);
    let mut rounds = 0;
    loop {
        let mine = buckets.first_key_value().map_or(u64::MAX, |(&b, _)| b);
        let current = comm.min_u64(mine);
        if current == u64::MAX {
            break;
        }
        rounds += 1;
        let mut active = buckets.remove(&current).unwrap_or_default();
        active.par_sort_unstable();
        active.dedup();
        // Stale entries: vertices whose distance has since dropped to an earlier bucket
        // were relaxed there.
        active.retain(|&u| D::from_bits(bits[u as usize]).bucket(delta) == current);
        let cells = as_atomic_u64(&mut bits);
        let relax = |chunk: &[u32]| {
            let mut improved = Vec::new();
            for &u in chunk {
                let du = D::from_bits(cells[u as usize].load(Relaxed));
                for e in push.row(u) {
                    let (v, nd) = (push.target(e), du.add(D::weight(push.weight(e), weighted)));
                    let mut old = cells[v as usize].load(Relaxed);
                    while nd < D::from_bits(old) {
                        match cells[v as usize].compare_exchange_weak(old, nd.to_bits(), Relaxed, Relaxed) {
                            Ok(_) => {
                                improved.push(v);
                                break;
                            }
                            Err(now) => old = now,
                        }
                    }
                }
            }
            improved
        };
        let mut improved: Vec<u32> =
            if active.len() < 1024 { relax(&active) } else { active.par_chunks(64).flat_map_iter(relax).collect() };
        improved.par_sort_unstable();
        improved.dedup();
        let parcels = halo.pack(comm, &improved, |v| bits[v as usize]);
        // Each ghost arrives once, from its owner: a plain load and store suffice.
        let cells = as_atomic_u64(&mut bits);
        let ghosts = halo.deliver(comm, parcels, |v, d: u64| {
            let better = D::from_bits(d) < D::from_bits(cells[v as usize].load(Relaxed));
            if better {
                cells[v as usize].store(d, Relaxed);
            }
            better
        })?;
        for v in improved.into_iter().chain(ghosts) {
            buckets.entry(D::from_bits(bits[v as usize]).bucket(delta)).or_default().push(v);
        }
    }
    Ok((bits.into_iter().map(D::from_bits).collect(), rounds))
}
