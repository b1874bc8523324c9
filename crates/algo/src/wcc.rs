//! Kernel: WCC. Returns, for every vertex, the smallest vertex id in its weakly
//! connected component.
//!
//! Afforest: link each vertex to its first two neighbours and compress, which already
//! joins most of a power-law graph into one giant component; find that component by
//! sampling; then link the remaining edges of vertices outside it only (and, for
//! directed graphs, their in-edges too, since an edge into the giant component is
//! not seen from its source). Linking hooks the larger root under the smaller, so
//! `comp[v] <= v` always holds and every final root is its component's smallest id.
//! Its own loop, not `edge_map`: it has no frontier, and its edge subsets (the first
//! k neighbours, vertices outside one component) are not frontiers either.
//!
//! Engines that stream edges (the SSD engine) propagate the minimum label instead,
//! through the edge map over out- and (directed) in-edges until no label changes:
//! hooking needs random access to edges, label propagation only streams.
//!
//! [1] Michael Sutton, Tal Ben-Nun, Amnon Barak. "Optimizing Parallel Graph
//!     Connectivity Computation via Subgraph Sampling." IPDPS 2018.
//! [2] Yossi Shiloach, Uzi Vishkin. "An O(log n) Parallel Connectivity Algorithm."
//!     Journal of Algorithms 3(1), 1982 (hooking and compression).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use rayon::prelude::*;

use chatty_graph::Graph;

use crate::edge_map::{EdgeMapGraph, EdgeMapOptions, EdgeOp, Edges};
use crate::frontier::Frontier;
use crate::Result;

/// Neighbours per vertex linked in the sampling phase.
pub const SAMPLE_ROUNDS: usize = 2;
/// Vertices sampled to find the giant component.
const SAMPLES: usize = 1024;

/// Joins the trees of `u` and `v`, hooking the larger root under the smaller
/// (lock-free; any thread may link any pair at once), so every root is its tree's
/// smallest id.
#[inline]
pub fn link(u: u32, v: u32, comp: &[AtomicU32]) {
    hook::<false>(u, v, comp)
}

/// [`link`]; `ALONE`: the only thread writing `comp`, which hooks with a plain store
/// where others need a compare-and-swap ([`crate::region::exchange`]; one thread on
/// the dev VM: the 2048² grid 72-75 → 47-52 ms, road-NE 39-41 → 36 ms, moscow
/// 10.4-10.8 → 9.3-9.6 ms).
#[inline(always)]
fn hook<const ALONE: bool>(u: u32, v: u32, comp: &[AtomicU32]) {
    let mut p1 = comp[u as usize].load(Relaxed);
    let mut p2 = comp[v as usize].load(Relaxed);
    while p1 != p2 {
        let (high, low) = (p1.max(p2), p1.min(p2));
        let p_high = comp[high as usize].load(Relaxed);
        if p_high == low || (p_high == high && crate::region::exchange::<ALONE>(&comp[high as usize], high, low)) {
            break;
        }
        // `high` is no root: climb to its grandparent and halve its path, so later
        // links from below climb less (without it, the single sampling pass below
        // ran the 2048² grid 1.6-4x slower at 4 and 16 threads). Storing an ancestor
        // keeps `high` in its tree, and only a root's own entry changes, by
        // compare-and-swap, so no hook is lost.
        let parent = comp[high as usize].load(Relaxed);
        p1 = comp[parent as usize].load(Relaxed);
        if p1 != parent {
            comp[high as usize].store(p1, Relaxed);
        }
        p2 = comp[low as usize].load(Relaxed);
    }
}

/// Points every vertex at its root.
pub fn compress(comp: &[AtomicU32]) {
    comp.par_chunks(CHUNK).for_each(|chunk| {
        for c in chunk {
            loop {
                let p = c.load(Relaxed);
                let pp = comp[p as usize].load(Relaxed);
                if p == pp {
                    break;
                }
                c.store(pp, Relaxed);
            }
        }
    });
}

/// Vertices per task in Afforest's passes: a plain loop inside each task, rather
/// than rayon calling a closure per vertex (on the 4096² grid at 1 thread that call and
/// the bounds checks of `neighbors` cost 44 instructions per vertex and sampling round,
/// where GAPBS spends 21).
const CHUNK: usize = 4096;

/// Calls `f(u)` for every vertex `u < n`, in parallel chunks of [`CHUNK`].
fn for_each_vertex(n: usize, f: impl Fn(u32) + Sync) {
    (0..n.div_ceil(CHUNK)).into_par_iter().for_each(|c| (c * CHUNK..(c * CHUNK + CHUNK).min(n)).for_each(|u| f(u as u32)));
}

/// The most frequent label among `SAMPLES` pseudo-random vertices of `among`.
pub fn most_frequent(comp: &[AtomicU32], among: std::ops::Range<u32>) -> u32 {
    if among.is_empty() {
        return 0;
    }
    let mut counts = HashMap::new();
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    for _ in 0..SAMPLES {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let v = among.start as u64 + x % among.len() as u64;
        *counts.entry(comp[v as usize].load(Relaxed)).or_insert(0) += 1;
    }
    counts.into_iter().max_by_key(|&(c, k)| (k, std::cmp::Reverse(c))).map_or(0, |(c, _)| c)
}

/// Component labels: Afforest on an adjacency in memory, label propagation otherwise.
pub fn wcc<G: EdgeMapGraph + ?Sized>(g: &G) -> Result<Vec<u32>> {
    match g.csr() {
        Some(csr) => Ok(afforest(csr)),
        None => label_propagation(g),
    }
}

/// Lowers `dst`'s label to `src`'s.
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

/// Min-label propagation: every vertex starts with its own id; rounds push labels
/// from the vertices that changed, along edges either way, until none does.
pub fn label_propagation<G: EdgeMapGraph + ?Sized>(g: &G) -> Result<Vec<u32>> {
    let n = g.num_vertices();
    let label: Vec<AtomicU32> = (0..n as u32).into_par_iter().map(AtomicU32::new).collect();
    let op = MinLabel { label: &label };
    let opts = EdgeMapOptions { dedup: true, direction: crate::Direction::Push, ..EdgeMapOptions::default() };
    let mut frontier = Frontier::all(n);
    while !frontier.is_empty() {
        frontier = if g.is_directed() {
            let backward = g.edge_map(Edges::In, frontier.clone(), &op, opts)?;
            g.edge_map(Edges::Out, frontier, &op, opts)?.union(backward)
        } else {
            g.edge_map(Edges::Out, frontier, &op, opts)?
        };
    }
    Ok(label.into_iter().map(AtomicU32::into_inner).collect())
}

/// Afforest connected components.
pub fn afforest(g: &Graph) -> Vec<u32> {
    match rayon::current_num_threads() {
        1 => afforest_on::<true>(g),
        _ => afforest_on::<false>(g),
    }
}

/// [`afforest`], `ALONE` where one thread runs it (see [`hook`]).
fn afforest_on<const ALONE: bool>(g: &Graph) -> Vec<u32> {
    let link = hook::<ALONE>;
    let n = g.num_vertices();
    if n == 0 {
        return Vec::new();
    }
    let out = g.out_edges();
    let (offsets, targets) = (out.offsets(), out.targets());
    let comp: Vec<AtomicU32> = (0..n as u32).into_par_iter().map(AtomicU32::new).collect();
    // A vertex's sampled neighbours are linked one after the other, in one pass, not
    // one round each with a compression between: the second link then climbs from
    // where the first just hooked, where a second round walks roots that the whole
    // first round re-hooked (16-core host, 16 threads: kron22 38-45 -> 27-31 ms,
    // urand22 46-48 -> 25-27 ms; session 31 in docs/benchmarks/cpu.md).
    for_each_vertex(n, |u| {
        let (start, end) = (offsets[u as usize], offsets[u as usize + 1]);
        for e in start..end.min(start + SAMPLE_ROUNDS as u64) {
            link(u, targets[e as usize], &comp);
        }
    });
    compress(&comp);
    let giant = most_frequent(&comp, 0..n as u32);
    for_each_vertex(n, |u| {
        if comp[u as usize].load(Relaxed) == giant {
            return;
        }
        for &v in out.neighbors(u).iter().skip(SAMPLE_ROUNDS) {
            link(u, v, &comp);
        }
        if g.is_directed() {
            for &v in g.in_edges().neighbors(u) {
                link(u, v, &comp);
            }
        }
    });
    compress(&comp);
    comp.into_iter().map(AtomicU32::into_inner).collect()
}

/// The reference: sequential union-find over every edge, labelled by minimum id.
pub fn reference(g: &Graph) -> Vec<u32> {
    let n = g.num_vertices();
    let mut parent: Vec<u32> = (0..n as u32).collect();
    fn find(p: &mut [u32], mut x: u32) -> u32 {
        while p[x as usize] != x {
            p[x as usize] = p[p[x as usize] as usize];
            x = p[x as usize];
        }
        x
    }
    for u in 0..n as u32 {
        for &v in g.out_edges().neighbors(u) {
            let (a, b) = (find(&mut parent, u), find(&mut parent, v));
            parent[a.max(b) as usize] = a.min(b);
        }
    }
    (0..n as u32).map(|v| find(&mut parent, v)).collect()
}

/// Checks labels against [`reference`].
pub fn verify(g: &Graph, labels: &[u32]) -> Result<()> {
    crate::first_mismatch(&reference(g), labels, |a, b| a == b)
}
