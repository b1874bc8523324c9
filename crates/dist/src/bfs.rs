//! Distributed BFS, direction-optimizing across ranks (Beamer et al., SC 2012; the
//! 1D-partitioned form of Buluç and Madduri, "Parallel Breadth-First Search on
//! Distributed Memory Systems", SC 2011). Each level a rank visits only its own
//! vertices: top-down from the frontier (its own and the ghosts the halo delivered)
//! along [`PushRows`], or bottom-up, each unvisited vertex scanning its in-edges for
//! a parent at the previous depth (the halo keeps ghosts' depths current, so the
//! global frontier needs no all-gathered bitmap). New vertices go to their readers;
//! one all-reduce of the frontier's size and out-edges picks the next direction.

use chatty_algo::bfs::UNREACHED;
use chatty_algo::frontier::Bitmap;
use chatty_algo::Direction;
use rayon::prelude::*;

use crate::atomic::as_atomic_u32;
use crate::comm::Comm;
use crate::graph::LocalGraph;
use crate::halo::Halo;
use crate::push::PushRows;
use crate::DistError;
use std::sync::atomic::Ordering::Relaxed;

/// Depths from `source` (valid for the owned vertices) and the number of levels.
pub fn bfs(
    g: &LocalGraph,
    comm: &Comm,
    halo: &Halo,
    push: &PushRows,
    source: u32,
    direction: Direction,
) -> Result<(Vec<u32>, u64), DistError> {
    let mut depth: Vec<u32> = (0..g.n).into_par_iter().map(|_| UNREACHED).collect();
    depth[source as usize] = 0;
    let mut frontier = vec![source];
    let mut switch = Switch::new(g, direction, source);
    let mut level = 0u32;
    while switch.size > 0 {
        level += 1;
        let next = discover(g, push, &mut depth, &frontier, level, switch.pull());
        switch.count(comm, g, &next);
        let parcels = halo.pack(comm, &next, |v| depth[v as usize]);
        let cells = as_atomic_u32(&mut depth);
        let ghosts = halo.deliver(comm, parcels, |v, d: u32| d != UNREACHED && cells[v as usize].swap(d, Relaxed) == UNREACHED)?;
        frontier = next;
        frontier.extend(ghosts);
    }
    Ok((depth, level as u64 - 1))
}

/// Beamer's direction switch on global counts: top-down until the frontier's
/// out-edges exceed m/15, bottom-up while it holds more than n/18 vertices.
pub(crate) struct Switch {
    direction: Direction,
    pulling: bool,
    /// The frontier's vertices and out-edges over all ranks.
    pub size: u64,
    edges: u64,
    n: u64,
    m: u64,
}

impl Switch {
    pub fn new(g: &LocalGraph, direction: Direction, source: u32) -> Switch {
        Switch { direction, pulling: false, size: 1, edges: g.out_degree(source), n: g.n as u64, m: g.m }
    }

    /// Whether the next level pulls (bottom-up).
    pub fn pull(&mut self) -> bool {
        self.pulling = match self.direction {
            Direction::Push => false,
            Direction::Pull => true,
            Direction::Auto if self.pulling => self.size > self.n / chatty_algo::bfs::BEAMER_BETA,
            Direction::Auto => self.edges > self.m / chatty_algo::bfs::BEAMER_ALPHA,
        };
        self.pulling
    }

    /// Sums the new frontier over ranks (collective).
    pub fn count(&mut self, comm: &Comm, g: &LocalGraph, next: &[u32]) {
        let [size, edges] = comm.sum_u64([next.len() as u64, next.par_iter().with_min_len(4096).map(|&v| g.out_degree(v)).sum()]);
        (self.size, self.edges) = (size, edges);
    }
}

/// The owned vertices first reached at `level`, their depth set: top-down from
/// `frontier` (owned and ghost vertices at `level - 1`) along `push`, or bottom-up.
pub(crate) fn discover(g: &LocalGraph, push: &PushRows, depth: &mut [u32], frontier: &[u32], level: u32, pull: bool) -> Vec<u32> {
    if pull {
        // The frontier as a bitmap: 32 times fewer bytes to probe at random than depths.
        let parents = Bitmap::new(g.n);
        frontier.par_iter().for_each(|&u| parents.set(u as usize));
        let inc = g.inc();
        let found: Vec<u32> = g
            .own()
            .into_par_iter()
            .filter(|&v| depth[v as usize] == UNREACHED && inc.neighbors(v).iter().any(|&u| parents.get(u as usize)))
            .collect();
        let cells = as_atomic_u32(depth);
        found.par_iter().for_each(|&v| cells[v as usize].store(level, Relaxed));
        return found;
    }
    let cells = as_atomic_u32(depth);
    let visit = |chunk: &[u32]| {
        let mut local = Vec::new();
        for &u in chunk {
            for e in push.row(u) {
                let v = push.target(e);
                if cells[v as usize].load(Relaxed) == UNREACHED
                    && cells[v as usize].compare_exchange(UNREACHED, level, Relaxed, Relaxed).is_ok()
                {
                    local.push(v);
                }
            }
        }
        local
    };
    if frontier.len() < 4096 {
        visit(frontier)
    } else {
        frontier.par_chunks(64).flat_map_iter(visit).collect()
    }
}
