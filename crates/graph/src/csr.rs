//! Compressed sparse rows: the in-memory graph every engine reads.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use rayon::prelude::*;

use crate::buf::Buf;
use crate::error::{Error, Result};
use crate::names::{Naming, VertexNames};

/// Vertex id. Graphs hold at most `u32::MAX` vertices.
pub type VertexId = u32;

/// What the per-edge weights are, if there are any.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum WeightType {
    /// No weights: every edge weighs 1.
    None,
    /// Non-negative integers (`u32`).
    Int,
    /// IEEE single-precision floats (`f32`), any sign.
    Float,
}

impl WeightType {
    /// A short lowercase name: `none`, `int` or `float`.
    pub fn name(self) -> &'static str {
        match self {
            WeightType::None => "none",
            WeightType::Int => "int",
            WeightType::Float => "float",
        }
    }

    /// The weight a stored word holds: the integer, the float's value (its bits are
    /// stored), or 1 without weights. SpMV on every engine multiplies by this.
    #[inline(always)]
    pub fn value(self, raw: u32) -> f64 {
        match self {
            WeightType::None => 1.0,
            WeightType::Int => raw as f64,
            WeightType::Float => f32::from_bits(raw) as f64,
        }
    }
}

/// Weights of one adjacency, borrowed with their type.
#[derive(Copy, Clone, Debug)]
pub enum WeightSlice<'a> {
    /// Integer weights.
    Int(&'a [u32]),
    /// Float weights.
    Float(&'a [f32]),
}

/// One direction of a graph's edges in CSR form: for vertex `v`, its neighbours are
/// `targets[offsets[v]..offsets[v + 1]]`, sorted ascending, with weights alongside.
///
/// Weights are stored as raw 32-bit words (the value for `Int`, the bit pattern for
/// `Float`) so that building, sorting and the `.cgr` format need one code path.
///
/// Invariants, which unsafe code elsewhere relies on (the PageRank/SpMV gather reads
/// lists and per-vertex arrays at targets unchecked): the offsets rise from 0 to
/// `targets.len()`, and every target is below [`Adjacency::num_vertices`]. Each
/// constructor checks them or builds them so.
#[derive(Debug)]
pub struct Adjacency {
    pub(crate) offsets: Buf<u64>,
    pub(crate) targets: Buf<u32>,
    pub(crate) weight_type: WeightType,
    pub(crate) weights: Option<Buf<u32>>,
}

impl Adjacency {
    /// An adjacency from its arrays (other layers' storage formats). Checks the sizes
    /// and the structure: offsets monotone from 0 to `targets.len()`, targets below n.
    pub fn from_parts(
        offsets: Vec<u64>,
        targets: Vec<u32>,
        weight_type: WeightType,
        weights: Option<Vec<u32>>,
    ) -> Result<Adjacency, String> {
        if offsets.first() != Some(&0) || offsets.last() != Some(&(targets.len() as u64)) {
            return Err(format!("offsets must run from 0 to {} edges", targets.len()));
        }
        if weights.as_ref().is_some_and(|w| w.len() != targets.len()) || weights.is_some() == (weight_type == WeightType::None) {
            return Err("weights do not match the edges or the weight type".into());
        }
        let adj = Adjacency { offsets: offsets.into(), targets: targets.into(), weight_type, weights: weights.map(Into::into) };
        check_structure(&adj)?;
        Ok(adj)
    }

    /// Number of vertices (`offsets.len() - 1`).
    pub fn num_vertices(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Number of stored edges.
    pub fn num_edges(&self) -> u64 {
        self.targets.len() as u64
    }

    /// The offsets array, `n + 1` entries.
    pub fn offsets(&self) -> &[u64] {
        &self.offsets
    }

    /// The targets array, `m` entries.
    pub fn targets(&self) -> &[u32] {
        &self.targets
    }

    /// Out-degree of `v` in this direction.
    #[inline]
    pub fn degree(&self, v: VertexId) -> usize {
        (self.offsets[v as usize + 1] - self.offsets[v as usize]) as usize
    }

    /// The edge index range of `v`.
    #[inline]
    pub fn range(&self, v: VertexId) -> std::ops::Range<usize> {
        self.offsets[v as usize] as usize..self.offsets[v as usize + 1] as usize
    }

    /// Neighbours of `v`, sorted ascending.
    #[inline]
    pub fn neighbors(&self, v: VertexId) -> &[u32] {
        &self.targets[self.range(v)]
    }

    /// The weight type.
    pub fn weight_type(&self) -> WeightType {
        self.weight_type
    }

    /// The weights with their type, or `None` for an unweighted graph.
    pub fn weights(&self) -> Option<WeightSlice<'_>> {
        let raw = self.weights.as_deref()?;
        Some(match self.weight_type {
            WeightType::Int => WeightSlice::Int(raw),
            WeightType::Float => WeightSlice::Float(bytemuck::cast_slice(raw)),
            WeightType::None => return None,
        })
    }

    /// The raw 32-bit weight words (value or float bits), if weighted.
    pub fn raw_weights(&self) -> Option<&[u32]> {
        self.weights.as_deref()
    }

    /// Weight of edge index `e` as `f64` (1 for an unweighted graph).
    #[inline]
    pub fn weight_f64(&self, e: usize) -> f64 {
        match (&self.weights, self.weight_type) {
            (Some(w), WeightType::Int) => w[e] as f64,
            (Some(w), WeightType::Float) => f32::from_bits(w[e]) as f64,
            _ => 1.0,
        }
    }
}

/// Rows `first..first + count` of an adjacency: what one process of the multi-process
/// engine holds of a graph. `offsets` has `count + 1` entries indexing `targets`, which
/// may be a whole mapped section (only the rows' part of it is ever touched) or the
/// rows' own edges; targets are global vertex ids.
#[derive(Debug)]
pub struct Rows {
    first: VertexId,
    offsets: Buf<u64>,
    targets: Buf<u32>,
    weight_type: WeightType,
    weights: Option<Buf<u32>>,
}

impl Rows {
    /// Rows from their arrays, checked: offsets monotone within `targets`, every list
    /// sorted and below `n`.
    pub fn from_parts(
        first: VertexId,
        offsets: Buf<u64>,
        targets: Buf<u32>,
        weight_type: WeightType,
        weights: Option<Buf<u32>>,
        n: usize,
    ) -> Result<Rows, String> {
        if offsets.is_empty() || offsets[offsets.len() - 1] > targets.len() as u64 {
            return Err(format!("row offsets run past the {} edges", targets.len()));
        }
        if weights.as_ref().is_some_and(|w| w.len() != targets.len()) || weights.is_some() == (weight_type == WeightType::None) {
            return Err("weights do not match the edges or the weight type".into());
        }
        check_lists(&offsets, &targets, n as u64, first as usize)?;
        Ok(Rows { first, offsets, targets, weight_type, weights })
    }

    /// The first row's vertex id.
    pub fn first(&self) -> VertexId {
        self.first
    }

    /// The vertices the rows hold, `first..first + count`.
    pub fn vertices(&self) -> std::ops::Range<VertexId> {
        self.first..self.first + (self.offsets.len() - 1) as VertexId
    }

    /// The rows' offsets into [`Rows::targets`], one more than there are rows.
    pub fn offsets(&self) -> &[u64] {
        &self.offsets
    }

    /// Edges in the rows.
    pub fn num_edges(&self) -> u64 {
        self.offsets[self.offsets.len() - 1] - self.offsets[0]
    }

    /// The edge index range of row `v` (a global id among [`Rows::vertices`]).
    #[inline]
    pub fn range(&self, v: VertexId) -> std::ops::Range<usize> {
        let i = (v - self.first) as usize;
        self.offsets[i] as usize..self.offsets[i + 1] as usize
    }

    /// Degree of row `v`.
    #[inline]
    pub fn degree(&self, v: VertexId) -> usize {
        self.range(v).len()
    }

    /// Neighbours of row `v`, sorted ascending.
    #[inline]
    pub fn neighbors(&self, v: VertexId) -> &[u32] {
        &self.targets[self.range(v)]
    }

    /// Every target array entry (index with [`Rows::range`]).
    #[inline]
    pub fn targets(&self) -> &[u32] {
        &self.targets
    }

    /// The weight type.
    pub fn weight_type(&self) -> WeightType {
        self.weight_type
    }

    /// The raw weight words (index with [`Rows::range`]), if weighted.
    #[inline]
    pub fn raw_weights(&self) -> Option<&[u32]> {
        self.weights.as_deref()
    }
}

/// A graph: `n` vertices, out-edges in CSR, and in-edges (the transpose) when built.
///
/// An undirected graph stores each edge in both directions (a self-loop once), so
/// its out-edges are also its in-edges.
#[derive(Debug)]
pub struct Graph {
    pub(crate) directed: bool,
    pub(crate) out: Adjacency,
    pub(crate) inc: Option<Adjacency>,
    /// The first vertex id of the input's own numbering: 1 for DIMACS, PACE and Matrix
    /// Market, 0 otherwise. Stored ids are 0-based; front ends show `id + id_base`.
    pub(crate) id_base: u32,
    /// Set when the graph is stored renumbered (`chatty convert --reorder`): the way
    /// between its ids and the input's, which front ends speak.
    pub(crate) order: Option<Arc<VertexOrder>>,
    /// The input's names of the vertices (indexed by input id), where they are not
    /// `id + id_base`: ids with gaps, or labels.
    pub(crate) names: Option<Arc<VertexNames>>,
}

/// The ids of a graph stored renumbered, for a vertex order that makes kernels faster
/// (hubs first, breadth-first), and the ids the input gave its vertices: sources
/// come in and answers go out in the input's ids, so the stored order is invisible to
/// the user. A permutation both ways, checked when built.
#[derive(Debug, PartialEq, Eq)]
pub struct VertexOrder {
    input: Vec<u32>,
    stored: Vec<u32>,
}

impl VertexOrder {
    /// The order whose stored vertex `v` was the input's vertex `input[v]`; refused
    /// unless `input` is a permutation of `0..input.len()`.
    pub fn from_input_ids(input: Vec<u32>) -> crate::Result<VertexOrder> {
        let stored = inverse_permutation(&input)?;
        Ok(VertexOrder { input, stored })
    }

    /// For each stored vertex, its id in the input.
    pub fn input_ids(&self) -> &[u32] {
        &self.input
    }

    /// For each input id, the stored vertex.
    pub fn stored_ids(&self) -> &[u32] {
        &self.stored
    }

    /// This order followed by a renumbering of its stored ids to `new_id` (`old_id`
    /// its inverse): where each vertex of the renumbered graph came from in the input.
    fn then(&self, old_id: &[u32], new_id: &[u32]) -> VertexOrder {
        VertexOrder {
            input: old_id.iter().map(|&v| self.input[v as usize]).collect(),
            stored: self.stored.iter().map(|&v| new_id[v as usize]).collect(),
        }
    }
}

impl Graph {
    /// A graph from its out-edges.
    pub fn from_adjacency(out: Adjacency, directed: bool) -> Graph {
        Graph { directed, out, inc: None, id_base: 0, order: None, names: None }
    }

    /// A directed graph from its out-edges and their transpose (not checked to agree).
    pub fn from_adjacencies(out: Adjacency, inc: Adjacency) -> Graph {
        Graph { directed: true, out, inc: Some(inc), id_base: 0, order: None, names: None }
    }

    /// Number of vertices.
    pub fn num_vertices(&self) -> usize {
        self.out.num_vertices()
    }

    /// Number of stored directed edges (an undirected edge counts twice, a self-loop once).
    pub fn num_edges(&self) -> u64 {
        self.out.num_edges()
    }

    /// Whether the graph is directed.
    pub fn is_directed(&self) -> bool {
        self.directed
    }

    /// The weight type.
    pub fn weight_type(&self) -> WeightType {
        self.out.weight_type
    }

    /// Out-edges.
    pub fn out_edges(&self) -> &Adjacency {
        &self.out
    }

    /// Whether in-edges are available without building them.
    pub fn has_in_edges(&self) -> bool {
        !self.directed || self.inc.is_some()
    }

    /// In-edges: the out-edges for an undirected graph, the stored transpose otherwise.
    ///
    /// # Panics
    /// If the graph is directed and [`Graph::with_in_edges`] was not called: engines
    /// that pull call it when they load the graph.
    pub fn in_edges(&self) -> &Adjacency {
        if !self.directed {
            return &self.out;
        }
        self.inc.as_ref().expect("in-edges not built: call Graph::with_in_edges first")
    }

    /// The stored transpose of a directed graph, if built (`None` for undirected graphs,
    /// whose in-edges are their out-edges).
    pub fn transpose_if_built(&self) -> Option<&Adjacency> {
        self.inc.as_ref()
    }

    /// The first vertex id of the input's numbering (1 for DIMACS, PACE and Matrix
    /// Market inputs, 0 otherwise); ids stored here are always 0-based.
    pub fn id_base(&self) -> u32 {
        self.id_base
    }

    /// The graph recording that its input numbered vertices from `base`.
    pub fn with_id_base(mut self, base: u32) -> Graph {
        self.id_base = base;
        self
    }

    /// The input's names of the vertices, where they are not numbers from
    /// [`Graph::id_base`] (indexed by input id: see [`Graph::order`]).
    pub fn names(&self) -> Option<&Arc<VertexNames>> {
        self.names.as_ref()
    }

    /// The graph with its vertices named `names` (one per vertex).
    pub fn with_names(mut self, names: Option<Arc<VertexNames>>) -> Graph {
        assert!(names.as_ref().is_none_or(|x| x.len() == self.num_vertices()), "one name per vertex");
        self.names = names;
        self
    }

    /// How the user names the vertices: the input's names, or numbers from the id base.
    pub fn naming(&self) -> Naming {
        match &self.names {
            Some(names) => Naming::Names(names.clone()),
            None => Naming::From(self.id_base),
        }
    }

    /// How the stored ids map to the input's, when the graph is stored renumbered.
    pub fn order(&self) -> Option<&Arc<VertexOrder>> {
        self.order.as_ref()
    }

    /// The graph with vertex `v` renamed `new_id[v]` (a permutation; `old_id` its
    /// inverse), remembering the input's ids: answers on it come back in them.
    pub(crate) fn record_renumbering(mut self, from: &Graph, old_id: Vec<u32>, new_id: Vec<u32>) -> Graph {
        self.order = Some(Arc::new(match &from.order {
            Some(o) => o.then(&old_id, &new_id),
            None => VertexOrder { input: old_id, stored: new_id },
        }));
        self
    }

    /// Bytes held by the arrays of this graph (offsets, targets, weights, transpose).
    pub fn size_bytes(&self) -> u64 {
        let adj =
            |a: &Adjacency| a.offsets.len() as u64 * 8 + a.targets.len() as u64 * 4 + a.weights.as_ref().map_or(0, |w| w.len() as u64 * 4);
        adj(&self.out)
            + self.inc.as_ref().map_or(0, adj)
            + self.order.as_ref().map_or(0, |o| o.input.len() as u64 * 8)
            + self.names.as_ref().map_or(0, |x| x.size_bytes())
    }
}

/// Offsets monotone, targets below n, each neighbour list sorted.
pub(crate) fn check_structure(adj: &Adjacency) -> std::result::Result<(), String> {
    check_lists(adj.offsets(), adj.targets(), adj.num_vertices() as u64, 0)
}

/// [`check_structure`] for rows `first..` of an adjacency of `n` vertices: `o` their
/// offsets into `t`.
pub(crate) fn check_lists(o: &[u64], t: &[u32], n: u64, first: usize) -> std::result::Result<(), String> {
    if let Some(i) = (0..o.len() - 1).into_par_iter().find_first(|&i| o[i] > o[i + 1]) {
        return Err(format!("offsets decrease at vertex {} ({} > {})", first + i, o[i], o[i + 1]));
    }
    // One pass per list: sorted, and so in range if its last target is.
    let bad = |i: usize| {
        let list = &t[o[i] as usize..o[i + 1] as usize];
        list.windows(2).any(|p| p[0] > p[1]) || list.last().is_some_and(|&x| x as u64 >= n)
    };
    if let Some(i) = (0..o.len() - 1).into_par_iter().with_min_len(1024).find_first(|&i| bad(i)) {
        let list = &t[o[i] as usize..o[i + 1] as usize];
        return Err(match list.iter().position(|&x| x as u64 >= n) {
            Some(j) => format!("edge {} targets vertex {} but there are only {n} vertices", o[i] + j as u64, list[j]),
            None => format!("the neighbour list of vertex {} is not sorted", first + i),
        });
    }
    Ok(())
}

/// The inverse of `perm` (`inverse[perm[i]] = i`), or an error if `perm` is not a
/// permutation of `0..perm.len()`. In parallel: renumbering a graph of millions of
/// vertices should cost its edges, not a serial pass over its vertices.
pub fn inverse_permutation(perm: &[u32]) -> Result<Vec<u32>> {
    let n = perm.len();
    let inverse: Vec<AtomicU32> = (0..n).into_par_iter().map(|_| AtomicU32::new(u32::MAX)).collect();
    let bad = perm
        .par_iter()
        .enumerate()
        .find_any(|&(i, &p)| (p as usize) >= n || inverse[p as usize].swap(i as u32, Ordering::Relaxed) != u32::MAX);
    if let Some((_, &p)) = bad {
        return Err(Error::Usage(format!("not a permutation of 0..{n} (id {p} is out of range or repeated)")));
    }
    Ok(inverse.into_par_iter().map(AtomicU32::into_inner).collect())
}
