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
//! Engines that stream edges instead of holding them (the SSD engine) run frontier
//! Bellman–Ford through the edge map ([`Method::BellmanFord`]): a vertex is
//! re-expanded whenever its distance drops; streaming favours few long rounds over
//! delta-stepping's many short ones.
//!
//! [1] Ulrich Meyer, Peter Sanders. "Δ-stepping: a parallelizable shortest path
//!     algorithm." Journal of Algorithms 49(1), 2003.
//! [2] Yunming Zhang et al. "Optimizing Ordered Graph Algorithms with GraphIt."
//!     CGO 2020 (bucket fusion).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};

use rayon::prelude::*;
use strength_reduce::{StrengthReducedU32, StrengthReducedU64};

use chatty_graph::{Adjacency, Graph, WeightType};

use crate::edge_map::{EdgeMapGraph, EdgeMapOptions, EdgeOp, Edges};
use crate::frontier::Frontier;
use crate::region::{self, Shares};
use crate::{Error, Result};

/// How SSSP orders its relaxations.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Method {
    /// Delta-stepping with bucket width Δ; needs the adjacency in memory.
    DeltaStepping(f64),
    /// Frontier Bellman–Ford through the edge map.
    BellmanFord,
}

/// Distances: `u64` for integer weights (and unit weights), `f64` for float weights.
#[derive(Clone, Debug, PartialEq)]
pub enum Distances {
    /// Integer distances; `u64::MAX` is unreachable.
    Int(Vec<u64>),
    /// Float distances; `f64::INFINITY` is unreachable.
    Float(Vec<f64>),
}

/// A distance domain and its atomic cell. Distances are gathered and CAS-ed at random,
/// so the narrowest type that cannot overflow is used: `u32` when the longest simple
/// path fits, else `u64`, and `f64` for float weights (non-negative `f64` values order
/// like their bit patterns, so one integer CAS serves).
trait Dist: Copy + PartialOrd + Send + Sync + 'static {
    type Cell: Send + Sync;
    const INF: Self;
    const ZERO: Self;
    /// An unweighted edge's length.
    const ONE: Self;
    /// A stored weight word as a length.
    fn weight(raw: u32) -> Self;
    fn add(self, w: Self) -> Self;
    /// Δ in the form `bucket` divides by.
    type Width: Copy + Send + Sync;
    fn width(delta: f64) -> Self::Width;
    fn bucket(self, width: Self::Width) -> u64;
    /// Whether a vertex at this distance belongs to a bucket before `bucket`: what
    /// `self.bucket(width) < bucket` says, which integers answer with a multiplication.
    #[inline]
    fn before(self, bucket: u64, width: Self::Width) -> bool {
        self.bucket(width) < bucket
    }
    fn cell(self) -> Self::Cell;
    fn load(c: &Self::Cell) -> Self;
    /// Stores `new` if the cell still holds `old`; else returns what it holds.
    fn cas(c: &Self::Cell, old: Self, new: Self) -> Result<(), Self>;
    /// Stores `new` (where no other thread writes the cells).
    fn store(c: &Self::Cell, new: Self);
    fn into_inner(c: Self::Cell) -> Self;
}

macro_rules! int_dist {
    ($t:ty, $cell:ty, $width:ty) => {
        impl Dist for $t {
            type Cell = $cell;
            const INF: $t = <$t>::MAX;
            const ZERO: $t = 0;
            const ONE: $t = 1;
            #[inline]
            fn weight(raw: u32) -> $t {
                raw as $t
            }
            #[inline]
            fn add(self, w: $t) -> $t {
                self.saturating_add(w)
            }
            // A division by a constant as multiplications and shifts: a hardware
            // division per relaxation was a sixth of moscow's instructions.
            type Width = $width;
            fn width(delta: f64) -> $width {
                <$width>::new(delta.clamp(1.0, <$t>::MAX as f64) as $t)
            }
            #[inline]
            fn bucket(self, width: $width) -> u64 {
                (self / width) as u64
            }
            // ⌊x / Δ⌋ < b exactly when x < b·Δ (integers).
            #[inline]
            fn before(self, bucket: u64, width: $width) -> bool {
                (self as u128) < bucket as u128 * width.get() as u128
            }
            fn cell(self) -> $cell {
                <$cell>::new(self)
            }
            #[inline]
            fn load(c: &$cell) -> $t {
                c.load(Relaxed)
            }
            #[inline]
            fn cas(c: &$cell, old: $t, new: $t) -> Result<(), $t> {
                c.compare_exchange_weak(old, new, Relaxed, Relaxed).map(|_| ())
            }
            #[inline]
            fn store(c: &$cell, new: $t) {
                c.store(new, Relaxed)
            }
            fn into_inner(c: $cell) -> $t {
                c.into_inner()
            }
        }
    };
}
int_dist!(u32, AtomicU32, StrengthReducedU32);
int_dist!(u64, AtomicU64, StrengthReducedU64);

impl Dist for f64 {
    type Cell = AtomicU64;
    const INF: f64 = f64::INFINITY;
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
    #[inline]
    fn weight(raw: u32) -> f64 {
        f32::from_bits(raw) as f64
    }
    #[inline]
    fn add(self, w: f64) -> f64 {
        self + w
    }
    type Width = f64;
    fn width(delta: f64) -> f64 {
        delta
    }
    #[inline]
    fn bucket(self, delta: f64) -> u64 {
        (self / delta) as u64
    }
    fn cell(self) -> AtomicU64 {
        AtomicU64::new(self.to_bits())
    }
    #[inline]
    fn load(c: &AtomicU64) -> f64 {
        f64::from_bits(c.load(Relaxed))
    }
    #[inline]
    fn cas(c: &AtomicU64, old: f64, new: f64) -> Result<(), f64> {
        c.compare_exchange_weak(old.to_bits(), new.to_bits(), Relaxed, Relaxed).map(|_| ()).map_err(f64::from_bits)
    }
    #[inline]
    fn store(c: &AtomicU64, new: f64) {
        c.store(new.to_bits(), Relaxed)
    }
    fn into_inner(c: AtomicU64) -> f64 {
        f64::from_bits(c.into_inner())
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
pub fn check_weights(g: &Graph) -> Result<()> {
    if let Some(chatty_graph::WeightSlice::Float(w)) = g.out_edges().weights() {
        if let Some(bad) = w.par_iter().find_any(|w| w.is_nan() || **w < 0.0) {
            return Err(Error::NegativeWeight(*bad));
        }
    }
    Ok(())
}

/// Shortest distances from `source`; returns (distances, rounds).
pub fn sssp<G: EdgeMapGraph + ?Sized>(g: &G, source: u32, method: Method) -> Result<(Distances, u64)> {
    match (method, g.csr()) {
        (Method::DeltaStepping(delta), Some(csr)) => {
            check_weights(csr)?;
            delta_stepping_by_type(csr, source, delta)
        }
        (Method::DeltaStepping(_), None) => Err(Error::Unsupported("delta-stepping needs the adjacency in memory".into())),
        (Method::BellmanFord, _) => bellman_ford(g, source),
    }
}

/// Live buckets a thread may keep: Δ must be at least the largest weight over this.
const MAX_LIVE_BUCKETS: f64 = (1 << 20) as f64;

/// Delta-stepping in the narrowest distance type that cannot overflow.
fn delta_stepping_by_type(g: &Graph, source: u32, delta: f64) -> Result<(Distances, u64)> {
    Ok(match g.weight_type() {
        WeightType::Float => {
            let max_weight = g.out_edges().raw_weights().map_or(1.0, |w| w.par_iter().map(|&b| f32::from_bits(b)).reduce(|| 0.0, f32::max));
            // Queued distances lie within the largest weight of the current bucket, so
            // this bounds the buckets alive at once (a Δ of 1e-9 would ask for billions).
            if max_weight as f64 / delta > MAX_LIVE_BUCKETS {
                let problem = format!(
                    "{delta:e} is too small for weights up to {max_weight:e}: delta-stepping would keep over {MAX_LIVE_BUCKETS} buckets; use at least {:e}",
                    max_weight as f64 / MAX_LIVE_BUCKETS
                );
                return Err(Error::Parameter { name: "delta", problem });
            }
            let (d, r) = delta_stepping::<f64>(g, source, delta);
            (Distances::Float(d), r)
        }
        _ => {
            let delta = delta.max(1.0).round();
            // A shortest path has fewer than n edges and uses each edge at most once, so
            // it is no longer than either bound; INF (u32::MAX) must stay above it.
            let (max_weight, total_weight) = g.out_edges().raw_weights().map_or((1, g.num_edges()), |w| {
                w.par_iter().map(|&w| (w as u64, w as u64)).reduce(|| (0, 0), |a, b| (a.0.max(b.0), a.1.saturating_add(b.1)))
            });
            if max_weight.saturating_mul(g.num_vertices() as u64).min(total_weight) < u32::MAX as u64 {
                let (d, r) = delta_stepping::<u32>(g, source, delta);
                (Distances::Int(d.into_par_iter().map(|x| if x == u32::MAX { u64::MAX } else { x as u64 }).collect()), r)
            } else {
                let (d, r) = delta_stepping::<u64>(g, source, delta);
                (Distances::Int(d), r)
            }
        }
    })
}

/// A thread keeps relaxing its own current-bucket additions while they number fewer.
const FUSION_LIMIT: usize = 1000;

/// One thread's buckets from absolute bucket number `first` on (as in GAPBS they live
/// across rounds, so a vertex is copied once, into the next frontier; buckets behind
/// the current one are dropped, so only the live span is kept).
#[derive(Default)]
struct LocalBins {
    first: usize,
    /// A `Vec`, not a `VecDeque`: a push, once per successful relaxation, is then an
    /// index and a `Vec` push; dropping the front buckets moves the few live ones.
    bins: Vec<Vec<u32>>,
    /// Emptied bins, kept for their capacity: a fresh `Vec` per bucket and per fusion
    /// step cost an allocation each.
    spare: Vec<Vec<u32>>,
}

impl LocalBins {
    #[inline]
    fn push(&mut self, bucket: u64, v: u32) {
        let b = bucket as usize - self.first;
        match self.bins.get_mut(b) {
            Some(bin) => bin.push(v),
            None => self.push_beyond(b, v),
        }
    }

    #[cold]
    fn push_beyond(&mut self, b: usize, v: u32) {
        while b >= self.bins.len() {
            self.bins.push(self.spare.pop().unwrap_or_default());
        }
        self.bins[b].push(v);
    }

    fn get_mut(&mut self, bucket: usize) -> Option<&mut Vec<u32>> {
        self.bins.get_mut(bucket.checked_sub(self.first)?)
    }

    fn first_nonempty(&self, from: usize) -> Option<usize> {
        let skip = from.saturating_sub(self.first);
        self.bins.iter().skip(skip).position(|b| !b.is_empty()).map(|i| self.first + skip + i)
    }

    /// Drops the (empty) buckets before `bucket`.
    fn advance(&mut self, bucket: usize) {
        let dropped = bucket.saturating_sub(self.first).min(self.bins.len());
        self.spare.extend(self.bins.drain(..dropped).map(|mut bin| {
            bin.clear();
            bin
        }));
        self.first = self.first.max(bucket);
    }
}

/// Vertices a thread takes from the frontier at a time, at most: a short frontier is cut
/// finer, into about four claims per thread, because each claim seeds a thread's bucket
/// fusion; in 64s, a 500-vertex round fed 8 of 16 threads, which then fused alone while
/// the rest waited (moscow-osm: 38-46 ms of 51 at the barrier).
const FRONTIER_CHUNK: usize = 64;

/// Delta-stepping on every pool thread at once, as GAPBS runs it in one parallel
/// region: in a round the threads take chunks of the frontier (the lists the threads
/// published under the round's bucket), relax, publish their own lowest bucket under
/// its number and propose it, and meet at one barrier; nothing is spawned per round.
/// Road graphs need thousands of rounds, so their cost is the round's. GAPBS meets
/// twice a round, once to agree on the bucket and once after copying it out; here
/// each thread publishes before the agreement, into the other of two sets of lists,
/// and a thread whose bucket was not chosen takes its list back. The cursors and
/// proposals rotate through three, so that thread 0 resets each a round after its last
/// reader and a round before its next writer.
fn delta_stepping<D: Dist>(g: &Graph, source: u32, delta: f64) -> (Vec<D>, u64) {
    let n = g.num_vertices();
    let out = g.out_edges();
    let width = D::width(delta);
    let mut dist: Vec<D::Cell> = (0..n).into_par_iter().map(|_| D::INF.cell()).collect();
    dist[source as usize] = D::ZERO.cell();
    // Round r reads set r % 2 and publishes into the other.
    let shares = [Shares::new(vec![source], 0), Shares::new(Vec::new(), Shares::NONE)];
    let cursors: [AtomicUsize; 3] = Default::default();
    let proposals = [const { AtomicUsize::new(Shares::NONE) }; 3];
    let rounds = AtomicU64::new(0);

    region::run(|member| {
        let me = member.index();
        let alone = member.threads() == 1;
        // Relaxes a list of vertices: a call per list (a frontier chunk, a fused
        // bucket), with `relax` inlined in each loop (called per vertex, its saves and
        // restores cost as much as the one-thread form saved).
        let relax_all = |list: &[u32], bins: &mut LocalBins, current: usize| match alone {
            true => list.iter().for_each(|&u| relax::<D, true>(&dist, out, width, u, bins, current)),
            false => list.iter().for_each(|&u| relax::<D, false>(&dist, out, width, u, bins, current)),
        };
        let mut bins = LocalBins::default();
        // The bucket being fused, taken out of `bins` while its vertices are relaxed.
        let mut fused = Vec::new();
        let mut ends = Vec::with_capacity(shares[0].len());
        let mut current = 0usize;
        for round in 0.. {
            let (from, into) = (&shares[round & 1], &shares[(round + 1) & 1]);
            let (cursor, proposal) = (&cursors[round % 3], &proposals[round % 3]);
            relax_round(from, current, cursor, &mut ends, &mut bins, &mut fused, relax_all);
            // Only this thread adds to its bins, so its lowest bucket is final now.
            let lowest = bins.first_nonempty(current);
            // SAFETY: the set `into` was last read in the previous round, before its barrier.
            let mine = unsafe { into.mine(member) };
            mine.clear();
            if let Some(b) = lowest {
                std::mem::swap(mine, bins.get_mut(b).expect("a non-empty bucket"));
                proposal.fetch_min(b, Relaxed);
            }
            into.set_label(member, lowest.unwrap_or(Shares::NONE));
            member.wait();
            let next = proposal.load(Relaxed);
            if next == Shares::NONE {
                break;
            }
            if me == 0 {
                cursors[(round + 2) % 3].store(0, Relaxed);
                proposals[(round + 2) % 3].store(Shares::NONE, Relaxed);
                rounds.fetch_add(1, Relaxed);
            }
            if let Some(b) = lowest.filter(|&b| b != next) {
                // SAFETY: a later bucket than the agreed one: no thread reads the list.
                let mine = unsafe { into.mine(member) };
                std::mem::swap(mine, bins.get_mut(b).expect("the published bucket"));
            }
            bins.advance(next);
            current = next;
        }
    });
    (dist.into_iter().map(D::into_inner).collect(), rounds.into_inner() + 1)
}

/// One thread's share of a delta-stepping round: chunks of the frontier (the lists
/// published under bucket `current`) taken from `cursor` until none is left, then
/// bucket fusion. `ends` is scratch: each list's end in the frontier, in chunks (a
/// chunk never spans two lists).
#[inline]
fn relax_round(
    from: &Shares,
    current: usize,
    cursor: &AtomicUsize,
    ends: &mut Vec<usize>,
    bins: &mut LocalBins,
    fused: &mut Vec<u32>,
    relax_all: impl Fn(&[u32], &mut LocalBins, usize),
) {
    // SAFETY: a list labelled with the current bucket is left alone by its
    // owner until the next barrier, after `list`'s references are gone.
    let frontier = |t| if from.label(t) == current { unsafe { from.list(t) } } else { &[] };
    let total: usize = (0..from.len()).map(|t| frontier(t).len()).sum();
    let chunk = (total / (4 * from.len())).clamp(1, FRONTIER_CHUNK);
    ends.clear();
    ends.extend((0..from.len()).scan(0, |end, t| {
        *end += frontier(t).len().div_ceil(chunk);
        Some(*end)
    }));
    let chunks = ends.last().copied().unwrap_or(0);
    loop {
        let c = cursor.fetch_add(1, Relaxed);
        if c >= chunks {
            break;
        }
        let t = ends.partition_point(|&end| end <= c);
        let list = frontier(t);
        let first = (c + list.len().div_ceil(chunk) - ends[t]) * chunk;
        relax_all(&list[first..(first + chunk).min(list.len())], bins, current);
    }
    // Bucket fusion: small current-bucket work stays on this thread, no round.
    while let Some(b) = bins.get_mut(current).filter(|b| !b.is_empty() && b.len() < FUSION_LIMIT) {
        std::mem::swap(b, fused);
        relax_all(fused, bins, current);
        fused.clear();
    }
}

/// Delta-stepping's step at a popped vertex `u`: unless it settled in an earlier bucket
/// (a stale entry), lower each out-neighbour's distance through it and file the
/// neighbour under its new bucket. Always inlined: called from the frontier loop and
/// the fusion loop, as a closure of its own it was called per pop, and its saves and
/// restores made moscow's search 94.2M instructions against 90.0M (one thread).
/// `ALONE`: the only thread of its region, which lowers a distance with a plain store
/// where others need a compare-and-swap (a locked instruction, which also holds back
/// the loads after it): one thread on the dev VM, moscow 21.7-22.5 → 19.8-20.6 ms, the
/// 2048² grid 404-413 → 376-383 ms.
#[inline(always)]
fn relax<D: Dist, const ALONE: bool>(dist: &[D::Cell], out: &Adjacency, width: D::Width, u: u32, bins: &mut LocalBins, current: usize) {
    let du = D::load(&dist[u as usize]);
    if du.before(current as u64, width) {
        return; // stale: u was re-queued in an earlier bucket and settled there
    }
    let edge = |bins: &mut LocalBins, v: u32, w: D| {
        let nd = du.add(w);
        let mut old = D::load(&dist[v as usize]);
        if ALONE {
            if nd < old {
                D::store(&dist[v as usize], nd);
                bins.push(nd.bucket(width), v);
            }
            return;
        }
        while nd < old {
            match D::cas(&dist[v as usize], old, nd) {
                Ok(_) => {
                    bins.push(nd.bucket(width), v);
                    break;
                }
                Err(seen) => old = seen,
            }
        }
    };
    // The list and its weights as slices: no bounds check per edge.
    let range = out.range(u);
    let targets = &out.targets()[range.clone()];
    match out.raw_weights() {
        None => targets.iter().for_each(|&v| edge(bins, v, D::ONE)),
        Some(w) => targets.iter().zip(&w[range]).for_each(|(&v, &w)| edge(bins, v, D::weight(w))),
    }
}

/// Relaxation of `dist[dst]` through `src` for [`bellman_ford`], in integers or
/// floats (as f64 bits, which order like the values when non-negative).
struct Relax<'a> {
    dist: &'a [AtomicU64],
    weights: WeightType,
    /// The bits of a negative or NaN weight met on the way (0: none); a streaming
    /// engine finds them while reading, not in a pass of their own.
    bad_weight: &'a AtomicU32,
}

impl Relax<'_> {
    fn candidate(&self, src: u32, w: u32) -> u64 {
        let d = self.dist[src as usize].load(Relaxed);
        match self.weights {
            WeightType::Float => {
                let w = f32::from_bits(w);
                if w.is_nan() || w < 0.0 {
                    self.bad_weight.store(w.to_bits(), Relaxed);
                    return u64::MAX;
                }
                (f64::from_bits(d) + w as f64).to_bits()
            }
            WeightType::Int => d.saturating_add(w as u64),
            WeightType::None => d.saturating_add(1),
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

/// Frontier Bellman–Ford: rounds of relaxation from the vertices whose distance
/// dropped in the previous round.
fn bellman_ford<G: EdgeMapGraph + ?Sized>(g: &G, source: u32) -> Result<(Distances, u64)> {
    let n = g.num_vertices();
    let weights = g.weight_type();
    let float = weights == WeightType::Float;
    let dist: Vec<AtomicU64> =
        (0..n).into_par_iter().map(|_| AtomicU64::new(if float { f64::INFINITY.to_bits() } else { u64::MAX })).collect();
    dist[source as usize].store(0, Relaxed);
    let bad_weight = AtomicU32::new(0);
    let op = Relax { dist: &dist, weights, bad_weight: &bad_weight };
    let opts = EdgeMapOptions { dedup: true, direction: crate::Direction::Push, ..EdgeMapOptions::default() };
    let mut frontier = Frontier::single(n, source);
    let mut rounds = 0u64;
    while !frontier.is_empty() {
        rounds += 1;
        frontier = g.edge_map(Edges::Out, frontier, &op, opts)?;
        let bad = bad_weight.load(Relaxed);
        if bad != 0 {
            return Err(Error::NegativeWeight(f32::from_bits(bad)));
        }
    }
    let raw = dist.into_iter().map(AtomicU64::into_inner);
    Ok((if float { Distances::Float(raw.map(f64::from_bits).collect()) } else { Distances::Int(raw.collect()) }, rounds))
}

/// The reference: sequential Dijkstra with a binary heap, in `u64` or `f64`.
pub fn reference(g: &Graph, source: u32) -> Distances {
    let out = g.out_edges();
    let n = g.num_vertices();
    match g.weight_type() {
        WeightType::Float => {
            // Non-negative f64 values order like their bits: the heap holds the bits.
            let mut dist = vec![f64::INFINITY; n];
            let mut heap = BinaryHeap::from([Reverse((0u64, source))]);
            dist[source as usize] = 0.0;
            while let Some(Reverse((bits, u))) = heap.pop() {
                let d = f64::from_bits(bits);
                if d > dist[u as usize] {
                    continue;
                }
                for e in out.range(u) {
                    let (v, nd) = (out.targets()[e], d + out.weight_f64(e));
                    if nd < dist[v as usize] {
                        dist[v as usize] = nd;
                        heap.push(Reverse((nd.to_bits(), v)));
                    }
                }
            }
            Distances::Float(dist)
        }
        _ => {
            let mut dist = vec![u64::MAX; n];
            let mut heap = BinaryHeap::from([Reverse((0u64, source))]);
            dist[source as usize] = 0;
            while let Some(Reverse((d, u))) = heap.pop() {
                if d > dist[u as usize] {
                    continue;
                }
                for e in out.range(u) {
                    let (v, nd) = (out.targets()[e], d + out.weight_f64(e) as u64);
                    if nd < dist[v as usize] {
                        dist[v as usize] = nd;
                        heap.push(Reverse((nd, v)));
                    }
                }
            }
            Distances::Int(dist)
        }
    }
}

/// Checks distances against [`reference`]: exact for integers, 1e-9 relative for floats.
pub fn verify(g: &Graph, source: u32, got: &Distances) -> Result<()> {
    match (reference(g, source), got) {
        (Distances::Int(want), Distances::Int(got)) => crate::first_mismatch(&want, got, |a, b| a == b),
        (Distances::Float(want), Distances::Float(got)) => {
            crate::first_mismatch(&want, got, |&a, &b| crate::same_value(a, b, 1e-9 * a.abs().max(b.abs())))
        }
        _ => Err(Error::Mismatch("distance types differ from the reference".into())),
    }
}
