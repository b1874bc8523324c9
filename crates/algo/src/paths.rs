//! Paths, not only lengths: each vertex's parent on a shortest path from the source,
//! derived from a BFS or SSSP answer by one pass over the reached vertices'
//! out-edges. An edge `u → v` is *tight* when d(u) + w(u, v) = d(v), computed as the
//! kernels compute it (the final relaxation into `v` was exactly that sum), so any
//! engine's distances give the same tree and the search itself carries no parent
//! array.
//!
//! A vertex's parent is its smallest-id tight in-neighbour: the same on every engine
//! and thread count. A tight edge of positive length leads to a larger distance, so
//! those parents cannot close a cycle; a vertex reached only over zero-length edges
//! (integer weights may be 0) takes its parent in rounds outward from the vertices
//! that have one, a BFS over the zero-length tight edges.
//! The source is its own parent (GAPBS's convention); an unreached vertex has
//! [`NO_PARENT`].
//!
//! [1] Graph 500 specification, kernel 2: "the parent of each vertex in the BFS
//!     tree", validated edge by edge.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use rayon::prelude::*;

use chatty_graph::{Graph, WeightType};

use crate::edge_map::{Direction, EdgeMapGraph, EdgeMapOptions, EdgeOp, Edges};
use crate::frontier::Frontier;
use crate::{bfs, Distances, Error, Output, Result};

/// The parent of a vertex the source does not reach.
pub const NO_PARENT: u32 = u32::MAX;

/// Whether an edge lies on a shortest path, and whether it has length 0.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Tight {
    No,
    Positive,
    Zero,
}

/// The distances of a BFS or SSSP answer, as the tight-edge test reads them.
#[derive(Copy, Clone)]
enum Lengths<'a> {
    Hops(&'a [u32]),
    Int(&'a [u64], WeightType),
    Float(&'a [f64], WeightType),
}

impl<'a> Lengths<'a> {
    fn of(output: &'a Output, weights: WeightType) -> Result<Lengths<'a>> {
        match output {
            Output::Depths(d) => Ok(Lengths::Hops(d)),
            Output::Distances(Distances::Int(d)) => Ok(Lengths::Int(d, weights)),
            Output::Distances(Distances::Float(d)) => Ok(Lengths::Float(d, weights)),
            _ => Err(Error::Unsupported("parents come with distances: bfs and sssp have them".into())),
        }
    }

    fn len(self) -> usize {
        match self {
            Lengths::Hops(d) => d.len(),
            Lengths::Int(d, _) => d.len(),
            Lengths::Float(d, _) => d.len(),
        }
    }

    #[inline]
    fn reached(self, v: u32) -> bool {
        match self {
            Lengths::Hops(d) => d[v as usize] != bfs::UNREACHED,
            Lengths::Int(d, _) => d[v as usize] != u64::MAX,
            Lengths::Float(d, _) => d[v as usize].is_finite(),
        }
    }

    /// Whether `u → v` with the stored weight word `raw` is tight, with the kernels'
    /// arithmetic: hops add 1, integers add saturating, floats add the f32 weight as f64.
    #[inline]
    fn tight(self, u: u32, v: u32, raw: u32) -> Tight {
        let (u, v) = (u as usize, v as usize);
        let (on_path, positive) = match self {
            Lengths::Hops(d) => (d[u] != bfs::UNREACHED && d[u] + 1 == d[v], true),
            Lengths::Int(d, weights) => {
                let w = if weights == WeightType::Int { raw as u64 } else { 1 };
                (d[u] != u64::MAX && d[u].saturating_add(w) == d[v], w > 0)
            }
            Lengths::Float(d, weights) => {
                let w = if weights == WeightType::Float { f32::from_bits(raw) as f64 } else { 1.0 };
                (d[u].is_finite() && d[u] + w == d[v], w > 0.0)
            }
        };
        match (on_path, positive) {
            (false, _) => Tight::No,
            (true, true) => Tight::Positive,
            (true, false) => Tight::Zero,
        }
    }

    fn describe(self, v: u32) -> String {
        match self {
            Lengths::Hops(d) => format!("depth {}", d[v as usize]),
            Lengths::Int(d, _) => format!("distance {}", d[v as usize]),
            Lengths::Float(d, _) => format!("distance {}", d[v as usize]),
        }
    }
}

/// Along tight edges of positive length: the smallest such in-neighbour wins.
struct Downhill<'a> {
    lengths: Lengths<'a>,
    parent: &'a [AtomicU32],
    source: u32,
}

impl EdgeOp for Downhill<'_> {
    #[inline]
    fn update(&self, u: u32, v: u32, w: u32) -> bool {
        if v != self.source && self.lengths.tight(u, v, w) == Tight::Positive {
            self.parent[v as usize].fetch_min(u, Relaxed);
        }
        false
    }
    #[inline]
    fn update_atomic(&self, u: u32, v: u32, w: u32) -> bool {
        self.update(u, v, w)
    }
}

/// Along tight edges of length 0 into vertices without a parent yet: a vertex joins
/// in the round that first reaches it, taking the smallest parent of that round.
struct Level<'a> {
    lengths: Lengths<'a>,
    parent: &'a [AtomicU32],
    joined: &'a [AtomicU32],
    round: u32,
}

impl EdgeOp for Level<'_> {
    #[inline]
    fn update(&self, u: u32, v: u32, w: u32) -> bool {
        if self.lengths.tight(u, v, w) != Tight::Zero {
            return false;
        }
        let joined = match self.joined[v as usize].compare_exchange(NO_PARENT, self.round, Relaxed, Relaxed) {
            Ok(_) => true,
            Err(r) if r == self.round => false,
            Err(_) => return false,
        };
        self.parent[v as usize].fetch_min(u, Relaxed);
        joined
    }
    #[inline]
    fn update_atomic(&self, u: u32, v: u32, w: u32) -> bool {
        self.update(u, v, w)
    }
}

/// Each vertex's parent on a shortest path from `source`, from a BFS or SSSP answer
/// on `g` (see the module's header). An answer whose reached vertex has no tight
/// in-edge is not one of shortest-path distances: an error, not a tree.
pub fn parents<G: EdgeMapGraph + ?Sized>(g: &G, source: u32, output: &Output) -> Result<Vec<u32>> {
    let n = g.num_vertices();
    let lengths = Lengths::of(output, g.weight_type())?;
    if lengths.len() != n || source as usize >= n || !lengths.reached(source) {
        return Err(Error::Mismatch(format!("an answer of {} values from source {source} on {n} vertices", lengths.len())));
    }
    let parent: Vec<AtomicU32> = (0..n).into_par_iter().map(|_| AtomicU32::new(NO_PARENT)).collect();
    parent[source as usize].store(source, Relaxed);
    let reached: Vec<u32> = (0..n as u32).into_par_iter().filter(|&v| lengths.reached(v)).collect();
    let push = EdgeMapOptions { direction: Direction::Push, ..EdgeMapOptions::default() };
    g.edge_map(Edges::Out, Frontier::Sparse { n, ids: reached.clone() }, &Downhill { lengths, parent: &parent, source }, push)?;
    let orphans = reached.par_iter().any(|&v| parent[v as usize].load(Relaxed) == NO_PARENT);
    if orphans {
        // Round 0 holds every vertex with a parent; round r those first reached over
        // zero-length edges from round r - 1.
        let joined: Vec<AtomicU32> =
            parent.par_iter().map(|p| AtomicU32::new(if p.load(Relaxed) == NO_PARENT { NO_PARENT } else { 0 })).collect();
        let ids = reached.par_iter().copied().filter(|&v| joined[v as usize].load(Relaxed) == 0).collect();
        let mut frontier = Frontier::Sparse { n, ids };
        let mut round = 0;
        while !frontier.is_empty() {
            round += 1;
            let op = Level { lengths, parent: &parent, joined: &joined, round };
            frontier = g.edge_map(Edges::Out, frontier, &op, push)?;
        }
    }
    let parent: Vec<u32> = parent.into_iter().map(AtomicU32::into_inner).collect();
    match reached.par_iter().find_first(|&&v| parent[v as usize] == NO_PARENT) {
        Some(&v) => Err(Error::Mismatch(format!(
            "vertex {v} has {} from source {source} but no in-neighbour it follows on a path of that length: not shortest-path distances",
            lengths.describe(v)
        ))),
        None => Ok(parent),
    }
}

/// The path from the source to `target` that `parents` describe (source first), or
/// `None` when the target is unreached.
pub fn path(parents: &[u32], target: u32) -> Option<Vec<u32>> {
    let mut path = vec![target];
    let mut v = *parents.get(target as usize)?;
    if v == NO_PARENT {
        return None;
    }
    let mut at = target;
    while v != at {
        // A walk longer than the vertex count has met a cycle: not a tree.
        if path.len() > parents.len() {
            return None;
        }
        path.push(v);
        at = v;
        v = parents[v as usize];
    }
    path.reverse();
    Some(path)
}

/// Checks `parents` against `g` and a verified BFS or SSSP answer from `source`:
/// the source is its own parent and unreached vertices have none; every other reached
/// vertex's parent is reached, with an edge to it of exactly the length between their
/// distances; and following parents from any reached vertex ends at the source.
pub fn verify(g: &Graph, source: u32, output: &Output, parents: &[u32]) -> Result<()> {
    let n = g.num_vertices();
    let lengths = Lengths::of(output, g.weight_type())?;
    if parents.len() != n || lengths.len() != n {
        return Err(Error::Mismatch(format!("{} parents for {n} vertices", parents.len())));
    }
    let edge_ok = |v: u32| -> std::result::Result<(), String> {
        let p = parents[v as usize];
        match (lengths.reached(v), v == source) {
            (false, _) if p == NO_PARENT => Ok(()),
            (false, _) => Err(format!("vertex {v} is unreached but has parent {p}")),
            (true, true) if p == source => Ok(()),
            (true, true) => Err(format!("the source {v} has parent {p}, not itself")),
            (true, false) if p as usize >= n => Err(format!("vertex {v} is reached but has no parent")),
            (true, false) => {
                let out = g.out_edges();
                let on_path = out.neighbors(p).iter().enumerate().any(|(i, &t)| {
                    t == v && lengths.tight(p, v, out.raw_weights().map_or(0, |w| w[out.offsets()[p as usize] as usize + i])) != Tight::No
                });
                if on_path {
                    Ok(())
                } else {
                    Err(format!("vertex {v}'s parent {p} has no edge to it of the length between their distances"))
                }
            }
        }
    };
    if let Some(problem) = (0..n as u32).into_par_iter().map(edge_ok).find_first(|r| r.is_err()) {
        return Err(Error::Mismatch(problem.unwrap_err()));
    }
    // Every chain of parents ends at the source: walked once per vertex, each walk
    // stopping at a vertex already known to reach it.
    let mut reaches = vec![false; n];
    reaches[source as usize] = true;
    let mut walk = Vec::new();
    for v in 0..n as u32 {
        let mut at = v;
        while lengths.reached(at) && !reaches[at as usize] {
            if walk.len() > n {
                return Err(Error::Mismatch(format!("the parents from vertex {v} go round a cycle")));
            }
            walk.push(at);
            at = parents[at as usize];
        }
        walk.drain(..).for_each(|w| reaches[w as usize] = true);
    }
    Ok(())
}

/// The shortest-path DAG's in-lists from a BFS or SSSP answer on `g`: for each vertex,
/// the sources of its tight in-edges ordered by their distance, then id (the order
/// Dijkstra settles them in, up to ties), as offsets (`n + 1`) and sources. What the
/// networkx backend needs to answer as networkx's own tie rules would, or decline.
pub fn tight_sources(g: &Graph, output: &Output) -> Result<(Vec<u64>, Vec<u32>)> {
    use std::sync::atomic::AtomicU64;
    let n = g.num_vertices();
    let lengths = Lengths::of(output, g.weight_type())?;
    if lengths.len() != n {
        return Err(Error::Mismatch(format!("{} distances for {n} vertices", lengths.len())));
    }
    let out = g.out_edges();
    let weight = |e: usize| out.raw_weights().map_or(0, |w| w[e]);
    // Each vertex's tight out-edges, visited twice: counted, then placed.
    let for_tight = |f: &(dyn Fn(u32, u32) + Sync)| {
        (0..n as u32).into_par_iter().filter(|&u| lengths.reached(u)).for_each(|u| {
            let first = out.offsets()[u as usize] as usize;
            out.neighbors(u)
                .iter()
                .enumerate()
                .filter(|&(i, &v)| lengths.tight(u, v, weight(first + i)) != Tight::No)
                .for_each(|(_, &v)| f(u, v));
        })
    };
    let count: Vec<AtomicU64> = (0..=n).map(|_| AtomicU64::new(0)).collect();
    for_tight(&|_, v| {
        count[v as usize + 1].fetch_add(1, Relaxed);
    });
    let mut offsets: Vec<u64> = count.into_iter().map(AtomicU64::into_inner).collect();
    (1..=n).for_each(|v| offsets[v] += offsets[v - 1]);
    let cursor: Vec<AtomicU64> = offsets[..n].iter().map(|&o| AtomicU64::new(o)).collect();
    let sources: Vec<AtomicU32> = (0..offsets[n]).map(|_| AtomicU32::new(0)).collect();
    for_tight(&|u, v| sources[cursor[v as usize].fetch_add(1, Relaxed) as usize].store(u, Relaxed));
    let mut sources: Vec<u32> = sources.into_iter().map(AtomicU32::into_inner).collect();
    let key = |u: u32| match lengths {
        Lengths::Hops(d) => (d[u as usize] as f64, u),
        Lengths::Int(d, _) => (d[u as usize] as f64, u),
        Lengths::Float(d, _) => (d[u as usize], u),
    };
    let mut lists: Vec<&mut [u32]> = Vec::with_capacity(n);
    let mut rest = &mut sources[..];
    for v in 0..n {
        let (list, tail) = rest.split_at_mut((offsets[v + 1] - offsets[v]) as usize);
        lists.push(list);
        rest = tail;
    }
    lists
        .into_par_iter()
        .for_each(|list| list.sort_unstable_by(|&a, &b| key(a).partial_cmp(&key(b)).expect("reached distances are numbers")));
    Ok((offsets, sources))
}
