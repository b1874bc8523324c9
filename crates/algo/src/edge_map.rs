//! The program model's operators: [`edge_map`] and [`vertex_map`] over a [`Frontier`]
//! (Shun and Blelloch, "Ligra: A Lightweight Graph Processing Framework for Shared
//! Memory", PPoPP 2013), with the push/pull switch of direction-optimizing traversal
//! (Beamer, Asanović, Patterson, SC 2012) owned by the operator, not the kernel.

use rayon::prelude::*;

use chatty_graph::Graph;

use crate::frontier::{Bitmap, Frontier};

/// What an [`edge_map`] does along each edge `src → dst`.
///
/// `update` and `update_atomic` return true when `dst` changed and belongs in the
/// output frontier. Concurrent updates of one `dst` must combine through an
/// associative reduce (min, sum, or "first wins"); `update_atomic` does it with
/// atomics, `update` may assume the caller alone writes `dst`.
pub trait EdgeOp: Sync {
    /// Whether `dst` can still change; pull stops scanning `dst`'s in-edges once false.
    #[inline]
    fn cond(&self, _dst: u32) -> bool {
        true
    }
    /// Applies the edge when the calling thread owns `dst` (pull).
    fn update(&self, src: u32, dst: u32, weight: u32) -> bool;
    /// Applies the edge when other threads may update `dst` at once (push).
    fn update_atomic(&self, src: u32, dst: u32, weight: u32) -> bool;
    /// For engines that read an edge in one place and apply it in another (the SSD
    /// engine's scatter and gather threads, after Blaze): what `src` sends along the
    /// edge, computed where the edge is read, while `src`'s state is close at hand.
    /// The default sends `src` and the weight, and [`EdgeOp::apply`] calls `update`.
    #[inline]
    fn message(&self, src: u32, weight: u32) -> u64 {
        (src as u64) << 32 | weight as u64
    }
    /// Applies a [`EdgeOp::message`] to `dst`, owned by the calling thread; returns
    /// whether `dst` joins the output frontier.
    #[inline]
    fn apply(&self, dst: u32, message: u64) -> bool {
        self.update((message >> 32) as u32, dst, message as u32)
    }
}

/// Which way an [`edge_map`] walks edges.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Beamer's switch: a sparse frontier goes pull when its out-edges exceed
    /// `m / pull_divisor`; a dense one (the output of a pull) stays pull while it holds
    /// more than `n / push_divisor` vertices, since pull's cost follows the vertices
    /// not yet done rather than the frontier.
    Auto,
    /// Each frontier vertex pushes along its out-edges (sparse frontier, atomics).
    Push,
    /// Each vertex pulls from its in-neighbours in the frontier (dense frontier, no atomics).
    Pull,
}

/// Hints for [`edge_map`]; flags, not forks.
#[derive(Copy, Clone, Debug)]
pub struct EdgeMapOptions {
    /// Direction policy.
    pub direction: Direction,
    /// `Auto` pulls when frontier out-edges exceed `m / pull_divisor` (Ligra uses 20,
    /// Beamer's α is 15).
    pub pull_divisor: u64,
    /// `Auto` returns from pull to push below `n / push_divisor` frontier vertices
    /// (Beamer's β is 18).
    pub push_divisor: u64,
    /// Push may report a vertex once per successful update; set to keep one copy.
    pub dedup: bool,
}

impl Default for EdgeMapOptions {
    fn default() -> Self {
        EdgeMapOptions { direction: Direction::Auto, pull_divisor: 20, push_divisor: 18, dedup: false }
    }
}

/// Frontiers at most this large are processed on the calling thread: on high-diameter
/// graphs (roads: thousands of levels of a few hundred vertices) forking costs more
/// than the level's work.
const SEQUENTIAL_FRONTIER: usize = 4096;

/// Out-edges leaving the frontier plus its size (Ligra's measure for the switch).
pub fn frontier_work(g: &Graph, frontier: &Frontier) -> u64 {
    let out = g.out_edges();
    match frontier {
        Frontier::Sparse { ids, .. } if ids.len() <= SEQUENTIAL_FRONTIER => ids.iter().map(|&v| out.degree(v) as u64 + 1).sum(),
        Frontier::Sparse { ids, .. } => ids.par_iter().map(|&v| out.degree(v) as u64 + 1).sum(),
        Frontier::Dense { bits, .. } => (0..bits.len() as u32).into_par_iter().filter(|&v| bits.get(v as usize)).map(|v| out.degree(v) as u64 + 1).sum(),
    }
}

/// Applies `op` along every edge leaving `frontier`; returns the vertices it changed.
pub fn edge_map<O: EdgeOp>(g: &Graph, frontier: Frontier, op: &O, opts: EdgeMapOptions) -> Frontier {
    let pull = match opts.direction {
        Direction::Push => false,
        Direction::Pull => true,
        Direction::Auto => {
            g.has_in_edges()
                && match &frontier {
                    Frontier::Dense { count, .. } => *count as u64 > frontier.universe() as u64 / opts.push_divisor.max(1),
                    Frontier::Sparse { .. } => frontier_work(g, &frontier) > g.num_edges() / opts.pull_divisor.max(1),
                }
        }
    };
    if pull {
        pull_step(g, &frontier.into_dense(), op)
    } else {
        push_step(g, frontier.into_sparse(), op, opts.dedup)
    }
}

fn push_step<O: EdgeOp>(g: &Graph, frontier: Frontier, op: &O, dedup: bool) -> Frontier {
    let n = frontier.universe();
    let Frontier::Sparse { ids, .. } = frontier else { unreachable!("push takes a sparse frontier") };
    let out = g.out_edges();
    let weights = out.raw_weights();
    let claimed = dedup.then(|| Bitmap::new(n));
    let visit = |chunk: &[u32]| {
        let mut local = Vec::new();
        for &u in chunk {
            for e in out.range(u) {
                let v = out.targets()[e];
                if op.cond(v) && op.update_atomic(u, v, weights.map_or(0, |w| w[e])) {
                    if let Some(c) = &claimed {
                        if c.get(v as usize) {
                            continue;
                        }
                        c.set(v as usize);
                    }
                    local.push(v);
                }
            }
        }
        local
    };
    let next: Vec<u32> = if ids.len() <= SEQUENTIAL_FRONTIER { visit(&ids) } else { ids.par_chunks(64).flat_map_iter(visit).collect() };
    Frontier::Sparse { n, ids: next }
}

fn pull_step<O: EdgeOp>(g: &Graph, frontier: &Frontier, op: &O) -> Frontier {
    let Frontier::Dense { bits: current, .. } = frontier else { unreachable!("pull takes a dense frontier") };
    let n = current.len();
    let inc = g.in_edges();
    let weights = inc.raw_weights();
    let next = Bitmap::new(n);
    // Chunks of whole 64-bit words: each word of `next` has a single writer.
    const CHUNK: usize = 64 * 64;
    let count: usize = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let mut count = 0;
            for w in (c * CHUNK / 64)..((c + 1) * CHUNK).min(n).div_ceil(64) {
                let mut word = 0u64;
                for v in (w * 64) as u32..((w + 1) * 64).min(n) as u32 {
                    if !op.cond(v) {
                        continue;
                    }
                    for e in inc.range(v) {
                        let u = inc.targets()[e];
                        // Only this thread writes v, so cond(v) can only turn false
                        // after one of its own updates: test it there alone.
                        if current.get(u as usize) && op.update(u, v, weights.map_or(0, |w| w[e])) {
                            word |= 1 << (v % 64);
                            if !op.cond(v) {
                                break;
                            }
                        }
                    }
                }
                next.store_word(w, word);
                count += word.count_ones() as usize;
            }
            count
        })
        .sum();
    Frontier::Dense { bits: next, count }
}

/// Calls `f` on every member of `frontier`, in parallel.
pub fn vertex_map<F: Fn(u32) + Sync>(frontier: &mut Frontier, f: F) {
    frontier.ids().par_iter().for_each(|&v| f(v));
}

/// Dense pull with a sum: for every vertex `v`, `Σ f(u, e)` over its in-edges
/// `u → v` (`e` indexes `g.in_edges()`, for kernels that read weights), written to
/// `out[v]`. The all-vertices, no-frontier case of [`edge_map`] that PageRank and
/// SpMV reduce to, without a per-edge frontier test or store.
pub fn pull_sum<F: Fn(u32, usize) -> f64 + Sync>(g: &Graph, out: &mut [f64], f: F) {
    let inc = g.in_edges();
    let (offsets, targets) = (inc.offsets(), inc.targets());
    out.par_iter_mut().enumerate().with_min_len(1024).for_each(|(v, slot)| {
        let edges = offsets[v] as usize..offsets[v + 1] as usize;
        *slot = targets[edges.clone()].iter().zip(edges).map(|(&u, e)| f(u, e)).sum();
    });
}
