//! Graph transforms: transpose, symmetrize, dedup, drop self-loops, relabel (and
//! renumber, which remembers the input's ids).
//!
//! Each one but relabel streams the existing edges through the builder in
//! [`crate::build`], so they share its parallelism and determinism; relabel keeps
//! every row whole and only moves and re-sorts it.

use rayon::prelude::*;

use crate::build::{build_adjacency, edge_balanced_ranges, row_blocks, BuildOptions, EdgeSource};
pub use crate::csr::inverse_permutation;
use crate::csr::{Adjacency, Graph, WeightType};
use crate::error::{check_memory, Error, Result};
use crate::progress::NoProgress;

/// The edges of an adjacency as an [`EdgeSource`], optionally reversed.
struct AdjacencyEdges<'a> {
    adj: &'a Adjacency,
    ranges: Vec<std::ops::Range<usize>>,
    reverse: bool,
}

impl<'a> AdjacencyEdges<'a> {
    fn new(adj: &'a Adjacency, reverse: bool) -> Self {
        AdjacencyEdges { adj, ranges: edge_balanced_ranges(adj.offsets(), 1 << 20), reverse }
    }
}

impl EdgeSource for AdjacencyEdges<'_> {
    fn num_vertices(&self) -> usize {
        self.adj.num_vertices()
    }
    fn num_blocks(&self) -> usize {
        self.ranges.len()
    }
    fn weight_type(&self) -> WeightType {
        self.adj.weight_type()
    }
    fn for_each_edge<F: FnMut(u32, u32, u32)>(&self, block: usize, mut f: F) {
        let weights = self.adj.raw_weights();
        for u in self.ranges[block].clone() {
            for e in self.adj.range(u as u32) {
                let (mut s, mut d) = (u as u32, self.adj.targets[e]);
                if self.reverse {
                    (s, d) = (d, s);
                }
                f(s, d, weights.map_or(0, |w| w[e]));
            }
        }
    }
}

/// The in-edges of `out`: edge u→v becomes v→u, weights kept.
pub fn transpose(out: &Adjacency) -> Result<Adjacency> {
    build_adjacency(&AdjacencyEdges::new(out, true), BuildOptions::default(), &NoProgress)
}

/// Rebuilds `g` with `opts` applied: symmetrize (the result is undirected), dedup,
/// drop self-loops. The transpose is rebuilt if `g` had one.
pub fn rebuild(g: &Graph, opts: BuildOptions) -> Result<Graph> {
    let out = build_adjacency(&AdjacencyEdges::new(&g.out, false), opts, &NoProgress)?;
    let had_transpose = g.inc.is_some();
    let (order, names) = (g.order.clone(), g.names.clone());
    let mut g = Graph::from_adjacency(out, g.directed && !opts.symmetrize).with_id_base(g.id_base);
    (g.order, g.names) = (order, names);
    if had_transpose {
        g.build_in_edges()?;
    }
    Ok(g)
}

/// Renames vertex `v` to `new_id[v]`; `new_id` must be a permutation of `0..n`. The
/// result is a graph of its own ids (an engine's private copy); [`renumber`] is the
/// one that remembers the input's.
pub fn relabel(g: &Graph, new_id: &[u32]) -> Result<Graph> {
    let old_id = checked_inverse(g, new_id)?;
    Ok(relabel_rows(g, new_id, &old_id)?.with_names(None))
}

/// [`relabel`], the result remembering each vertex's input id
/// ([`Graph::order`]), so that it can be stored and answer in the input's ids.
pub fn renumber(g: &Graph, new_id: Vec<u32>) -> Result<Graph> {
    let old_id = checked_inverse(g, &new_id)?;
    Ok(relabel_rows(g, &new_id, &old_id)?.record_renumbering(g, old_id, new_id))
}

/// `g` in its input's ids: itself, or, when stored renumbered, relabelled back (for
/// front ends that hand the adjacency itself to the user).
pub fn in_input_order(g: Graph) -> Result<Graph> {
    match g.order.clone() {
        None => Ok(g),
        // Stored vertex v goes back to input_ids[v]; the order holds the inverse already.
        Some(order) => relabel_rows(&g, order.input_ids(), order.stored_ids()),
    }
}

fn checked_inverse(g: &Graph, new_id: &[u32]) -> Result<Vec<u32>> {
    let n = g.num_vertices();
    if new_id.len() != n {
        return Err(Error::Usage(format!("relabel: {} ids for {n} vertices", new_id.len())));
    }
    inverse_permutation(new_id)
}

fn relabel_rows(g: &Graph, new_id: &[u32], old_id: &[u32]) -> Result<Graph> {
    let edge_bytes = if g.out.raw_weights().is_some() { 8 } else { 4 };
    check_memory(&format!("a relabelled copy of {} edges", g.num_edges()), g.num_edges() * edge_bytes + 12 * g.num_vertices() as u64)?;
    let out = permute_rows(&g.out, new_id, old_id);
    let had_transpose = g.inc.is_some();
    // Names index input ids: they hold for the input order and for a renumbering
    // that records its order.
    let mut g = Graph::from_adjacency(out, g.directed).with_id_base(g.id_base).with_names(g.names.clone());
    if had_transpose {
        g.build_in_edges()?;
    }
    Ok(g)
}

/// `adj` with vertex v renamed `new_id[v]` (`old_id` its inverse): row `new_id[v]` is
/// v's row, mapped and re-sorted. A direct gather rather than the builder's scatter:
/// the rows' sizes are known, so each task fills and sorts its own rows.
fn permute_rows(adj: &Adjacency, new_id: &[u32], old_id: &[u32]) -> Adjacency {
    let degrees: Vec<u64> = old_id.par_iter().map(|&v| adj.degree(v) as u64).collect();
    let mut offsets = Vec::with_capacity(degrees.len() + 1);
    offsets.push(0u64);
    offsets.extend(degrees.iter().scan(0u64, |sum, &d| {
        *sum += d;
        Some(*sum)
    }));
    let mut targets = vec![0u32; adj.num_edges() as usize];
    let old_weights = adj.raw_weights();
    let mut weights = old_weights.map(|w| vec![0u32; w.len()]);
    row_blocks(&offsets, &mut targets, weights.as_deref_mut()).into_par_iter().for_each(|mut b| {
        for v in b.rows.clone() {
            let (span, old) = (b.span(&offsets, v), adj.range(old_id[v]));
            for (t, &u) in b.targets[span.clone()].iter_mut().zip(&adj.targets[old.clone()]) {
                *t = new_id[u as usize];
            }
            if let (Some(w), Some(old_w)) = (b.weights.as_deref_mut(), old_weights) {
                w[span].copy_from_slice(&old_w[old]);
            }
        }
        b.sort_rows(&offsets);
    });
    Adjacency { offsets: offsets.into(), targets: targets.into(), weight_type: adj.weight_type(), weights: weights.map(Into::into) }
}

/// The permutation that numbers vertices by decreasing out-degree (ties by id), as
/// used to improve locality on power-law graphs.
pub fn degree_order(g: &Graph) -> Vec<u32> {
    let n = g.num_vertices();
    // (degree, id) packed so the sort compares integers, not closures over the graph.
    let mut keys: Vec<u64> =
        (0..n as u32).into_par_iter().map(|v| (!(g.out.degree(v).min(u32::MAX as usize) as u32) as u64) << 32 | v as u64).collect();
    keys.par_sort_unstable();
    let by_degree: Vec<u32> = keys.into_par_iter().map(|k| k as u32).collect();
    inverse_permutation(&by_degree).expect("ids sorted by degree are a permutation")
}

impl Graph {
    /// The graph with its in-edges built (a no-op if they exist or it is undirected).
    ///
    /// # Panics
    /// When the machine cannot hold the transpose; code that must not panic uses
    /// [`Graph::build_in_edges`].
    pub fn with_in_edges(mut self) -> Graph {
        self.build_in_edges().expect("memory for the in-edges");
        self
    }

    /// Builds the in-edges in place (a no-op if they exist or the graph is
    /// undirected); refused, like any allocation sized by the input, when the machine
    /// cannot hold them.
    pub fn build_in_edges(&mut self) -> crate::Result<()> {
        if self.directed && self.inc.is_none() {
            self.inc = Some(transpose(&self.out)?);
        }
        Ok(())
    }
}
