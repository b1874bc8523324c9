//! Each part's share of the graph, built on the host before upload: the multi-GPU
//! engine's owner-computes rule needs, per part, the edges *into* its vertices (push
//! along them, or pull over them), never the edges out of them into other parts.

use std::borrow::Cow;

use rayon::prelude::*;

use chatty_graph::partition::Ranges;
use chatty_graph::{Adjacency, Graph};

/// Which edge sets a kernel reads.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Needs {
    /// Edges u→v into the part, for every u (BFS top-down, SSSP).
    pub push: bool,
    /// In-edges of the part's vertices (BFS bottom-up, PageRank, SpMV).
    pub pull: bool,
    /// Neighbours both ways of the part's vertices (WCC).
    pub both: bool,
    /// The weights of the push and pull edges (SSSP, SpMV); without them none are
    /// copied or uploaded (on rmat25 a quarter of the bytes).
    pub weights: bool,
}

/// A CSR over all `n` vertices in global ids, of which only some rows are non-empty.
pub(crate) struct LocalCsr<'g> {
    pub offsets: Vec<u64>,
    pub targets: Cow<'g, [u32]>,
    pub weights: Option<Cow<'g, [u32]>>,
}

impl LocalCsr<'_> {
    pub fn bytes(&self) -> u64 {
        8 * self.offsets.len() as u64 + 4 * self.targets.len() as u64 * (1 + self.weights.is_some() as u64)
    }
}

/// One part: vertices `lo..hi`, its edge sets, and which of its vertices another part
/// reads (`send_flag[v - lo]`).
pub(crate) struct LocalGraph<'g> {
    pub lo: u32,
    pub hi: u32,
    pub push: Option<LocalCsr<'g>>,
    pub pull: Option<LocalCsr<'g>>,
    pub both: Option<LocalCsr<'g>>,
    pub send_flag: Vec<u8>,
    /// Vertices with `send_flag` set.
    pub boundary: u64,
}

/// The rows `lo..hi` of `a`, other rows empty: a slice of `a`, no copy of its edges
/// (with their weights if `weights`).
fn rows<'g>(a: &'g Adjacency, lo: u32, hi: u32, weights: bool) -> LocalCsr<'g> {
    let off = a.offsets();
    let (base, end) = (off[lo as usize], off[hi as usize]);
    let offsets = (0..=off.len() - 1)
        .into_par_iter()
        .map(|v| {
            if v < lo as usize {
                0
            } else if v > hi as usize {
                end - base
            } else {
                off[v] - base
            }
        })
        .collect();
    LocalCsr {
        offsets,
        targets: Cow::Borrowed(&a.targets()[base as usize..end as usize]),
        weights: a.raw_weights().filter(|_| weights).map(|w| Cow::Borrowed(&w[base as usize..end as usize])),
    }
}

/// Rows per task when filling a CSR's rows in parallel.
const ROWS_PER_TASK: usize = 4096;

/// `dst` cut into the spans of consecutive blocks of `ROWS_PER_TASK` rows of a CSR
/// laid out by `offsets`.
fn row_blocks<'a, T>(offsets: &[u64], mut dst: &'a mut [T]) -> Vec<&'a mut [T]> {
    let n = offsets.len() - 1;
    (0..n)
        .step_by(ROWS_PER_TASK)
        .map(|r| {
            let end = (r + ROWS_PER_TASK).min(n);
            let (block, rest) = std::mem::take(&mut dst).split_at_mut((offsets[end] - offsets[r]) as usize);
            dst = rest;
            block
        })
        .collect()
}

/// Of every row of `a`, the edges whose target is in `lo..hi` (with their weights if
/// `weights`): rows counted into the offsets and summed in place by blocks of rows in
/// parallel, then filled by blocks of rows in parallel (one pass over the edges each).
/// No array of counts and no sequential pass over the rows: rmat22 in two parts went
/// from 253-267 to 214-234 ms (2-core VM). Huge pages for the fresh arrays made later
/// splits faster still (145-158 ms) but the first 0.5-1.7 s, the kernel compacting
/// memory for them (THP `defrag` madvise), and a command splits once.
fn into_range(a: &Adjacency, lo: u32, hi: u32, weights: bool) -> LocalCsr<'static> {
    let n = a.offsets().len() - 1;
    let inside = |t: &u32| (lo..hi).contains(t);
    let mut offsets = vec![0u64; n + 1];
    let block_totals: Vec<u64> = offsets[1..]
        .par_chunks_mut(ROWS_PER_TASK)
        .enumerate()
        .map(|(b, counts)| {
            let mut total = 0;
            for (i, c) in counts.iter_mut().enumerate() {
                total += a.neighbors((b * ROWS_PER_TASK + i) as u32).iter().filter(|t| inside(t)).count() as u64;
                *c = total;
            }
            total
        })
        .collect();
    let block_starts: Vec<u64> = block_totals.iter().scan(0, |start, &t| Some(std::mem::replace(start, *start + t))).collect();
    offsets[1..].par_chunks_mut(ROWS_PER_TASK).zip(&block_starts).for_each(|(o, &start)| o.iter_mut().for_each(|x| *x += start));
    let total = offsets[n] as usize;
    let (off, all_targets) = (a.offsets(), a.targets());
    let mut targets = vec![0u32; total];
    let raw_weights = a.raw_weights().filter(|_| weights);
    let mut weights = raw_weights.map(|_| vec![0u32; total]);
    let target_blocks = row_blocks(&offsets, &mut targets);
    let weight_blocks: Vec<Option<&mut [u32]>> = match &mut weights {
        Some(w) => row_blocks(&offsets, w).into_iter().map(Some).collect(),
        None => target_blocks.iter().map(|_| None).collect(),
    };
    target_blocks.into_par_iter().zip(weight_blocks).enumerate().for_each(|(b, (t, mut w))| {
        let mut k = 0;
        for i in off[b * ROWS_PER_TASK] as usize..off[((b + 1) * ROWS_PER_TASK).min(n)] as usize {
            if inside(&all_targets[i]) {
                t[k] = all_targets[i];
                if let (Some(w), Some(raw)) = (w.as_deref_mut(), raw_weights) {
                    w[k] = raw[i];
                }
                k += 1;
            }
        }
    });
    LocalCsr { offsets, targets: Cow::Owned(targets), weights: weights.map(Cow::Owned) }
}

/// The rows `lo..hi` of `out` followed by those of `inc` (neighbours both ways).
fn both_ways(out: &Adjacency, inc: &Adjacency, lo: u32, hi: u32) -> LocalCsr<'static> {
    let n = out.offsets().len() - 1;
    let degree = |v: u32| (out.degree(v) + inc.degree(v)) as u64;
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0u64);
    let mut total = 0;
    for v in 0..n as u32 {
        if (lo..hi).contains(&v) {
            total += degree(v);
        }
        offsets.push(total);
    }
    let targets: Vec<u32> = (lo..hi).into_par_iter().flat_map_iter(|v| out.neighbors(v).iter().chain(inc.neighbors(v)).copied()).collect();
    LocalCsr { offsets, targets: Cow::Owned(targets), weights: None }
}

/// The parts `which` of `g` split at `ranges` (a process builds its own). A vertex is
/// sent when another part reads it: it has an out-edge into another part, or, for
/// `both` (WCC, which reads neighbours both ways), any edge to one.
pub(crate) fn split<'g>(g: &'g Graph, ranges: &Ranges, which: std::ops::Range<usize>, needs: Needs) -> Vec<LocalGraph<'g>> {
    let out = g.out_edges();
    let inc = g.transpose_if_built().unwrap_or(out);
    which
        .map(|p| {
            let std::ops::Range { start: lo, end: hi } = ranges.range(p);
            let send_flag: Vec<u8> = (lo..hi)
                .into_par_iter()
                .map(|v| (ranges.leaves(out.neighbors(v), p) || (needs.both && ranges.leaves(inc.neighbors(v), p))) as u8)
                .collect();
            let boundary = send_flag.par_iter().map(|&f| f as u64).sum();
            LocalGraph {
                lo,
                hi,
                push: needs.push.then(|| into_range(out, lo, hi, needs.weights)),
                pull: needs.pull.then(|| rows(inc, lo, hi, needs.weights)),
                both: needs.both.then(|| if g.is_directed() { both_ways(out, inc, lo, hi) } else { rows(out, lo, hi, false) }),
                send_flag,
                boundary,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chatty_graph::{from_edges, generate, GenOptions, NoProgress};

    fn row<'a>(c: &'a LocalCsr, v: usize) -> &'a [u32] {
        &c.targets[c.offsets[v] as usize..c.offsets[v + 1] as usize]
    }

    /// Every edge appears in exactly the part that owns its target (push) or source
    /// row (pull), and the send flags match their definition; on one block of rows
    /// and on several (the push offsets are summed by blocks).
    #[test]
    fn parts_hold_each_edge_once_and_flag_what_others_read() {
        for scale in [10, 13] {
            parts_hold_each_edge_once(scale);
        }
    }

    fn parts_hold_each_edge_once(scale: u32) {
        let g =
            generate::rmat(scale, 8, GenOptions { seed: 4, max_weight: Some(9), undirected: false }, &NoProgress).unwrap().with_in_edges();
        let n = g.num_vertices();
        let starts = vec![0, 300, 301, 700, n as u32];
        let parts = split(
            &g,
            &Ranges::at(starts.clone()).unwrap(),
            0..starts.len() - 1,
            Needs { push: true, pull: true, both: true, weights: true },
        );
        let inc = g.transpose_if_built().unwrap();
        for (p, part) in parts.iter().enumerate() {
            let (lo, hi) = (starts[p], starts[p + 1]);
            let push = part.push.as_ref().unwrap();
            let pull = part.pull.as_ref().unwrap();
            let both = part.both.as_ref().unwrap();
            for u in 0..n as u32 {
                let (b, e) = (g.out_edges().offsets()[u as usize] as usize, g.out_edges().offsets()[u as usize + 1] as usize);
                let want: Vec<(u32, u32)> = g.out_edges().targets()[b..e]
                    .iter()
                    .zip(&g.out_edges().raw_weights().unwrap()[b..e])
                    .filter(|(t, _)| (lo..hi).contains(*t))
                    .map(|(&t, &w)| (t, w))
                    .collect();
                let (pb, pe) = (push.offsets[u as usize] as usize, push.offsets[u as usize + 1] as usize);
                let got: Vec<(u32, u32)> =
                    push.targets[pb..pe].iter().copied().zip(push.weights.as_ref().unwrap()[pb..pe].iter().copied()).collect();
                assert_eq!(got, want, "push row {u} of part {p}");
                let own = (lo..hi).contains(&u);
                assert_eq!(row(pull, u as usize), if own { inc.neighbors(u) } else { &[] }, "pull row {u}");
                let mut nb: Vec<u32> =
                    if own { g.out_edges().neighbors(u).iter().chain(inc.neighbors(u)).copied().collect() } else { vec![] };
                let mut got = row(both, u as usize).to_vec();
                nb.sort_unstable();
                got.sort_unstable();
                assert_eq!(got, nb, "both row {u}");
                if own {
                    let crosses = |a: &[u32]| a.iter().any(|w| !(lo..hi).contains(w));
                    let want = crosses(g.out_edges().neighbors(u)) || crosses(inc.neighbors(u));
                    assert_eq!(part.send_flag[(u - lo) as usize] != 0, want, "flag of {u}");
                }
            }
        }
        let total: usize = parts.iter().map(|p| p.push.as_ref().unwrap().targets.len()).sum();
        assert_eq!(total as u64, g.num_edges());
    }

    #[test]
    fn weights_are_split_only_for_the_kernels_that_read_them() {
        let g = generate::rmat(8, 8, GenOptions { seed: 4, max_weight: Some(9), undirected: false }, &NoProgress).unwrap().with_in_edges();
        let ranges = Ranges::at(vec![0, 100, g.num_vertices() as u32]).unwrap();
        for weights in [false, true] {
            let parts = split(&g, &ranges, 0..2, Needs { push: true, pull: true, weights, ..Needs::default() });
            for p in &parts {
                assert_eq!(p.push.as_ref().unwrap().weights.is_some(), weights);
                assert_eq!(p.pull.as_ref().unwrap().weights.is_some(), weights);
            }
        }
    }

    #[test]
    fn an_undirected_graph_reads_its_own_rows_both_ways() {
        let g = from_edges(4, &[(0, 1), (1, 2), (2, 3)], false).unwrap();
        let parts = split(&g, &Ranges::at(vec![0, 2, 4]).unwrap(), 0..2, Needs { both: true, ..Needs::default() });
        assert_eq!(row(parts[0].both.as_ref().unwrap(), 1), &[0, 2]);
        assert_eq!(parts[0].send_flag, vec![0, 1]);
        assert_eq!(parts[1].send_flag, vec![1, 0]);
        assert_eq!(parts[1].boundary, 1);
    }
}
