//! The one parallel CSR builder: readers, generators and transforms all feed it.
//!
//! An [`EdgeSource`] yields its edges in independent blocks and can yield them twice,
//! so the builder needs no edge list in memory:
//!
//! 1. count degrees;
//! 2. prefix-sum them into offsets;
//! 3. place each edge at its source's cursor;
//! 4. sort each adjacency (and its weights) so the result is deterministic whatever
//!    the thread count, then drop duplicates if asked.
//!
//! Passes 1 and 3 go through `by_source`, which stages edges by source range so that
//! per-vertex counters need no atomics.
//!
//! Generators regenerate their edges for the second pass, which is what lets a scale-26
//! R-MAT graph (a billion edges) be built in a 24 GB machine.

use rayon::prelude::*;

use crate::csr::{Adjacency, Graph, WeightType};
use crate::error::{check_memory, Error, Result};
use crate::progress::Progress;

/// A source of edges, split into blocks that can be visited in parallel, twice.
pub trait EdgeSource: Sync {
    /// Number of vertices; every id yielded is below it.
    fn num_vertices(&self) -> usize;
    /// Number of blocks.
    fn num_blocks(&self) -> usize;
    /// Weight type of the edges (the `w` passed to the callback is the raw 32-bit word).
    fn weight_type(&self) -> WeightType;
    /// Calls `f(src, dst, weight_word)` for every edge of block `block`, in a fixed order.
    fn for_each_edge<F: FnMut(u32, u32, u32)>(&self, block: usize, f: F);
    /// How many edges the source yields, where known before yielding them (the
    /// generators): the build is then admitted against the memory limit up front.
    fn known_edges(&self) -> Option<u64> {
        None
    }
}

/// What to do with edges while building.
#[derive(Copy, Clone, Debug, Default)]
pub struct BuildOptions {
    /// Store every edge in both directions and mark the graph undirected.
    pub symmetrize: bool,
    /// Keep one edge of each parallel group (the one of smallest weight).
    pub dedup: bool,
    /// Drop edges from a vertex to itself.
    pub drop_self_loops: bool,
}

/// A shared output array written at disjoint indices from many threads.
struct Scatter<T>(*mut T);

// SAFETY: every index is written by exactly one thread (each slot is claimed by an
// atomic fetch_add on its vertex cursor), and nothing reads until all writes join.
unsafe impl<T: Send> Sync for Scatter<T> {}

impl<T> Scatter<T> {
    /// # Safety
    /// `i` must be in bounds and claimed by this caller alone.
    #[inline]
    unsafe fn write(&self, i: usize, v: T) {
        unsafe { self.0.add(i).write(v) }
    }

    /// # Safety
    /// `i` must be in bounds and owned by this caller alone while the reference lives.
    #[inline]
    #[allow(clippy::mut_from_ref)]
    unsafe fn get_mut(&self, i: usize) -> &mut T {
        unsafe { &mut *self.0.add(i) }
    }
}

/// Builds a graph from `source`. `directed` is overridden to false by `symmetrize`.
pub fn build<S: EdgeSource>(source: &S, directed: bool, opts: BuildOptions, progress: &dyn Progress) -> Result<Graph> {
    let out = build_adjacency(source, opts, progress)?;
    Ok(Graph::from_adjacency(out, directed && !opts.symmetrize))
}

/// Builds one CSR direction from `source` (see the module docs for the passes).
pub fn build_adjacency<S: EdgeSource>(source: &S, opts: BuildOptions, progress: &dyn Progress) -> Result<Adjacency> {
    let n = source.num_vertices();
    if n > u32::MAX as usize {
        return Err(Error::Usage(format!("{n} vertices: at most {} are supported (u32 ids)", u32::MAX)));
    }
    let weighted = source.weight_type() != WeightType::None;
    let edge_bytes = if weighted { 8 } else { 4 };
    let vertex_bytes = 16 * (n as u64 + 1);
    match source.known_edges() {
        Some(m) => {
            let m = if opts.symmetrize { m.saturating_mul(2) } else { m };
            check_memory(&format!("a graph of {n} vertices and {m} edges"), m.saturating_mul(edge_bytes).saturating_add(vertex_bytes))?
        }
        None => check_memory(&format!("the vertex arrays of a graph with {n} vertices"), vertex_bytes)?,
    }
    let blocks = source.num_blocks();

    progress.start("counting degrees", blocks as u64);
    let mut degree = vec![0u64; n];
    {
        let deg = Scatter(degree.as_mut_ptr());
        // SAFETY: by_source calls this for u only from the task that owns u's range.
        // Counting needs only the source: a third of the staged bytes of placing.
        by_source(source, opts, n, progress, |u, _, _| u, |u| unsafe { *deg.get_mut(u as usize) += 1 });
    }
    let mut offsets = vec![0u64; n + 1];
    let mut sum = 0u64;
    for (v, d) in degree.iter_mut().enumerate() {
        offsets[v] = sum;
        sum += *d;
        *d = offsets[v];
    }
    offsets[n] = sum;
    let mut cursor = degree;
    let m = sum as usize;
    check_memory(&format!("{m} edges"), m as u64 * edge_bytes)?;

    progress.start("placing edges", blocks as u64);
    let mut targets = vec![0u32; m];
    let mut weights = if weighted { vec![0u32; m] } else { Vec::new() };
    {
        let (cur, t_out, w_out) = (Scatter(cursor.as_mut_ptr()), Scatter(targets.as_mut_ptr()), Scatter(weights.as_mut_ptr()));
        // SAFETY: u's cursor is touched only by the task owning u's range, and the
        // slots it hands out lie in u's range of the output, sized by the count.
        let place = |u: u32, v: u32, w: Option<u32>| unsafe {
            let c = cur.get_mut(u as usize);
            let slot = *c as usize;
            *c += 1;
            t_out.write(slot, v);
            if let Some(w) = w {
                w_out.write(slot, w);
            }
        };
        // Unweighted edges are staged without a weight word: 8 bytes, not 12.
        if weighted {
            by_source(source, opts, n, progress, |u, v, w| (u, v, w), |(u, v, w)| place(u, v, Some(w)));
        } else {
            by_source(source, opts, n, progress, |u, v, _| (u, v), |(u, v)| place(u, v, None));
        }
    }
    drop(cursor);

    progress.start("sorting adjacencies", n as u64);
    sort_adjacencies(&offsets, &mut targets, weighted.then_some(&mut weights[..]), progress);
    let mut adj = Adjacency {
        offsets: offsets.into(),
        targets: targets.into(),
        weight_type: source.weight_type(),
        weights: weighted.then(|| weights.into()),
    };
    if opts.dedup {
        adj = dedup_sorted(adj);
    }
    Ok(adj)
}

/// Calls `apply(record(u, v, w))` for every edge the builder stores (both directions
/// when symmetrizing, self-loops dropped if asked), such that all calls for a source
/// `u` come from the one task that owns `u`'s vertex range: `apply` may update
/// per-vertex state without atomics. `record` keeps what `apply` needs of the edge.
///
/// Atomic updates would be simpler, but on x86 every atomic read-modify-write drains
/// the store buffer, which exposes the latency of each random write (measured: 100 ns
/// per edge placed on rmat-20, against 30 ns this way). So each wave of blocks first
/// stages its edges into buckets by source range (sequential appends), then each range
/// is applied by one task, its writes confined to a slice of the output that caches
/// well. A wave holds a few blocks per thread, which bounds the staging memory.
fn by_source<S: EdgeSource, T: Copy + Send + Sync>(
    source: &S,
    opts: BuildOptions,
    n: usize,
    progress: &dyn Progress,
    record: impl Fn(u32, u32, u32) -> T + Sync,
    apply: impl Fn(T) + Sync,
) {
    const RANGE_BITS: u32 = 8;
    let shift = (usize::BITS - n.max(1).leading_zeros()).saturating_sub(RANGE_BITS);
    let ranges = ((n.max(1) - 1) >> shift) + 1;
    let blocks = source.num_blocks();
    let per_wave = 4 * rayon::current_num_threads();
    for wave in (0..blocks).step_by(per_wave) {
        let staged: Vec<Vec<Vec<T>>> = (wave..(wave + per_wave).min(blocks))
            .into_par_iter()
            .map(|b| {
                let mut buckets = vec![Vec::new(); ranges];
                source.for_each_edge(b, |u, v, w| {
                    if opts.drop_self_loops && u == v {
                        return;
                    }
                    buckets[u as usize >> shift].push(record(u, v, w));
                    if opts.symmetrize && u != v {
                        buckets[v as usize >> shift].push(record(v, u, w));
                    }
                });
                progress.advance(1);
                buckets
            })
            .collect();
        (0..ranges).into_par_iter().for_each(|r| {
            for block in &staged {
                for &edge in &block[r] {
                    apply(edge);
                }
            }
        });
    }
}

/// Splits `0..n` into vertex ranges holding about `per_chunk` edges each (a vertex of
/// more edges alone). No range is widened to a minimum number of vertices: where hubs
/// sit together (a degree order numbers them first) a range of 4096 vertices held a
/// quarter of kron22's edges, and its task finished last, alone (renumbering took
/// 1.1 s on 16 cores for 0.2 s of work).
pub(crate) fn edge_balanced_ranges(offsets: &[u64], per_chunk: u64) -> Vec<std::ops::Range<usize>> {
    edge_balanced_ranges_capped(offsets, per_chunk, usize::MAX)
}

/// [`edge_balanced_ranges`] within blocks of `most` vertices (at least 1): for tasks
/// whose per-vertex work matters as well as their edges. A range under budget at its
/// block's end takes one look at the offsets, not a search: PageRank cuts its vertices
/// afresh every iteration, and a search over all offsets per range (on one thread,
/// while the others wait) took 0.4 ms an iteration on the 2048² grid (dev VM, the cut alone).
pub fn edge_balanced_ranges_capped(offsets: &[u64], per_chunk: u64, most: usize) -> Vec<std::ops::Range<usize>> {
    let (n, most) = (offsets.len() - 1, most.max(1));
    let mut ranges = Vec::with_capacity(n.div_ceil(most));
    let mut start = 0;
    while start < n {
        let block_end = (start / most + 1).saturating_mul(most).min(n);
        let goal = offsets[start] + per_chunk;
        let end = if offsets[block_end] < goal {
            block_end
        } else {
            (start + offsets[start..=block_end].partition_point(|&o| o < goal)).clamp(start + 1, block_end)
        };
        ranges.push(start..end);
        start = end;
    }
    ranges
}

/// Sorts every adjacency list ascending by (target, weight word).
fn sort_adjacencies(offsets: &[u64], targets: &mut [u32], weights: Option<&mut [u32]>, progress: &dyn Progress) {
    row_blocks(offsets, targets, weights).into_par_iter().for_each(|mut b| {
        b.sort_rows(offsets);
        progress.advance(b.rows.len() as u64);
    });
}

/// A run of consecutive rows and their slices of the edge arrays, for one task.
pub(crate) struct RowBlock<'a> {
    pub rows: std::ops::Range<usize>,
    pub targets: &'a mut [u32],
    pub weights: Option<&'a mut [u32]>,
}

/// The rows of `offsets` cut into edge-balanced blocks, each holding its own slices of
/// `targets` and `weights`, so tasks fill or sort them without sharing.
pub(crate) fn row_blocks<'a>(offsets: &[u64], targets: &'a mut [u32], weights: Option<&'a mut [u32]>) -> Vec<RowBlock<'a>> {
    let mut rest_t = targets;
    let mut rest_w = weights;
    let mut blocks = Vec::new();
    for rows in edge_balanced_ranges(offsets, 1 << 16) {
        let len = (offsets[rows.end] - offsets[rows.start]) as usize;
        let (t, tail) = std::mem::take(&mut rest_t).split_at_mut(len);
        rest_t = tail;
        let w = rest_w.take().map(|w| {
            let (head, tail) = w.split_at_mut(len);
            rest_w = Some(tail);
            head
        });
        blocks.push(RowBlock { rows, targets: t, weights: w });
    }
    blocks
}

impl RowBlock<'_> {
    /// Row v's positions in this block's slices.
    pub fn span(&self, offsets: &[u64], v: usize) -> std::ops::Range<usize> {
        let base = offsets[self.rows.start];
        (offsets[v] - base) as usize..(offsets[v + 1] - base) as usize
    }

    /// Sorts each row by target, weights moving with their targets.
    pub fn sort_rows(&mut self, offsets: &[u64]) {
        let mut pairs: Vec<u64> = Vec::new();
        for v in self.rows.clone() {
            let span = self.span(offsets, v);
            let t = &mut self.targets[span.clone()];
            match self.weights.as_deref_mut() {
                None => t.sort_unstable(),
                Some(w) => {
                    let w = &mut w[span];
                    pairs.clear();
                    pairs.extend(t.iter().zip(w.iter()).map(|(&t, &w)| (t as u64) << 32 | w as u64));
                    pairs.sort_unstable();
                    for ((t, w), p) in t.iter_mut().zip(w.iter_mut()).zip(&pairs) {
                        (*t, *w) = ((p >> 32) as u32, *p as u32);
                    }
                }
            }
        }
    }
}

/// Keeps the first edge of each run of equal targets in sorted adjacencies.
fn dedup_sorted(adj: Adjacency) -> Adjacency {
    let n = adj.num_vertices();
    let kept: Vec<u64> = (0..n as u32)
        .into_par_iter()
        .map(|v| {
            let nb = adj.neighbors(v);
            (nb.len() - nb.windows(2).filter(|p| p[0] == p[1]).count().min(nb.len())) as u64
        })
        .collect();
    let mut offsets = Vec::with_capacity(n + 1);
    let mut sum = 0;
    offsets.push(0);
    for k in &kept {
        sum += k;
        offsets.push(sum);
    }
    let m = sum as usize;
    let mut targets = vec![0u32; m];
    let mut weights = adj.weights.as_ref().map(|_| vec![0u32; m]);
    {
        let t_out = Scatter(targets.as_mut_ptr());
        let w_out = weights.as_mut().map(|w| Scatter(w.as_mut_ptr()));
        (0..n as u32).into_par_iter().for_each(|v| {
            let mut slot = offsets[v as usize] as usize;
            let range = adj.range(v);
            for e in range.clone() {
                if e > range.start && adj.targets[e] == adj.targets[e - 1] {
                    continue;
                }
                // SAFETY: slots of v are offsets[v]..offsets[v+1], written only here.
                unsafe {
                    t_out.write(slot, adj.targets[e]);
                    if let (Some(out), Some(w)) = (&w_out, &adj.weights) {
                        out.write(slot, w[e]);
                    }
                }
                slot += 1;
            }
        });
    }
    Adjacency { offsets: offsets.into(), targets: targets.into(), weight_type: adj.weight_type, weights: weights.map(Into::into) }
}

#[cfg(test)]
mod tests {
    use super::edge_balanced_ranges;

    #[test]
    fn ranges_stop_at_their_edge_budget_even_among_hubs() {
        // Ten hubs of 100,000 edges first (as a degree order numbers them), then
        // 200,000 vertices of one edge and 50,000 of none.
        let degrees = std::iter::repeat_n(100_000u64, 10).chain(std::iter::repeat_n(1, 200_000)).chain(std::iter::repeat_n(0, 50_000));
        let mut offsets = vec![0u64];
        for d in degrees {
            offsets.push(offsets[offsets.len() - 1] + d);
        }
        let per_chunk = 1 << 16;
        let ranges = edge_balanced_ranges(&offsets, per_chunk);
        assert_eq!(ranges[0].start, 0);
        assert_eq!(ranges[ranges.len() - 1].end, offsets.len() - 1);
        for (r, next) in ranges.iter().zip(&ranges[1..]) {
            assert_eq!(r.end, next.start);
        }
        for r in &ranges {
            // Without its last vertex, a range is under budget: it ends on reaching it.
            assert!(offsets[r.end - 1] - offsets[r.start] < per_chunk, "{r:?}");
        }
        assert!(ranges[..10].iter().all(|r| r.len() == 1), "each hub alone: {:?}", &ranges[..10]);
        let capped = super::edge_balanced_ranges_capped(&offsets, per_chunk, 1000);
        assert!(capped.iter().all(|r| !r.is_empty() && r.len() <= 1000) && capped[capped.len() - 1].end == offsets.len() - 1);
        assert!(capped.windows(2).all(|p| p[0].end == p[1].start) && capped[..10].iter().all(|r| r.len() == 1));
        // Each capped range ends at its budget or its block of 1,000, whichever is first.
        let n = offsets.len() - 1;
        for r in &capped {
            let budget_end = (r.start + 1..=n).find(|&e| offsets[e] - offsets[r.start] >= per_chunk).unwrap_or(n);
            assert_eq!(r.end, budget_end.min((r.start / 1000 + 1) * 1000).min(n), "{r:?}");
        }
    }
}
