//! The program model's operators: [`edge_map`] and [`vertex_map`] over a [`Frontier`]
//! (Shun and Blelloch, "Ligra: A Lightweight Graph Processing Framework for Shared
//! Memory", PPoPP 2013), with the push/pull switch of direction-optimizing traversal
//! (Beamer, Asanović, Patterson, SC 2012) owned by the operator, not the kernel.

use rayon::prelude::*;

use chatty_graph::{Adjacency, Graph, WeightType};

use crate::frontier::{Bitmap, Frontier};
use crate::Error;

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

impl Direction {
    /// Every policy, as `--direction` lists them.
    pub const ALL: [Direction; 3] = [Direction::Auto, Direction::Push, Direction::Pull];

    /// The `--direction` name.
    pub fn name(self) -> &'static str {
        match self {
            Direction::Auto => "auto",
            Direction::Push => "push",
            Direction::Pull => "pull",
        }
    }
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

impl EdgeMapOptions {
    /// Push from every frontier vertex, whatever the frontier's size: for passes that
    /// visit every edge once (counts, sums), where pulling would gain nothing.
    pub const PUSH: EdgeMapOptions = EdgeMapOptions { direction: Direction::Push, pull_divisor: 20, push_divisor: 18, dedup: false };
}

impl Default for EdgeMapOptions {
    fn default() -> Self {
        EdgeMapOptions { direction: Direction::Auto, pull_divisor: 20, push_divisor: 18, dedup: false }
    }
}

/// What an [`EdgeMapGraph::sum_in`] pass's `value` needs; hints an engine may ignore.
#[derive(Copy, Clone, Debug, Default)]
pub struct SumOptions {
    /// `value` reads the edge weight; without it an engine may pass 0 and spare the
    /// gather the weight array.
    pub weighted: bool,
    /// `value` reads what `finish` writes and should see each write as soon as it is
    /// made (Gauss–Seidel); without it the in-memory CSR gathers a block of sums
    /// before finishing any of its vertices.
    pub fresh: bool,
}

/// Which edges an [`EdgeMapGraph::edge_map`] walks from a frontier vertex.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Edges {
    /// Its out-edges `u → v`: `op` sees `(u, v)`.
    Out,
    /// Its in-edges `v → u`, walked backwards: `op` sees `(u, v)` for the edge `v → u`.
    In,
}

/// A graph the kernels run on, whoever holds its edges: the in-memory CSR ([`Graph`])
/// and the SSD engine's striped pages implement it, so each kernel is written once.
///
/// The two operators are [`EdgeMapGraph::edge_map`] (a frontier's edges through an
/// [`EdgeOp`]) and [`EdgeMapGraph::sum_in`] (the all-vertex reduce of PageRank and
/// SpMV). Kernels whose best strategy needs random access to adjacency lists
/// (delta-stepping, Afforest, Brandes with marked successors) ask for it through
/// [`EdgeMapGraph::csr`] and fall back to a streaming strategy without it.
pub trait EdgeMapGraph: Sync {
    /// Number of vertices.
    fn num_vertices(&self) -> usize;
    /// Number of stored directed edges.
    fn num_edges(&self) -> u64;
    /// Whether edges are directed (an undirected graph's in-edges are its out-edges).
    fn is_directed(&self) -> bool;
    /// How edge weights are stored.
    fn weight_type(&self) -> WeightType;
    /// The out-edge offsets, `n + 1` of them: `v`'s out-degree is `o[v + 1] - o[v]`.
    /// A slice rather than a degree per call, so per-vertex passes (PageRank's
    /// contributions) read it without a bounds check per vertex.
    fn out_offsets(&self) -> &[u64];
    /// Out-degree of `v`.
    #[inline]
    fn out_degree(&self, v: u32) -> u64 {
        let o = self.out_offsets();
        o[v as usize + 1] - o[v as usize]
    }
    /// The adjacency in memory, when the engine holds it.
    fn csr(&self) -> Option<&Graph>;
    /// Applies `op` along the chosen edges of every frontier vertex; returns the
    /// vertices it changed. `opts` are hints an engine may ignore (the SSD engine
    /// always streams in push form).
    fn edge_map<O: EdgeOp>(&self, edges: Edges, frontier: Frontier, op: &O, opts: EdgeMapOptions) -> Result<Frontier, Error>;
    /// For every vertex `v`: `s = Σ value(&source[u], weight)` over its in-edges `u → v`
    /// (raw weight words, 0 when unweighted or not `opts.weighted`), then
    /// `finish(v, s, &mut out[v])`, once per vertex; returns the sum of what `finish`
    /// returned. `source` and `out` have one entry per vertex (panics otherwise: a
    /// caller's bug). Taking the array rather than a closure over ids lets the
    /// in-memory CSR read it without a bounds check per edge. With `opts.fresh`, the
    /// in-memory CSR finishes each vertex as soon as its sum is known, so a `source`
    /// that `finish` writes is seen partly updated (Gauss–Seidel); engines that gather
    /// every sum first finish afterwards (Jacobi). `value` and `finish` are `Copy`
    /// (closures that copy what they capture, or capture references): an engine may
    /// copy them into each worker's frame, so what they read is loaded once per
    /// chunk of vertices rather than once per vertex.
    fn sum_in<S, T, R, F, A>(&self, out: &mut [T], opts: SumOptions, source: &[S], value: F, finish: A) -> Result<R, Error>
    where
        S: Sync,
        T: Send,
        R: Send + std::iter::Sum<R>,
        F: Fn(&S, u32) -> f64 + Sync + Copy,
        A: Fn(u32, f64, &mut T) -> R + Sync + Copy;
}

impl EdgeMapGraph for Graph {
    fn num_vertices(&self) -> usize {
        Graph::num_vertices(self)
    }
    fn num_edges(&self) -> u64 {
        Graph::num_edges(self)
    }
    fn is_directed(&self) -> bool {
        Graph::is_directed(self)
    }
    fn weight_type(&self) -> WeightType {
        Graph::weight_type(self)
    }
    fn out_offsets(&self) -> &[u64] {
        self.out_edges().offsets()
    }
    fn csr(&self) -> Option<&Graph> {
        Some(self)
    }
    fn edge_map<O: EdgeOp>(&self, edges: Edges, frontier: Frontier, op: &O, opts: EdgeMapOptions) -> Result<Frontier, Error> {
        Ok(edge_map_on(self, edges, frontier, op, opts))
    }
    fn sum_in<S, T, R, F, A>(&self, out: &mut [T], opts: SumOptions, source: &[S], value: F, finish: A) -> Result<R, Error>
    where
        S: Sync,
        T: Send,
        R: Send + std::iter::Sum<R>,
        F: Fn(&S, u32) -> f64 + Sync + Copy,
        A: Fn(u32, f64, &mut T) -> R + Sync + Copy,
    {
        Ok(sum_along(self.in_edges(), out, opts, source, value, finish))
    }
}

/// [`EdgeMapGraph::sum_in`] along the lists of `adj`: for every vertex `v`, the sum of
/// `value(&source[u], weight)` over `u` in `v`'s list, then `finish`. Over the in-edges
/// it is the in-memory CSR's `sum_in`; over the out-edges it gathers what each
/// vertex's out-neighbours hold (HITS's hub step).
pub fn sum_along<S, T, R, F, A>(adj: &Adjacency, out: &mut [T], opts: SumOptions, source: &[S], value: F, finish: A) -> R
where
    S: Sync,
    T: Send,
    R: Send + std::iter::Sum<R>,
    F: Fn(&S, u32) -> f64 + Sync + Copy,
    A: Fn(u32, f64, &mut T) -> R + Sync + Copy,
{
    let n = adj.num_vertices();
    assert!(source.len() == n && out.len() == n, "sum_along: {} sources and {} outputs for {n} vertices", source.len(), out.len());
    // SAFETY: every target of an `Adjacency` is below its vertex count (checked by
    // each constructor), and `source` has that many entries. The gather is bound
    // by load latency; a bounds check per edge was a fifth of its instructions.
    let at = move |u: u32| unsafe { source.get_unchecked(u as usize) };
    let (offsets, targets) = (adj.offsets(), adj.targets());
    // SAFETY: an `Adjacency`'s offsets rise from 0 to its target count (checked by
    // each constructor), so every list `a..b` lies within `targets`.
    let list = move |a: usize, b: usize| unsafe { targets.get_unchecked(a..b) };
    match adj.raw_weights().filter(|_| opts.weighted) {
        None => sum_chunks(offsets, out, opts.fresh, move |a, b| two_sums(list(a, b), |_, u| value(at(u), 0)), finish),
        Some(w) => sum_chunks(
            offsets,
            out,
            opts.fresh,
            move |a, b| {
                let w = &w[a..b];
                two_sums(list(a, b), |k, u| value(at(u), w[k]))
            },
            finish,
        ),
    }
}

/// The sum of `at(k, list[k])` over a list, in two running sums, alternating, so a
/// long list is not held to an addition's latency per edge; an `at` that ignores `k`
/// costs nothing for it.
#[inline]
fn two_sums(list: &[u32], at: impl Fn(usize, u32) -> f64) -> f64 {
    let (mut even, mut odd, mut k) = (0.0, 0.0, 0);
    while k + 1 < list.len() {
        even += at(k, list[k]);
        odd += at(k + 1, list[k + 1]);
        k += 2;
    }
    if k < list.len() {
        even += at(k, list[k]);
    }
    even + odd
}

/// [`EdgeMapGraph::sum_in`] on the CSR whose in-edge offsets are `offsets`, `list(a, b)`
/// the sum over edges `a..b`. Chunks of vertices with plain loops inside: 1.4-1.8x faster
/// than one rayon item per vertex (measured on moscow-osm, 1 and 2 threads). Unless
/// `fresh`, a block's sums are gathered before any of its vertices is finished: the
/// gather is bound by load latency, and a loop this short keeps more loads in flight
/// (PageRank on moscow, one thread: 15% faster than finishing each vertex at once when
/// measured; since then within ±16% either way by graph and thread count, as
/// `docs/benchmarks/cpu.md` records in sessions 24 and 25).
fn sum_chunks<T, R, A>(offsets: &[u64], out: &mut [T], fresh: bool, list: impl Fn(usize, usize) -> f64 + Sync + Copy, finish: A) -> R
where
    T: Send,
    R: Send + std::iter::Sum<R>,
    A: Fn(u32, f64, &mut T) -> R + Sync + Copy,
{
    const CHUNK: usize = 2048;
    const BLOCK: usize = 256;
    edge_balanced_chunks(offsets, out, CHUNK)
        .into_par_iter()
        .map(|(first, slots)| {
            // The closures copied into this frame: what they capture stays in registers.
            // Read through a reference, it was read again at every vertex after
            // `finish` stored through a pointer the compiler could not tell apart
            // (Gauss–Seidel PageRank on moscow, one thread: 2.35 → 2.0 ms an iteration).
            let (list, finish) = (list, finish);
            // A vertex's edges are `ab[0]..ab[1]` of a window of its offsets.
            let sum_of = |ab: &[u64]| list(ab[0] as usize, ab[1] as usize);
            let ends = &offsets[first..=first + slots.len()];
            if fresh {
                return (first as u32..).zip(slots).zip(ends.windows(2)).map(|((v, slot), ab)| finish(v, sum_of(ab), slot)).sum();
            }
            let (len, mut sums) = (slots.len(), [0.0; BLOCK]);
            (0..len)
                .step_by(BLOCK)
                .map(|start| {
                    let block = &mut slots[start..(start + BLOCK).min(len)];
                    let sums = &mut sums[..block.len()];
                    for (sum, ab) in sums.iter_mut().zip(ends[start..=start + block.len()].windows(2)) {
                        *sum = sum_of(ab);
                    }
                    (((first + start) as u32..).zip(block.iter_mut()).zip(&*sums)).map(|((v, slot), &sum)| finish(v, sum, slot)).sum::<R>()
                })
                .sum::<R>()
        })
        .sum()
}

/// `out` (one slot per vertex) cut into chunks of at most `most` vertices that hold
/// about an even share of the edges, each with its first vertex: with the hubs
/// numbered first (a graph stored in degree order) the first 2,048 vertices of kron22
/// hold a third of its edges, and one thread summed them alone (one PageRank iteration
/// 3x slower on 16 threads than in the graph's own order).
fn edge_balanced_chunks<'a, T>(offsets: &[u64], mut out: &'a mut [T], most: usize) -> Vec<(usize, &'a mut [T])> {
    let share = (offsets[offsets.len() - 1] / (rayon::current_num_threads() as u64 * 16)).max(1 << 16);
    (chatty_graph::build::edge_balanced_ranges_capped(offsets, share, most).into_iter())
        .map(|r| {
            let (chunk, rest) = std::mem::take(&mut out).split_at_mut(r.len());
            out = rest;
            (r.start, chunk)
        })
        .collect()
}

/// Frontiers at most this large are processed on the calling thread: on high-diameter
/// graphs (roads: thousands of levels of a few hundred vertices) forking costs more
/// than the level's work (measured on the 16-core host: 512 made road-NE BFS 1.7x
/// and BC 1.8-2x slower).
pub(crate) const SEQUENTIAL_FRONTIER: usize = 4096;

/// Whether a frontier's vertices are pushed on the calling thread: few vertices with
/// few edges (a handful of hubs make a short frontier long: on kron-22, deciding by
/// vertices alone made 4-source BC 3x slower on 16 threads).
fn sequential(adj: &Adjacency, ids: &[u32]) -> bool {
    ids.len() <= SEQUENTIAL_FRONTIER && ids.iter().map(|&u| adj.degree(u)).sum::<usize>() <= 4 * SEQUENTIAL_FRONTIER
}

/// Out-edges (along `adj`) leaving the frontier plus its size (Ligra's measure for the switch).
fn frontier_work(adj: &Adjacency, frontier: &Frontier) -> u64 {
    match frontier {
        Frontier::Sparse { ids, .. } if ids.len() <= SEQUENTIAL_FRONTIER => ids.iter().map(|&v| adj.degree(v) as u64 + 1).sum(),
        Frontier::Sparse { ids, .. } => ids.par_iter().map(|&v| adj.degree(v) as u64 + 1).sum(),
        Frontier::Dense { bits, .. } => {
            (0..bits.len() as u32).into_par_iter().filter(|&v| bits.get(v as usize)).map(|v| adj.degree(v) as u64 + 1).sum()
        }
    }
}

/// Applies `op` along every out-edge leaving `frontier`; returns the vertices it changed.
pub fn edge_map<O: EdgeOp>(g: &Graph, frontier: Frontier, op: &O, opts: EdgeMapOptions) -> Frontier {
    edge_map_on(g, Edges::Out, frontier, op, opts)
}

/// [`edge_map`] along either side: pushing walks the chosen side from the frontier,
/// pulling walks the other side into every vertex.
fn edge_map_on<O: EdgeOp>(g: &Graph, edges: Edges, frontier: Frontier, op: &O, opts: EdgeMapOptions) -> Frontier {
    let (push_adj, pull_adj) = sides(g, edges);
    match pull_adj {
        Some(pull_adj) if pulls(g, edges, &frontier, opts) => pull_step(pull_adj, &frontier.into_dense(), op),
        _ => push_step(push_adj, frontier.into_sparse(), op, opts.dedup),
    }
}

/// The adjacency a push walks and the one a pull walks (none when the graph lacks it).
fn sides(g: &Graph, edges: Edges) -> (&Adjacency, Option<&Adjacency>) {
    match edges {
        Edges::Out => (g.out_edges(), g.has_in_edges().then(|| g.in_edges())),
        Edges::In => (g.in_edges(), Some(g.out_edges())),
    }
}

/// Whether [`edge_map`] pulls for this frontier (the direction switch).
pub(crate) fn pulls(g: &Graph, edges: Edges, frontier: &Frontier, opts: EdgeMapOptions) -> bool {
    let (push_adj, pull_adj) = sides(g, edges);
    match (opts.direction, pull_adj) {
        (_, None) | (Direction::Push, _) => false,
        (Direction::Pull, _) => true,
        (Direction::Auto, Some(_)) => match frontier {
            Frontier::Dense { count, .. } => *count as u64 > frontier.universe() as u64 / opts.push_divisor.max(1),
            Frontier::Sparse { .. } => frontier_work(push_adj, frontier) > pull_threshold(g, opts),
        },
    }
}

/// The frontier work (out-edges plus vertices) above which a sparse frontier pulls.
pub(crate) fn pull_threshold(g: &Graph, opts: EdgeMapOptions) -> u64 {
    g.num_edges() / opts.pull_divisor.max(1)
}

fn push_step<O: EdgeOp>(adj: &Adjacency, frontier: Frontier, op: &O, dedup: bool) -> Frontier {
    let n = frontier.universe();
    let Frontier::Sparse { ids, .. } = frontier else { unreachable!("push takes a sparse frontier") };
    let weights = adj.raw_weights();
    let claimed = dedup.then(|| Bitmap::new(n));
    let visit = |chunk: &[u32]| {
        let mut local = Vec::new();
        for &u in chunk {
            for e in adj.range(u) {
                let v = adj.targets()[e];
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
    let next: Vec<u32> = if sequential(adj, &ids) { visit(&ids) } else { ids.par_chunks(64).flat_map_iter(visit).collect() };
    Frontier::Sparse { n, ids: next }
}

/// Pull: every vertex `v` scans `adj` (the edges into it) for frontier members.
fn pull_step<O: EdgeOp>(adj: &Adjacency, frontier: &Frontier, op: &O) -> Frontier {
    let Frontier::Dense { bits: current, .. } = frontier else { unreachable!("pull takes a dense frontier") };
    let n = current.len();
    let next = Bitmap::new(n);
    let count: usize = (0..n.div_ceil(PULL_CHUNK))
        .into_par_iter()
        .map(|c| {
            let mut count = 0;
            for w in pull_chunk_words(c, n) {
                let word = pull_word(adj, current, op, w);
                next.store_word(w, word);
                count += word.count_ones() as usize;
            }
            count
        })
        .sum();
    Frontier::Dense { bits: next, count }
}

/// Vertices a thread pulls at a time, whole 64-bit words (each word of the next
/// frontier has a single writer). Short (GAPBS's bottom-up takes 1,024 vertices at a
/// time): on a small power-law graph a few long chunks holding the hubs' lists kept
/// 16 threads waiting.
pub(crate) const PULL_CHUNK: usize = 64 * 8;

/// The words of pull chunk `c` of a frontier of `n` vertices.
pub(crate) fn pull_chunk_words(c: usize, n: usize) -> std::ops::Range<usize> {
    (c * PULL_CHUNK / 64)..((c + 1) * PULL_CHUNK).min(n).div_ceil(64)
}

/// One word of a pull step: each vertex `v` of word `w` that `op.cond` admits scans
/// its lists along `adj` for members of `current`, applying `op.update` to each until
/// `cond` turns false; returns the word of vertices updated. The caller owns word `w`.
#[inline]
pub(crate) fn pull_word<O: EdgeOp>(adj: &Adjacency, current: &Bitmap, op: &O, w: usize) -> u64 {
    let (offsets, targets, weights) = (adj.offsets(), adj.targets(), adj.raw_weights());
    assert!(current.len() == adj.num_vertices() && w * 64 < current.len(), "pull_word: word {w} of {} vertices", current.len());
    let mut word = 0u64;
    // The word's offsets as one slice, and each list as a slice: no bounds check per
    // vertex or edge.
    let ends = &offsets[w * 64..=((w + 1) * 64).min(current.len())];
    for (v, ab) in ((w * 64) as u32..).zip(ends.windows(2)) {
        if !op.cond(v) {
            continue;
        }
        let first = ab[0] as usize;
        for (e, &u) in (first..).zip(&targets[first..ab[1] as usize]) {
            // Only this thread writes v, so cond(v) can only turn false after one of
            // its own updates: test it there alone.
            // SAFETY: every target of an `Adjacency` is below its vertex count (checked
            // by each constructor), asserted to be the bitmap's length above.
            if unsafe { current.get_unchecked(u as usize) } && op.update(u, v, weights.map_or(0, |w| w[e])) {
                word |= 1 << (v % 64);
                if !op.cond(v) {
                    break;
                }
            }
        }
    }
    word
}

/// Calls `f` on every member of `frontier`, in parallel.
pub fn vertex_map<F: Fn(u32) + Sync>(frontier: &mut Frontier, f: F) {
    frontier.ids().par_iter().for_each(|&v| f(v));
}
