//! Distributed WCC: each rank first joins its local subgraph (its own vertices, its
//! ghosts, every edge it holds, both directions) with Afforest's lock-free hooking
//! and compression ([`chatty_algo::wcc::link`]; on undirected graphs with its
//! sampling too, Sutton et al., IPDPS 2018); then rounds carry component minima
//! across ranks: a local component adopts the smallest label any member has seen,
//! owned members tell their readers and ghost members tell their owners, until no
//! label changes anywhere. Rounds follow how often a component crosses ranks, not
//! its diameter (Shiloach–Vishkin's hooking and shortcutting within a rank; across
//! ranks, the min-label exchange of distributed union-find, e.g. Iverson et al.,
//! "Evaluation of Connected-Component Labeling Algorithms for Distributed-Memory
//! Systems", Parallel Computing 2015).

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use chatty_algo::wcc::{compress, link, most_frequent, SAMPLE_ROUNDS};
use rayon::prelude::*;

use crate::atomic::as_atomic_u32;
use crate::comm::Comm;
use crate::graph::LocalGraph;
use crate::halo::Halo;
use crate::push::PushRows;
use crate::DistError;

/// Labels (the smallest id of each component; valid for the owned vertices) and
/// rounds. `push` (undirected graphs) lets the local join sample as Afforest does.
pub fn wcc(g: &LocalGraph, comm: &Comm, halo: &Halo, push: Option<&PushRows>) -> Result<(Vec<u32>, u64), DistError> {
    let own = g.own();
    let ghosts: Vec<u32> = halo.ghosts().collect();
    let comp: Vec<AtomicU32> = (0..g.n as u32).into_par_iter().map(AtomicU32::new).collect();
    join_locally(g, &ghosts, push, &comp);
    compress(&comp);
    let root: Vec<u32> = comp.into_iter().map(AtomicU32::into_inner).collect();
    let members = Members::new(&root, own.clone().chain(ghosts.iter().copied()));
    // The smallest label a local component has seen lives at its root (`best`); a
    // vertex's `label` follows it, and a vertex whose label drops is sent on. After
    // the first round only the members of components whose minimum dropped are
    // visited (road-NE on 2 ranks: 24 rounds, each a scan of every local vertex
    // before).
    let mut best: Vec<u32> = root.clone();
    let mut label: Vec<u32> = root.clone();
    let mut lowered: Vec<u32> = Vec::new();
    let mut rounds = 0;
    loop {
        rounds += 1;
        // Owned members to their readers, ghost members to their owners.
        let (owned_changed, ghost_changed): (Vec<u32>, Vec<u32>) = if rounds == 1 {
            (own.clone().collect(), ghosts.clone())
        } else {
            let changed: Vec<u32> = lowered.par_iter().flat_map_iter(|&r| members.of(r).iter().copied()).collect();
            let labels = as_atomic_u32(&mut label);
            changed.par_iter().for_each(|&v| labels[v as usize].store(best[root[v as usize] as usize], Relaxed));
            changed.into_par_iter().partition(|v| own.contains(v))
        };
        let [moved] = comm.sum_u64([(owned_changed.len() + ghost_changed.len()) as u64]);
        if moved == 0 {
            break;
        }
        let to_readers = halo.pack(comm, &owned_changed, |v| label[v as usize]);
        let to_owners = halo.pack_to_owners(comm, &g.ranges, &ghost_changed, |v| label[v as usize]);
        // Members of one component arrive at once: the minimum is taken atomically.
        let cells = as_atomic_u32(&mut best);
        let lower = |v: u32, l: u32| cells[root[v as usize] as usize].fetch_min(l, Relaxed) > l;
        let mut dropped = halo.deliver(comm, to_readers, lower)?;
        dropped.extend(halo.deliver(comm, to_owners, lower)?);
        lowered = dropped.into_iter().map(|v| root[v as usize]).collect();
        lowered.par_sort_unstable();
        lowered.dedup();
    }
    Ok((label, rounds))
}

/// Joins the local subgraph's components in `comp`: Afforest's sampling then the rows
/// outside the giant component with `push` (undirected), every edge without.
fn join_locally(g: &LocalGraph, ghosts: &[u32], push: Option<&PushRows>, comp: &[AtomicU32]) {
    let own = g.own();
    match push {
        Some(push) => {
            // Afforest on the local subgraph: an edge to a ghost is stored only in the
            // owned vertex's row and in the ghost's push row, so vertices outside the
            // giant component link their rows, ghosts outside it their push rows.
            // Ghosts sample their push rows too, so that most of them join the giant
            // component and their rows are skipped below.
            for r in 0..SAMPLE_ROUNDS {
                own.clone().into_par_iter().with_min_len(1024).for_each(|v| {
                    if let Some(&u) = g.out.neighbors(v).get(r) {
                        link(u, v, comp);
                    }
                });
                ghosts.par_iter().with_min_len(1024).for_each(|&u| {
                    if let Some(e) = push.row(u).nth(r) {
                        link(u, push.target(e), comp);
                    }
                });
                compress(comp);
            }
            let giant = most_frequent(comp, own.clone());
            own.clone().into_par_iter().with_min_len(256).for_each(|v| {
                if comp[v as usize].load(Relaxed) != giant {
                    for &u in g.out.neighbors(v).iter().skip(SAMPLE_ROUNDS) {
                        link(u, v, comp);
                    }
                }
            });
            ghosts.par_iter().for_each(|&u| {
                if comp[u as usize].load(Relaxed) != giant {
                    for e in push.row(u).skip(SAMPLE_ROUNDS) {
                        link(u, push.target(e), comp);
                    }
                }
            });
        }
        None => own.clone().into_par_iter().for_each(|v| {
            for &u in g.out.neighbors(v).iter().chain(if g.directed { g.inc().neighbors(v) } else { &[] }) {
                link(u, v, comp);
            }
        }),
    }
}

/// The local vertices of each component, grouped by root (a counting sort, once).
struct Members {
    offsets: Vec<u32>,
    vertices: Vec<u32>,
}

impl Members {
    fn new(root: &[u32], vertices: impl Iterator<Item = u32> + Clone) -> Members {
        let mut offsets = vec![0u32; root.len() + 1];
        for v in vertices.clone() {
            offsets[root[v as usize] as usize + 1] += 1;
        }
        for i in 1..offsets.len() {
            offsets[i] += offsets[i - 1];
        }
        let mut next = offsets.clone();
        let mut grouped = vec![0u32; offsets[root.len()] as usize];
        for v in vertices {
            let slot = &mut next[root[v as usize] as usize];
            grouped[*slot as usize] = v;
            *slot += 1;
        }
        Members { offsets, vertices: grouped }
    }

    fn of(&self, root: u32) -> &[u32] {
        &self.vertices[self.offsets[root as usize] as usize..self.offsets[root as usize + 1] as usize]
    }
}
