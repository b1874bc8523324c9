//! Kernel: BFS. Returns the hop distance of every vertex from the source
//! (`UNREACHED` when there is no path).
//!
//! Direction-optimizing: top-down steps push from a sparse frontier, bottom-up steps
//! let each unvisited vertex look for any parent in a dense frontier bitmap and stop
//! at the first; the switch is the edge map's, with Beamer's α = 15 and β = 18.
//! Bottom-up needs in-edges, which the CPU engine builds for directed graphs; the SSD
//! engine streams every level top-down. On the in-memory CSR, runs of top-down levels
//! share one parallel region (`top_down_levels`).
//!
//! [1] Scott Beamer, Krste Asanović, David Patterson. "Direction-Optimizing
//!     Breadth-First Search." SC 2012.
//! [2] Julian Shun, Guy Blelloch. "Ligra: A Lightweight Graph Processing Framework
//!     for Shared Memory." PPoPP 2013.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering::Relaxed};

use rayon::prelude::*;

use chatty_graph::{Graph, Progress};

use crate::edge_map::{pull_threshold, pulls, Direction, EdgeMapGraph, EdgeMapOptions, EdgeOp, Edges};
use crate::frontier::Frontier;
use crate::region::{self, append, LevelSlots, FLUSH};
use crate::Result;

/// Depth of a vertex the source cannot reach.
pub const UNREACHED: u32 = u32::MAX;

struct Visit<'a> {
    depth: &'a [AtomicU32],
    level: u32,
}

impl EdgeOp for Visit<'_> {
    #[inline]
    fn cond(&self, v: u32) -> bool {
        self.depth[v as usize].load(Relaxed) == UNREACHED
    }
    /// Engines that apply without asking `cond` first (the SSD engine's gather)
    /// rely on the test here; pulls have made it already, at the cost of one load.
    #[inline]
    fn update(&self, _: u32, v: u32, _: u32) -> bool {
        self.cond(v) && {
            self.depth[v as usize].store(self.level, Relaxed);
            true
        }
    }
    #[inline]
    fn update_atomic(&self, _: u32, v: u32, _: u32) -> bool {
        self.depth[v as usize].compare_exchange(UNREACHED, self.level, Relaxed, Relaxed).is_ok()
    }
}

/// BFS from `source`; returns (depths, number of levels).
pub fn bfs<G: EdgeMapGraph + ?Sized>(g: &G, source: u32, direction: Direction, progress: &dyn Progress) -> Result<(Vec<u32>, u32)> {
    let n = g.num_vertices();
    let depth: Vec<AtomicU32> = (0..n).into_par_iter().map(|_| AtomicU32::new(UNREACHED)).collect();
    depth[source as usize].store(0, Relaxed);
    let mut frontier = Frontier::single(n, source);
    // The depth of `frontier`.
    let mut level = 0;
    let opts = EdgeMapOptions { direction, pull_divisor: 15, push_divisor: 18, dedup: false };
    let mut queue = Vec::new();
    progress.start("bfs: vertices reached", n as u64);
    while !frontier.is_empty() {
        match g.csr() {
            Some(csr) if !pulls(csr, Edges::Out, &frontier, opts) => {
                if queue.is_empty() {
                    // Zeroed pages from the kernel, faulted in only where the queue reaches (filling
                    // all n entries was 3.4 ms of a 60 ms rmat-20 search).
                    queue = bytemuck::zeroed_vec(n);
                }
                (frontier, level) = top_down_levels(csr, &depth, &queue, frontier, level, opts, progress);
            }
            _ => {
                progress.advance(frontier.len() as u64);
                level += 1;
                frontier = g.edge_map(Edges::Out, frontier, &Visit { depth: &depth, level }, opts)?;
            }
        }
    }
    Ok((depth.into_iter().map(AtomicU32::into_inner).collect(), level - 1))
}

/// Top-down levels on the in-memory CSR in one parallel region (GAPBS's top-down step
/// over its sliding queue, with the threads kept between levels): the frontier is a
/// window of `queue`, which takes each vertex at most once because the depth CAS
/// admits each vertex once; threads claim chunks of the window, append what they
/// reach at the queue's tail through a local buffer, and meet at one barrier per
/// level. A level of a few hundred vertices then costs a barrier, not a fork-join, so
/// roads and grids get all threads. Returns the first frontier that should pull (or
/// the empty one) and its depth.
fn top_down_levels(
    g: &Graph,
    depth: &[AtomicU32],
    queue: &[AtomicU32],
    frontier: Frontier,
    level: u32,
    opts: EdgeMapOptions,
    progress: &dyn Progress,
) -> (Frontier, u32) {
    let Frontier::Sparse { n, ids } = frontier.into_sparse() else { unreachable!("into_sparse") };
    queue[..ids.len()].par_iter().zip(&ids).for_each(|(slot, &v)| slot.store(v, Relaxed));
    let adj = g.out_edges();
    let pull_above = (opts.direction == Direction::Auto && g.has_in_edges()).then(|| pull_threshold(g, opts));
    let tail = AtomicUsize::new(ids.len());
    // The next window's end is counted, not read from the tail: a fast thread may
    // append the level after it already.
    let slots = LevelSlots::default();
    let ends = region::run(|member| {
        let mut reached = Vec::with_capacity(FLUSH);
        let (mut begin, mut end) = (0, ids.len());
        for round in 0.. {
            let next_depth = level + 1 + round as u32;
            let (current, next) = slots.round(round, member);
            if member.index() == 0 {
                progress.advance((end - begin) as u64);
            }
            let mut next_work = 0;
            while let Some(claim) = current.claim(begin, end) {
                for u in &queue[claim] {
                    for &v in adj.neighbors(u.load(Relaxed)) {
                        let d = &depth[v as usize];
                        if d.load(Relaxed) == UNREACHED && d.compare_exchange(UNREACHED, next_depth, Relaxed, Relaxed).is_ok() {
                            reached.push(v);
                            next_work += adj.degree(v) as u64 + 1;
                            if reached.len() == FLUSH {
                                append(queue, &tail, &mut reached, next);
                            }
                        }
                    }
                }
            }
            append(queue, &tail, &mut reached, next);
            next.work.fetch_add(next_work, Relaxed);
            member.wait();
            (begin, end) = (end, end + next.reached.load(Relaxed));
            if begin == end || pull_above.is_some_and(|limit| next.work.load(Relaxed) > limit) {
                return (begin, end, next_depth);
            }
        }
        unreachable!("the loop returns")
    });
    let (begin, end, level) = ends[0];
    (Frontier::Sparse { n, ids: queue[begin..end].iter().map(|v| v.load(Relaxed)).collect() }, level)
}

/// The reference: a sequential queue-based BFS.
pub fn reference(g: &Graph, source: u32) -> Vec<u32> {
    let mut depth = vec![UNREACHED; g.num_vertices()];
    let mut queue = VecDeque::from([source]);
    depth[source as usize] = 0;
    while let Some(u) = queue.pop_front() {
        for &v in g.out_edges().neighbors(u) {
            if depth[v as usize] == UNREACHED {
                depth[v as usize] = depth[u as usize] + 1;
                queue.push_back(v);
            }
        }
    }
    depth
}

/// The BFS tree's edges `(parent, child)` in the order a queue-based BFS visits them,
/// as networkx's `bfs_edges` lists them: level by level, each level in the order its
/// vertices were reached, each vertex's neighbours in the order `neighbors` gives;
/// a child's parent is the first vertex of the level above that lists it. `depth`
/// holds the depths from `source` (any engine's; the order, not the depths, is what
/// this pass adds); levels deeper than `limit` are left out. One sequential pass over
/// the edges of the vertices it reaches.
pub fn tree_edges_in_visit_order<'a>(neighbors: impl Fn(u32) -> &'a [u32], source: u32, depth: &[u32], limit: u32) -> Vec<(u32, u32)> {
    let mut taken = vec![false; depth.len()];
    taken[source as usize] = true;
    let (mut level, mut next, mut edges) = (vec![source], Vec::new(), Vec::new());
    for d in 1..=limit {
        for &u in &level {
            for &v in neighbors(u) {
                if depth[v as usize] == d && !std::mem::replace(&mut taken[v as usize], true) {
                    next.push(v);
                    edges.push((u, v));
                }
            }
        }
        if next.is_empty() {
            break;
        }
        std::mem::swap(&mut level, &mut next);
        next.clear();
    }
    edges
}

/// Checks `depth` against [`reference`]; returns the first difference.
pub fn verify(g: &Graph, source: u32, depth: &[u32]) -> Result<()> {
    crate::first_mismatch(&reference(g, source), depth, |a, b| a == b)
}
