//! The kernels on the semi-external engine, each a loop of streamed `edge_map`
//! rounds with an [`EdgeOp`] (the program model): vertex data in memory, edges from
//! disk. They return the CPU engine's [`Output`] types, so `chatty_algo::verify`
//! checks them against the same sequential references.
//!
//! - BFS: level-synchronous push (one round per level).
//! - SSSP: frontier Bellman–Ford (a vertex is re-expanded when its distance drops);
//!   streaming favours few long rounds over delta-stepping's many short ones.
//! - PageRank: push of `score / degree` contributions, the CPU engine's iteration
//!   (same dangling-mass handling, same f32 contributions).
//! - WCC: min-label propagation over out- and in-edges (Shiloach–Vishkin's hooking
//!   needs random access to edges; label propagation only streams).
//! - SpMV: one dense round, `y[dst] += w · x[src]`.
//! - BC: Brandes, forward rounds counting shortest paths over out-edges, backward
//!   rounds accumulating dependencies over in-edges, level by level.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

use chatty_algo::bfs::UNREACHED;
use chatty_algo::edge_map::EdgeOp;
use chatty_algo::frontier::Bitmap;
use chatty_algo::{Algorithm, Distances, Output, Params, RunResult};
use chatty_graph::WeightType;

use crate::engine::{Edges, SsdGraph};
use crate::SsdError;

/// Runs `alg` on the graph on disk for the given sources.
pub fn run(g: &SsdGraph, alg: Algorithm, p: &Params, sources: Vec<u32>) -> Result<RunResult, SsdError> {
    let (output, iterations) = match alg {
        Algorithm::Bfs => bfs(g, sources[0])?,
        Algorithm::Sssp => sssp(g, sources[0])?,
        Algorithm::Pr => pagerank(g, p)?,
        Algorithm::Wcc => wcc(g)?,
        Algorithm::Spmv => spmv(g, p)?,
        Algorithm::Bc => (bc(g, &sources)?, sources.len() as u64),
    };
    Ok(RunResult { output, sources, iterations })
}

fn atomics32(n: usize, v: u32) -> Vec<AtomicU32> {
    (0..n).map(|_| AtomicU32::new(v)).collect()
}

fn atomics64(n: usize, v: u64) -> Vec<AtomicU64> {
    (0..n).map(|_| AtomicU64::new(v)).collect()
}

fn all(n: usize) -> Bitmap {
    let b = Bitmap::new(n);
    b.fill();
    b
}

fn single(n: usize, v: u32) -> Bitmap {
    let b = Bitmap::new(n);
    b.set(v as usize);
    b
}

/// Adds to an f64 held as bits: plain when the caller owns the cell, CAS otherwise.
fn add_owned(cell: &AtomicU64, x: f64) {
    cell.store((f64::from_bits(cell.load(Relaxed)) + x).to_bits(), Relaxed);
}

fn add_atomic(cell: &AtomicU64, x: f64) {
    let _ = cell.fetch_update(Relaxed, Relaxed, |old| Some((f64::from_bits(old) + x).to_bits()));
}

fn to_f64(v: Vec<AtomicU64>) -> Vec<f64> {
    v.into_iter().map(|x| f64::from_bits(x.into_inner())).collect()
}

/// A weight word as a number, by the layout's weight type (1 when unweighted).
fn weight(t: WeightType, word: u32) -> f64 {
    match t {
        WeightType::None => 1.0,
        WeightType::Int => word as f64,
        WeightType::Float => f32::from_bits(word) as f64,
    }
}

struct Visit<'a> {
    depth: &'a [AtomicU32],
    level: u32,
}

impl EdgeOp for Visit<'_> {
    fn update(&self, _src: u32, dst: u32, _w: u32) -> bool {
        let d = &self.depth[dst as usize];
        d.load(Relaxed) == UNREACHED && {
            d.store(self.level, Relaxed);
            true
        }
    }
    fn update_atomic(&self, _src: u32, dst: u32, _w: u32) -> bool {
        self.depth[dst as usize].compare_exchange(UNREACHED, self.level, Relaxed, Relaxed).is_ok()
    }
}

fn bfs(g: &SsdGraph, source: u32) -> Result<(Output, u64), SsdError> {
    let n = g.num_vertices();
    let depth = atomics32(n, UNREACHED);
    depth[source as usize].store(0, Relaxed);
    let mut frontier = single(n, source);
    let mut level = 0;
    while frontier.count() > 0 {
        level += 1;
        let next = Bitmap::new(n);
        g.edge_map(Edges::Out, &frontier, &Visit { depth: &depth, level }, &next)?;
        frontier = next;
    }
    Ok((Output::Depths(depth.into_iter().map(AtomicU32::into_inner).collect()), level as u64))
}

/// Relaxation of `dist[dst]` through `src`, in integers or floats (as f64 bits).
struct Relax<'a> {
    dist: &'a [AtomicU64],
    weights: WeightType,
    /// The bits of a negative or NaN weight met on the way (0: none).
    bad_weight: &'a AtomicU32,
}

impl Relax<'_> {
    fn candidate(&self, src: u32, w: u32) -> u64 {
        if self.weights == WeightType::Float && (f32::from_bits(w).is_nan() || f32::from_bits(w) < 0.0) {
            self.bad_weight.store(w, Relaxed);
            return u64::MAX;
        }
        let d = self.dist[src as usize].load(Relaxed);
        match self.weights {
            WeightType::Float => (f64::from_bits(d) + weight(self.weights, w)).to_bits(),
            _ => d.saturating_add(weight(self.weights, w) as u64),
        }
    }

    fn less(&self, a: u64, b: u64) -> bool {
        match self.weights {
            WeightType::Float => a != u64::MAX && f64::from_bits(a) < f64::from_bits(b),
            _ => a < b,
        }
    }
}

impl EdgeOp for Relax<'_> {
    fn update(&self, src: u32, dst: u32, w: u32) -> bool {
        self.apply(dst, self.candidate(src, w))
    }
    fn message(&self, src: u32, w: u32) -> u64 {
        self.candidate(src, w)
    }
    fn apply(&self, dst: u32, nd: u64) -> bool {
        let cell = &self.dist[dst as usize];
        self.less(nd, cell.load(Relaxed)) && {
            cell.store(nd, Relaxed);
            true
        }
    }
    fn update_atomic(&self, src: u32, dst: u32, w: u32) -> bool {
        let nd = self.candidate(src, w);
        self.dist[dst as usize].fetch_update(Relaxed, Relaxed, |old| self.less(nd, old).then_some(nd)).is_ok()
    }
}

fn sssp(g: &SsdGraph, source: u32) -> Result<(Output, u64), SsdError> {
    let n = g.num_vertices();
    let weights = g.layout.weight_type;
    let float = weights == WeightType::Float;
    let dist = atomics64(n, if float { f64::INFINITY.to_bits() } else { u64::MAX });
    dist[source as usize].store(if float { 0f64.to_bits() } else { 0 }, Relaxed);
    let mut frontier = single(n, source);
    let mut rounds = 0u64;
    let bad_weight = AtomicU32::new(0);
    while frontier.count() > 0 {
        rounds += 1;
        let next = Bitmap::new(n);
        g.edge_map(Edges::Out, &frontier, &Relax { dist: &dist, weights, bad_weight: &bad_weight }, &next)?;
        let bad = bad_weight.load(Relaxed);
        if bad != 0 {
            // The CPU engine's check, met while streaming instead of by a pass of its own.
            return Err(SsdError::Invalid(format!("SSSP needs non-negative weights; this graph has weight {}", f32::from_bits(bad))));
        }
        frontier = next;
    }
    let raw: Vec<u64> = dist.into_iter().map(AtomicU64::into_inner).collect();
    let d = if float { Distances::Float(raw.into_iter().map(f64::from_bits).collect()) } else { Distances::Int(raw) };
    Ok((Output::Distances(d), rounds))
}

/// `acc[dst] += scale(w) · value[src]` for PageRank's contributions and SpMV.
struct Accumulate<'a, V: Fn(u32) -> f64 + Sync> {
    acc: &'a [AtomicU64],
    value: V,
    weights: WeightType,
}

impl<V: Fn(u32) -> f64 + Sync> EdgeOp for Accumulate<'_, V> {
    fn update(&self, src: u32, dst: u32, w: u32) -> bool {
        self.apply(dst, self.message(src, w))
    }
    fn message(&self, src: u32, w: u32) -> u64 {
        (weight(self.weights, w) * (self.value)(src)).to_bits()
    }
    fn apply(&self, dst: u32, x: u64) -> bool {
        add_owned(&self.acc[dst as usize], f64::from_bits(x));
        false
    }
    fn update_atomic(&self, src: u32, dst: u32, w: u32) -> bool {
        add_atomic(&self.acc[dst as usize], weight(self.weights, w) * (self.value)(src));
        false
    }
}

fn pagerank(g: &SsdGraph, p: &Params) -> Result<(Output, u64), SsdError> {
    let n = g.num_vertices();
    if n == 0 {
        return Ok((Output::Values(Vec::new()), 0));
    }
    let pr = p.pr;
    let everyone = all(n);
    let mut score = vec![1.0 / n as f64; n];
    let mut contrib = vec![0f32; n];
    let mut iters = 0;
    while iters < pr.max_iters {
        iters += 1;
        let mut dangling = 0.0;
        for (u, (c, s)) in contrib.iter_mut().zip(&score).enumerate() {
            let d = g.out_degree(u as u32);
            *c = if d > 0 { (s / d as f64) as f32 } else { 0.0 };
            if d == 0 {
                dangling += s;
            }
        }
        let base = (1.0 - pr.damping) / n as f64 + pr.damping * dangling / n as f64;
        let sums = atomics64(n, 0f64.to_bits());
        let op = Accumulate { acc: &sums, value: |u: u32| contrib[u as usize] as f64, weights: WeightType::None };
        g.edge_map(Edges::Out, &everyone, &op, &Bitmap::new(n))?;
        let mut change = 0.0;
        for (s, x) in score.iter_mut().zip(to_f64(sums)) {
            let new = base + pr.damping * x;
            change += (new - *s).abs();
            *s = new;
        }
        if change < pr.tolerance {
            break;
        }
    }
    Ok((Output::Values(score), iters as u64))
}

struct MinLabel<'a> {
    label: &'a [AtomicU32],
}

impl EdgeOp for MinLabel<'_> {
    fn update(&self, src: u32, dst: u32, w: u32) -> bool {
        self.apply(dst, self.message(src, w))
    }
    fn message(&self, src: u32, _w: u32) -> u64 {
        self.label[src as usize].load(Relaxed) as u64
    }
    fn apply(&self, dst: u32, l: u64) -> bool {
        let (l, cell) = (l as u32, &self.label[dst as usize]);
        l < cell.load(Relaxed) && {
            cell.store(l, Relaxed);
            true
        }
    }
    fn update_atomic(&self, src: u32, dst: u32, _w: u32) -> bool {
        let l = self.label[src as usize].load(Relaxed);
        self.label[dst as usize].fetch_min(l, Relaxed) > l
    }
}

fn wcc(g: &SsdGraph) -> Result<(Output, u64), SsdError> {
    let n = g.num_vertices();
    let label: Vec<AtomicU32> = (0..n as u32).map(AtomicU32::new).collect();
    let mut frontier = all(n);
    let mut rounds = 0;
    while frontier.count() > 0 {
        rounds += 1;
        let next = Bitmap::new(n);
        g.edge_map(Edges::Out, &frontier, &MinLabel { label: &label }, &next)?;
        if g.layout.header.directed {
            g.edge_map(Edges::In, &frontier, &MinLabel { label: &label }, &next)?;
        }
        frontier = next;
    }
    Ok((Output::Labels(label.into_iter().map(AtomicU32::into_inner).collect()), rounds))
}

fn spmv(g: &SsdGraph, p: &Params) -> Result<(Output, u64), SsdError> {
    let n = g.num_vertices();
    let x = chatty_algo::spmv_x_for(n, p).map_err(SsdError::Config)?;
    let y = atomics64(n, 0f64.to_bits());
    let op = Accumulate { acc: &y, value: |u: u32| x[u as usize], weights: g.layout.weight_type };
    g.edge_map(Edges::Out, &all(n), &op, &Bitmap::new(n))?;
    Ok((Output::Values(to_f64(y)), 1))
}

/// Brandes' forward step: the first visit sets the depth; every edge into the next
/// level adds its source's path count.
struct CountPaths<'a> {
    depth: &'a [AtomicU32],
    sigma: &'a [AtomicU64],
    level: u32,
}

impl EdgeOp for CountPaths<'_> {
    fn update(&self, src: u32, dst: u32, w: u32) -> bool {
        self.apply(dst, self.message(src, w))
    }
    fn message(&self, src: u32, _w: u32) -> u64 {
        self.sigma[src as usize].load(Relaxed)
    }
    fn apply(&self, dst: u32, paths: u64) -> bool {
        let d = &self.depth[dst as usize];
        let first = d.load(Relaxed) == UNREACHED;
        if first {
            d.store(self.level, Relaxed);
        }
        if d.load(Relaxed) == self.level {
            add_owned(&self.sigma[dst as usize], f64::from_bits(paths));
        }
        first
    }
    fn update_atomic(&self, src: u32, dst: u32, _w: u32) -> bool {
        let first = self.depth[dst as usize].compare_exchange(UNREACHED, self.level, Relaxed, Relaxed).is_ok();
        if first || self.depth[dst as usize].load(Relaxed) == self.level {
            add_atomic(&self.sigma[dst as usize], f64::from_bits(self.sigma[src as usize].load(Relaxed)));
        }
        first
    }
}

/// Brandes' backward step over in-edges: `w` (one level deeper) gives its in-neighbour
/// `v` the share `σ_v / σ_w · (1 + δ_w)`.
struct Dependency<'a> {
    depth: &'a [AtomicU32],
    sigma: &'a [AtomicU64],
    delta: &'a [AtomicU64],
    level: u32,
}

impl Dependency<'_> {
    fn value(&self, a: &[AtomicU64], i: u32) -> f64 {
        f64::from_bits(a[i as usize].load(Relaxed))
    }

    /// `(1 + δ_w) / σ_w`: the part of the share that depends on `w` alone.
    fn per_path(&self, w: u32) -> f64 {
        (1.0 + self.value(self.delta, w)) / self.value(self.sigma, w)
    }

    fn share(&self, v: u32, per_path: f64) -> Option<f64> {
        (self.depth[v as usize].load(Relaxed) == self.level - 1).then(|| self.value(self.sigma, v) * per_path)
    }
}

impl EdgeOp for Dependency<'_> {
    fn update(&self, w: u32, v: u32, weight: u32) -> bool {
        self.apply(v, self.message(w, weight))
    }
    fn message(&self, w: u32, _weight: u32) -> u64 {
        self.per_path(w).to_bits()
    }
    fn apply(&self, v: u32, per_path: u64) -> bool {
        if let Some(x) = self.share(v, f64::from_bits(per_path)) {
            add_owned(&self.delta[v as usize], x);
        }
        false
    }
    fn update_atomic(&self, w: u32, v: u32, _weight: u32) -> bool {
        if let Some(x) = self.share(v, self.per_path(w)) {
            add_atomic(&self.delta[v as usize], x);
        }
        false
    }
}

fn bc(g: &SsdGraph, sources: &[u32]) -> Result<Output, SsdError> {
    let n = g.num_vertices();
    let mut score = vec![0.0; n];
    for &s in sources {
        let depth = atomics32(n, UNREACHED);
        let sigma = atomics64(n, 0f64.to_bits());
        let delta = atomics64(n, 0f64.to_bits());
        depth[s as usize].store(0, Relaxed);
        sigma[s as usize].store(1f64.to_bits(), Relaxed);
        let mut levels = vec![single(n, s)];
        loop {
            let next = Bitmap::new(n);
            let op = CountPaths { depth: &depth, sigma: &sigma, level: levels.len() as u32 };
            g.edge_map(Edges::Out, levels.last().expect("the source level"), &op, &next)?;
            if next.count() == 0 {
                break;
            }
            levels.push(next);
        }
        for level in (1..levels.len()).rev() {
            let op = Dependency { depth: &depth, sigma: &sigma, delta: &delta, level: level as u32 };
            g.edge_map(Edges::In, &levels[level], &op, &Bitmap::new(n))?;
        }
        for (v, d) in delta.iter().enumerate() {
            if v != s as usize {
                score[v] += f64::from_bits(d.load(Relaxed));
            }
        }
    }
    Ok(Output::Values(score))
}
