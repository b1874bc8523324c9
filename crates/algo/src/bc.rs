//! Kernel: BC. Returns the Brandes dependency of every vertex summed over the chosen
//! sources, not normalised (hop counts: weights are ignored).
//!
//! Per source, a level-synchronous parallel BFS counts shortest paths (`sigma`),
//! top-down (added atomically as f64 bit patterns) or, on the large levels of a
//! small-world graph, bottom-up (each unreached vertex sums its parents' counts:
//! Beamer's direction optimization [3] applied to path counting), and records each
//! level's vertices as a window of one queue; the backward sweep then walks the levels
//! deepest first, each vertex summing `(1 + delta[v]) / sigma[v]` over its successors
//! (found by a level bitmap's bits on levels with many edges, by depth on the others),
//! with no atomics ([`brandes_levels`]).
//!
//! With at least [`SOURCES_PER_THREAD`] sources per thread, each thread instead runs
//! Brandes' sequential algorithm from its own sources ([`brandes_by_source`]): no
//! barrier per level, which high-diameter graphs with many sources cannot afford.
//!
//! Engines that stream edges (the SSD engine) run the same two sweeps through the
//! edge map instead: forward rounds over out-edges count paths into the next level,
//! backward rounds over in-edges hand each vertex its successors' shares.
//!
//! [1] Ulrik Brandes. "A Faster Algorithm for Betweenness Centrality." Journal of
//!     Mathematical Sociology 25(2), 2001.
//! [2] David Bader, Kamesh Madduri. "Parallel Algorithms for Evaluating Centrality
//!     Indices in Real-world Networks." ICPP 2006.
//! [3] Scott Beamer, Krste Asanović, David Patterson. "Direction-Optimizing
//!     Breadth-First Search." SC 2012.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};

use rayon::prelude::*;

use chatty_graph::{Adjacency, Graph, Progress};

use crate::edge_map::{EdgeMapGraph, EdgeMapOptions, EdgeOp, Edges, PULL_CHUNK, SEQUENTIAL_FRONTIER};
use crate::frontier::{Bitmap, Frontier};
use crate::region::{self, append, LevelSlot, LevelSlots, Member, FLUSH};
use crate::Result;

const UNSEEN: u32 = u32::MAX;

/// Brandes' per-source arrays (depth, path counts σ and dependencies δ as f64 bits),
/// allocated once per run and reset for each source.
struct PathCounts {
    depth: Vec<AtomicU32>,
    sigma: Vec<AtomicU64>,
    delta: Vec<AtomicU64>,
}

impl PathCounts {
    /// The arrays over `n` vertices, meaningless until [`PathCounts::start`].
    fn new(n: usize) -> PathCounts {
        PathCounts { depth: crate::zeroed_vec(n), sigma: crate::zeroed_vec(n), delta: crate::zeroed_vec(n) }
    }

    /// Clears the arrays and puts `s` at depth 0 with one path.
    fn start(&self, s: u32) {
        // One pass, not one per array: each is a fork-join, paid per source.
        (&self.depth, &self.sigma, &self.delta).into_par_iter().with_min_len(4096).for_each(|(d, x, y)| {
            d.store(UNSEEN, Relaxed);
            x.store(0, Relaxed);
            y.store(0, Relaxed);
        });
        self.depth[s as usize].store(0, Relaxed);
        self.sigma[s as usize].store(1f64.to_bits(), Relaxed);
    }
}

/// Adds `x` to an f64 held as bits, from any thread (compare-and-swap).
pub(crate) fn add_f64(cell: &AtomicU64, x: f64) {
    let mut old = cell.load(Relaxed);
    loop {
        let new = (f64::from_bits(old) + x).to_bits();
        match cell.compare_exchange_weak(old, new, Relaxed, Relaxed) {
            Ok(_) => return,
            Err(seen) => old = seen,
        }
    }
}

/// BC summed over `sources`: on an adjacency in memory, one source per thread when
/// that pays ([`one_source_per_thread`]), else one source at a time over all threads,
/// level by level; edge-map sweeps otherwise.
pub fn bc<G: EdgeMapGraph + ?Sized>(g: &G, sources: &[u32], progress: &dyn Progress) -> Result<Vec<f64>> {
    progress.start("bc: sources", sources.len() as u64);
    match g.csr() {
        Some(csr) => match one_source_per_thread(csr, sources)? {
            Some(threads) => Ok(brandes_by_source(csr, sources, threads, progress)),
            None => Ok(brandes_levels(csr, sources, progress)),
        },
        None => brandes_edge_map(g, sources, progress),
    }
}

/// How many threads, if any, should run several sources on this graph one per thread
/// ([`brandes_by_source`]) rather than one at a time over all threads
/// ([`brandes_levels`]), from a search from the first source:
/// - searches that end within a few small levels ([`probe`], from each of the first
///   [`PROBES`] sources) reached all their sources can reach: the sources run on as
///   many threads as their searches pay for ([`threads_worth`]; one where they reach
///   a few vertices, as sources in small components of cnr-2000, whose searches cost
///   less than a thread's arrays);
/// - otherwise only when there are sources for every thread and their arrays fit;
/// - a deep graph, whose BFS reaches so few vertices per level that a sweep has
///   little to share, runs one source per thread once the sources fill the threads.
///   With fewer sources than threads the sweeps win even on roads, since they run in
///   one region with a barrier per level (16 host threads, 4 sources: road-NE
///   0.19–0.20 s against 0.28–0.33 s one per source, moscow 0.054–0.061 against 0.071);
/// - otherwise with [`SOURCES_PER_THREAD`] sources per thread, unless the search has a
///   level the sweep would expand bottom-up and the graph has
///   [`SWEEP_EDGES_PER_THREAD`] edges per thread: there the sweep counts a source's
///   paths at a fraction of the sequential top-down cost (16-core host, kron22: 64
///   sources on 16 threads 7.7 s against 22.8 s one per thread, 4 sources on one
///   thread 6.7 s against 15.4 s; urand22 6.6 against 30.0 and 6.1 against 17.4).
fn one_source_per_thread(g: &Graph, sources: &[u32]) -> Result<Option<usize>> {
    let threads = rayon::current_num_threads();
    let (n, k) = (g.num_vertices(), sources.len());
    if k < 2 {
        return Ok(None);
    }
    let many = k >= SOURCES_PER_THREAD * threads;
    let gate = (many || sources_fill_threads(k)) && by_source_fits(n, k);
    // The first sources whose searches end decide alone; the first that does not
    // decides as below. Past the gate a probe runs until it knows (a quarter of the
    // edges at most); short of it, only long enough to catch a search that ends at
    // once (a road graph's sweeps would otherwise wait for a sequential probe).
    let m = g.out_edges().num_edges();
    let budget = if gate { m / 4 } else { (n as u64 / 16).min(m / 4) };
    let (mut reached, mut first) = (0, None);
    for &s in sources.iter().take(PROBES) {
        match probe(g, s, budget) {
            Probe::Ended { reached: r } => reached += r,
            probed => {
                first = Some((s, probed));
                break;
            }
        }
    }
    let Some((source, probed)) = first else {
        let t = threads_worth(n, k, reached / k.min(PROBES));
        return Ok(by_source_fits(n, t).then_some(t));
    };
    if !gate {
        return Ok(None);
    }
    if probed == Probe::Deep {
        return Ok(Some(threads));
    }
    let (depth, levels) = crate::bfs::bfs(g, source, crate::Direction::Auto, &chatty_graph::NoProgress)?;
    let reached = depth.par_iter().filter(|&&d| d != crate::bfs::UNREACHED).count();
    let sweep_pays = g.num_edges() >= SWEEP_EDGES_PER_THREAD * threads as u64 && goes_bottom_up(g, &depth, levels);
    Ok((levels_run_on_one_thread(reached, levels) || (many && !sweep_pays)).then_some(threads))
}

/// Sources [`one_source_per_thread`] probes at most.
const PROBES: usize = 8;

/// Threads of [`brandes_by_source`] that `k` sources, each reaching about `reached`
/// of `n` vertices, pay for: each thread's arrays cost about n (allocated, reset where
/// reached, summed into the answer), each source about what it reaches.
fn threads_worth(n: usize, k: usize, reached: usize) -> usize {
    (k.saturating_mul(reached) / n.max(1)).clamp(1, rayon::current_num_threads().min(k))
}

/// What a short sequential search from a source found.
#[derive(Debug, PartialEq)]
enum Probe {
    /// It ran more than n / [`SEQUENTIAL_FRONTIER`] levels, so that
    /// [`levels_run_on_one_thread`] holds whatever it reaches, or that held over its
    /// whole budget of edges.
    Deep,
    /// It ended, having reached `reached` vertices (the source included).
    Ended { reached: usize },
    /// Undecided: a level wider than a few thousand vertices, or wider levels on
    /// average over its budget of edges.
    Wide,
}

/// A sequential search from `source` over at most about `budget` edges, stopped once
/// it is known to be [`Probe::Deep`] or [`Probe::Wide`]. On a road graph it settles
/// the choice for a sliver of the BFS the decision otherwise runs (moscow: 101 of
/// about 700 levels, some 20-70K edges of 900K; road-NE: 373 of 1,100, 0.7M of 3.9M);
/// a power-law graph widens at its second or third level.
fn probe(g: &Graph, source: u32, budget: u64) -> Probe {
    let (out, n) = (g.out_edges(), g.num_vertices());
    let deep = n.div_ceil(SEQUENTIAL_FRONTIER);
    let seen = Bitmap::new(n);
    seen.set(source as usize);
    let (mut frontier, mut next, mut edges, mut reached) = (vec![source], Vec::new(), 0u64, 1);
    for level in 1..=deep {
        for &u in &frontier {
            edges += out.degree(u) as u64;
            for &v in out.neighbors(u) {
                if !seen.get(v as usize) {
                    seen.set(v as usize);
                    next.push(v);
                }
            }
        }
        reached += next.len();
        if next.is_empty() {
            return Probe::Ended { reached };
        }
        if next.len() > 4 * SEQUENTIAL_FRONTIER {
            return Probe::Wide;
        }
        if edges > budget {
            // Narrow levels over the whole budget: a road network's search (road-NE
            // from some sources spends a quarter of its edges in fewer than 373 levels).
            return if levels_run_on_one_thread(reached, level as u32) { Probe::Deep } else { Probe::Wide };
        }
        (frontier, next) = (next, frontier);
        next.clear();
    }
    Probe::Deep
}

/// Edges per thread below which many sources run one per thread even where the sweep
/// goes bottom-up: its levels are too small to share (16-core host, 64 sources on 16
/// threads: ego-Twitter, 2.7M edges, 0.14 s one per thread against 0.37 s swept,
/// cnr-2000 0.10 against 0.11; 16 sources on 4 threads: 0.13 against 0.12, and 0.072
/// both).
const SWEEP_EDGES_PER_THREAD: u64 = 1 << 19;

/// Whether [`brandes_levels`] would expand a level bottom-up in a search whose depths
/// are `depth`, `levels` deep.
fn goes_bottom_up(g: &Graph, depth: &[u32], levels: u32) -> bool {
    if !g.has_in_edges() {
        return false;
    }
    let out = g.out_edges();
    let per_level = (depth.par_iter().enumerate())
        .filter(|&(_, &d)| d != crate::bfs::UNREACHED)
        .fold(
            || vec![0u64; levels as usize + 1],
            |mut edges, (v, &d)| {
                edges[d as usize] += out.degree(v as u32) as u64;
                edges
            },
        )
        .reduce(|| vec![0u64; levels as usize + 1], |a, b| a.iter().zip(&b).map(|(x, y)| x + y).collect());
    let (alpha, m, mut explored) = (bottom_up_alpha(), out.num_edges(), 0);
    per_level.iter().any(|&edges| {
        let up = pays_bottom_up(alpha, edges, m - explored, g.num_vertices());
        explored += edges;
        up
    })
}

/// Whether there are several threads and at least as many sources.
fn sources_fill_threads(sources: usize) -> bool {
    let threads = rayon::current_num_threads();
    threads >= 2 && sources >= threads
}

/// Whether `levels` levels reaching `reached` vertices hold, on average, few enough
/// vertices that a level-synchronous sweep runs them on the calling thread.
fn levels_run_on_one_thread(reached: usize, levels: u32) -> bool {
    reached <= levels.max(1) as usize * SEQUENTIAL_FRONTIER
}

/// Sources per thread from which [`brandes_by_source`] is chosen: enough that the
/// threads stay busy to the end.
pub const SOURCES_PER_THREAD: usize = 4;

/// Bytes per vertex each thread of [`brandes_by_source`] holds.
const BY_SOURCE_BYTES: u64 = 28;

/// Whether BC from `sources` sources on `n` vertices has sources enough for one per
/// thread, and memory for their arrays (the model behind `--engine auto`).
pub fn by_source_pays(n: usize, sources: usize) -> bool {
    sources >= SOURCES_PER_THREAD * rayon::current_num_threads() && by_source_fits(n, sources)
}

/// Whether the arrays of [`brandes_by_source`]'s threads (one per source, at most
/// one per pool thread) fit in memory.
fn by_source_fits(n: usize, sources: usize) -> bool {
    let threads = rayon::current_num_threads().min(sources);
    chatty_graph::check_memory("", threads as u64 * n as u64 * BY_SOURCE_BYTES).is_ok()
}

/// Predicted seconds of [`bc`] on this machine's threads from `sources` sources on a
/// graph of `n` vertices and `m` edges whose BFS runs about `levels` deep, for
/// `--engine auto`. Constants measured on the 16-core host of the lent GPU machine
/// (docs/benchmarks/hostile-inputs.md, "BC and --engine auto"): one source per
/// thread costs about 12 ns per vertex and edge reached; a level-synchronous sweep
/// about 5 µs of barrier per level and 2.5 ns per edge.
pub fn predicted_seconds(n: usize, m: u64, sources: usize, levels: u32) -> f64 {
    let threads = rayon::current_num_threads();
    let deep = sources_fill_threads(sources) && levels_run_on_one_thread(n, levels);
    if by_source_pays(n, sources) || deep {
        sources.div_ceil(threads) as f64 * (n as f64 + m as f64) * 12e-9
    } else {
        sources as f64 * (levels as f64 * 5e-6 + m as f64 * 2.5e-9)
    }
}

/// Brandes' sequential algorithm from one source per thread on up to `threads`
/// threads, many sources at once (the coarse-grained parallelism of [2]): no atomics
/// and no barrier per level, which is what many sources on a high-diameter graph need
/// (a level-synchronous sweep pays a barrier per level per source). Each thread resets
/// only the depths of the vertices its last source reached: a vertex's path count is
/// set at its first visit and replaced by its share as the backward sweep passes it,
/// each before it is read.
pub fn brandes_by_source(g: &Graph, sources: &[u32], threads: usize, progress: &dyn Progress) -> Vec<f64> {
    let n = g.num_vertices();
    let out = g.out_edges();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let threads = threads.min(rayon::current_num_threads()).min(sources.len()).max(1);
    let partials: Vec<Vec<f64>> = (0..threads)
        .into_par_iter()
        .map(|_| {
            // `value[v]` is v's path count σ(v) until the backward sweep passes v, then
            // (1 + δ(v)) / σ(v), what v's predecessors read: one load and no division per
            // edge (road-NE, 4 sources, one and two threads: 2-4% faster), and one array
            // where two would each be cleared per run. Depths count from 1 (0: not
            // reached), so every array is zeroed memory, which the allocator leaves to
            // the kernel's zero pages when fresh: sources that reach a few vertices
            // (cnr-2000's in the benchmark: 12) cost little more than these arrays.
            let (mut score, mut value) = (vec![0.0; n], vec![0.0; n]);
            let mut depth = vec![0u32; n];
            let mut order: Vec<u32> = Vec::new();
            while let Some(&s) = sources.get(next.fetch_add(1, Relaxed)) {
                progress.advance(1);
                order.clear();
                order.push(s);
                depth[s as usize] = 1;
                value[s as usize] = 1.0;
                let mut head = 0;
                while let Some(&u) = order.get(head) {
                    head += 1;
                    let (d, su) = (depth[u as usize] + 1, value[u as usize]);
                    for &v in out.neighbors(u) {
                        let dv = &mut depth[v as usize];
                        if *dv == 0 {
                            *dv = d;
                            order.push(v);
                            value[v as usize] = su;
                        } else if *dv == d {
                            value[v as usize] += su;
                        }
                    }
                }
                // Deepest first, so a vertex's successors (one level deeper) hold their
                // shares and the vertices of its own level still their counts.
                for &u in order.iter().rev() {
                    let d = depth[u as usize] + 1;
                    let su = value[u as usize];
                    let shares: f64 = out.neighbors(u).iter().filter(|&&v| depth[v as usize] == d).map(|&v| value[v as usize]).sum();
                    let delta = dependency(su, su * shares);
                    if u != s {
                        score[u as usize] += delta;
                    }
                    value[u as usize] = (1.0 + delta) / su;
                }
                for &u in &order {
                    depth[u as usize] = 0;
                }
            }
            score
        })
        .collect();
    match <[Vec<f64>; 1]>::try_from(partials) {
        Ok([score]) => score,
        Err(partials) => (0..n).into_par_iter().map(|v| partials.iter().map(|p| p[v]).sum()).collect(),
    }
}

/// Brandes one source at a time over all threads, both sweeps of a source in one
/// parallel region (as BFS's top-down levels): the levels are consecutive windows of
/// one queue, threads claim runs of a window (or of the vertices, bottom-up) and meet
/// at one barrier per level, forward and then backward. A fork-join per level was
/// most of a search on small-world graphs at 16 threads (cnr-2000: 2.4x GAPBS's time).
///
/// Direction-optimizing forward sweep (Beamer et al. [3], applied to path counting as
/// the GPU's bc.cu does): a level whose out-edges outweigh the unexplored edges by
/// [`BOTTOM_UP_ALPHA`] (with in-edges at hand) is expanded bottom-up: every unreached
/// vertex sums the path counts of its in-neighbours at the level, with no atomics and
/// no early exit (every shortest path counts). Whether a neighbour is at a level is a
/// bit test in that level's bitmap (n bits: kron22's 512 KiB stay in a core's L2)
/// rather than a load from the depths (16 MiB), in the bottom-up steps and in the
/// backward sweep of the levels with many edges. Bitmaps are written whole, a word per
/// 64 vertices by the thread that owns it (a bottom-up step's result, or a scan of the
/// depths), so no bit is set atomically, none is ever cleared, and the top-down steps
/// and small levels (roads) pay nothing for them. A vertex's value is its path count σ
/// until the backward sweep passes its level, then `(1 + δ) / σ`, the one number its
/// predecessors read; the last round resets what the source reached, so a source costs
/// what it reaches, not a pass over every vertex.
pub fn brandes_levels(g: &Graph, sources: &[u32], progress: &dyn Progress) -> Vec<f64> {
    let sweep = LevelSweep::new(g);
    for &s in sources {
        progress.advance(1);
        sweep.depth[s as usize].store(0, Relaxed);
        sweep.value[s as usize].store(1f64.to_bits(), Relaxed);
        sweep.queue[0].store(s, Relaxed);
        sweep.tail.store(1, Relaxed);
        let slots = LevelSlots::default();
        region::run(|member| {
            let mut walk = Walk {
                member,
                slots: &slots,
                round: 0,
                ends: vec![0, 1],
                edges: vec![sweep.out.degree(s) as u64],
                found: Vec::with_capacity(FLUSH),
            };
            sweep.forward(&mut walk);
            sweep.backward(&mut walk, s);
            sweep.reset(&walk);
        });
    }
    sweep.score.into_iter().map(|x| f64::from_bits(x.into_inner())).collect()
}

/// What [`brandes_levels`] keeps for the whole run: the graph, the scores, and the
/// per-source state that each source's last round puts back as it found it.
struct LevelSweep<'g> {
    out: &'g Adjacency,
    inc: Option<&'g Adjacency>,
    n: usize,
    words: usize,
    alpha: u64,
    score: Vec<AtomicU64>,
    depth: Vec<AtomicU32>,
    /// σ until the backward sweep passes a vertex's level, then `(1 + δ) / σ`.
    value: Vec<AtomicU64>,
    /// Level d's bits, where kept, are in `levels[d % 2]`.
    levels: [Bitmap; 2],
    /// The levels, one after another; `tail` is where the next vertex found goes.
    queue: Vec<AtomicU32>,
    tail: AtomicUsize,
}

/// One thread's view of one source's sweep. Every thread counts the same levels:
/// level d is `queue[ends[d]..ends[d + 1]]`, with out-edges `edges[d]`.
struct Walk<'r, 'm> {
    member: &'r Member<'m>,
    slots: &'r LevelSlots,
    round: usize,
    ends: Vec<usize>,
    edges: Vec<u64>,
    /// This thread's found vertices not yet in the queue.
    found: Vec<u32>,
}

impl<'r> Walk<'r, '_> {
    /// The current round's slot and the next one's.
    fn slots(&self) -> (&'r LevelSlot, &'r LevelSlot) {
        self.slots.round(self.round, self.member)
    }

    /// Ends the current round at the barrier.
    fn meet(&mut self) {
        self.member.wait();
        self.round += 1;
    }
}

impl<'g> LevelSweep<'g> {
    fn new(g: &'g Graph) -> LevelSweep<'g> {
        let n = g.num_vertices();
        LevelSweep {
            out: g.out_edges(),
            inc: g.has_in_edges().then(|| g.in_edges()),
            n,
            words: n.div_ceil(64),
            alpha: bottom_up_alpha(),
            score: crate::zeroed_vec(n),
            depth: (0..n).into_par_iter().map(|_| AtomicU32::new(UNSEEN)).collect(),
            value: crate::zeroed_vec(n),
            levels: [Bitmap::new(n), Bitmap::new(n)],
            queue: crate::zeroed_vec(n),
            tail: AtomicUsize::new(0),
        }
    }

    /// Whether a level's bits are worth a scan of the depths: the edges tested against
    /// them are [`BITS_PER_SCAN`] times fewer than the vertices.
    fn bits_pay(&self, edges: u64) -> bool {
        edges * BITS_PER_SCAN > self.n as u64
    }

    /// Writes level `d`'s bitmap from the depths, this thread's share of the words.
    fn scan(&self, member: &Member, d: usize) {
        for w in member.share(0, self.words) {
            self.levels[d % 2].store_word(w, level_word(&self.depth, w, d as u32));
        }
    }

    /// The forward sweep: level after level, top-down or bottom-up, counting paths
    /// and queueing each new level after the last.
    fn forward(&self, walk: &mut Walk) {
        let mut explored = 0u64;
        // Whether the frontier's bits are in its bitmap (the last step went bottom-up).
        let mut frontier_bits = false;
        loop {
            let d = walk.ends.len() - 2;
            let up = self.inc.filter(|_| pays_bottom_up(self.alpha, walk.edges[d], self.out.num_edges() - explored, self.n));
            if up.is_some() && !frontier_bits {
                // A round of its own (the slots rotate with it): the frontier's bits,
                // complete before any vertex tests them.
                walk.slots();
                self.scan(walk.member, d);
                walk.meet();
            }
            let (_, next) = walk.slots();
            let next_edges = match up {
                Some(inc) => self.step_up(inc, walk, d),
                None => self.step_down(walk, d),
            };
            frontier_bits = up.is_some();
            next.add_work(next_edges);
            walk.meet();
            match next.reached.load(Relaxed) {
                0 => return,
                reached => walk.ends.push(walk.ends[d + 1] + reached),
            }
            explored += walk.edges[d];
            walk.edges.push(next.work.load(Relaxed));
        }
    }

    /// This thread's part of a bottom-up step from level `d`: it claims runs of words,
    /// writes their bits of level `d + 1` and queues what it finds. Returns the found
    /// vertices' out-edges.
    fn step_up(&self, inc: &Adjacency, walk: &mut Walk, d: usize) -> u64 {
        let (current, next) = walk.slots();
        let (frontier, into) = (&self.levels[d % 2], &self.levels[(d + 1) % 2]);
        let found = &mut walk.found;
        let edges_of = |found: &[u32]| found.iter().map(|&v| self.out.degree(v) as u64).sum::<u64>();
        let mut next_edges = 0;
        while let Some(claim) = current.claim_runs(0, self.words, PULL_CHUNK / 64) {
            for w in claim {
                into.store_word(w, count_paths_in(inc, frontier, &self.depth, &self.value, d as u32 + 1, w, found));
            }
            if found.len() >= FLUSH {
                next_edges += edges_of(found);
                append(&self.queue, &self.tail, found, next);
            }
        }
        next_edges += edges_of(found);
        append(&self.queue, &self.tail, found, next);
        next_edges
    }

    /// This thread's part of a top-down step from level `d`: it claims runs of the
    /// level's window. Returns the found vertices' out-edges.
    fn step_down(&self, walk: &mut Walk, d: usize) -> u64 {
        let (current, next) = walk.slots();
        let flush = |found: &mut Vec<u32>| append(&self.queue, &self.tail, found, next);
        let mut next_edges = 0;
        while let Some(claim) = current.claim(walk.ends[d], walk.ends[d + 1]) {
            let (from, found) = (&self.queue[claim], &mut walk.found);
            next_edges += match walk.member.threads() == 1 {
                true => count_paths_out::<true>(self.out, &self.depth, &self.value, from, d as u32, found, flush),
                false => count_paths_out::<false>(self.out, &self.depth, &self.value, from, d as u32, found, flush),
            };
        }
        append(&self.queue, &self.tail, &mut walk.found, next);
        next_edges
    }

    /// The backward sweep, deepest level first: level d's vertices pull from level
    /// d + 1, by its bits when level d has edges enough to pay for them (written in
    /// the round before, while level d + 1 pulled), else by depth.
    fn backward(&self, walk: &mut Walk, s: u32) {
        let deepest = walk.ends.len() - 2;
        for d in (0..=deepest).rev() {
            let (current, _) = walk.slots();
            let successors = (d < deepest && self.bits_pay(walk.edges[d])).then(|| &self.levels[(d + 1) % 2]);
            while let Some(claim) = current.claim(walk.ends[d], walk.ends[d + 1]) {
                for u in &self.queue[claim] {
                    self.settle(u.load(Relaxed), s, d as u32 + 1, successors);
                }
            }
            if d > 0 && self.bits_pay(walk.edges[d - 1]) {
                self.scan(walk.member, d);
            }
            walk.meet();
        }
    }

    /// Vertex `u`'s dependency from its successors at depth `next` (those set in
    /// `successors`, where given): added to its score, and its value becomes what
    /// its predecessors read.
    #[inline]
    fn settle(&self, u: u32, s: u32, next: u32, successors: Option<&Bitmap>) {
        let su = f64::from_bits(self.value[u as usize].load(Relaxed));
        let coefficient = |v: u32| f64::from_bits(self.value[v as usize].load(Relaxed));
        let per_path: f64 = match successors {
            // SAFETY: every target of an `Adjacency` is below its vertex count, the
            // bitmap's length.
            Some(bits) => {
                self.out.neighbors(u).iter().filter(|&&v| unsafe { bits.get_unchecked(v as usize) }).map(|&v| coefficient(v)).sum()
            }
            None => self.out.neighbors(u).iter().filter(|&&v| self.depth[v as usize].load(Relaxed) == next).map(|&v| coefficient(v)).sum(),
        };
        let du = dependency(su, su * per_path);
        self.value[u as usize].store(((1.0 + du) / su).to_bits(), Relaxed);
        if u != s {
            add_owned(&self.score[u as usize], du);
        }
    }

    /// Puts every vertex the source reached back to unreached.
    fn reset(&self, walk: &Walk) {
        let (current, _) = walk.slots();
        while let Some(claim) = current.claim(0, walk.ends[walk.ends.len() - 1]) {
            for v in &self.queue[claim] {
                let v = v.load(Relaxed) as usize;
                self.depth[v].store(UNSEEN, Relaxed);
                self.value[v].store(0, Relaxed);
            }
        }
    }
}

/// Vertices scanned per edge tested, at which a level's bitmap costs what it saves:
/// a scan reads every depth once in order, a test without it one depth at random.
const BITS_PER_SCAN: u64 = 8;

/// The word of bitmap bits of vertices `64w..64w + 64` at depth `level`.
fn level_word(depth: &[AtomicU32], w: usize, level: u32) -> u64 {
    let vertices = &depth[w * 64..((w + 1) * 64).min(depth.len())];
    vertices.iter().enumerate().fold(0, |word, (i, d)| word | u64::from(d.load(Relaxed) == level) << i)
}

/// A forward level is expanded bottom-up when its out-edges times this exceed the
/// edges not yet explored plus the vertices (what a bottom-up step reads), as bc.cu's
/// α. `CHATTY_BC_ALPHA` overrides it (0: top-down only).
const BOTTOM_UP_ALPHA: u64 = 6;

/// [`BOTTOM_UP_ALPHA`], or its override.
fn bottom_up_alpha() -> u64 {
    crate::tuning::Tuning::get().bc_alpha.unwrap_or(BOTTOM_UP_ALPHA)
}

/// Whether a level with `edges` out-edges is cheaper expanded bottom-up, `unexplored`
/// edges and `n` vertices left to scan, by the rule of α `alpha`.
fn pays_bottom_up(alpha: u64, edges: u64, unexplored: u64, n: usize) -> bool {
    alpha > 0 && edges * alpha > unexplored + n as u64
}

/// One claim of a top-down step of [`brandes_levels`]' forward sweep: each vertex of
/// `from` (at depth `d`) reaches its out-neighbours; those it reaches first join
/// `found` (`flush` empties it into the queue when full), and each neighbour one level
/// deeper adds the vertex's path count. Returns the reached vertices' out-edges.
/// `ALONE`: the region's only thread, which writes with plain stores where others need
/// a compare-and-swap (one thread on the dev VM, 4 sources: cnr-2000 136-139 → 121-128
/// ms, ego-Twitter 54.2 → 52.5 ms). A function of its own, as BFS's `push_claim`:
/// written inside the region with a branch on the thread count, it cost the two-thread
/// sweep 8% (cnr-2000 85 → 92 ms).
#[inline(never)]
fn count_paths_out<const ALONE: bool>(
    out: &Adjacency,
    depth: &[AtomicU32],
    value: &[AtomicU64],
    from: &[AtomicU32],
    d: u32,
    found: &mut Vec<u32>,
    flush: impl Fn(&mut Vec<u32>),
) -> u64 {
    let mut edges = 0;
    for u in from {
        let u = u.load(Relaxed);
        let su = f64::from_bits(value[u as usize].load(Relaxed));
        for &v in out.neighbors(u) {
            let dv = &depth[v as usize];
            if region::claim_first::<ALONE>(dv, UNSEEN, d + 1) {
                edges += out.degree(v) as u64;
                found.push(v);
                if found.len() == FLUSH {
                    flush(found);
                }
            }
            if dv.load(Relaxed) == d + 1 {
                let paths = &value[v as usize];
                match ALONE {
                    true => paths.store((f64::from_bits(paths.load(Relaxed)) + su).to_bits(), Relaxed),
                    false => add_f64(paths, su),
                }
            }
        }
    }
    edges
}

/// One word of a bottom-up step into level `next`: each unreached vertex of word `w`
/// sums the path counts of its in-neighbours in `frontier`; those with paths take the
/// level and the sum, go to `found`, and set their bit in the returned word. The
/// caller owns the word's vertices.
#[inline]
fn count_paths_in(
    inc: &Adjacency,
    frontier: &Bitmap,
    depth: &[AtomicU32],
    value: &[AtomicU64],
    next: u32,
    w: usize,
    found: &mut Vec<u32>,
) -> u64 {
    let (offsets, targets) = (inc.offsets(), inc.targets());
    let ends = &offsets[w * 64..=((w + 1) * 64).min(depth.len())];
    let mut word = 0;
    for (v, ab) in ((w * 64) as u32..).zip(ends.windows(2)) {
        if depth[v as usize].load(Relaxed) != UNSEEN {
            continue;
        }
        // SAFETY: every target of an `Adjacency` is below its vertex count, the
        // bitmap's length.
        let paths: f64 = (targets[ab[0] as usize..ab[1] as usize].iter())
            .filter(|&&u| unsafe { frontier.get_unchecked(u as usize) })
            .map(|&u| f64::from_bits(value[u as usize].load(Relaxed)))
            .sum();
        if paths > 0.0 {
            depth[v as usize].store(next, Relaxed);
            value[v as usize].store(paths.to_bits(), Relaxed);
            word |= 1 << (v % 64);
            found.push(v);
        }
    }
    word
}

/// A vertex's dependency from the sum of its successors' shares: NaN where its own
/// path count overflowed a double (more than 1.8e308 shortest paths), so an overflow
/// never passes for a score: some share of it would be lost to `x / inf = 0`. The
/// harness turns a score that is not finite into [`crate::Error::PathCountOverflow`].
pub fn dependency(sigma: f64, shares: f64) -> f64 {
    if sigma.is_infinite() {
        f64::NAN
    } else {
        shares
    }
}

fn f64_at(a: &[AtomicU64], i: u32) -> f64 {
    f64::from_bits(a[i as usize].load(Relaxed))
}

/// Adds to an f64 held as bits in a cell only the calling thread writes.
fn add_owned(cell: &AtomicU64, x: f64) {
    cell.store((f64::from_bits(cell.load(Relaxed)) + x).to_bits(), Relaxed);
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
        let first = d.load(Relaxed) == UNSEEN;
        if first {
            d.store(self.level, Relaxed);
        }
        if d.load(Relaxed) == self.level {
            add_owned(&self.sigma[dst as usize], f64::from_bits(paths));
        }
        first
    }
    fn update_atomic(&self, src: u32, dst: u32, _w: u32) -> bool {
        let first = self.depth[dst as usize].compare_exchange(UNSEEN, self.level, Relaxed, Relaxed).is_ok();
        if first || self.depth[dst as usize].load(Relaxed) == self.level {
            add_f64(&self.sigma[dst as usize], f64_at(self.sigma, src));
        }
        first
    }
}

/// Brandes' backward step over in-edges: `w` (one level deeper) gives its
/// in-neighbour `v` the share `σ_v / σ_w · (1 + δ_w)`.
struct Dependency<'a> {
    depth: &'a [AtomicU32],
    sigma: &'a [AtomicU64],
    delta: &'a [AtomicU64],
    level: u32,
}

impl Dependency<'_> {
    /// `(1 + δ_w) / σ_w`: the part of the share that depends on `w` alone.
    fn per_path(&self, w: u32) -> f64 {
        (1.0 + f64_at(self.delta, w)) / f64_at(self.sigma, w)
    }

    fn share(&self, v: u32, per_path: f64) -> Option<f64> {
        (self.depth[v as usize].load(Relaxed) == self.level - 1).then(|| f64_at(self.sigma, v) * per_path)
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
            add_f64(&self.delta[v as usize], x);
        }
        false
    }
}

/// Brandes through the edge map: forward rounds keep each level's frontier,
/// backward rounds replay them deepest first over in-edges.
pub fn brandes_edge_map<G: EdgeMapGraph + ?Sized>(g: &G, sources: &[u32], progress: &dyn Progress) -> Result<Vec<f64>> {
    let n = g.num_vertices();
    let opts = EdgeMapOptions { dedup: true, direction: crate::Direction::Push, ..EdgeMapOptions::default() };
    let mut score = vec![0.0; n];
    let counts = PathCounts::new(n);
    let PathCounts { depth, sigma, delta } = &counts;
    for &s in sources {
        counts.start(s);
        progress.advance(1);
        let mut levels = vec![Frontier::single(n, s)];
        loop {
            let op = CountPaths { depth, sigma, level: levels.len() as u32 };
            let next = g.edge_map(Edges::Out, levels.last().expect("the source level").clone(), &op, opts)?;
            if next.is_empty() {
                break;
            }
            levels.push(next);
        }
        for (level, frontier) in levels.into_iter().enumerate().skip(1).rev() {
            let op = Dependency { depth, sigma, delta, level: level as u32 };
            g.edge_map(Edges::In, frontier, &op, opts)?;
        }
        score
            .par_iter_mut()
            .enumerate()
            .filter(|&(v, _)| v != s as usize)
            .for_each(|(v, x)| *x += dependency(f64_at(sigma, v as u32), f64_at(delta, v as u32)));
    }
    Ok(score)
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
            delta[u as usize] = dependency(sigma[u as usize], delta[u as usize]);
            if u != s {
                score[u as usize] += delta[u as usize];
            }
        }
    }
    score
}

/// Checks scores against [`reference`] within 1e-9 relative to the largest score.
pub fn verify(g: &Graph, sources: &[u32], got: &[f64]) -> Result<()> {
    crate::close_to_largest(&reference(g, sources), got, 1e-9, 1.0)
}

#[cfg(test)]
mod tests {
    use chatty_graph::{generate, GenOptions, NoProgress};

    #[test]
    fn many_sources_run_one_per_thread_unless_the_sweep_goes_bottom_up() {
        let o = |undirected| GenOptions { seed: 4, max_weight: None, undirected };
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        // 16 sources, the first (the one the choice searches from) the largest hub.
        let choose = |g: &chatty_graph::Graph, count: u32| {
            let hub = (0..g.num_vertices() as u32).max_by_key(|&v| g.out_edges().degree(v)).unwrap();
            let sources: Vec<u32> = std::iter::once(hub).chain((0..count - 1).filter(|&v| v != hub)).take(count as usize).collect();
            pool.install(|| super::one_source_per_thread(g, &sources).unwrap().is_some())
        };
        // Large enough that a BFS reaches more than a sweep would run on one thread, and
        // with SWEEP_EDGES_PER_THREAD edges for each of the two threads.
        let rmat = generate::rmat(16, 16, o(true), &NoProgress).unwrap();
        assert!(!choose(&rmat, 16), "an undirected power-law graph: its sweeps go bottom-up");
        assert!(!choose(&rmat, 1), "one source: the sweep");
        let directed = generate::rmat(17, 16, o(false), &NoProgress).unwrap();
        assert!(choose(&directed, 16), "without in-edges every level runs top-down");
        assert!(!choose(&directed.with_in_edges(), 16), "with them, bottom-up");
        let small = generate::urand(16, 4, o(true), &NoProgress).unwrap();
        assert!(small.num_edges() < 2 * super::SWEEP_EDGES_PER_THREAD);
        assert!(choose(&small, 16), "too few edges to share among the threads");
        assert!(choose(&generate::grid(40, 30, o(true), &NoProgress).unwrap(), 16), "a deep graph");
    }

    #[test]
    fn sources_that_reach_few_vertices_run_on_the_threads_they_pay_for() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let rmat = generate::rmat(16, 16, GenOptions { seed: 4, max_weight: None, undirected: true }, &NoProgress).unwrap();
        let n = rmat.num_vertices() as u32;
        // The power-law graph, then 2,000 pairs of vertices, each its own component.
        let out = rmat.out_edges();
        let mut edges: Vec<(u32, u32)> =
            (0..n).flat_map(|u| out.neighbors(u).iter().filter(move |&&v| u < v).map(move |&v| (u, v))).collect();
        edges.extend((0..2000).map(|i| (n + 2 * i, n + 2 * i + 1)));
        let g = chatty_graph::from_edges(n as usize + 4000, &edges, false).unwrap();
        let hub = (0..n).max_by_key(|&v| g.out_edges().degree(v)).unwrap();
        let choose = |sources: &[u32]| pool.install(|| super::one_source_per_thread(&g, sources).unwrap());
        let pairs: Vec<u32> = (0..16).map(|i| n + 2 * i).collect();
        assert_eq!(choose(&pairs), Some(1), "sixteen searches of two vertices: one thread");
        let mixed: Vec<u32> = std::iter::once(n).chain(std::iter::repeat_n(hub, 15)).collect();
        assert_eq!(choose(&mixed), None, "the first search that does not end decides: a sweep");
        // Fewer sources than threads: a short probe still catches searches that end,
        // and a deep graph keeps its sweeps without a long sequential probe.
        let four = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        assert_eq!(four.install(|| super::one_source_per_thread(&g, &pairs[..2]).unwrap()), Some(1));
        let grid = generate::grid(400, 300, GenOptions { seed: 4, max_weight: None, undirected: true }, &NoProgress).unwrap();
        assert_eq!(four.install(|| super::one_source_per_thread(&grid, &[0, 1]).unwrap()), None);
    }

    #[test]
    fn a_deep_search_is_known_before_it_ends() {
        let o = GenOptions { seed: 4, max_weight: None, undirected: true };
        // n / 4096 levels: a 4096 x 40 grid's 40 rows are searched past 40 levels from a corner.
        let deep = generate::grid(4096, 40, o, &NoProgress).unwrap();
        assert_eq!(super::probe(&deep, 0, u64::MAX), super::Probe::Deep);
        // A star of 10,000 leaves needs 3 levels; its search ends at the second: undecided.
        let star: Vec<(u32, u32)> = (1..=10_000).map(|v| (0, v)).collect();
        assert_eq!(super::probe(&chatty_graph::from_edges(10_001, &star, false).unwrap(), 0, 5000), super::Probe::Wide);
        // A power-law graph widens at once; an isolated source reaches nothing.
        let rmat = generate::rmat(16, 16, o, &NoProgress).unwrap();
        let hub = (0..rmat.num_vertices() as u32).max_by_key(|&v| rmat.out_edges().degree(v)).unwrap();
        assert_eq!(super::probe(&rmat, hub, u64::MAX), super::Probe::Wide);
        // A search that ends within n / 4096 levels reached all it can: an edge and an
        // isolated vertex beside a cycle of 1,000.
        let mut edges: Vec<(u32, u32)> = (2..1002).map(|v| (v, if v == 1001 { 2 } else { v + 1 })).collect();
        edges.push((0, 1));
        let small = chatty_graph::from_edges(10_000, &edges, false).unwrap();
        assert_eq!(super::probe(&small, 5000, 100), super::Probe::Ended { reached: 1 });
        assert_eq!(super::probe(&small, 0, 100), super::Probe::Ended { reached: 2 });
    }
}
