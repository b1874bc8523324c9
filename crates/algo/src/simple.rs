//! The simple graph beneath a stored one, as networkx's `Graph` and `DiGraph` hold it:
//! a neighbour once however many parallel edges lead to it, and no self-loops. The
//! structural kernels ([`crate::tc`], [`crate::kcore`]) count neighbours, so they walk
//! adjacency lists through these functions rather than the raw CSR, which keeps
//! whatever the input had.

use chatty_graph::Graph;

use crate::{Error, Result};

/// Calls `f` on each distinct neighbour of `u` in the sorted list `list`, but `u`.
#[inline]
pub(crate) fn each_distinct(list: &[u32], u: u32, mut f: impl FnMut(u32)) {
    let mut last = None;
    for &v in list {
        if v != u && last != Some(v) {
            f(v);
            last = Some(v);
        }
    }
}

/// Calls `f` on each neighbour of `u` in the undirected simple graph (an edge either way
/// joins two vertices), in ascending order: the union of its out- and in-lists.
#[inline]
pub(crate) fn each_undirected(g: &Graph, u: u32, mut f: impl FnMut(u32)) {
    let out = g.out_edges().neighbors(u);
    if !g.is_directed() {
        return each_distinct(out, u, f);
    }
    let inc = g.in_edges().neighbors(u);
    let (mut i, mut j, mut last) = (0, 0, None);
    loop {
        let v = match (out.get(i), inc.get(j)) {
            (Some(&a), Some(&b)) if a <= b => {
                i += 1;
                a
            }
            (_, Some(&b)) => {
                j += 1;
                b
            }
            (Some(&a), None) => {
                i += 1;
                a
            }
            (None, None) => return,
        };
        if v != u && last != Some(v) {
            f(v);
            last = Some(v);
        }
    }
}

/// Refuses a directed graph whose in-edges were not built ([`crate::Engine::prepare`]
/// builds them for the kernels that read them), rather than panic on them.
pub(crate) fn need_in_edges(g: &Graph, kernel: &str) -> Result<()> {
    match g.has_in_edges() {
        true => Ok(()),
        false => Err(Error::Unsupported(format!("{kernel} on a directed graph needs its in-edges; none were built"))),
    }
}

/// The undirected simple graph's neighbour lists, sorted, built from the out-lists
/// alone: the references' own view, independent of [`each_undirected`] and of the
/// in-edges.
pub(crate) fn reference_lists(g: &Graph) -> Vec<Vec<u32>> {
    let n = g.num_vertices();
    let mut lists = vec![Vec::new(); n];
    for u in 0..n as u32 {
        for &v in g.out_edges().neighbors(u) {
            if u != v {
                lists[u as usize].push(v);
                lists[v as usize].push(u);
            }
        }
    }
    for l in &mut lists {
        l.sort_unstable();
        l.dedup();
    }
    lists
}
