//! The owner-computes plan of the multi-part engines (design.md §1.1), the multi-GPU
//! engine's and the MPI engine's alike: contiguous vertex ranges with balanced edge
//! counts ([`Ranges`]), the boundary vertices of each part (a vertex with an edge to
//! another part: the only vertices whose updates another part needs), and the rule for
//! sending their values sparse or dense ([`Form`]); each engine keeps only its
//! transport. [`bfs_order`] is the option that reduces boundary vertices: numbering
//! vertices in breadth-first order (Cuthill–McKee without the degree sort) keeps
//! neighbours in nearby ids, so contiguous ranges cut fewer edges on meshes and road
//! networks.

use std::collections::VecDeque;
use std::ops::Range;

use rayon::prelude::*;

use crate::csr::Graph;

/// The owner-computes split both multi-part engines share (the multi-GPU engine's
/// GPUs and the MPI engine's ranks): `parts` contiguous vertex ranges whose out-edges
/// plus vertices are as equal as contiguity allows (a vertex counts as one edge, so
/// parts of isolated vertices still split). A part may be empty when there are more
/// parts than vertices.
#[derive(Clone, Debug, PartialEq)]
pub struct Ranges {
    /// Part `p` holds `starts[p]..starts[p + 1]`; `parts + 1` entries.
    starts: Vec<u32>,
}

impl Ranges {
    /// The ranges of `g`'s vertices.
    pub fn of(g: &Graph, parts: usize) -> Ranges {
        Self::balanced(g.out_edges().offsets(), parts)
    }

    /// The ranges from the out-offsets alone (n + 1 entries), read at O(parts · log n)
    /// places: an MPI rank finds them in the mapped offsets of a `.cgr` without
    /// reading them all.
    pub fn balanced(offsets: &[u64], parts: usize) -> Ranges {
        let n = offsets.len() - 1;
        let work = |v: usize| offsets[v] + v as u64;
        let total = work(n);
        let cuts = parts.clamp(1, n.max(1));
        let mut starts = vec![0u32];
        for p in 1..cuts {
            // The first vertex whose cumulative work reaches the goal (work is monotone).
            let goal = total * p as u64 / cuts as u64;
            let (mut lo, mut hi) = (*starts.last().expect("starts") as usize, n);
            while lo < hi {
                let mid = (lo + hi) / 2;
                if work(mid) < goal {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            starts.push(lo as u32);
        }
        starts.resize(parts.max(1) + 1, n as u32);
        Ranges { starts }
    }

    /// Ranges cut at `starts` (part p holds `starts[p]..starts[p + 1]`), if they are
    /// ranges: at least two entries, the first 0, none smaller than the one before.
    pub fn at(starts: Vec<u32>) -> Option<Ranges> {
        let ranges = starts.len() >= 2 && starts[0] == 0 && starts.windows(2).all(|w| w[0] <= w[1]);
        ranges.then_some(Ranges { starts })
    }

    /// The vertices part `p` holds.
    pub fn range(&self, p: usize) -> Range<u32> {
        self.starts[p]..self.starts[p + 1]
    }

    /// The part holding `v`.
    #[inline]
    pub fn owner(&self, v: u32) -> usize {
        self.starts.partition_point(|&s| s <= v) - 1
    }

    /// Every part's first vertex, and n last.
    pub fn starts(&self) -> &[u32] {
        &self.starts
    }

    /// Number of parts.
    pub fn parts(&self) -> usize {
        self.starts.len() - 1
    }

    /// Whether a sorted row of targets has one outside part `p` (its first or last does).
    #[inline]
    pub fn leaves(&self, row: &[u32], p: usize) -> bool {
        let own = self.range(p);
        row.first().is_some_and(|&t| t < own.start) || row.last().is_some_and(|&t| t >= own.end)
    }
}

/// The two forms in which a part sends the values of its boundary vertices to a reader
/// (design.md §1.1), in both multi-part engines: sparse `(id, value)` pairs of the
/// vertices that changed, or dense, every value of a list both sides agreed on before
/// (the reader's boundary list, or a whole range), without ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `(id, value)` of each changed vertex.
    Sparse,
    /// Every value of the agreed list, in its order.
    Dense,
}

impl Form {
    /// The form with fewer bytes for `changed` values out of an agreed list of
    /// `listed`, each `value_bytes` wide (ids are 4 bytes); dense on a tie (no ids to
    /// scatter).
    pub fn cheaper(changed: u64, listed: u64, value_bytes: u64) -> Form {
        if listed * value_bytes <= changed * (4 + value_bytes) {
            Form::Dense
        } else {
            Form::Sparse
        }
    }
}

/// A partition with its boundary marked, for reports (`chatty info --parts`).
#[derive(Clone, Debug, PartialEq)]
pub struct Partition {
    /// The parts' vertex ranges.
    pub ranges: Ranges,
    /// Whether each vertex has an edge (out or in) to another part.
    pub boundary: Vec<bool>,
}

impl Partition {
    /// [`Ranges::of`] `g`, with its boundary vertices marked (a pass over every edge):
    /// those with an out-edge into, or an in-edge from, another part.
    pub fn edge_balanced(g: &Graph, parts: usize) -> Partition {
        let ranges = Ranges::of(g, parts);
        let out = g.out_edges();
        let crosses_out: Vec<bool> =
            (0..g.num_vertices() as u32).into_par_iter().map(|v| ranges.leaves(out.neighbors(v), ranges.owner(v))).collect();
        let mut boundary = crosses_out.clone();
        if g.is_directed() {
            // A directed edge u→w across parts makes both ends boundary.
            for u in (0..g.num_vertices() as u32).filter(|&u| crosses_out[u as usize]) {
                let p = ranges.owner(u);
                for &w in out.neighbors(u) {
                    if ranges.owner(w) != p {
                        boundary[w as usize] = true;
                    }
                }
            }
        }
        Partition { ranges, boundary }
    }

    /// Per part: (vertices, out-edges, boundary vertices).
    pub fn summary(&self, g: &Graph) -> Vec<(u64, u64, u64)> {
        let o = g.out_edges().offsets();
        (0..self.ranges.parts())
            .map(|p| {
                let r = self.ranges.range(p);
                let (a, b) = (r.start as usize, r.end as usize);
                (b as u64 - a as u64, o[b] - o[a], self.boundary[a..b].iter().filter(|&&x| x).count() as u64)
            })
            .collect()
    }
}

/// The permutation numbering vertices in breadth-first order over out-edges (and
/// in-edges when the graph has them built), component by component from the lowest
/// unvisited id.
pub fn bfs_order(g: &Graph) -> Vec<u32> {
    let n = g.num_vertices();
    let out = g.out_edges();
    let inc = g.transpose_if_built();
    let mut new_id = vec![u32::MAX; n];
    let mut next = 0u32;
    let mut queue = VecDeque::new();
    for root in 0..n as u32 {
        if new_id[root as usize] != u32::MAX {
            continue;
        }
        new_id[root as usize] = next;
        next += 1;
        queue.push_back(root);
        while let Some(u) = queue.pop_front() {
            let ins = inc.map_or(&[][..], |a| a.neighbors(u));
            for &w in out.neighbors(u).iter().chain(ins) {
                if new_id[w as usize] == u32::MAX {
                    new_id[w as usize] = next;
                    next += 1;
                    queue.push_back(w);
                }
            }
        }
    }
    new_id
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{grid, rmat, GenOptions};
    use crate::transform::relabel;
    use crate::NoProgress;

    fn opts(seed: u64, undirected: bool) -> GenOptions {
        GenOptions { seed, max_weight: None, undirected }
    }

    /// Boundary vertices by definition: an end of an edge whose ends lie in different parts.
    fn naive_boundary(g: &Graph, p: &Partition) -> Vec<bool> {
        let mut b = vec![false; g.num_vertices()];
        for u in 0..g.num_vertices() as u32 {
            for &w in g.out_edges().neighbors(u) {
                if p.ranges.owner(u) != p.ranges.owner(w) {
                    b[u as usize] = true;
                    b[w as usize] = true;
                }
            }
        }
        b
    }

    #[test]
    fn ranges_cover_balance_and_mark_the_boundary() {
        for (g, parts) in [
            (rmat(11, 8, opts(1, false), &NoProgress).unwrap(), 3),
            (rmat(10, 4, opts(2, true), &NoProgress).unwrap(), 8),
            (grid(30, 20, opts(3, true), &NoProgress).unwrap(), 2),
        ] {
            let p = Partition::edge_balanced(&g, parts);
            let starts = p.ranges.starts();
            assert_eq!(p.ranges.parts(), parts);
            assert_eq!((starts[0], *starts.last().unwrap()), (0, g.num_vertices() as u32));
            assert!(starts.windows(2).all(|w| w[0] <= w[1]));
            for v in 0..g.num_vertices() as u32 {
                assert!(p.ranges.range(p.ranges.owner(v)).contains(&v));
            }
            let max_degree = (0..g.num_vertices() as u32).map(|v| g.out_edges().degree(v) as u64).max().unwrap();
            let total = g.num_edges() + g.num_vertices() as u64;
            for (vertices, edges, _) in p.summary(&g) {
                assert!(vertices + edges <= total / parts as u64 + max_degree + 1, "unbalanced: {:?}", p.summary(&g));
            }
            assert_eq!(p.boundary, naive_boundary(&g, &p));
        }
    }

    #[test]
    fn bfs_order_cuts_fewer_edges_on_a_mesh() {
        // A grid with scrambled ids: contiguous ranges cut almost everything.
        let g = grid(64, 64, opts(4, true), &NoProgress).unwrap();
        let n = g.num_vertices() as u32;
        let scrambled: Vec<u32> = (0..n).map(|v| (v as u64 * 2_654_435_761 % n as u64) as u32).collect();
        let g = relabel(&g, &scrambled).unwrap();
        let count = |g: &Graph| Partition::edge_balanced(g, 4).boundary.iter().filter(|&&b| b).count();
        let before = count(&g);
        let order = bfs_order(&g);
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "a permutation");
        let after = count(&relabel(&g, &order).unwrap());
        assert!(after * 10 < before, "BFS order: {after} boundary vertices, scrambled: {before}");
    }

    #[test]
    fn ranges_cover_every_vertex_once_even_with_more_parts_than_vertices() {
        // Vertex v has v out-edges: 0, 1, 2, 3, 4.
        let offsets = [0u64, 0, 1, 3, 6, 10];
        for parts in 1..8 {
            let r = Ranges::balanced(&offsets, parts);
            assert_eq!(r.parts(), parts);
            assert_eq!((r.starts()[0], r.starts()[parts]), (0, 5));
            for v in 0..5 {
                assert!(r.range(r.owner(v)).contains(&v), "{parts} parts, vertex {v}");
            }
        }
        assert_eq!(Ranges::balanced(&offsets, 2).starts(), &[0, 4, 5]);
        assert_eq!(Ranges::balanced(&[0], 3).starts(), &[0, 0, 0, 0]);
    }

    #[test]
    fn a_row_leaves_its_part_when_an_end_lies_outside() {
        let r = Ranges::at(vec![0, 4, 8]).unwrap();
        assert_eq!(Ranges::at(vec![0, 4, 3]), None);
        assert_eq!(Ranges::at(vec![1, 4]), None);
        assert!(!r.leaves(&[], 1));
        assert!(!r.leaves(&[4, 7], 1));
        assert!(r.leaves(&[3, 5], 1));
        assert!(r.leaves(&[5, 8], 1));
    }

    #[test]
    fn the_cheaper_form_counts_ids_and_values() {
        // Four-byte values: sparse costs 8 bytes a changed vertex, dense 4 a listed one.
        assert_eq!(Form::cheaper(10, 21, 4), Form::Sparse);
        assert_eq!(Form::cheaper(10, 20, 4), Form::Dense);
        // Eight-byte values: 12 against 8.
        assert_eq!(Form::cheaper(2, 3, 8), Form::Dense);
        assert_eq!(Form::cheaper(2, 4, 8), Form::Sparse);
        assert_eq!(Form::cheaper(0, 1, 4), Form::Sparse);
        assert_eq!(Form::cheaper(0, 0, 4), Form::Dense);
    }
}
