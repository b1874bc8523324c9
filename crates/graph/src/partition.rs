//! Partitioning for the multi-GPU engine (design.md §1.1): contiguous vertex ranges
//! with balanced edge counts, and the boundary vertices of each part (a vertex with an
//! edge, either way, to another part): the only vertices whose updates another GPU
//! needs. [`bfs_order`] is the option that reduces boundary vertices: numbering vertices
//! in breadth-first order (Cuthill–McKee without the degree sort) keeps neighbours in
//! nearby ids, so contiguous ranges cut fewer edges on meshes and road networks.

use std::collections::VecDeque;

use rayon::prelude::*;

use crate::csr::Graph;

/// `parts` contiguous vertex ranges.
#[derive(Clone, Debug, PartialEq)]
pub struct Partition {
    /// Part `p` holds vertices `starts[p]..starts[p + 1]`.
    pub starts: Vec<u32>,
    /// Whether each vertex has an edge (out or in) to another part.
    pub boundary: Vec<bool>,
}

impl Partition {
    /// Ranges whose out-edges plus vertices are as equal as contiguity allows (a vertex
    /// counts as one edge, so parts of isolated vertices still split).
    pub fn edge_balanced(g: &Graph, parts: usize) -> Partition {
        let mut part = Partition { starts: Self::balanced_starts(g, parts), boundary: Vec::new() };
        part.boundary = part.mark_boundary(g);
        part
    }

    /// The ranges of [`Partition::edge_balanced`] without marking boundary vertices
    /// (a pass over every edge): part `p` holds `starts[p]..starts[p + 1]`.
    pub fn balanced_starts(g: &Graph, parts: usize) -> Vec<u32> {
        Self::balanced_starts_of(g.out_edges().offsets(), parts)
    }

    /// [`Partition::balanced_starts`] from the out-offsets alone (n + 1 entries), read
    /// at O(parts · log n) places: the multi-process engine finds its ranges in the
    /// mapped offsets of a `.cgr` without reading them all.
    pub fn balanced_starts_of(offsets: &[u64], parts: usize) -> Vec<u32> {
        let n = offsets.len() - 1;
        let parts = parts.clamp(1, n.max(1));
        let work = |v: usize| offsets[v] + v as u64;
        let total = work(n);
        let mut starts = vec![0u32];
        for p in 1..parts {
            // The first vertex whose cumulative work reaches the goal (work is monotone).
            let goal = total * p as u64 / parts as u64;
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
        starts.push(n as u32);
        starts
    }

    /// Number of parts.
    pub fn parts(&self) -> usize {
        self.starts.len() - 1
    }

    /// The part holding `v`.
    pub fn part_of(&self, v: u32) -> usize {
        self.starts.partition_point(|&s| s <= v) - 1
    }

    /// Marks vertices with an out-edge into, or an in-edge from, another part.
    fn mark_boundary(&self, g: &Graph) -> Vec<bool> {
        let out = g.out_edges();
        let crosses_out: Vec<bool> = (0..g.num_vertices() as u32)
            .into_par_iter()
            .map(|v| {
                let p = self.part_of(v);
                out.neighbors(v).iter().any(|&w| self.part_of(w) != p)
            })
            .collect();
        if !g.is_directed() {
            return crosses_out;
        }
        // A directed edge u→w across parts makes both ends boundary.
        let mut boundary = crosses_out.clone();
        for u in (0..g.num_vertices() as u32).filter(|&u| crosses_out[u as usize]) {
            let p = self.part_of(u);
            for &w in out.neighbors(u) {
                if self.part_of(w) != p {
                    boundary[w as usize] = true;
                }
            }
        }
        boundary
    }

    /// Per part: (vertices, out-edges, boundary vertices).
    pub fn summary(&self, g: &Graph) -> Vec<(u64, u64, u64)> {
        let o = g.out_edges().offsets();
        (0..self.parts())
            .map(|p| {
                let (a, b) = (self.starts[p] as usize, self.starts[p + 1] as usize);
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
                if p.part_of(u) != p.part_of(w) {
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
            assert_eq!(p.parts(), parts);
            assert_eq!((p.starts[0], *p.starts.last().unwrap()), (0, g.num_vertices() as u32));
            assert!(p.starts.windows(2).all(|w| w[0] <= w[1]));
            for v in 0..g.num_vertices() as u32 {
                let q = p.part_of(v);
                assert!(p.starts[q] <= v && v < p.starts[q + 1]);
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
}
