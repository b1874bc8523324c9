//! Kernel: k-core decomposition. Returns every vertex's core number, the largest k
//! for which it belongs to a subgraph whose vertices all have degree k or more
//! (networkx's `core_number`).
//!
//! Degrees are those of networkx's simple graphs (see [`crate::simple`]): distinct
//! neighbours, self-loops left out; on a directed graph in-degree plus out-degree, so
//! a pair of opposite edges counts twice, as networkx counts `DiGraph` degrees.
//!
//! Parallel peeling by levels: at level k, the vertices left with degree k are
//! peeled in rounds; each removal lowers its neighbours' degrees, and a neighbour that
//! reaches k joins the next round (peeled at k: its core number). When a level runs
//! dry, k jumps to the least degree left.
//!
//! [1] Humayun Kabir, Kamesh Madduri. "Parallel k-Core Decomposition on Multicore
//!     Platforms." IPDPSW 2017 (PKC: level-synchronous peeling).
//! [2] Vladimir Batagelj, Matjaž Zaveršnik. "An O(m) Algorithm for Cores
//!     Decomposition of Networks." 2003 (the sequential definition by peeling).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use rayon::prelude::*;

use chatty_graph::{Graph, Progress};

use crate::simple::{each_distinct, need_in_edges};
use crate::Result;

/// Frontier vertices per task.
const CHUNK: usize = 1024;

/// Calls `f` on each of `u`'s neighbours as its degree counts them.
#[inline]
fn each_neighbour(g: &Graph, u: u32, mut f: impl FnMut(u32)) {
    each_distinct(g.out_edges().neighbors(u), u, &mut f);
    if g.is_directed() {
        each_distinct(g.in_edges().neighbors(u), u, f);
    }
}

/// A vertex not yet peeled.
const LEFT: u32 = u32::MAX;

/// Core numbers by parallel peeling.
pub fn core_numbers(g: &Graph, progress: &dyn Progress) -> Result<Vec<u32>> {
    need_in_edges(g, "kcore")?;
    let n = g.num_vertices();
    let degree: Vec<AtomicU32> = (0..n as u32)
        .into_par_iter()
        .map(|u| {
            let mut d = 0;
            each_neighbour(g, u, |_| d += 1);
            AtomicU32::new(d)
        })
        .collect();
    // A vertex's core number, set when it is peeled; its degree may then drop below it
    // (a neighbour peeled in the same round lowers it without a compare-and-swap).
    let core: Vec<AtomicU32> = (0..n).into_par_iter().map(|_| AtomicU32::new(LEFT)).collect();
    let of = |v: u32| degree[v as usize].load(Relaxed);
    progress.start("kcore: vertices peeled", n as u64);
    let mut left: Vec<u32> = (0..n as u32).collect();
    let mut k = left.par_iter().map(|&v| of(v)).min().unwrap_or(0);
    while !left.is_empty() {
        let mut frontier: Vec<u32> = left.par_iter().copied().filter(|&v| of(v) == k).collect();
        frontier.par_iter().for_each(|&v| core[v as usize].store(k, Relaxed));
        while !frontier.is_empty() {
            progress.advance(frontier.len() as u64);
            frontier = frontier
                .par_chunks(CHUNK)
                .flat_map_iter(|chunk| {
                    let mut next = Vec::new();
                    for &v in chunk {
                        each_neighbour(g, v, |u| {
                            // The one decrement that takes a degree from k + 1 to k peels it.
                            if core[u as usize].load(Relaxed) == LEFT && degree[u as usize].fetch_sub(1, Relaxed) == k + 1 {
                                core[u as usize].store(k, Relaxed);
                                next.push(u);
                            }
                        });
                    }
                    next
                })
                .collect();
        }
        left = left.into_par_iter().filter(|&v| core[v as usize].load(Relaxed) == LEFT).collect();
        k = left.par_iter().map(|&v| of(v)).min().unwrap_or(k);
    }
    Ok(core.into_iter().map(AtomicU32::into_inner).collect())
}

/// The reference: repeatedly remove a vertex of least degree (an ordered set of
/// `(degree, vertex)`); a vertex's core number is the largest such degree seen up to
/// its removal. Neighbours come from the out-lists alone.
pub fn reference(g: &Graph) -> Vec<u32> {
    let n = g.num_vertices();
    let mut out: Vec<BTreeSet<u32>> = vec![BTreeSet::new(); n];
    for u in 0..n as u32 {
        out[u as usize].extend(g.out_edges().neighbors(u).iter().filter(|&&v| v != u));
    }
    let mut neighbours: Vec<Vec<u32>> = out.iter().map(|s| s.iter().copied().collect()).collect();
    if g.is_directed() {
        for (u, s) in out.iter().enumerate() {
            s.iter().for_each(|&v| neighbours[v as usize].push(u as u32));
        }
    }
    let mut degree: Vec<u32> = neighbours.iter().map(|l| l.len() as u32).collect();
    let mut queue: BTreeSet<(u32, u32)> = (0..n as u32).map(|v| (degree[v as usize], v)).collect();
    let mut core = vec![0; n];
    let mut removed = vec![false; n];
    let mut k = 0;
    while let Some((d, v)) = queue.pop_first() {
        k = k.max(d);
        core[v as usize] = k;
        removed[v as usize] = true;
        for &u in &neighbours[v as usize] {
            if !removed[u as usize] {
                queue.remove(&(degree[u as usize], u));
                degree[u as usize] -= 1;
                queue.insert((degree[u as usize], u));
            }
        }
    }
    core
}

/// Checks core numbers against [`reference`].
pub fn verify(g: &Graph, core: &[u32]) -> Result<()> {
    crate::first_mismatch(&reference(g), core, |a, b| a == b)
}
