//! Kernels: Louvain and Leiden communities, which maximise modularity (networkx's
//! `louvain_communities` and `leiden_communities`, and networkx's modularity with its
//! `resolution`, directed graphs by Leicht and Newman's directed modularity). Returns
//! each vertex's community, labelled by its smallest vertex id, and the partition's
//! modularity.
//!
//! A level moves vertices between communities while that raises modularity, then
//! contracts each community into one vertex of the next level (Louvain [1]); levels
//! repeat until one gains no more than the threshold. Moves are decided in parallel
//! (networkit's PLM [2]) over blocks of a seeded random order: every vertex of a block
//! chooses its best neighbouring community from the state before the block, then the
//! moves are applied in order, so the answer depends on the seed and not on the thread
//! count; a block of one vertex is networkx's sequential sweep. Two singletons never
//! swap into each other's community: a singleton joins another only if that one's
//! label is smaller (Lu, Halappanavar and Kalyanaraman [3]).
//!
//! Leiden [4] refines each community before contracting: its vertices start alone
//! and merge, in a seeded random order, into the sub-community of the same community
//! that gains most, only where the vertex and the sub-community are well connected to
//! the rest of it (greedy, Traag's θ → 0); the next level contracts the refined
//! sub-communities and starts from the unrefined partition. A last pass splits any
//! community that is not connected into its pieces, which only raises modularity, so
//! every Leiden community is connected.
//!
//! Every level is a weighted directed graph: an undirected edge is an arc each way
//! and a self-loop an arc of twice its weight, so that one formula serves both
//! (undirected modularity is the directed one of that graph). The gain of joining
//! community C for a vertex with out- and in-weights k⁺, k⁻ is
//! `w(u, C) − γ (k⁺ Σ⁻_C + k⁻ Σ⁺_C) / m`, with `w` the arcs both ways and `m` all arcs.
//!
//! [1] Vincent Blondel, Jean-Loup Guillaume, Renaud Lambiotte, Etienne Lefebvre. "Fast
//!     unfolding of communities in large networks." J. Stat. Mech. P10008, 2008.
//! [2] Christian Staudt, Henning Meyerhenke. "Engineering Parallel Algorithms for
//!     Community Detection in Massive Networks." IEEE TPDS 27(1), 2016.
//! [3] Hao Lu, Mahantesh Halappanavar, Ananth Kalyanaraman. "Parallel heuristics for
//!     scalable community detection." Parallel Computing 47, 2015.
//! [4] Vincent Traag, Ludo Waltman, Nees Jan van Eck. "From Louvain to Leiden:
//!     guaranteeing well-connected communities." Scientific Reports 9, 5233, 2019.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;

use chatty_graph::{Graph, Progress};

use crate::{Error, Result};

/// Louvain's and Leiden's parameters, networkx's arguments.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CommunityParams {
    /// Modularity's resolution γ (networkx's `resolution`, 1): above 1 favours
    /// smaller communities, below 1 larger ones.
    pub resolution: f64,
    /// Louvain stops once a level raises modularity by no more than this (networkx's
    /// `threshold`, 1e-7).
    pub threshold: f64,
    /// The most levels (networkx's `max_level`; `None`: until no gain).
    pub max_level: Option<u32>,
}

impl Default for CommunityParams {
    fn default() -> Self {
        CommunityParams { resolution: 1.0, threshold: 1e-7, max_level: None }
    }
}

/// Which of the two methods.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Local moving and contraction.
    Louvain,
    /// Louvain with the refinement that keeps communities connected.
    Leiden,
}

impl Method {
    /// The kernel's name.
    pub fn name(self) -> &'static str {
        match self {
            Method::Louvain => "louvain",
            Method::Leiden => "leiden",
        }
    }
}

/// Sweeps of local moving on one level before it contracts anyway (networkit's PLM
/// stops at 32; a sequential sweep always stops, a parallel one could cycle).
pub const MAX_SWEEPS: usize = 32;
/// A level has settled once a sweep moves no more than one vertex in this many: in
/// blocks decided in parallel, a few neighbours can keep trading places (road-NE's
/// first level moved 291 vertices in every sweep from the twelfth to the 32nd).
const SETTLED: usize = 1000;
/// A level has settled once a sweep raises modularity by less than this (the gains
/// its moves expected): the last round of moves on kron 2^19 went on for 29 sweeps
/// of 1e-6 to 1e-8 each, a third of the run.
const SWEEP_GAIN: f64 = 1e-5;
/// Vertices from which a level's sweeps decide only the vertices whose neighbourhood
/// changed.
const PRUNE_FROM: usize = 1 << 16;
/// Levels before the run stops (each level at least halves the vertices; 64 would
/// need more vertices than there are ids).
pub const MAX_LEVELS: u32 = 64;

/// The generator of a run's sweep orders, seeded by `--seed`.
pub type SweepRng = Xoshiro256PlusPlus;

/// The generator of the sweep orders of a run with `seed`.
pub fn sweep_rng(seed: u64) -> SweepRng {
    Xoshiro256PlusPlus::seed_from_u64(seed)
}

/// One level: its vertices are the last level's communities. `targets`/`weights`
/// list each vertex's other vertices with the arcs between them, both directions
/// summed; `inside` is the weight of a vertex's arcs to itself.
struct Level {
    offsets: Vec<usize>,
    targets: Vec<u32>,
    weights: Vec<f64>,
    k_out: Vec<f64>,
    k_in: Vec<f64>,
    inside: Vec<f64>,
    m: f64,
}

/// One vertex of a level being built: its neighbours and weights.
struct Row {
    edges: Vec<(u32, f64)>,
    k_out: f64,
    k_in: f64,
    inside: f64,
}

impl Row {
    /// Sorts the neighbours and sums repeated ones.
    fn merged(mut self) -> Row {
        self.edges.sort_unstable_by_key(|e| e.0);
        self.edges.dedup_by(|next, kept| {
            let same = next.0 == kept.0;
            if same {
                kept.1 += next.1;
            }
            same
        });
        self
    }
}

impl Level {
    /// The input graph as level 0.
    fn from_graph(g: &Graph) -> Result<Level> {
        check_weights(g)?;
        let out = g.out_edges();
        let row = |u| if g.is_directed() { Level::directed_row(out, g.in_edges(), u) } else { Level::undirected_row(out, u) };
        Ok(Level::from_rows((0..g.num_vertices() as u32).into_par_iter().map(row).collect()))
    }

    /// A vertex of a directed graph: its out- and in-arcs merged, a self-loop counted
    /// once each way.
    fn directed_row(out: &chatty_graph::Adjacency, inc: &chatty_graph::Adjacency, u: u32) -> Row {
        let mut row = Row { edges: Vec::with_capacity(out.degree(u) + inc.degree(u)), k_out: 0.0, k_in: 0.0, inside: 0.0 };
        for (adj, outgoing) in [(out, true), (inc, false)] {
            for e in adj.range(u) {
                let (v, w) = (adj.targets()[e], adj.weight_f64(e));
                match outgoing {
                    true => row.k_out += w,
                    false => row.k_in += w,
                }
                match v == u {
                    true if outgoing => row.inside += w,
                    true => {}
                    false => row.edges.push((v, w)),
                }
            }
        }
        row.merged()
    }

    /// A vertex of an undirected graph, whose list is both its out- and in-arcs: each
    /// neighbour's arcs weigh twice the edge, and the list is sorted already.
    fn undirected_row(out: &chatty_graph::Adjacency, u: u32) -> Row {
        let mut row = Row { edges: Vec::with_capacity(out.degree(u)), k_out: 0.0, k_in: 0.0, inside: 0.0 };
        for e in out.range(u) {
            let (v, w) = (out.targets()[e], out.weight_f64(e));
            match v == u {
                true => row.inside += 2.0 * w,
                false => match row.edges.last_mut() {
                    Some(last) if last.0 == v => last.1 += 2.0 * w,
                    _ => row.edges.push((v, 2.0 * w)),
                },
            }
            row.k_out += if v == u { 2.0 * w } else { w };
        }
        row.k_in = row.k_out;
        row
    }

    fn from_rows(rows: Vec<Row>) -> Level {
        let mut offsets = Vec::with_capacity(rows.len() + 1);
        offsets.push(0);
        for r in &rows {
            offsets.push(offsets.last().expect("starts at 0") + r.edges.len());
        }
        let (targets, weights) = rows.par_iter().flat_map_iter(|r| r.edges.iter().copied()).unzip();
        let m = ordered_sum(&rows.iter().map(|r| r.k_out).collect::<Vec<_>>());
        Level {
            offsets,
            targets,
            weights,
            k_out: rows.iter().map(|r| r.k_out).collect(),
            k_in: rows.iter().map(|r| r.k_in).collect(),
            inside: rows.iter().map(|r| r.inside).collect(),
            m,
        }
    }

    fn num_vertices(&self) -> usize {
        self.k_out.len()
    }

    fn edges(&self, u: usize) -> impl Iterator<Item = (u32, f64)> + '_ {
        let r = self.offsets[u]..self.offsets[u + 1];
        self.targets[r.clone()].iter().copied().zip(self.weights[r].iter().copied())
    }

    /// The modularity of the partition that puts each vertex alone: the partition of
    /// the input graph that this level contracts.
    fn modularity(&self, resolution: f64) -> f64 {
        if self.m == 0.0 {
            return 0.0;
        }
        let terms: Vec<f64> =
            (0..self.num_vertices()).into_par_iter().map(|u| self.inside[u] - resolution * self.k_out[u] * self.k_in[u] / self.m).collect();
        ordered_sum(&terms) / self.m
    }

    /// The next level, one vertex per community of `comm`; also each vertex's vertex
    /// in it (the communities numbered densely, in order of their labels).
    fn contract(&self, comm: &[u32]) -> (Level, Vec<u32>) {
        let (new_of, count) = dense(comm);
        let (start, members) = group(&new_of, count);
        let rows = (0..count).into_par_iter().map(|c| {
            let mut row = Row { edges: Vec::new(), k_out: 0.0, k_in: 0.0, inside: 0.0 };
            for &u in &members[start[c]..start[c + 1]] {
                let u = u as usize;
                row.k_out += self.k_out[u];
                row.k_in += self.k_in[u];
                row.inside += self.inside[u];
                for (v, w) in self.edges(u) {
                    match new_of[v as usize] as usize == c {
                        // Each arc inside is listed from both ends, both directions summed.
                        true => row.inside += w / 2.0,
                        false => row.edges.push((new_of[v as usize], w)),
                    }
                }
            }
            row.merged()
        });
        (Level::from_rows(rows.collect()), new_of)
    }
}

/// The sum of `x` in a fixed order, whatever the thread count.
fn ordered_sum(x: &[f64]) -> f64 {
    x.par_chunks(1 << 16).map(|c| c.iter().sum::<f64>()).collect::<Vec<f64>>().iter().sum()
}

/// `labels` renumbered 0, 1, ... in the order of the labels' values; and how many.
fn dense(labels: &[u32]) -> (Vec<u32>, usize) {
    let mut id = vec![u32::MAX; labels.len()];
    labels.iter().for_each(|&c| id[c as usize] = 0);
    let mut count = 0;
    for x in id.iter_mut().filter(|x| **x == 0) {
        *x = count;
        count += 1;
    }
    (labels.par_iter().map(|&c| id[c as usize]).collect(), count as usize)
}

/// The vertices of each of `count` groups (`group_of[v] < count`): group g's are
/// `members[start[g]..start[g + 1]]`, in id order.
fn group(group_of: &[u32], count: usize) -> (Vec<usize>, Vec<u32>) {
    let mut start = vec![0usize; count + 1];
    group_of.iter().for_each(|&c| start[c as usize + 1] += 1);
    (0..count).for_each(|c| start[c + 1] += start[c]);
    let mut next = start.clone();
    let mut members = vec![0u32; group_of.len()];
    for (v, &c) in group_of.iter().enumerate() {
        members[next[c as usize]] = v as u32;
        next[c as usize] += 1;
    }
    (start, members)
}

/// Each community's out- and in-weight and vertex count, kept as vertices move
/// (weights as f64 bits: added from every thread, exactly where weights are
/// integers, so the answer does not depend on the order of the additions). One
/// community's three share a cache line: a vertex reads them at random.
#[derive(Default)]
struct Total {
    out: AtomicU64,
    inw: AtomicU64,
    size: AtomicU64,
}

impl Total {
    fn add(&self, l: &Level, u: usize, sign: f64) {
        crate::bc::add_f64(&self.out, sign * l.k_out[u]);
        crate::bc::add_f64(&self.inw, sign * l.k_in[u]);
        match sign > 0.0 {
            true => self.size.fetch_add(1, Relaxed),
            false => self.size.fetch_sub(1, Relaxed),
        };
    }

    fn weights(&self) -> (f64, f64) {
        (f64::from_bits(self.out.load(Relaxed)), f64::from_bits(self.inw.load(Relaxed)))
    }

    fn alone(&self) -> bool {
        self.size.load(Relaxed) == 1
    }
}

/// Every community's [`Total`].
fn totals(l: &Level, comm: &[AtomicU32]) -> Vec<Total> {
    let t: Vec<Total> = (0..l.num_vertices()).into_par_iter().map(|_| Total::default()).collect();
    (0..l.num_vertices()).into_par_iter().for_each(|u| t[comm[u].load(Relaxed) as usize].add(l, u, 1.0));
    t
}

/// Refuses weights that modularity has no meaning for: negative or not finite.
pub fn check_weights(g: &Graph) -> Result<()> {
    let out = g.out_edges();
    let bad = (0..out.num_edges() as usize).into_par_iter().map(|e| out.weight_f64(e)).find_any(|w| !(w.is_finite() && *w >= 0.0));
    match bad {
        Some(w) => Err(Error::Unsupported(format!("communities need finite non-negative edge weights; this graph has {w}"))),
        None => Ok(()),
    }
}

/// A sweep's order of the `n` vertices: position i takes the base order's
/// `(a·i + b) mod n`, with `a` prime to `n`, so that the blocks are regrouped every
/// sweep and neighbours that trade places when decided in one block rarely meet in
/// one again.
pub fn sweep_order(rng: &mut SweepRng, n: usize) -> (u64, u64) {
    let a = loop {
        let a = rng.random_range(1..n.max(2)) as u64;
        if gcd(a, n as u64) == 1 || n < 2 {
            break a;
        }
    };
    (a, rng.random_range(0..n.max(1)) as u64)
}

/// Whether a level has settled after a sweep that made `moved` moves among `n`
/// vertices, expecting to gain `gained` modularity.
pub fn sweep_settled(moved: u64, n: usize, gained: f64) -> bool {
    moved <= (n / SETTLED) as u64 || gained < SWEEP_GAIN
}

/// Vertices per block of decisions taken from one state: a 32nd of the level, so that
/// a sweep is 32 parallel steps whatever the thread count (one vertex, networkx's
/// sequential sweep, below 64 vertices). On 16 cores, blocks of at most 4,096 vertices
/// left ego-Twitter 4x slower than networkit's PLM; a 32nd moved modularity by under
/// 0.001 on Slashdot, ego-Twitter, cnr-2000 and road-NE.
pub fn block_size(n: usize) -> usize {
    (n / 32).max(1)
}

/// The weight of a vertex's arcs to each neighbouring community, summed in an
/// open-addressing table reused from vertex to vertex (sorting the neighbours took a
/// quarter of the time on rmat graphs, whose hubs have thousands).
#[derive(Default)]
struct Affinity {
    /// Each slot's entry plus one (0: empty); the current vertex uses the first
    /// power of two at least twice its degree (16 at least).
    slots: Vec<u32>,
    /// (community, weight, slot), in the order the communities were met.
    entries: Vec<(u32, f64, u32)>,
}

impl Affinity {
    /// The sums of `arcs`' weights by community, for at most `degree` arcs.
    fn fill(&mut self, arcs: impl Iterator<Item = (u32, f64)>, degree: usize) -> &[(u32, f64, u32)] {
        for e in &self.entries {
            self.slots[e.2 as usize] = 0;
        }
        self.entries.clear();
        let bits = (2 * degree).next_power_of_two().max(16).trailing_zeros();
        if self.slots.len() < 1 << bits {
            self.slots.resize(1 << bits, 0);
        }
        for (c, w) in arcs {
            let mut slot = ((c as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize;
            loop {
                match self.slots[slot] {
                    0 => {
                        self.entries.push((c, w, slot as u32));
                        self.slots[slot] = self.entries.len() as u32;
                        break;
                    }
                    i if self.entries[i as usize - 1].0 == c => {
                        self.entries[i as usize - 1].1 += w;
                        break;
                    }
                    _ => slot = (slot + 1) & ((1 << bits) - 1),
                }
            }
        }
        &self.entries
    }
}

/// The community `u` gains most by joining, if not its own, and the modularity it
/// gains.
fn best_move(l: &Level, comm: &[AtomicU32], t: &[Total], resolution: f64, u: usize, affinity: &mut Affinity) -> Option<(u32, u32, f64)> {
    let own = comm[u].load(Relaxed);
    let degree = l.offsets[u + 1] - l.offsets[u];
    let sums = affinity.fill(l.edges(u).map(|(v, w)| (comm[v as usize].load(Relaxed), w)), degree);
    let (k_out, k_in) = (l.k_out[u], l.k_in[u]);
    let score = |w: f64, (out, inw): (f64, f64)| w - resolution * (k_out * inw + k_in * out) / l.m;
    let to_own: f64 = sums.iter().filter(|e| e.0 == own).map(|e| e.1).sum();
    let (own_out, own_in) = t[own as usize].weights();
    let stay = score(to_own, (own_out - k_out, own_in - k_in));
    let (mut best, mut best_c) = (stay, own);
    // Gains within rounding of each other are ties, which keep the vertex where it is,
    // or else go to the smaller label.
    let tie = 1e-12 * (k_out + k_in);
    for &(c, w, _) in sums.iter().filter(|e| e.0 != own) {
        let s = score(w, t[c as usize].weights());
        if s > best + tie || (best_c != own && c < best_c && s >= best - tie) {
            (best, best_c) = (s, c);
        }
    }
    let swap = t[own as usize].alone() && t[best_c as usize].alone() && best_c > own;
    (best_c != own && !swap).then_some((u as u32, best_c, (best - stay) / l.m))
}

/// Moves vertices of `l` between the communities `comm` while that raises modularity;
/// returns how many moves were made.
fn move_vertices(l: &Level, comm: &mut [u32], resolution: f64, rng: &mut Xoshiro256PlusPlus) -> u64 {
    let n = l.num_vertices();
    let cells: Vec<AtomicU32> = comm.par_iter().map(|&c| AtomicU32::new(c)).collect();
    let t = totals(l, &cells);
    let mut base: Vec<u32> = (0..n as u32).collect();
    base.shuffle(rng);
    let mut moves = 0;
    // On large levels a vertex is decided again only once it or a neighbour has moved
    // (every vertex in the first sweep): 1.2-1.8x faster from road-NE to kron 2^19 at
    // the same modularity; small levels, cheap either way, sweep every vertex, which
    // found better partitions of networkx's small test graphs.
    let prune = n >= PRUNE_FROM;
    let mut active: Vec<AtomicBool> = (0..n).into_par_iter().map(|_| AtomicBool::new(true)).collect();
    let mut touched: Vec<AtomicBool> = (0..n).into_par_iter().map(|_| AtomicBool::new(false)).collect();
    for _ in 0..MAX_SWEEPS {
        let (a, b) = sweep_order(rng, n);
        let mut order: Vec<u32> = (0..n as u64).into_par_iter().map(|i| base[((a * i + b) % n as u64) as usize]).collect();
        // A block's decisions do not depend on their order: in id order, its vertices'
        // edges are read in the order they are stored.
        order.par_chunks_mut(block_size(n)).for_each(|c| c.sort_unstable());
        let (mut moved, mut gained) = (0, 0.0);
        for block in order.chunks(block_size(n)) {
            let decided: Vec<(u32, u32, f64)> = block
                .par_iter()
                .with_min_len(64)
                .filter(|&&u| active[u as usize].load(Relaxed))
                .map_init(Affinity::default, |a, &u| best_move(l, &cells, &t, resolution, u as usize, a))
                .flatten()
                .collect();
            decided.par_iter().with_min_len(64).for_each(|&(u, c, _)| {
                t[cells[u as usize].load(Relaxed) as usize].add(l, u as usize, -1.0);
                t[c as usize].add(l, u as usize, 1.0);
                cells[u as usize].store(c, Relaxed);
                if prune {
                    touched[u as usize].store(true, Relaxed);
                    l.edges(u as usize).for_each(|(v, _)| touched[v as usize].store(true, Relaxed));
                }
            });
            moved += decided.len() as u64;
            gained += decided.iter().map(|d| d.2).sum::<f64>();
        }
        moves += moved;
        if sweep_settled(moved, n, gained) {
            break;
        }
        if prune {
            std::mem::swap(&mut active, &mut touched);
            touched.par_iter().for_each(|x| x.store(false, Relaxed));
        }
    }
    comm.par_iter_mut().zip(&cells).for_each(|(c, cell)| *c = cell.load(Relaxed));
    moves
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Leiden's refinement: each community of `comm` split into well-connected
/// sub-communities, each labelled by one of its vertices.
fn refine(l: &Level, comm: &[u32], resolution: f64, seed: u64) -> Vec<u32> {
    let (of, count) = dense(comm);
    let (start, members) = group(&of, count);
    let mut slot = vec![0u32; l.num_vertices()];
    for c in 0..count {
        members[start[c]..start[c + 1]].iter().enumerate().for_each(|(i, &v)| slot[v as usize] = i as u32);
    }
    // A community's vertices are its own, so communities refine in parallel.
    let labels: Vec<Vec<u32>> = (0..count)
        .into_par_iter()
        .map(|c| {
            let seed = seed ^ (c as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            refine_community(l, &of, &slot, c as u32, &members[start[c]..start[c + 1]], resolution, seed)
        })
        .collect();
    let mut refined = vec![0u32; l.num_vertices()];
    members.iter().zip(labels.into_iter().flatten()).for_each(|(&v, s)| refined[v as usize] = s);
    refined
}

/// [`refine`] on community `c`, whose vertices are `mine` (`slot[v]` is v's place in
/// it): the label of each, in that order.
fn refine_community(l: &Level, of: &[u32], slot: &[u32], c: u32, mine: &[u32], resolution: f64, seed: u64) -> Vec<u32> {
    let k = |i: usize| (l.k_out[mine[i] as usize], l.k_in[mine[i] as usize]);
    // The arcs expected between a part with weights (out, in) and one with (out2, in2).
    let expected = |(out, inw): (f64, f64), (out2, in2): (f64, f64)| resolution * (out * in2 + inw * out2) / l.m;
    let total = (0..mine.len()).map(k).fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1));
    let rest = |part: (f64, f64)| (total.0 - part.0, total.1 - part.1);
    let inner = |i: usize| l.edges(mine[i] as usize).filter(move |&(u, _)| of[u as usize] == c);
    // Each sub-community's weights, size, and arcs to the rest of the community.
    let mut sub: Vec<u32> = (0..mine.len() as u32).collect();
    let mut weight: Vec<(f64, f64)> = (0..mine.len()).map(k).collect();
    let mut size = vec![1u32; mine.len()];
    let mut outside: Vec<f64> = (0..mine.len()).map(|i| inner(i).map(|e| e.1).sum()).collect();
    let mut order: Vec<usize> = (0..mine.len()).collect();
    order.shuffle(&mut Xoshiro256PlusPlus::seed_from_u64(seed));
    let mut scratch: Vec<(u32, f64)> = Vec::new();
    for i in order {
        let own = sub[i] as usize;
        if size[own] != 1 || outside[own] < expected(k(i), rest(k(i))) {
            continue;
        }
        scratch.clear();
        scratch.extend(inner(i).map(|(u, w)| (sub[slot[u as usize] as usize], w)));
        scratch.sort_unstable_by_key(|e| e.0);
        let tie = 1e-12 * (k(i).0 + k(i).1);
        let mut best: Option<(usize, f64, f64)> = None;
        for run in scratch.chunk_by(|a, b| a.0 == b.0) {
            let s = run[0].0 as usize;
            let w: f64 = run.iter().map(|e| e.1).sum();
            let gain = w - expected(k(i), weight[s]);
            let connected = outside[s] >= expected(weight[s], rest(weight[s]));
            if s != own && connected && gain > best.map_or(tie, |b| b.1 + tie) {
                best = Some((s, gain, w));
            }
        }
        if let Some((s, _, w)) = best {
            outside[s] += outside[own] - 2.0 * w;
            weight[s] = (weight[s].0 + weight[own].0, weight[s].1 + weight[own].1);
            size[s] += 1;
            size[own] = 0;
            sub[i] = s as u32;
        }
    }
    sub.iter().map(|&s| mine[s as usize]).collect()
}

/// Each vertex's community, labelled by its smallest member, and the partition's
/// modularity.
pub fn communities(g: &Graph, method: Method, p: CommunityParams, seed: u64, progress: &dyn Progress) -> Result<(Vec<u32>, f64)> {
    let n = g.num_vertices();
    let mut rng = sweep_rng(seed);
    let first = Level::from_graph(g)?;
    let mut coarse: Option<Level> = None;
    let mut contracted = false;
    let mut modularity = first.modularity(p.resolution);
    // Each input vertex's vertex in the current level, and that level's communities.
    let mut at: Vec<u32> = (0..n as u32).collect();
    let mut comm: Vec<u32> = at.clone();
    let max_level = p.max_level.unwrap_or(MAX_LEVELS).min(MAX_LEVELS);
    progress.start(&format!("{}: levels", method.name()), 0);
    for depth in 1..=max_level {
        let level = coarse.as_ref().unwrap_or(&first);
        if move_vertices(level, &mut comm, p.resolution, &mut rng) == 0 {
            break;
        }
        let unrefined = comm.clone();
        let (mut next, mut new_of) = match method {
            Method::Louvain => level.contract(&comm),
            Method::Leiden => level.contract(&refine(level, &comm, p.resolution, seed.wrapping_add(depth as u64))),
        };
        if next.num_vertices() == level.num_vertices() {
            // Refinement merged nothing: contract the communities themselves.
            (next, new_of) = level.contract(&comm);
        }
        // The next level starts from the communities found (Leiden's refined pieces
        // keep their community; Louvain's are the communities).
        let (parent, _) = dense(&unrefined);
        comm = vec![0; next.num_vertices()];
        new_of.iter().zip(&parent).for_each(|(&a, &c)| comm[a as usize] = c);
        at.par_iter_mut().for_each(|x| *x = new_of[*x as usize]);
        progress.advance(1);
        // Louvain's levels stop by networkx's threshold; Leiden's once nothing moves.
        let settled = method == Method::Louvain && {
            let gained = next.modularity(p.resolution) - modularity;
            modularity += gained;
            gained <= p.threshold
        };
        coarse = Some(next);
        contracted = true;
        if settled {
            break;
        }
    }
    drop(coarse);
    let labels: Vec<u32> = at.par_iter().map(|&x| comm[x as usize]).collect();
    let mut labels = crate::renumber::smallest_members(&labels);
    // A last round of moves of single vertices between the communities found
    // (networkit's PLM refinement): a level's moves are of whole communities of the
    // level below, which a vertex may fit better outside.
    if contracted && move_vertices(&first, &mut labels, p.resolution, &mut rng) > 0 {
        labels = crate::renumber::smallest_members(&labels);
    }
    let labels = match method {
        Method::Louvain => labels,
        Method::Leiden => connected_pieces(g, &labels),
    };
    let modularity = first.contract(&labels).0.modularity(p.resolution);
    Ok((labels, modularity))
}

/// `labels` with each community split into its weakly connected pieces, each
/// labelled by its smallest vertex.
fn connected_pieces(g: &Graph, labels: &[u32]) -> Vec<u32> {
    let comp: Vec<AtomicU32> = (0..labels.len() as u32).into_par_iter().map(AtomicU32::new).collect();
    let out = g.out_edges();
    (0..labels.len() as u32).into_par_iter().for_each(|u| {
        for &v in out.neighbors(u).iter().filter(|&&v| labels[v as usize] == labels[u as usize]) {
            crate::wcc::link(u, v, &comp);
        }
    });
    crate::wcc::compress(&comp);
    comp.into_iter().map(AtomicU32::into_inner).collect()
}

/// The reference: networkx's modularity of a partition, sequential, from the edges
/// (undirected: each edge once, a self-loop's weight counted twice in its degree).
pub fn reference_modularity(g: &Graph, labels: &[u32], resolution: f64) -> f64 {
    let n = g.num_vertices();
    let out = g.out_edges();
    let (mut k_out, mut k_in, mut inside) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let mut m = 0.0;
    for u in 0..n as u32 {
        for e in out.range(u) {
            let (v, w) = (out.targets()[e], out.weight_f64(e));
            let counted = match (g.is_directed(), u == v) {
                (true, _) => w,
                (false, true) => 2.0 * w,
                (false, false) => w,
            };
            k_out[u as usize] += counted;
            k_in[v as usize] += counted;
            m += counted;
            if labels[u as usize] == labels[v as usize] {
                inside[labels[u as usize] as usize] += counted;
            }
        }
    }
    if m == 0.0 {
        return 0.0;
    }
    let (mut out_c, mut in_c) = (vec![0.0; n], vec![0.0; n]);
    for v in 0..n {
        out_c[labels[v] as usize] += k_out[v];
        in_c[labels[v] as usize] += k_in[v];
    }
    (0..n).map(|c| inside[c] / m - resolution * out_c[c] * in_c[c] / (m * m)).sum()
}

/// Checks a partition: each label its community's smallest member, the modularity
/// reported the reference's, no lower than every vertex alone, and (Leiden) each
/// community connected.
pub fn verify(g: &Graph, method: Method, p: CommunityParams, labels: &[u32], modularity: f64) -> Result<()> {
    if let Some(v) = (0..labels.len()).find(|&v| labels[v] as usize > v || labels[labels[v] as usize] != labels[v]) {
        return Err(Error::Mismatch(format!("vertex {v}'s label {} is not its community's smallest member", labels[v])));
    }
    let want = reference_modularity(g, labels, p.resolution);
    if (want - modularity).abs() > 1e-9 * want.abs().max(1.0) {
        return Err(Error::Mismatch(format!("modularity {modularity}, but the partition's is {want}")));
    }
    let alone = reference_modularity(g, &(0..labels.len() as u32).collect::<Vec<_>>(), p.resolution);
    if want < alone - 1e-12 {
        return Err(Error::Mismatch(format!("modularity {want} is below every vertex alone's, {alone}")));
    }
    if method == Method::Leiden {
        // Union-find over the edges within communities: each vertex must meet its label.
        let mut parent: Vec<u32> = (0..labels.len() as u32).collect();
        fn find(p: &mut [u32], mut x: u32) -> u32 {
            while p[x as usize] != x {
                p[x as usize] = p[p[x as usize] as usize];
                x = p[x as usize];
            }
            x
        }
        for u in 0..labels.len() as u32 {
            for &v in g.out_edges().neighbors(u).iter().filter(|&&v| labels[v as usize] == labels[u as usize]) {
                let (a, b) = (find(&mut parent, u), find(&mut parent, v));
                parent[a.max(b) as usize] = a.min(b);
            }
        }
        if let Some(v) = (0..labels.len() as u32).find(|&v| find(&mut parent, v) != find(&mut parent, labels[v as usize])) {
            return Err(Error::Mismatch(format!("community {} is not connected: vertex {v} is cut off", labels[v as usize])));
        }
    }
    Ok(())
}
