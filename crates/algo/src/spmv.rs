//! Kernel: SpMV. Returns y = A·x for one multiplication, where A(i, j) is the weight
//! of edge j → i (1 if unweighted): each vertex sums weight · x over its in-edges.
//!
//! Pull form through [`EdgeMapGraph::sum_in`]: one writer per output, no atomics.

use chatty_graph::{Graph, WeightType};

use crate::edge_map::{EdgeMapGraph, SumOptions};
use crate::Result;

/// Writes a vertex's sum to `y` (and returns it: the pass's total, unused).
fn store(_: u32, sum: f64, y: &mut f64) -> f64 {
    *y = sum;
    sum
}

/// y = A·x; `x` has one entry per vertex.
pub fn spmv<G: EdgeMapGraph + ?Sized>(g: &G, x: &[f64]) -> Result<Vec<f64>> {
    let mut y = crate::zeroed_vec(g.num_vertices());
    let weighted = SumOptions { weighted: true, fresh: false };
    match g.weight_type() {
        WeightType::None => _ = g.sum_in(&mut y, SumOptions::default(), x, |&x, _| x, store)?,
        // One closure per weight type, so that each inner loop knows its conversion.
        WeightType::Int => _ = g.sum_in(&mut y, weighted, x, |&x, w| WeightType::Int.value(w) * x, store)?,
        WeightType::Float => _ = g.sum_in(&mut y, weighted, x, |&x, w| WeightType::Float.value(w) * x, store)?,
    }
    Ok(y)
}

/// The reference: a sequential push over out-edges.
pub fn reference(g: &Graph, x: &[f64]) -> Vec<f64> {
    let out = g.out_edges();
    let mut y = vec![0.0; g.num_vertices()];
    for u in 0..g.num_vertices() as u32 {
        for e in out.range(u) {
            y[out.targets()[e] as usize] += out.weight_f64(e) * x[u as usize];
        }
    }
    y
}

/// Checks `y` against [`reference`] within 1e-9 relative (summation order differs).
pub fn verify(g: &Graph, x: &[f64], y: &[f64]) -> Result<()> {
    crate::close_to_largest(&reference(g, x), y, 1e-9, 1.0)
}
