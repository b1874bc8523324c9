//! Kernel: weighted BC, networkx's `betweenness_centrality(G, weight='weight')`: the
//! Brandes dependency of every vertex summed over the sources, with shortest paths by
//! weight. Returned unnormalised, as [`crate::bc`]'s.
//!
//! Brandes' algorithm [1] with Dijkstra's search in place of the BFS: from each source
//! a binary-heap Dijkstra settles the vertices in order of distance, counting the
//! shortest paths into each (`sigma`) along the edges that are tight (`d(u) + w = d(v)`
//! in f64, the comparison networkx's search makes, so integer weights and floats held
//! exactly give its ties); the backward sweep then takes the settled vertices farthest
//! first and hands each its tight successors' shares. The sources run in parallel, one
//! per thread at a time, each thread with its own arrays reset only where its last
//! source reached. Edge weights must be positive: a zero-weight edge makes networkx's
//! counts depend on its heap's order, and a negative one has no shortest paths.
//!
//! [1] Ulrik Brandes. "A Faster Algorithm for Betweenness Centrality." Journal of
//!     Mathematical Sociology 25(2), 2001.
//! [2] Ulrik Brandes. "On variants of shortest-path betweenness centrality and their
//!     generic computation." Social Networks 30(2), 2008 (weighted paths).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use rayon::prelude::*;

use chatty_graph::{Graph, Progress};

use crate::{Error, Result};

/// Refuses weights that are not all positive and finite (as [`bc`] needs them).
fn check_weights(g: &Graph) -> Result<()> {
    let out = g.out_edges();
    match (0..out.targets().len()).into_par_iter().map(|e| out.weight_f64(e)).find_any(|w| !(*w > 0.0 && w.is_finite())) {
        Some(w) => Err(Error::Unsupported(format!(
            "weighted bc needs positive, finite edge weights (a shortest path through an edge of weight {w} is \
             not networkx's to count); run it unweighted"
        ))),
        None => Ok(()),
    }
}

/// One thread's arrays for Dijkstra's searches, reset where the last search reached.
struct Search {
    dist: Vec<f64>,
    sigma: Vec<f64>,
    delta: Vec<f64>,
    settled: Vec<u32>,
    heap: BinaryHeap<Reverse<(u64, u32)>>,
}

impl Search {
    fn new(n: usize) -> Search {
        Search { dist: vec![f64::INFINITY; n], sigma: vec![0.0; n], delta: vec![0.0; n], settled: Vec::new(), heap: BinaryHeap::new() }
    }

    /// Dijkstra from `s`: distances, path counts, and the vertices in the order settled.
    /// A non-negative f64's bits order as the number does, so the heap keys on them.
    fn forward(&mut self, g: &Graph, s: u32) {
        let out = g.out_edges();
        self.dist[s as usize] = 0.0;
        self.sigma[s as usize] = 1.0;
        self.heap.push(Reverse((0.0f64.to_bits(), s)));
        while let Some(Reverse((d, u))) = self.heap.pop() {
            let d = f64::from_bits(d);
            if d > self.dist[u as usize] {
                continue;
            }
            self.settled.push(u);
            let su = self.sigma[u as usize];
            for e in out.range(u) {
                let v = out.targets()[e] as usize;
                let through = d + out.weight_f64(e);
                if through < self.dist[v] {
                    self.dist[v] = through;
                    self.sigma[v] = su;
                    self.heap.push(Reverse((through.to_bits(), v as u32)));
                } else if through == self.dist[v] {
                    self.sigma[v] += su;
                }
            }
        }
    }

    /// The backward sweep, farthest first: adds each settled vertex's dependency on `s`
    /// to `score`, then clears what the search reached.
    fn backward(&mut self, g: &Graph, s: u32, score: &mut [f64]) {
        let out = g.out_edges();
        for &u in self.settled.iter().rev() {
            let du = self.dist[u as usize];
            let shares: f64 = out
                .range(u)
                .filter(|&e| du + out.weight_f64(e) == self.dist[out.targets()[e] as usize])
                .map(|e| {
                    let v = out.targets()[e] as usize;
                    (1.0 + self.delta[v]) / self.sigma[v]
                })
                .sum();
            let delta = crate::bc::dependency(self.sigma[u as usize], self.sigma[u as usize] * shares);
            self.delta[u as usize] = delta;
            if u != s {
                score[u as usize] += delta;
            }
        }
        for &u in &self.settled {
            (self.dist[u as usize], self.sigma[u as usize], self.delta[u as usize]) = (f64::INFINITY, 0.0, 0.0);
        }
        self.settled.clear();
    }
}

/// Weighted BC from `sources` (see the module's header).
pub fn bc(g: &Graph, sources: &[u32], progress: &dyn Progress) -> Result<Vec<f64>> {
    check_weights(g)?;
    let n = g.num_vertices();
    progress.start("bc (weighted): sources", sources.len() as u64);
    let next = AtomicUsize::new(0);
    let threads = rayon::current_num_threads().min(sources.len()).max(1);
    let partials: Vec<Vec<f64>> = (0..threads)
        .into_par_iter()
        .map(|_| {
            let (mut search, mut score) = (Search::new(n), vec![0.0; n]);
            while let Some(&s) = sources.get(next.fetch_add(1, Relaxed)) {
                search.forward(g, s);
                search.backward(g, s, &mut score);
                progress.advance(1);
            }
            score
        })
        .collect();
    Ok((0..n).into_par_iter().map(|v| partials.iter().map(|p| p[v]).sum()).collect())
}

/// The reference: networkx's `_single_source_dijkstra_path_basic` and
/// `_accumulate_basic`, sequential, with predecessor lists and a heap ordered by
/// (distance, insertion).
pub fn reference(g: &Graph, sources: &[u32]) -> Vec<f64> {
    let n = g.num_vertices();
    let out = g.out_edges();
    let mut score = vec![0.0; n];
    for &s in sources {
        let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut sigma = vec![0.0; n];
        let mut seen: Vec<Option<f64>> = vec![None; n];
        let mut done = vec![false; n];
        let mut order = Vec::new();
        let mut heap = BinaryHeap::new();
        let mut count = 0u64;
        sigma[s as usize] = 1.0;
        seen[s as usize] = Some(0.0);
        heap.push(Reverse((0.0f64.to_bits(), 0u64, s, s)));
        while let Some(Reverse((d, _, pred, v))) = heap.pop() {
            if done[v as usize] {
                continue;
            }
            sigma[v as usize] += sigma[pred as usize];
            done[v as usize] = true;
            order.push(v);
            let d = f64::from_bits(d);
            for e in out.range(v) {
                let w = out.targets()[e];
                let through = d + out.weight_f64(e);
                if !done[w as usize] && seen[w as usize].is_none_or(|x| through < x) {
                    count += 1;
                    seen[w as usize] = Some(through);
                    heap.push(Reverse((through.to_bits(), count, v, w)));
                    sigma[w as usize] = 0.0;
                    preds[w as usize] = vec![v];
                } else if seen[w as usize] == Some(through) {
                    sigma[w as usize] += sigma[v as usize];
                    preds[w as usize].push(v);
                }
            }
        }
        let mut delta = vec![0.0; n];
        for &w in order.iter().rev() {
            let coefficient = (1.0 + delta[w as usize]) / sigma[w as usize];
            for &v in &preds[w as usize] {
                delta[v as usize] += sigma[v as usize] * coefficient;
            }
            if w != s {
                score[w as usize] += delta[w as usize];
            }
        }
    }
    score
}

/// Checks scores against [`reference`] within 1e-9 relative to the largest score.
pub fn verify(g: &Graph, sources: &[u32], got: &[f64]) -> Result<()> {
    crate::close_to_largest(&reference(g, sources), got, 1e-9, 1.0)
}
