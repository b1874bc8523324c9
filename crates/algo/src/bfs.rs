//! Kernel: BFS. Returns the hop distance of every vertex from the source
//! (`UNREACHED` when there is no path).
//!
//! Direction-optimizing: top-down steps push from a sparse frontier, bottom-up steps
//! let each unvisited vertex look for any parent in a dense frontier bitmap and stop
//! at the first; Beamer's switch, with α = 15 and β = 18.
//! Bottom-up needs in-edges, which the CPU engine builds for directed graphs; the SSD
//! engine streams every level top-down. On the in-memory CSR the whole search, top-down
//! and bottom-up levels alike, runs in one parallel region (`csr_levels`).
//!
//! [1] Scott Beamer, Krste Asanović, David Patterson. "Direction-Optimizing
//!     Breadth-First Search." SC 2012.
//! [2] Julian Shun, Guy Blelloch. "Ligra: A Lightweight Graph Processing Framework
//!     for Shared Memory." PPoPP 2013.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering::Relaxed};

use rayon::prelude::*;

use chatty_graph::{Adjacency, Graph, Progress};

use crate::edge_map::{pull_threshold, pull_word, Direction, EdgeMapGraph, EdgeMapOptions, EdgeOp, Edges, PULL_CHUNK};
use crate::frontier::{Bitmap, Frontier};
use crate::region::{self, append, LevelSlot, LevelSlots, FLUSH};
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

/// Beamer's α: a sparse frontier turns bottom-up once its out-edges exceed m / α.
/// Every engine's direction-optimizing BFS switches by these two.
pub const BEAMER_ALPHA: u64 = 15;
/// Beamer's β: a dense frontier stays bottom-up while it holds more than n / β vertices.
pub const BEAMER_BETA: u64 = 18;

/// BFS from `source`; returns (depths, number of levels).
pub fn bfs<G: EdgeMapGraph + ?Sized>(g: &G, source: u32, direction: Direction, progress: &dyn Progress) -> Result<(Vec<u32>, u32)> {
    let n = g.num_vertices();
    let opts = EdgeMapOptions { direction, pull_divisor: BEAMER_ALPHA, push_divisor: BEAMER_BETA, dedup: false };
    progress.start("bfs: vertices reached", n as u64);
    let (depth, levels) = match g.csr() {
        Some(csr) => {
            // The queue written in the same pass as the depths: one fork-join, where
            // clearing it apart was another (or a serial memset of a reused block).
            let (depth, queue): (Vec<AtomicU32>, Vec<AtomicU32>) =
                (0..n).into_par_iter().map(|_| (AtomicU32::new(UNREACHED), AtomicU32::new(0))).unzip();
            depth[source as usize].store(0, Relaxed);
            let levels = csr_levels(csr, &depth, &queue, source, opts, progress);
            (depth, levels)
        }
        None => {
            let depth: Vec<AtomicU32> = (0..n).into_par_iter().map(|_| AtomicU32::new(UNREACHED)).collect();
            depth[source as usize].store(0, Relaxed);
            let mut frontier = Frontier::single(n, source);
            // The depth of `frontier`.
            let mut level = 0;
            while !frontier.is_empty() {
                progress.advance(frontier.len() as u64);
                level += 1;
                frontier = g.edge_map(Edges::Out, frontier, &Visit { depth: &depth, level }, opts)?;
            }
            (depth, level - 1)
        }
    };
    Ok((depth.into_iter().map(AtomicU32::into_inner).collect(), levels))
}

/// What a round of [`csr_levels`] does; every thread takes the same steps.
#[derive(Copy, Clone)]
enum Step {
    /// A top-down level from the queue's window.
    Push,
    /// The window's vertices set in the current bitmap, before a first bottom-up level.
    ToBits,
    /// A bottom-up level from the current bitmap into the other.
    Pull,
    /// The current bitmap's vertices appended to the queue, both bitmaps cleared on the
    /// way, before a top-down level.
    ToQueue,
}

/// The whole search on the in-memory CSR in one parallel region (GAPBS's BFS, with the
/// threads kept between levels): a level of a few hundred vertices costs a barrier,
/// not a fork-join, so roads and grids get all threads, and a small power-law graph's
/// few levels do not each wake the pool (ego-Twitter at 16 threads: 1.3 ms a search
/// with a fork-join per bottom-up step and conversion, GAPBS 0.5 ms).
///
/// Top-down levels read a window of `queue`, which takes each vertex at most once
/// (the depth CAS admits each once); threads claim runs of the window and append what
/// they reach at the queue's tail through a local buffer. Bottom-up levels read one
/// bitmap and write the other, a thread owning each word it claims. Both bitmaps are
/// clear whenever the search pushes. Returns the deepest level reached.
fn csr_levels(g: &Graph, depth: &[AtomicU32], queue: &[AtomicU32], source: u32, opts: EdgeMapOptions, progress: &dyn Progress) -> u32 {
    let n = g.num_vertices();
    let out = g.out_edges();
    queue[0].store(source, Relaxed);
    let tail = AtomicUsize::new(1);
    // What bottom-up levels read: the in-edges and the two frontier bitmaps.
    let pulls = (g.has_in_edges() && opts.direction != Direction::Push).then(|| (g.in_edges(), [Bitmap::new(n), Bitmap::new(n)]));
    let forced = opts.direction == Direction::Pull;
    // Beamer's switch: pull once a frontier's out-edges exceed m / α, push again once
    // it holds fewer than n / β vertices.
    let pull_above = pull_threshold(g, opts);
    let push_below = n as u64 / opts.push_divisor.max(1);
    let after_push = |work: u64| if pulls.is_some() && (forced || work > pull_above) { Step::ToBits } else { Step::Push };
    let slots = LevelSlots::default();
    let first = after_push(out.degree(source) as u64 + 1);
    let levels = region::run(|member| {
        let mut found = Vec::with_capacity(FLUSH);
        // The frontier: queue[begin..end] when pushing, bitmaps[cur] (count vertices)
        // when pulling; `level` its depth.
        let (mut step, mut begin, mut end, mut cur, mut count, mut level) = (first, 0, 1, 0, 1, 0u32);
        // Thread 0 reports each level's frontier.
        let report = |vertices: usize| (member.index() == 0).then(|| progress.advance(vertices as u64));
        for round in 0.. {
            let (current, next) = slots.round(round, member);
            let to_queue = Queue { queue, tail: &tail, slot: next };
            match step {
                Step::Push => {
                    report(end - begin);
                    push_level(out, depth, current, begin..end, level + 1, member.threads() == 1, &to_queue, &mut found);
                }
                Step::ToBits => {
                    let bits = &pulls.as_ref().expect("a pull has in-edges").1[cur];
                    while let Some(claim) = current.claim(begin, end) {
                        queue[claim].iter().for_each(|u| bits.set(u.load(Relaxed) as usize));
                    }
                }
                Step::Pull => {
                    let (inc, bitmaps) = pulls.as_ref().expect("a pull has in-edges");
                    report(count);
                    let visit = Visit { depth, level: level + 1 };
                    pull_level(inc, [&bitmaps[cur], &bitmaps[1 - cur]], &visit, current, next);
                }
                Step::ToQueue => {
                    let bitmaps = &pulls.as_ref().expect("a pull has in-edges").1;
                    bits_to_queue(out, [&bitmaps[cur], &bitmaps[1 - cur]], current, &to_queue, &mut found);
                }
            }
            member.wait();
            // Every thread reads the same counters after the barrier, so all take the
            // same next step.
            let reached = next.reached.load(Relaxed);
            step = match step {
                Step::Push | Step::Pull if reached == 0 => return level,
                Step::Push => {
                    (begin, end, level) = (end, end + reached, level + 1);
                    after_push(next.work.load(Relaxed))
                }
                Step::ToBits => {
                    count = end - begin;
                    Step::Pull
                }
                Step::Pull => {
                    (cur, level, count) = (1 - cur, level + 1, reached);
                    if forced || reached as u64 > push_below {
                        Step::Pull
                    } else {
                        Step::ToQueue
                    }
                }
                Step::ToQueue => {
                    (begin, end) = (end, end + reached);
                    Step::Push
                }
            };
        }
        unreachable!("the loop returns")
    });
    levels[0]
}

/// One thread's share of a top-down level: the runs of `queue[frontier]` it claims
/// from `current` push along `out`, what they reach (at depth `level`) appended
/// through `found`.
#[inline]
#[allow(clippy::too_many_arguments)]
fn push_level(
    out: &Adjacency,
    depth: &[AtomicU32],
    current: &LevelSlot,
    frontier: std::ops::Range<usize>,
    level: u32,
    alone: bool,
    to: &Queue,
    found: &mut Vec<u32>,
) {
    let mut next_work = 0;
    let flush = |found: &mut Vec<u32>| append(to.queue, to.tail, found, to.slot);
    while let Some(claim) = current.claim(frontier.start, frontier.end) {
        next_work += match alone {
            true => push_claim::<true>(out, depth, &to.queue[claim], level, found, flush),
            false => push_claim::<false>(out, depth, &to.queue[claim], level, found, flush),
        };
    }
    append(to.queue, to.tail, found, to.slot);
    to.slot.add_work(next_work);
}

/// One thread's share of a bottom-up level: the words of `into` it claims from
/// `current`, each from the in-edges of its vertices and the frontier `from`.
#[inline]
fn pull_level(inc: &Adjacency, [from, into]: [&Bitmap; 2], visit: &Visit, current: &LevelSlot, next: &LevelSlot) {
    let mut reached = 0;
    while let Some(claim) = current.claim_runs(0, from.len().div_ceil(64), PULL_CHUNK / 64) {
        for w in claim {
            let word = pull_word(inc, from, visit, w);
            into.store_word(w, word);
            reached += word.count_ones() as usize;
        }
    }
    next.reached.fetch_add(reached, Relaxed);
}

/// Where a level's vertices go: `queue`'s tail, counted in `slot`.
struct Queue<'a> {
    queue: &'a [AtomicU32],
    tail: &'a AtomicUsize,
    slot: &'a LevelSlot,
}

/// One thread's share of turning a bottom-up frontier (`bits`) into the queue of the
/// top-down level that follows: the words it claims from `current`, cleared in both
/// bitmaps (they are clear whenever the search pushes), their vertices and out-degrees
/// appended through `found`.
#[inline]
fn bits_to_queue(out: &Adjacency, [bits, other]: [&Bitmap; 2], current: &LevelSlot, to: &Queue, found: &mut Vec<u32>) {
    let mut next_work = 0;
    while let Some(claim) = current.claim(0, bits.len().div_ceil(64)) {
        for w in claim {
            let mut word = bits.word(w);
            bits.store_word(w, 0);
            other.store_word(w, 0);
            while word != 0 {
                let v = (w * 64) as u32 + word.trailing_zeros();
                found.push(v);
                next_work += out.degree(v) as u64 + 1;
                if found.len() == FLUSH {
                    append(to.queue, to.tail, found, to.slot);
                }
                word &= word - 1;
            }
        }
    }
    append(to.queue, to.tail, found, to.slot);
    to.slot.add_work(next_work);
}

/// One claim of a top-down level: the vertices of `frontier` push along `out`; those
/// they reach first (the depth CAS to `next_depth`) gather in `found`, which `flush`
/// empties into the queue when full. Returns the reached vertices' out-edges plus one
/// each (the direction switch's measure). A function of its own so that the hot loop
/// gets its own registers: inlined into [`csr_levels`]'s region it reloaded the depth
/// array from the stack per edge (moscow, one thread: 3.5% more instructions).
/// `ALONE`: the region's only thread, which claims a vertex with a plain store
/// ([`region::claim_first`]; one thread on the dev VM: moscow 9.5-9.9 → 8.6 ms,
/// road-NE 48.7-49.3 → 44.1 ms).
#[inline(never)]
fn push_claim<const ALONE: bool>(
    out: &Adjacency,
    depth: &[AtomicU32],
    frontier: &[AtomicU32],
    next_depth: u32,
    found: &mut Vec<u32>,
    flush: impl Fn(&mut Vec<u32>),
) -> u64 {
    let mut work = 0;
    for u in frontier {
        for &v in out.neighbors(u.load(Relaxed)) {
            if region::claim_first::<ALONE>(&depth[v as usize], UNREACHED, next_depth) {
                found.push(v);
                work += out.degree(v) as u64 + 1;
                if found.len() == FLUSH {
                    flush(found);
                }
            }
        }
    }
    work
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
