//! Kernel: SSSP. Returns the shortest-path distance of every vertex from the source
//! (exact integers for integer weights; `INF` when unreachable).
//!
//! Delta-stepping: vertices wait in buckets of width Δ by tentative distance; the
//! lowest non-empty bucket is relaxed in parallel (atomic fetch-min on the distance),
//! and a thread keeps relaxing its own additions to the current bucket while they are
//! few ("bucket fusion", which saves a synchronisation per round on road graphs).
//! Stale entries (whose distance has since dropped) are skipped when popped rather
//! than removed. Its own loop, not `edge_map`, because buckets are not a frontier.
//!
//! [1] Ulrich Meyer, Peter Sanders. "Δ-stepping: a parallelizable shortest path
//!     algorithm." Journal of Algorithms 49(1), 2003.
//! [2] Yunming Zhang et al. "Optimizing Ordered Graph Algorithms with GraphIt."
//!     CGO 2020 (bucket fusion).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use rayon::prelude::*;

use chatty_graph::{Graph, WeightType};

/// Distances: `u64` for integer weights (and unit weights), `f64` for float weights.
#[derive(Clone, Debug, PartialEq)]
pub enum Distances {
    /// Integer distances; `u64::MAX` is unreachable.
    Int(Vec<u64>),
    /// Float distances; `f64::INFINITY` is unreachable.
    Float(Vec<f64>),
}

/// A distance domain whose non-negative values order like their `u64` bit patterns,
/// so one atomic `fetch_min` on the bits serves both.
trait Dist: Copy + PartialOrd + Send + Sync + 'static {
    const INF: Self;
    const ZERO: Self;
    fn weight(raw: Option<&[u32]>, e: usize) -> Self;
    fn add(self, w: Self) -> Self;
    fn bucket(self, delta: f64) -> u64;
    fn bits(self) -> u64;
    fn from_bits(b: u64) -> Self;
}

impl Dist for u64 {
    const INF: u64 = u64::MAX;
    const ZERO: u64 = 0;
    #[inline]
    fn weight(raw: Option<&[u32]>, e: usize) -> u64 {
        raw.map_or(1, |w| w[e] as u64)
    }
    #[inline]
    fn add(self, w: u64) -> u64 {
        self.saturating_add(w)
    }
    #[inline]
    fn bucket(self, delta: f64) -> u64 {
        self / delta as u64
    }
    #[inline]
    fn bits(self) -> u64 {
        self
    }
    #[inline]
    fn from_bits(b: u64) -> u64 {
        b
    }
}

impl Dist for f64 {
    const INF: f64 = f64::INFINITY;
    const ZERO: f64 = 0.0;
    #[inline]
    fn weight(raw: Option<&[u32]>, e: usize) -> f64 {
        raw.map_or(1.0, |w| f32::from_bits(w[e]) as f64)
    }
    #[inline]
    fn add(self, w: f64) -> f64 {
        self + w
    }
    #[inline]
    fn bucket(self, delta: f64) -> u64 {
        (self / delta) as u64
    }
    #[inline]
    fn bits(self) -> u64 {
        self.to_bits()
    }
    #[inline]
    fn from_bits(b: u64) -> f64 {
        f64::from_bits(b)
    }
}

/// A default Δ: the mean edge weight (1 for unweighted graphs).
pub fn default_delta(g: &Graph) -> f64 {
    let adj = g.out_edges();
    let m = adj.num_edges().max(1) as f64;
    let total: f64 = (0..adj.num_edges() as usize).into_par_iter().map(|e| adj.weight_f64(e)).sum();
    (total / m).max(1.0)
}

/// Rejects graphs SSSP cannot run on (negative float weights).
pub fn check_weights(g: &Graph) -> Result<(), String> {
    if let Some(chatty_graph::WeightSlice::Float(w)) = g.out_edges().weights() {
        if let Some(bad) = w.par_iter().find_any(|w| w.is_nan() || **w < 0.0) {
            return Err(format!("SSSP needs non-negative weights; this graph has weight {bad}"));
        }
    }
    Ok(())
}

/// Delta-stepping from `source` with bucket width `delta`; returns (distances, rounds).
pub fn sssp(g: &Graph, source: u32, delta: f64) -> (Distances, u64) {
    match g.weight_type() {
        WeightType::Float => {
            let (d, r) = delta_stepping::<f64>(g, source, delta);
            (Distances::Float(d), r)
        }
        _ => {
            let (d, r) = delta_stepping::<u64>(g, source, delta.max(1.0).round());
            (Distances::Int(d), r)
        }
    }
}

/// Buckets past the current one that a task keeps in a vector; further ones go to `far`.
const NEAR_BUCKETS: usize = 64;
/// A thread keeps relaxing its own current-bucket additions while they number fewer.
const FUSION_LIMIT: usize = 1000;

/// What one task of a round leaves behind: its near buckets (by offset from the
/// current one) and its far entries (bucket, vertex).
type TaskBuckets = (Vec<Vec<u32>>, Vec<(u64, u32)>);

fn delta_stepping<D: Dist>(g: &Graph, source: u32, delta: f64) -> (Vec<D>, u64) {
    let n = g.num_vertices();
    let out = g.out_edges();
    let weights = out.raw_weights();
    let dist: Vec<AtomicU64> = (0..n).into_par_iter().map(|_| AtomicU64::new(D::INF.bits())).collect();
    dist[source as usize].store(D::ZERO.bits(), Relaxed);
    let mut buckets: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
    let mut frontier = vec![source];
    let mut current = 0u64;
    let mut rounds = 0;

    let relax = |u: u32, near: &mut [Vec<u32>], far: &mut Vec<(u64, u32)>, current: u64| {
        let du = D::from_bits(dist[u as usize].load(Relaxed));
        if du.bucket(delta) < current {
            return; // stale: u was re-queued in an earlier bucket and settled there
        }
        for e in out.range(u) {
            let v = out.targets()[e];
            let nd = du.add(D::weight(weights, e));
            let mut old = dist[v as usize].load(Relaxed);
            while nd < D::from_bits(old) {
                match dist[v as usize].compare_exchange_weak(old, nd.bits(), Relaxed, Relaxed) {
                    Ok(_) => {
                        let b = nd.bucket(delta);
                        let offset = (b - current) as usize;
                        if offset < NEAR_BUCKETS {
                            near[offset].push(v);
                        } else {
                            far.push((b, v));
                        }
                        break;
                    }
                    Err(seen) => old = seen,
                }
            }
        }
    };

    loop {
        rounds += 1;
        let produced: Vec<TaskBuckets> = frontier
            .par_chunks(256)
            .map(|chunk| {
                let mut near = vec![Vec::new(); NEAR_BUCKETS];
                let mut far = Vec::new();
                for &u in chunk {
                    relax(u, &mut near, &mut far, current);
                }
                while !near[0].is_empty() && near[0].len() < FUSION_LIMIT {
                    for u in std::mem::take(&mut near[0]) {
                        relax(u, &mut near, &mut far, current);
                    }
                }
                (near, far)
            })
            .collect();
        for (near, far) in produced {
            for (i, b) in near.into_iter().enumerate().filter(|(_, b)| !b.is_empty()) {
                buckets.entry(current + i as u64).or_default().extend(b);
            }
            for (b, v) in far {
                buckets.entry(b).or_default().push(v);
            }
        }
        match buckets.pop_first() {
            Some((b, f)) => (current, frontier) = (b, f),
            None => break,
        }
    }
    (dist.into_iter().map(|d| D::from_bits(d.into_inner())).collect(), rounds)
}

/// The reference: sequential Dijkstra with a binary heap, in `f64` for float weights.
pub fn reference(g: &Graph, source: u32) -> Distances {
    fn dijkstra<D: Dist + Ord>(g: &Graph, source: u32) -> Vec<D> {
        let out = g.out_edges();
        let mut dist = vec![D::INF; g.num_vertices()];
        let mut heap = BinaryHeap::from([Reverse((D::ZERO, source))]);
        dist[source as usize] = D::ZERO;
        while let Some(Reverse((d, u))) = heap.pop() {
            if d > dist[u as usize] {
                continue;
            }
            for e in out.range(u) {
                let v = out.targets()[e];
                let nd = d.add(D::weight(out.raw_weights(), e));
                if nd < dist[v as usize] {
                    dist[v as usize] = nd;
                    heap.push(Reverse((nd, v)));
                }
            }
        }
        dist
    }
    match g.weight_type() {
        WeightType::Float => {
            let bits = dijkstra::<OrdF64>(g, source);
            Distances::Float(bits.into_iter().map(|d| d.0).collect())
        }
        _ => Distances::Int(dijkstra::<u64>(g, source)),
    }
}

/// Non-negative `f64` with a total order, for the reference's heap.
#[derive(Copy, Clone, PartialEq, Debug)]
struct OrdF64(f64);
impl Eq for OrdF64 {}
impl Ord for OrdF64 {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}
impl PartialOrd for OrdF64 {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Dist for OrdF64 {
    const INF: Self = OrdF64(f64::INFINITY);
    const ZERO: Self = OrdF64(0.0);
    fn weight(raw: Option<&[u32]>, e: usize) -> Self {
        OrdF64(f64::weight(raw, e))
    }
    fn add(self, w: Self) -> Self {
        OrdF64(self.0 + w.0)
    }
    fn bucket(self, delta: f64) -> u64 {
        self.0.bucket(delta)
    }
    fn bits(self) -> u64 {
        self.0.to_bits()
    }
    fn from_bits(b: u64) -> Self {
        OrdF64(f64::from_bits(b))
    }
}

/// Checks distances against [`reference`]: exact for integers, 1e-9 relative for floats.
pub fn verify(g: &Graph, source: u32, got: &Distances) -> Result<(), String> {
    match (reference(g, source), got) {
        (Distances::Int(want), Distances::Int(got)) => crate::first_mismatch(&want, got, |a, b| a == b),
        (Distances::Float(want), Distances::Float(got)) => {
            crate::first_mismatch(&want, got, |a, b| a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs()))
        }
        _ => Err("distance types differ from the reference".into()),
    }
}
