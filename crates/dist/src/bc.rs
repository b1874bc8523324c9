//! Distributed Brandes (Brandes, "A faster algorithm for betweenness centrality",
//! J. Math. Sociology 2001; level-synchronous and distributed as in Buluç and
//! Gilbert's CombBLAS BC and Edmonds et al., "A space-efficient parallel algorithm
//! for computing betweenness centrality in distributed memory", HiPC 2010), one
//! source at a time. Forward: the distributed BFS's levels, each new vertex summing
//! its parents' path counts over its in-edges, depth and count sent to readers.
//! Backward, deepest level first: each owned vertex sums its successors'
//! dependencies over its out-edges, then sends its own to the ranks that hold it as
//! an out-edge target (the out-halo; for undirected graphs the same halo).

use chatty_algo::bfs::UNREACHED;
use chatty_algo::Direction;
use chatty_graph::Progress;
use rayon::prelude::*;

use std::sync::atomic::Ordering::Relaxed;

use crate::atomic::{as_atomic_f64, as_atomic_u32};
use crate::bfs::{discover, Switch};
use crate::comm::Comm;
use crate::graph::LocalGraph;
use crate::halo::Halo;
use crate::push::PushRows;
use crate::DistError;

/// The halos BC exchanges through: readers along in-edges (forward) and along
/// out-edges (backward; `None` when they are the same, undirected graphs).
pub struct BcHalos<'a> {
    /// Readers of in-edge sources.
    pub forward: &'a Halo,
    /// Readers of out-edge targets, for directed graphs.
    pub backward: Option<&'a Halo>,
}

/// Betweenness of the owned vertices (others 0), summed over `sources`.
pub fn bc(
    g: &LocalGraph,
    comm: &Comm,
    halos: BcHalos,
    push: &PushRows,
    sources: &[u32],
    progress: &dyn Progress,
) -> Result<Vec<f64>, DistError> {
    let own = g.own();
    let mut score = vec![0.0; g.n];
    let mut depth = vec![UNREACHED; g.n];
    let mut sigma = vec![0.0f64; g.n];
    let mut delta = vec![0.0f64; g.n];
    for &s in sources {
        progress.advance(1);
        depth.par_iter_mut().for_each(|d| *d = UNREACHED);
        sigma.par_iter_mut().for_each(|x| *x = 0.0);
        delta.par_iter_mut().for_each(|x| *x = 0.0);
        (depth[s as usize], sigma[s as usize]) = (0, 1.0);
        let mut levels: Vec<Vec<u32>> = vec![if own.contains(&s) { vec![s] } else { Vec::new() }];
        let mut frontier = vec![s];
        let mut switch = Switch::new(g, Direction::Auto, s);
        while switch.size > 0 {
            let level = levels.len() as u32;
            let next = discover(g, push, &mut depth, &frontier, level, switch.pull());
            let inc = g.inc();
            let counts: Vec<f64> = next
                .par_iter()
                .with_min_len(1024)
                .map(|&v| inc.neighbors(v).iter().filter(|&&u| depth[u as usize] == level - 1).map(|&u| sigma[u as usize]).sum())
                .collect();
            for (&v, c) in next.iter().zip(counts) {
                sigma[v as usize] = c;
            }
            switch.count(comm, g, &next);
            let ghosts = share_paths(halos.forward, comm, &next, &mut sigma, &mut depth, Some(level))?;
            frontier = next.clone();
            frontier.extend(ghosts);
            levels.push(next);
        }
        let backward = halos.backward.unwrap_or(halos.forward);
        if let Some(out_halo) = halos.backward {
            share_paths(out_halo, comm, &levels.concat(), &mut sigma, &mut depth, None)?;
        }
        for (level, vertices) in levels.iter().enumerate().skip(1).rev() {
            let successor = level as u32 + 1;
            let dependency: Vec<f64> = vertices
                .par_iter()
                .with_min_len(1024)
                .map(|&v| {
                    g.out
                        .neighbors(v)
                        .iter()
                        .filter(|&&w| depth[w as usize] == successor)
                        .map(|&w| sigma[v as usize] / sigma[w as usize] * (1.0 + delta[w as usize]))
                        .sum()
                })
                .collect();
            for (&v, d) in vertices.iter().zip(dependency) {
                let d = chatty_algo::bc::dependency(sigma[v as usize], d);
                delta[v as usize] = d;
                score[v as usize] += d;
            }
            let parcels = backward.pack(comm, vertices, |v| delta[v as usize]);
            let dependencies = as_atomic_f64(&mut delta);
            backward.deliver(comm, parcels, |v, d: f64| {
                dependencies[v as usize].store(d.to_bits(), Relaxed);
                false
            })?;
        }
    }
    Ok(score)
}

/// Sends the path counts and depths of `vertices` to the ranks that read them and
/// stores those that arrive; returns the vertices that arrived at depth `level`.
fn share_paths(
    halo: &Halo,
    comm: &Comm,
    vertices: &[u32],
    sigma: &mut [f64],
    depth: &mut [u32],
    level: Option<u32>,
) -> Result<Vec<u32>, DistError> {
    let parcels = halo.pack(comm, vertices, |v| [sigma[v as usize].to_bits(), depth[v as usize] as u64]);
    let (paths, depths) = (as_atomic_f64(sigma), as_atomic_u32(depth));
    halo.deliver(comm, parcels, |v, [x, d]: [u64; 2]| {
        paths[v as usize].store(x, Relaxed);
        depths[v as usize].store(d as u32, Relaxed);
        Some(d as u32) == level
    })
}
