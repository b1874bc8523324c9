//! Kernel: label propagation communities, semi-synchronous, as networkx's
//! `label_propagation_communities` defines them, so that the answer is networkx's
//! partition, vertex for vertex. Returns each vertex's community, labelled (as wcc's
//! components) by its smallest vertex id.
//!
//! Every vertex starts with its own label. The vertices are coloured greedily,
//! largest degree first (networkx's `greedy_color`, ties in id order), so no two
//! neighbours share a colour; then colour by colour every vertex of the colour takes
//! the label most frequent among its neighbours (a self-loop makes a vertex its own
//! neighbour), keeping its own where it ties for most frequent and otherwise taking the
//! largest tied label (Prec-Max). A colour's vertices read only other colours' labels,
//! so they update in parallel with the answer of the sequential sweep. Sweeps stop
//! once every vertex with neighbours holds one of its most frequent labels.
//!
//! Only vertices with a neighbour whose label changed since their last look are looked
//! at again (PLP's active set [3]), in the check and in the sweeps: the others would
//! find the same most frequent labels, their own among them, and keep it, so skipping
//! them leaves networkx's answer as it is.
//!
//! [1] Gennaro Cordasco, Luisa Gargano. "Community Detection via Semi-Synchronous
//!     Label Propagation Algorithms." BASNA 2010.
//! [2] Usha Nandini Raghavan, Réka Albert, Soundar Kumara. "Near linear time
//!     algorithm to detect community structures in large-scale networks." Phys. Rev.
//!     E 76, 2007 (label propagation).
//! [3] Christian L. Staudt, Henning Meyerhenke. "Engineering Parallel Algorithms for
//!     Community Detection in Massive Networks." IEEE TPDS 27(1), 2016 (PLP's active
//!     vertices).
//! [4] Mark T. Jones, Paul E. Plassmann. "A Parallel Graph Coloring Heuristic." SIAM
//!     J. Sci. Comput. 14(3), 1993.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::Relaxed};

use rayon::prelude::*;

use chatty_graph::{Graph, Progress};

use crate::{Error, Result};

/// Sweeps before the run gives up (networkx has no cap; a bipartite oscillation would
/// never end).
pub const MAX_SWEEPS: u32 = 10_000;

/// Neighbour labels from which a vertex's are sorted in parallel.
const PARALLEL_SORT: usize = 1 << 14;

/// Refuses a directed graph, as networkx does.
pub fn defined(directed: bool) -> Result<()> {
    match directed {
        true => Err(Error::Unsupported(
            "lpa (label propagation) is defined for undirected graphs, as networkx's; symmetrise this one with \
             `chatty convert --symmetrize`"
                .into(),
        )),
        false => Ok(()),
    }
}

/// The distinct neighbours of `u` in the sorted list `list`, `u` itself included
/// where it has a self-loop (networkx's `G[u]`).
fn neighbours(list: &[u32]) -> impl Iterator<Item = u32> + '_ {
    list.iter().enumerate().filter(|&(i, &v)| i == 0 || list[i - 1] != v).map(|(_, &v)| v)
}

/// networkx's `G.degree`: distinct neighbours, a self-loop counted twice.
fn degree(list: &[u32], u: u32) -> usize {
    neighbours(list).map(|v| if v == u { 2 } else { 1 }).sum()
}

/// The colour classes of networkx's greedy colouring, largest degree first (ties in id
/// order): the vertices of colour 0, then of colour 1, ...
///
/// Jones and Plassmann's rounds [4] with the greedy order as the priority give the
/// greedy colouring itself: a vertex takes the smallest colour its earlier neighbours
/// do not have once they all have one, which is what the sequential pass gives it
/// when its turn comes; the vertices whose earlier neighbours are all coloured go in
/// parallel, as no two of them are neighbours.
fn colour_classes(g: &Graph) -> Vec<Vec<u32>> {
    let n = g.num_vertices();
    let out = g.out_edges();
    let degrees: Vec<usize> = (0..n as u32).into_par_iter().map(|u| degree(out.neighbors(u), u)).collect();
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.par_sort_by_key(|&u| (std::cmp::Reverse(degrees[u as usize]), u));
    let mut rank = vec![0u32; n];
    order.iter().enumerate().for_each(|(i, &u)| rank[u as usize] = i as u32);
    let rank: &[u32] = &rank;
    let earlier = |u: u32| neighbours(out.neighbors(u)).filter(|&v| rank[v as usize] < rank[u as usize]).count();
    let waiting: Vec<AtomicU32> = (0..n as u32).into_par_iter().map(|u| AtomicU32::new(earlier(u) as u32)).collect();
    let colour: Vec<AtomicU32> = (0..n).into_par_iter().map(|_| AtomicU32::new(u32::MAX)).collect();
    let mut ready: Vec<u32> = (0..n as u32).into_par_iter().filter(|&u| waiting[u as usize].load(Relaxed) == 0).collect();
    while !ready.is_empty() {
        // Each ready vertex takes its colour (`taken[c] == u` marks colour c as an
        // earlier neighbour's) and counts itself off its later neighbours, which are
        // ready once it was the last they waited for.
        let next: Vec<Vec<u32>> = (ready.par_iter())
            .fold(
                || (Vec::new(), Vec::new()),
                |(mut taken, mut next): (Vec<u32>, Vec<u32>), &u| {
                    taken.clear();
                    // Its smallest free colour is at most its count of neighbours.
                    taken.resize(out.neighbors(u).len() + 1, u32::MAX);
                    for v in neighbours(out.neighbors(u)) {
                        if rank[v as usize] < rank[u as usize] {
                            if let Some(t) = taken.get_mut(colour[v as usize].load(Relaxed) as usize) {
                                *t = u;
                            }
                        } else if v != u && waiting[v as usize].fetch_sub(1, Relaxed) == 1 {
                            next.push(v);
                        }
                    }
                    let c = taken.iter().position(|&t| t != u).unwrap_or(taken.len());
                    colour[u as usize].store(c as u32, Relaxed);
                    (taken, next)
                },
            )
            .map(|(_, next)| next)
            .collect();
        ready = next.concat();
    }
    let colour: Vec<u32> = colour.into_iter().map(AtomicU32::into_inner).collect();
    let mut classes: Vec<Vec<u32>> = vec![Vec::new(); colour.iter().max().map_or(0, |&c| c as usize + 1)];
    for &u in &order {
        classes[colour[u as usize] as usize].push(u);
    }
    classes
}

/// The labels most frequent among `u`'s neighbours, ascending, into `best` (using
/// `scratch`); empty for a vertex without neighbours.
fn most_frequent(list: &[u32], labels: &[AtomicU32], scratch: &mut Vec<u32>, best: &mut Vec<u32>) {
    scratch.clear();
    scratch.extend(neighbours(list).map(|v| labels[v as usize].load(Relaxed)));
    // A hub's labels are sorted by every idle thread: the largest degrees come first in
    // the colouring, and one thread sorting a hub's list held up its whole colour.
    match scratch.len() >= PARALLEL_SORT {
        true => scratch.par_sort_unstable(),
        false => scratch.sort_unstable(),
    }
    best.clear();
    let mut top = 0;
    for run in scratch.chunk_by(|a, b| a == b) {
        if run.len() > top {
            top = run.len();
            best.clear();
        }
        if run.len() == top {
            best.push(run[0]);
        }
    }
}

/// Each vertex's community, labelled by its smallest member.
pub fn communities(g: &Graph, progress: &dyn Progress) -> Result<Vec<u32>> {
    defined(g.is_directed())?;
    let n = g.num_vertices();
    let out = g.out_edges();
    let classes = colour_classes(g);
    let labels: Vec<AtomicU32> = (0..n as u32).into_par_iter().map(AtomicU32::new).collect();
    // A vertex is stale until it is looked at with its neighbours' labels as they are:
    // every vertex at first, then those beside a vertex whose label changed.
    let stale: Vec<AtomicBool> = (0..n).into_par_iter().map(|_| AtomicBool::new(true)).collect();
    let scratch = || (Vec::new(), Vec::new());
    // Whether every vertex holds one of its most frequent labels; the stale ones that
    // do are looked at and no longer stale.
    let settled = || {
        (0..n as u32)
            .into_par_iter()
            .filter(|&u| stale[u as usize].load(Relaxed))
            .map_init(scratch, |(s, best), u| {
                most_frequent(out.neighbors(u), &labels, s, best);
                let holds = best.is_empty() || best.binary_search(&labels[u as usize].load(Relaxed)).is_ok();
                if holds {
                    stale[u as usize].store(false, Relaxed);
                }
                holds
            })
            .all(|holds| holds)
    };
    progress.start("lpa: sweeps", 0);
    let mut sweeps = 0;
    while !settled() {
        if sweeps == MAX_SWEEPS {
            return Err(Error::Unsupported(format!("lpa did not settle in {MAX_SWEEPS} sweeps")));
        }
        for class in &classes {
            // A colour's vertices are not neighbours: none marks another of them stale.
            class.par_iter().filter(|&&u| stale[u as usize].load(Relaxed)).for_each_init(scratch, |(s, best), &u| {
                stale[u as usize].store(false, Relaxed);
                most_frequent(out.neighbors(u), &labels, s, best);
                let own = labels[u as usize].load(Relaxed);
                let new = match best.as_slice() {
                    [] => own,
                    [one] => *one,
                    tied if tied.binary_search(&own).is_ok() => own,
                    tied => tied[tied.len() - 1],
                };
                if new != own {
                    labels[u as usize].store(new, Relaxed);
                    neighbours(out.neighbors(u)).for_each(|v| stale[v as usize].store(true, Relaxed));
                }
            });
        }
        sweeps += 1;
        progress.advance(1);
    }
    let labels: Vec<u32> = labels.into_iter().map(AtomicU32::into_inner).collect();
    Ok(crate::renumber::smallest_members(&labels))
}

/// The reference: networkx's loop, sequential, on neighbour sets built from the
/// out-lists alone, with its own greedy colouring.
pub fn reference(g: &Graph) -> Vec<u32> {
    let n = g.num_vertices();
    let mut adj: Vec<Vec<u32>> = vec![Vec::new(); n];
    for u in 0..n as u32 {
        adj[u as usize] = g.out_edges().neighbors(u).to_vec();
        adj[u as usize].dedup();
    }
    let deg = |u: usize| adj[u].iter().map(|&v| if v as usize == u { 2 } else { 1 }).sum::<usize>();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&u| std::cmp::Reverse(deg(u)));
    let mut colour: Vec<Option<usize>> = vec![None; n];
    for &u in &order {
        let taken: std::collections::HashSet<usize> = adj[u].iter().filter_map(|&v| colour[v as usize]).collect();
        colour[u] = (0..).find(|c| !taken.contains(c));
    }
    let colours = colour.iter().flatten().max().map_or(0, |c| c + 1);
    let mut label: Vec<u32> = (0..n as u32).collect();
    let high = |label: &[u32], u: usize| -> Vec<u32> {
        let mut count = std::collections::BTreeMap::new();
        adj[u].iter().for_each(|&v| *count.entry(label[v as usize]).or_insert(0) += 1);
        let top = count.values().copied().max().unwrap_or(0);
        count.into_iter().filter(|&(_, c)| c == top).map(|(l, _)| l).collect()
    };
    let complete = |label: &[u32]| (0..n).all(|u| adj[u].is_empty() || high(label, u).contains(&label[u]));
    let mut sweeps = 0;
    while !complete(&label) && sweeps < MAX_SWEEPS {
        for c in 0..colours {
            for u in (0..n).filter(|&u| colour[u] == Some(c)) {
                let best = high(&label, u);
                if best.len() == 1 {
                    label[u] = best[0];
                } else if !best.is_empty() && !best.contains(&label[u]) {
                    label[u] = *best.iter().max().expect("not empty");
                }
            }
        }
        sweeps += 1;
    }
    crate::renumber::smallest_members(&label)
}

/// Checks communities against [`reference`], vertex for vertex.
pub fn verify(g: &Graph, labels: &[u32]) -> Result<()> {
    crate::first_mismatch(&reference(g), labels, |a, b| a == b)
}
