//! Kernel: triangle counting (TC), and the local clustering coefficient built on it.
//! Returns, for every vertex, the triangles it lies on (networkx's `triangles`); the
//! graph's total is a third of their sum.
//!
//! The triangles are those of the undirected simple graph beneath the input (see
//! [`crate::simple`]): a directed input counts as its symmetrised graph, as GAPBS
//! counts its symmetrised inputs, and parallel edges and self-loops add none.
//!
//! Vertices are renumbered by rank, a rank being `(degree, id)`, and each edge is
//! oriented from the lower to the higher rank: a triangle is then found once, from
//! its lowest vertex `u`, as a vertex both in `u`'s oriented list after `v` and in
//! `v`'s, for an oriented edge `u → v`. No oriented list holds more than `√(2m)`
//! vertices, so hubs never intersect their whole lists (GAPBS relabels by degree
//! where its heuristic says it pays; cnr-2000, which it leaves alone, took it 3.2 s at
//! 16 threads, and 0.10 s here). Lists sorted by rank make each intersection one merge
//! over the part of `u`'s list above `v`.
//!
//! Each triangle credits its three vertices: `u` in the task's own sum, `v` once per
//! edge, `w` (the highest, most often a hub) in a per-thread array for the top ranks,
//! added up at the end, so that the hubs' counters are not one cache line that
//! every thread writes (kron22 has 2.1 billion triangles).
//!
//! [1] Thomas Schank, Dorothea Wagner. "Finding, Counting and Listing All Triangles
//!     in Large Graphs, an Experimental Study." WEA 2005 (the ordered algorithm).
//! [2] Julian Shun, Kanat Tangwongsan. "Multicore Triangle Computations Without
//!     Tuning." ICDE 2015 (the parallel ranking by degree).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

use rayon::prelude::*;

use chatty_graph::{Graph, Progress};

use crate::simple::{each_undirected, need_in_edges, reference_lists};
use crate::{Error, Result};

/// Vertices per task of the builds and per progress report.
const CHUNK: usize = 4096;

/// Vertices per counting task.
const TASK: usize = 64;

/// The highest ranks whose triangles each thread counts in its own array.
const HOT: usize = 1 << 14;

/// The undirected simple graph renumbered by rank, its edges each oriented upwards,
/// and every vertex's degree in that graph.
struct Oriented {
    /// `rank[v]`: the new id of vertex `v`.
    rank: Vec<u32>,
    offsets: Vec<u64>,
    /// New ids, each list ascending.
    targets: Vec<u32>,
    degree: Vec<u32>,
}

impl Oriented {
    fn build(g: &Graph) -> Oriented {
        let n = g.num_vertices();
        let degree: Vec<u32> = (0..n as u32)
            .into_par_iter()
            .map(|u| {
                let mut d = 0;
                each_undirected(g, u, |_| d += 1);
                d
            })
            .collect();
        let mut by_rank: Vec<u32> = (0..n as u32).collect();
        by_rank.par_sort_unstable_by_key(|&v| (degree[v as usize], v));
        let mut rank = vec![0u32; n];
        for (r, &v) in by_rank.iter().enumerate() {
            rank[v as usize] = r as u32;
        }
        let counts: Vec<u64> = by_rank
            .par_iter()
            .map(|&u| {
                let mut c = 0;
                each_undirected(g, u, |v| c += (rank[v as usize] > rank[u as usize]) as u64);
                c
            })
            .collect();
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0u64);
        for c in &counts {
            offsets.push(offsets.last().unwrap() + c);
        }
        let mut targets = vec![0u32; offsets[n] as usize];
        // One mutable piece of `targets` per chunk of new ids, filled in parallel.
        let mut pieces = Vec::with_capacity(n.div_ceil(CHUNK));
        let mut rest = &mut targets[..];
        for first in (0..n).step_by(CHUNK) {
            let last = (first + CHUNK).min(n);
            let (piece, tail) = rest.split_at_mut((offsets[last] - offsets[first]) as usize);
            pieces.push((first, piece));
            rest = tail;
        }
        pieces.into_par_iter().for_each(|(first, piece)| {
            let mut at = 0;
            for (x, &u) in by_rank[first..].iter().take(CHUNK).enumerate() {
                let start = at;
                each_undirected(g, u, |v| {
                    if rank[v as usize] > (first + x) as u32 {
                        piece[at] = rank[v as usize];
                        at += 1;
                    }
                });
                piece[start..at].sort_unstable();
            }
        });
        Oriented { rank, offsets, targets, degree }
    }

    fn list(&self, x: u32) -> &[u32] {
        &self.targets[self.offsets[x as usize] as usize..self.offsets[x as usize + 1] as usize]
    }
}

/// Calls `f` on each vertex in both sorted lists.
#[inline]
fn intersect(a: &[u32], b: &[u32], mut f: impl FnMut(u32)) {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                f(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
}

/// The triangles on each vertex, and each vertex's degree in the undirected simple
/// graph (what [`clustering`] divides by).
pub fn triangles(g: &Graph, progress: &dyn Progress) -> Result<(Vec<u64>, Vec<u32>)> {
    need_in_edges(g, "tc")?;
    let n = g.num_vertices();
    let o = Oriented::build(g);
    let count: Vec<AtomicU64> = (0..n).into_par_iter().map(|_| AtomicU64::new(0)).collect();
    let hot_start = n.saturating_sub(HOT) as u32;
    // One array of the top ranks' counts per pool thread, locked by its thread for a
    // task at a time (tasks do not nest: nothing in one waits on another).
    let threads = rayon::current_num_threads();
    let hot: Vec<Mutex<Vec<u64>>> = (0..threads).map(|_| Mutex::new(vec![0u64; n - hot_start as usize])).collect();
    progress.start("tc: vertices", n as u64);
    // Tasks of 64 vertices, as GAPBS's dynamic schedule: the top ranks of a power-law
    // graph are a dense core whose few thousand vertices hold most of the work.
    (0..n).into_par_iter().with_max_len(TASK).for_each_init(
        || hot[rayon::current_thread_index().unwrap_or(0) % threads].lock().unwrap_or_else(|e| e.into_inner()),
        |hot, x| {
            let mine = o.list(x as u32);
            let mut on_x = 0;
            for (i, &y) in mine.iter().enumerate() {
                let mut on_xy = 0;
                intersect(&mine[i + 1..], o.list(y), |w| {
                    on_xy += 1;
                    match w.checked_sub(hot_start) {
                        Some(h) => hot[h as usize] += 1,
                        None => _ = count[w as usize].fetch_add(1, Relaxed),
                    }
                });
                if on_xy > 0 {
                    count[y as usize].fetch_add(on_xy, Relaxed);
                    on_x += on_xy;
                }
            }
            if on_x > 0 {
                count[x].fetch_add(on_x, Relaxed);
            }
            if x % CHUNK == 0 {
                progress.advance(CHUNK.min(n - x) as u64);
            }
        },
    );
    for hot in hot {
        let hot = hot.into_inner().unwrap_or_else(|e| e.into_inner());
        hot.iter().enumerate().for_each(|(h, &t)| _ = count[hot_start as usize + h].fetch_add(t, Relaxed));
    }
    let t = (0..n).into_par_iter().map(|v| count[o.rank[v] as usize].load(Relaxed)).collect();
    Ok((t, o.degree))
}

/// The local clustering coefficient of each vertex of an undirected graph
/// (networkx's `clustering`): its triangles over the pairs of its neighbours, 0 where
/// it lies on none.
pub fn clustering(g: &Graph, progress: &dyn Progress) -> Result<Vec<f64>> {
    clustering_defined(g.is_directed())?;
    let (t, degree) = triangles(g, progress)?;
    Ok(coefficients(&t, |v| degree[v] as u64))
}

/// Refuses clustering on a directed graph, on every engine.
pub fn clustering_defined(directed: bool) -> Result<()> {
    if directed {
        let problem = "clustering is defined here for undirected graphs; this one is directed (networkx's directed \
                       clustering counts each triangle's edge directions, which chatty does not); symmetrise it with \
                       `chatty convert --symmetrize` for the undirected coefficient";
        return Err(Error::Unsupported(problem.into()));
    }
    Ok(())
}

/// `2t / (d (d - 1))` per vertex, 0 where `t` is 0, as networkx divides (exact
/// integers, one correctly rounded division): `t` a vertex's triangles, `d` its
/// degree in the simple graph.
pub fn coefficients(t: &[u64], degree: impl Fn(usize) -> u64 + Sync) -> Vec<f64> {
    (0..t.len())
        .into_par_iter()
        .map(|v| match t[v] {
            0 => 0.0,
            t => (2 * t) as f64 / (degree(v) * (degree(v) - 1)) as f64,
        })
        .collect()
}

/// The reference, sequential, on neighbour lists built from the out-lists alone: each
/// triangle found once from its lowest-ranked vertex `u` (rank by degree, then id, as
/// the kernel's; without it the hubs of cnr-2000 took minutes), as a neighbour `w` of
/// a higher neighbour `v` that is marked among `u`'s higher ones. Marks where the
/// kernel merges sorted lists.
pub fn reference(g: &Graph) -> Vec<u64> {
    let lists = reference_lists(g);
    let rank = |v: u32| (lists[v as usize].len(), v);
    let higher: Vec<Vec<u32>> =
        (0..lists.len() as u32).map(|u| lists[u as usize].iter().copied().filter(|&v| rank(v) > rank(u)).collect()).collect();
    let (mut count, mut mark) = (vec![0u64; lists.len()], vec![false; lists.len()]);
    for u in 0..lists.len() {
        higher[u].iter().for_each(|&v| mark[v as usize] = true);
        for &v in &higher[u] {
            for &w in higher[v as usize].iter().filter(|&&w| mark[w as usize]) {
                count[u] += 1;
                count[v as usize] += 1;
                count[w as usize] += 1;
            }
        }
        higher[u].iter().for_each(|&v| mark[v as usize] = false);
    }
    count
}

/// Checks triangle counts against [`reference`].
pub fn verify(g: &Graph, t: &[u64]) -> Result<()> {
    crate::first_mismatch(&reference(g), t, |a, b| a == b)
}

/// Checks clustering coefficients against the reference's triangles and degrees,
/// exactly: both divide the same integers.
pub fn verify_clustering(g: &Graph, c: &[f64]) -> Result<()> {
    let lists = reference_lists(g);
    let want = coefficients(&reference(g), |v| lists[v].len() as u64);
    crate::first_mismatch(&want, c, |a, b| a == b)
}
