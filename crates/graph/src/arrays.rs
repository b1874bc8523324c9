//! Edges held as parallel arrays (sources, targets, optional weights): the shape NumPy
//! and SciPy hand over, built into a graph by the one builder.

use rayon::prelude::*;

use crate::build::{build, BuildOptions, EdgeSource};
use crate::csr::{Graph, WeightType};
use crate::error::{Error, Result};
use crate::progress::Progress;

/// Edges per block of the builder's passes.
const BLOCK: usize = 1 << 20;

/// `src[i] → dst[i]` (weight `weights[i]`, raw 32-bit words of `weight_type`), ids below `n`.
pub struct EdgeArrays<'a> {
    n: usize,
    src: &'a [u32],
    dst: &'a [u32],
    weights: Option<(&'a [u32], WeightType)>,
}

impl<'a> EdgeArrays<'a> {
    /// Checks the arrays' lengths and that every id is below `n`.
    pub fn new(n: usize, src: &'a [u32], dst: &'a [u32], weights: Option<(&'a [u32], WeightType)>) -> Result<EdgeArrays<'a>> {
        let bad = |m: String| Err(Error::Usage(m));
        if src.len() != dst.len() {
            return bad(format!("{} sources but {} targets", src.len(), dst.len()));
        }
        if let Some((w, t)) = weights {
            if w.len() != src.len() {
                return bad(format!("{} weights for {} edges", w.len(), src.len()));
            }
            if t == WeightType::None {
                return bad("weights given with weight type none".into());
            }
        }
        if n >= u32::MAX as usize {
            return bad(format!("{n} vertices: ids must fit below {}", u32::MAX));
        }
        let top = src.par_iter().chain(dst.par_iter()).copied().max();
        if let Some(top) = top.filter(|&t| t as usize >= n) {
            return bad(format!("vertex id {top} is not below n = {n}"));
        }
        Ok(EdgeArrays { n, src, dst, weights })
    }

    /// The graph of these edges (`directed: false` stores each edge both ways).
    pub fn build(&self, directed: bool, opts: BuildOptions, progress: &dyn Progress) -> Result<Graph> {
        build(self, directed, BuildOptions { symmetrize: opts.symmetrize || !directed, ..opts }, progress)
    }
}

impl EdgeSource for EdgeArrays<'_> {
    fn num_vertices(&self) -> usize {
        self.n
    }
    fn num_blocks(&self) -> usize {
        self.src.len().div_ceil(BLOCK)
    }
    fn weight_type(&self) -> WeightType {
        self.weights.map_or(WeightType::None, |(_, t)| t)
    }
    fn for_each_edge<F: FnMut(u32, u32, u32)>(&self, block: usize, mut f: F) {
        let range = block * BLOCK..((block + 1) * BLOCK).min(self.src.len());
        match self.weights {
            Some((w, _)) => range.for_each(|i| f(self.src[i], self.dst[i], w[i])),
            None => range.for_each(|i| f(self.src[i], self.dst[i], 0)),
        }
    }
    fn known_edges(&self) -> Option<u64> {
        Some(self.src.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NoProgress;

    #[test]
    fn arrays_build_the_same_graph_as_an_edge_list_and_refuse_bad_ids() {
        let (src, dst, w) = ([0u32, 1, 2, 2], [1u32, 2, 0, 3], [5u32, 6, 7, 8]);
        let g =
            EdgeArrays::new(4, &src, &dst, Some((&w, WeightType::Int))).unwrap().build(true, BuildOptions::default(), &NoProgress).unwrap();
        let want = crate::from_weighted_edges(4, &[(0, 1, 5), (1, 2, 6), (2, 0, 7), (2, 3, 8)], true).unwrap();
        assert_eq!(g.out_edges().offsets(), want.out_edges().offsets());
        assert_eq!(g.out_edges().targets(), want.out_edges().targets());
        assert_eq!(g.out_edges().raw_weights(), want.out_edges().raw_weights());
        let u = EdgeArrays::new(4, &src, &dst, None).unwrap().build(false, BuildOptions::default(), &NoProgress).unwrap();
        assert!(!u.is_directed() && u.num_edges() == 8);
        assert!(EdgeArrays::new(3, &src, &dst, None).is_err(), "id 3 with n = 3");
        assert!(EdgeArrays::new(4, &src, &dst[..3], None).is_err());
    }
}
