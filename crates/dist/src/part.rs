//! Which rank owns which vertices: contiguous ranges balanced by out-edges plus
//! vertices (the multi-GPU engine's partition, [`chatty_graph::partition`]), found by
//! binary search in the mapped offsets, so no rank reads all of them.

use std::ops::Range;

/// Rank `r` owns `starts[r]..starts[r + 1]`; a rank may own none.
#[derive(Clone, Debug, PartialEq)]
pub struct Ranges {
    starts: Vec<u32>,
}

impl Ranges {
    /// `ranks` ranges over the vertices whose out-offsets are `offsets` (n + 1 entries).
    pub fn balanced(offsets: &[u64], ranks: usize) -> Ranges {
        let mut starts = chatty_graph::partition::Partition::balanced_starts_of(offsets, ranks);
        let n = *starts.last().expect("starts end at n");
        starts.resize(ranks + 1, n);
        Ranges { starts }
    }

    /// The vertices rank `r` owns.
    pub fn range(&self, r: usize) -> Range<u32> {
        self.starts[r]..self.starts[r + 1]
    }

    /// The rank owning `v`.
    #[inline]
    pub fn owner(&self, v: u32) -> usize {
        self.starts.partition_point(|&s| s <= v) - 1
    }

    /// Every range's first vertex, and n last.
    pub fn starts(&self) -> &[u32] {
        &self.starts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cover_every_vertex_once_even_with_more_ranks_than_vertices() {
        // Vertex v has v out-edges: 0, 1, 2, 3, 4.
        let offsets = [0u64, 0, 1, 3, 6, 10];
        for ranks in 1..8 {
            let r = Ranges::balanced(&offsets, ranks);
            assert_eq!(r.starts().len(), ranks + 1);
            assert_eq!((r.starts()[0], r.starts()[ranks]), (0, 5));
            for v in 0..5 {
                assert!(r.range(r.owner(v)).contains(&v), "{ranks} ranks, vertex {v}");
            }
        }
        assert_eq!(Ranges::balanced(&offsets, 2).starts(), &[0, 4, 5]);
    }
}
