//! Kernels: the centralities networkx users ask for, each with its reference and
//! verifier: eigenvector and Katz (power iterations), degree, and closeness.
//!
//! Eigenvector centrality, as networkx's `eigenvector_centrality` defines it:
//! power iteration with `A^T + I` (a vertex's score grows with the scores of the
//! vertices that point at it, and keeps its own, which makes the iteration converge on
//! bipartite graphs too), from scores `1/n`, normalised to unit L2 norm after each
//! step, stopping once the L1 change falls below `n × tolerance` (networkx's rule) or
//! after `max_iters` steps (then the report says it did not converge). Unweighted, as
//! networkx's default. Written over [`EdgeMapGraph::sum_in`], so the CPU and SSD
//! engines share it.
//!
//! Katz centrality, as networkx's `katz_centrality` defines it: from scores 0, each
//! step sets `x = alpha · A^T x + beta` (a vertex collects `alpha` times the scores of
//! the vertices that point at it, plus `beta`), stopping once the L1 change falls below
//! `n × tolerance`; the converged scores are scaled to unit L2 norm unless `normalized`
//! is off. Unweighted, over the same [`EdgeMapGraph::sum_in`].
//!
//! HITS, networkx's `hits` (Kleinberg's hubs and authorities): power iteration on
//! `AᵀA` from authorities `1/n`, each step a hub step `h = A·a` (a vertex gathers
//! what its out-neighbours hold) and an authority step `a = Aᵀ·h` (what its
//! in-neighbours hold), scaled to a largest score of 1, stopping once the L1 change
//! falls below `n × tolerance` (networkx's `_hits_scipy` rule with `tol` per vertex)
//! or after `max_iters` steps; then `h = A·a`, and both scaled to sum 1. Weighted by
//! the edges' weights as networkx's adjacency matrix is where `weighted`.
//! networkx's `hits` finds the same singular vectors by ARPACK instead.
//!
//! Degree centrality, networkx's `degree_centrality` (and `in_`/`out_`): a vertex's
//! degree in the simple graph networkx holds over `n - 1`; a self-loop adds 2 to an
//! undirected degree and 1 to each directed one, as networkx counts it.
//!
//! Closeness centrality, networkx's `closeness_centrality` without distances: from each
//! vertex, a BFS along the edges into it (a directed graph's incoming distances; an
//! undirected graph's either way) reaching `r` vertices at total distance `d` gives
//! `(r - 1) / d`, times `(r - 1) / (n - 1)` with Wasserman and Faust's improvement
//! (`wf_improved`, on), and 0 for a vertex nothing reaches. Exact: a BFS per vertex, in
//! parallel over the vertices; or estimated from a sample of sources (`--sources K`,
//! [`closeness_sampled`]).
//!
//! [1] Phillip Bonacich. "Factoring and weighting approaches to status scores and
//!     clique identification." Journal of Mathematical Sociology 2(1), 1972.
//! [2] Leo Katz. "A new status index derived from sociometric analysis."
//!     Psychometrika 18(1), 1953.
//! [3] Linton C. Freeman. "Centrality in networks: I. Conceptual clarification."
//!     Social Networks 1(3), 1979 (degree and closeness).
//! [4] Stanley Wasserman, Katherine Faust. "Social Network Analysis: Methods and
//!     Applications." Cambridge University Press, 1994 (closeness on disconnected graphs).
//! [5] Jon M. Kleinberg. "Authoritative sources in a hyperlinked environment." Journal
//!     of the ACM 46(5), 1999 (HITS).
//! [6] David Eppstein, Joseph Wang. "Fast approximation of centrality." Journal of
//!     Graph Algorithms and Applications 8(1), 2004 (sampled closeness).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

use rayon::prelude::*;

use chatty_graph::{Graph, Progress};

use chatty_graph::{Adjacency, WeightType};

use crate::edge_map::{sum_along, EdgeMapGraph, SumOptions};
use crate::simple::each_distinct;
use crate::{DegreeKind, Error, KatzParams, PrParams, Result};

/// The scores, the iterations run, and the L1 change of the last one.
pub fn eigenvector<G: EdgeMapGraph + ?Sized>(g: &G, p: PrParams, progress: &dyn Progress) -> Result<(Vec<f64>, u32, f64)> {
    let n = g.num_vertices();
    if n == 0 {
        return Ok((Vec::new(), 0, 0.0));
    }
    let mut x = vec![1.0 / n as f64; n];
    let mut next = vec![0.0; n];
    let stop = p.stop(n);
    let mut change = f64::INFINITY;
    progress.start("eigenvector: iterations", p.max_iters as u64);
    for iteration in 1..=p.max_iters {
        let last = &x;
        let squares: f64 = g.sum_in(
            &mut next,
            SumOptions::default(),
            last,
            |&score, _| score,
            |v, sum, out: &mut f64| {
                *out = last[v as usize] + sum;
                *out * *out
            },
        )?;
        let norm = match squares.sqrt() {
            0.0 => 1.0,
            norm => norm,
        };
        next.par_iter_mut().for_each(|y| *y /= norm);
        change = x.par_iter().zip(&next).map(|(a, b)| (a - b).abs()).sum();
        std::mem::swap(&mut x, &mut next);
        progress.advance(1);
        if change < stop {
            return Ok((x, iteration, change));
        }
    }
    Ok((x, p.max_iters, change))
}

/// The reference: networkx's loop, sequential, over the out-lists.
pub fn eigenvector_reference(g: &Graph, p: PrParams) -> Vec<f64> {
    let n = g.num_vertices();
    let mut x = vec![1.0 / n.max(1) as f64; n];
    for _ in 0..p.max_iters {
        let last = x.clone();
        for u in 0..n as u32 {
            for &v in g.out_edges().neighbors(u) {
                x[v as usize] += last[u as usize];
            }
        }
        let norm = x.iter().map(|a| a * a).sum::<f64>().sqrt();
        let norm = if norm == 0.0 { 1.0 } else { norm };
        x.iter_mut().for_each(|a| *a /= norm);
        if x.iter().zip(&last).map(|(a, b)| (a - b).abs()).sum::<f64>() < p.stop(n) {
            break;
        }
    }
    x
}

/// Checks scores against [`eigenvector_reference`] to 1e-9, relative to the largest.
pub fn verify_eigenvector(g: &Graph, p: PrParams, x: &[f64]) -> Result<()> {
    crate::close_to_largest(&eigenvector_reference(g, p), x, 1e-9, f64::MIN_POSITIVE)
}

/// Katz scores, the iterations run, and the L1 change of the last one (scaled to unit
/// L2 norm only once converged, as networkx does).
pub fn katz<G: EdgeMapGraph + ?Sized>(g: &G, p: PrParams, k: KatzParams, progress: &dyn Progress) -> Result<(Vec<f64>, u32, f64)> {
    let n = g.num_vertices();
    if n == 0 {
        return Ok((Vec::new(), 0, 0.0));
    }
    let mut x = vec![0.0; n];
    let mut next = vec![0.0; n];
    let mut change = f64::INFINITY;
    progress.start("katz: iterations", p.max_iters as u64);
    for iteration in 1..=p.max_iters {
        let last = &x;
        change = g.sum_in(
            &mut next,
            SumOptions::default(),
            last,
            |&score, _| score,
            |v, sum, out: &mut f64| {
                *out = k.alpha * sum + k.beta;
                (*out - last[v as usize]).abs()
            },
        )?;
        std::mem::swap(&mut x, &mut next);
        progress.advance(1);
        if change < p.stop(n) {
            if k.normalized {
                normalise(&mut x);
            }
            return Ok((x, iteration, change));
        }
    }
    Ok((x, p.max_iters, change))
}

/// Scales `x` to unit L2 norm (a zero vector stays).
fn normalise(x: &mut [f64]) {
    let norm = x.par_iter().map(|a| a * a).sum::<f64>().sqrt();
    if norm > 0.0 {
        x.par_iter_mut().for_each(|a| *a /= norm);
    }
}

/// The reference: networkx's loop, sequential, over the out-lists.
pub fn katz_reference(g: &Graph, p: PrParams, k: KatzParams) -> Vec<f64> {
    let n = g.num_vertices();
    let mut x = vec![0.0; n];
    for _ in 0..p.max_iters {
        let last = std::mem::replace(&mut x, vec![0.0; n]);
        for u in 0..n as u32 {
            for &v in g.out_edges().neighbors(u) {
                x[v as usize] += last[u as usize];
            }
        }
        x.iter_mut().for_each(|a| *a = k.alpha * *a + k.beta);
        if x.iter().zip(&last).map(|(a, b)| (a - b).abs()).sum::<f64>() < p.stop(n) {
            if k.normalized {
                normalise(&mut x);
            }
            break;
        }
    }
    x
}

/// Checks scores against [`katz_reference`] to 1e-9, relative to the largest.
pub fn verify_katz(g: &Graph, p: PrParams, k: KatzParams, x: &[f64]) -> Result<()> {
    crate::close_to_largest(&katz_reference(g, p, k), x, 1e-9, f64::MIN_POSITIVE)
}

/// HITS hubs and authorities, the iterations run, and the L1 change of the last one.
pub fn hits(g: &Graph, p: PrParams, weighted: bool, progress: &dyn Progress) -> Result<(Vec<f64>, Vec<f64>, u32, f64)> {
    if g.is_directed() {
        crate::simple::need_in_edges(g, "hits")?;
    }
    let n = g.num_vertices();
    if n == 0 {
        return Ok((Vec::new(), Vec::new(), 0, 0.0));
    }
    let kind = if weighted { g.weight_type() } else { WeightType::None };
    if kind == WeightType::Float && crate::sssp::check_weights(g).is_err() {
        return Err(Error::Unsupported("weighted hits needs non-negative, finite edge weights".into()));
    }
    let (out, into) = (g.out_edges(), g.in_edges());
    let mut a = vec![1.0 / n as f64; n];
    let mut h: Vec<f64> = crate::zeroed_vec(n);
    let mut next: Vec<f64> = crate::zeroed_vec(n);
    let mut change = f64::INFINITY;
    let mut iterations = 0;
    progress.start("hits: iterations", p.max_iters as u64);
    while iterations < p.max_iters {
        iterations += 1;
        gather(out, kind, &mut h, &a);
        gather(into, kind, &mut next, &h);
        let largest = next.par_iter().copied().reduce(|| 0.0, f64::max);
        if largest > 0.0 {
            next.par_iter_mut().for_each(|x| *x /= largest);
        }
        change = a.par_iter().zip(&next).map(|(x, y)| (x - y).abs()).sum();
        std::mem::swap(&mut a, &mut next);
        progress.advance(1);
        if change < p.stop(n) {
            break;
        }
    }
    gather(out, kind, &mut h, &a);
    scale_to_sum_one(&mut h);
    scale_to_sum_one(&mut a);
    Ok((h, a, iterations, change))
}

/// `y[v] = Σ w · x[u]` over `u` in `v`'s list of `adj`, weighted by `kind` (one
/// closure per weight type, so each inner loop knows its conversion).
fn gather(adj: &Adjacency, kind: WeightType, y: &mut [f64], x: &[f64]) {
    // The pass's total is unused: a sum of the sums.
    let store = |_, sum, y: &mut f64| {
        *y = sum;
        sum
    };
    let weighted = SumOptions { weighted: true, fresh: false };
    match kind {
        WeightType::None => _ = sum_along(adj, y, SumOptions::default(), x, |&x, _| x, store),
        WeightType::Int => _ = sum_along(adj, y, weighted, x, |&x, w| WeightType::Int.value(w) * x, store),
        WeightType::Float => _ = sum_along(adj, y, weighted, x, |&x, w| WeightType::Float.value(w) * x, store),
    }
}

/// Scales `x` to sum 1 (a zero vector stays).
fn scale_to_sum_one(x: &mut [f64]) {
    let sum: f64 = x.par_iter().sum();
    if sum > 0.0 {
        x.par_iter_mut().for_each(|a| *a /= sum);
    }
}

/// The reference for [`hits`]: the same iteration, sequential, in push form over the
/// out-lists alone.
pub fn hits_reference(g: &Graph, p: PrParams, weighted: bool) -> (Vec<f64>, Vec<f64>) {
    let n = g.num_vertices();
    let out = g.out_edges();
    let weight = |e: usize| if weighted { out.weight_f64(e) } else { 1.0 };
    let hubs =
        |a: &[f64]| -> Vec<f64> { (0..n as u32).map(|u| out.range(u).map(|e| weight(e) * a[out.targets()[e] as usize]).sum()).collect() };
    let mut a = vec![1.0 / n.max(1) as f64; n];
    for _ in 0..p.max_iters {
        let h = hubs(&a);
        let mut next = vec![0.0; n];
        for u in 0..n as u32 {
            for e in out.range(u) {
                next[out.targets()[e] as usize] += weight(e) * h[u as usize];
            }
        }
        let largest = next.iter().copied().fold(0.0, f64::max);
        if largest > 0.0 {
            next.iter_mut().for_each(|x| *x /= largest);
        }
        let change: f64 = a.iter().zip(&next).map(|(x, y)| (x - y).abs()).sum();
        a = next;
        if change < p.stop(n) {
            break;
        }
    }
    let mut h = hubs(&a);
    for x in [&mut h, &mut a] {
        let sum: f64 = x.iter().sum();
        if sum > 0.0 {
            x.iter_mut().for_each(|v| *v /= sum);
        }
    }
    (h, a)
}

/// Checks hubs and authorities against [`hits_reference`] to 1e-9, relative to the largest.
pub fn verify_hits(g: &Graph, p: PrParams, weighted: bool, hubs: &[f64], authorities: &[f64]) -> Result<()> {
    let (want_h, want_a) = hits_reference(g, p, weighted);
    crate::close_to_largest(&want_h, hubs, 1e-9, f64::MIN_POSITIVE)?;
    crate::close_to_largest(&want_a, authorities, 1e-9, f64::MIN_POSITIVE)
}

/// A vertex's degree as networkx counts it in its simple graph.
fn simple_degree(g: &Graph, kind: DegreeKind, u: u32) -> u64 {
    // Distinct neighbours other than u, and whether u has a self-loop.
    let count = |list: &[u32]| {
        let mut d = 0;
        each_distinct(list, u, |_| d += 1);
        (d, list.binary_search(&u).is_ok() as u64)
    };
    let (out, out_loop) = count(g.out_edges().neighbors(u));
    let all_in = || {
        let (d, self_loop) = count(g.in_edges().neighbors(u));
        d + self_loop
    };
    match (g.is_directed(), kind) {
        (false, _) => out + 2 * out_loop,
        (true, DegreeKind::Out) => out + out_loop,
        (true, DegreeKind::In) => all_in(),
        (true, DegreeKind::Total) => out + out_loop + all_in(),
    }
}

/// Degree centrality: each vertex's degree over `n - 1` (1 on a graph of one vertex).
pub fn degree(g: &Graph, kind: DegreeKind) -> Result<Vec<f64>> {
    if g.is_directed() && kind != DegreeKind::Out {
        crate::simple::need_in_edges(g, "degree")?;
    }
    let n = g.num_vertices();
    if n <= 1 {
        return Ok(vec![1.0; n]);
    }
    let scale = 1.0 / (n - 1) as f64;
    Ok((0..n as u32).into_par_iter().map(|u| simple_degree(g, kind, u) as f64 * scale).collect())
}

/// The reference for [`degree`]: networkx's counts, from the out-lists alone.
pub fn degree_reference(g: &Graph, kind: DegreeKind) -> Vec<f64> {
    let n = g.num_vertices();
    let (mut ins, mut outs) = (vec![std::collections::BTreeSet::new(); n], vec![std::collections::BTreeSet::new(); n]);
    for u in 0..n as u32 {
        for &v in g.out_edges().neighbors(u) {
            outs[u as usize].insert(v);
            ins[v as usize].insert(u);
        }
    }
    (0..n)
        .map(|u| {
            let loops = outs[u].contains(&(u as u32)) as usize;
            let d = match (g.is_directed(), kind) {
                (false, _) => outs[u].len() + loops,
                (true, DegreeKind::Out) => outs[u].len(),
                (true, DegreeKind::In) => ins[u].len(),
                (true, DegreeKind::Total) => outs[u].len() + ins[u].len(),
            };
            if n > 1 {
                d as f64 * (1.0 / (n - 1) as f64)
            } else {
                1.0
            }
        })
        .collect()
}

/// Checks degree centralities against [`degree_reference`], exactly.
pub fn verify_degree(g: &Graph, kind: DegreeKind, x: &[f64]) -> Result<()> {
    crate::first_mismatch(&degree_reference(g, kind), x, |a, b| a == b)
}

/// A BFS from `v` along `adj`, with a thread's `seen` marks (`seen[x] == stamp`:
/// reached in this search) and queue: `visit(x, depth)` for each vertex reached, `v`
/// at depth 0.
fn search(adj: &Adjacency, v: u32, stamp: u32, seen: &mut [u32], queue: &mut Vec<u32>, mut visit: impl FnMut(u32, u64)) {
    seen[v as usize] = stamp;
    queue.clear();
    queue.push(v);
    let (mut head, mut level_end, mut depth) = (0, 1, 0u64);
    while head < queue.len() {
        if head == level_end {
            depth += 1;
            level_end = queue.len();
        }
        let u = queue[head];
        head += 1;
        visit(u, depth);
        for &w in adj.neighbors(u) {
            if seen[w as usize] != stamp {
                seen[w as usize] = stamp;
                queue.push(w);
            }
        }
    }
}

/// Per thread: a search's marks and queue.
fn search_space(n: usize) -> impl Fn() -> (Vec<u32>, Vec<u32>) + Sync + Send {
    move || (vec![u32::MAX; n], Vec::with_capacity(n))
}

/// Closeness centrality of every vertex (see the module's header).
pub fn closeness(g: &Graph, wf_improved: bool, progress: &dyn Progress) -> Result<Vec<f64>> {
    if g.is_directed() {
        crate::simple::need_in_edges(g, "closeness")?;
    }
    let n = g.num_vertices();
    let into = if g.is_directed() { g.in_edges() } else { g.out_edges() };
    progress.start("closeness: searches", n as u64);
    let scores = (0..n as u32)
        .into_par_iter()
        .map_init(search_space(n), |(seen, queue), v| {
            let mut total = 0;
            search(into, v, v, seen, queue, |_, depth| total += depth);
            if v % 4096 == 0 {
                progress.advance(4096.min(n as u64 - v as u64));
            }
            closeness_of(queue.len(), total, n, wf_improved)
        })
        .collect();
    Ok(scores)
}

/// Closeness estimated from the searches out of `pivots` (Eppstein and Wang [6]), the
/// sources drawn among the vertices with out-edges (only they reach others): a vertex
/// that R of the K pivots other than itself reach, at total distance S, gets R / S,
/// times R·E / (K (n − 1)) with `wf_improved`, E being the vertices with out-edges
/// other than itself: the exact value, with R·E / K in place of the vertices that
/// reach it, when the pivots are all E.
pub fn closeness_sampled(g: &Graph, pivots: &[u32], wf_improved: bool, progress: &dyn Progress) -> Vec<f64> {
    let n = g.num_vertices();
    let out = g.out_edges();
    let (total, reached): (Vec<AtomicU64>, Vec<AtomicU32>) = (0..n).into_par_iter().map(|_| Default::default()).unzip();
    progress.start("closeness: sampled searches", pivots.len() as u64);
    pivots.par_iter().enumerate().for_each_init(search_space(n), |(seen, queue), (i, &p)| {
        search(out, p, i as u32, seen, queue, |x, depth| {
            if x != p {
                total[x as usize].fetch_add(depth, Relaxed);
                reached[x as usize].fetch_add(1, Relaxed);
            }
        });
        progress.advance(1);
    });
    // Each vertex's times among the pivots (a listed sample may repeat one).
    let mut times = vec![0usize; n];
    pivots.iter().for_each(|&p| times[p as usize] += 1);
    let with_edges = (0..n as u32).into_par_iter().filter(|&v| out.degree(v) > 0).count();
    (0..n)
        .into_par_iter()
        .map(|v| {
            let k = pivots.len() - times[v];
            let e = with_edges - (out.degree(v as u32) > 0) as usize;
            sampled_closeness_of(reached[v].load(Relaxed) as u64, total[v].load(Relaxed), k, e, n, wf_improved)
        })
        .collect()
}

/// [`closeness_sampled`]'s estimate for a vertex that `r` of `k` pivots reach at total
/// distance `total`, `e` being the vertices the pivots were drawn from.
fn sampled_closeness_of(r: u64, total: u64, k: usize, e: usize, n: usize, wf_improved: bool) -> f64 {
    if total == 0 || n <= 1 || k == 0 {
        return 0.0;
    }
    let c = r as f64 / total as f64;
    if wf_improved {
        c * ((r as f64 * e as f64 / k as f64) / (n as f64 - 1.0))
    } else {
        c
    }
}

/// networkx's closeness from a search that reached `reached` vertices (itself
/// included) at total distance `total`, in its order of operations.
fn closeness_of(reached: usize, total: u64, n: usize, wf_improved: bool) -> f64 {
    if total == 0 || n <= 1 {
        return 0.0;
    }
    let c = (reached as f64 - 1.0) / total as f64;
    if wf_improved {
        c * ((reached as f64 - 1.0) / (n as f64 - 1.0))
    } else {
        c
    }
}

/// The reference for [`closeness`]: a sequential BFS per vertex over the transpose
/// built from the out-lists.
pub fn closeness_reference(g: &Graph, wf_improved: bool) -> Vec<f64> {
    let n = g.num_vertices();
    let mut into: Vec<Vec<u32>> = vec![Vec::new(); n];
    for u in 0..n as u32 {
        for &v in g.out_edges().neighbors(u) {
            match g.is_directed() {
                true => into[v as usize].push(u),
                false => into[u as usize].push(v),
            }
        }
    }
    (0..n)
        .map(|v| {
            let mut dist = vec![u64::MAX; n];
            dist[v] = 0;
            let mut queue = std::collections::VecDeque::from([v]);
            let (mut reached, mut total) = (0, 0);
            while let Some(u) = queue.pop_front() {
                reached += 1;
                total += dist[u];
                for &w in &into[u] {
                    if dist[w as usize] == u64::MAX {
                        dist[w as usize] = dist[u] + 1;
                        queue.push_back(w as usize);
                    }
                }
            }
            closeness_of(reached, total, n, wf_improved)
        })
        .collect()
}

/// The reference for [`closeness_sampled`]: a sequential BFS from each pivot.
pub fn closeness_sampled_reference(g: &Graph, pivots: &[u32], wf_improved: bool) -> Vec<f64> {
    let n = g.num_vertices();
    let out = g.out_edges();
    let (mut total, mut reached) = (vec![0u64; n], vec![0u64; n]);
    for &p in pivots {
        let mut dist = vec![u64::MAX; n];
        dist[p as usize] = 0;
        let mut queue = std::collections::VecDeque::from([p]);
        while let Some(u) = queue.pop_front() {
            if u != p {
                total[u as usize] += dist[u as usize];
                reached[u as usize] += 1;
            }
            for &w in out.neighbors(u) {
                if dist[w as usize] == u64::MAX {
                    dist[w as usize] = dist[u as usize] + 1;
                    queue.push_back(w);
                }
            }
        }
    }
    let with_edges = (0..n as u32).filter(|&v| out.degree(v) > 0).count();
    (0..n)
        .map(|v| {
            let k = pivots.iter().filter(|&&p| p as usize != v).count();
            let e = with_edges - (out.degree(v as u32) > 0) as usize;
            sampled_closeness_of(reached[v], total[v], k, e, n, wf_improved)
        })
        .collect()
}

/// Checks closeness centralities against [`closeness_reference`] (exact) or, with
/// `pivots`, [`closeness_sampled_reference`], exactly.
pub fn verify_closeness(g: &Graph, wf_improved: bool, pivots: Option<&[u32]>, x: &[f64]) -> Result<()> {
    let want = match pivots {
        Some(p) => closeness_sampled_reference(g, p, wf_improved),
        None => closeness_reference(g, wf_improved),
    };
    crate::first_mismatch(&want, x, |a, b| a == b)
}
