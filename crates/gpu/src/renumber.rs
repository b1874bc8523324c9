//! Vertex orders on the devices. A renumbering is applied on the host before upload
//! and undone on every answer, so callers see their own ids: breadth-first order keeps
//! road networks' neighbours in one part (few boundary vertices between GPUs); degree
//! order puts the hubs first, so a bottom-up BFS step finds a parent on its first probe
//! and the frontier words it asks about stay in cache.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use chatty_algo::{Distances, Output};
use chatty_graph::Graph;

use crate::{GpuError, Result};

/// The vertex order a graph is uploaded in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Order {
    /// The graph's own.
    #[default]
    Natural,
    /// Breadth-first from vertex 0 (and each unreached vertex in turn).
    Bfs,
    /// By decreasing out-degree.
    Degree,
}

impl Order {
    /// The name reports use.
    pub fn name(self) -> &'static str {
        match self {
            Order::Natural => "none",
            Order::Bfs => "bfs",
            Order::Degree => "degree",
        }
    }

    /// `new_id[v]` for each vertex v of `g` in this order; `None` for the natural one.
    pub fn new_id(self, g: &Graph) -> Option<Vec<u32>> {
        match self {
            Order::Natural => None,
            Order::Bfs => Some(chatty_graph::partition::bfs_order(g)),
            Order::Degree => Some(chatty_graph::transform::degree_order(g)),
        }
    }
}

/// A graph renumbered for the devices, and the way back.
pub(crate) struct Renumbering {
    /// `new_id[v]`: the device id of the caller's vertex v.
    pub new_id: Vec<u32>,
    /// The renumbered graph (in-edges rebuilt if the original had them).
    pub graph: Graph,
    /// Seconds to compute the order and rebuild the graph.
    pub seconds: f64,
}

impl Renumbering {
    /// `g` in `order`; `None` for the natural order.
    pub fn of(g: &Graph, order: Order) -> Result<Option<Renumbering>> {
        let start = Instant::now();
        let Some(new_id) = order.new_id(g) else { return Ok(None) };
        let graph = chatty_graph::transform::relabel(g, &new_id).map_err(|e| GpuError::Unsupported(e.to_string()))?;
        Ok(Some(Renumbering { new_id, graph, seconds: start.elapsed().as_secs_f64() }))
    }
}

/// The caller's vertex `v` on the devices.
pub(crate) fn to_device(new_id: Option<&[u32]>, v: u32) -> u32 {
    new_id.map_or(v, |id| id[v as usize])
}

/// Per-vertex values in the caller's order, moved to the devices' order.
pub(crate) fn values_to_device(new_id: &[u32], x: &[f64]) -> Vec<f64> {
    let mut y = vec![0.0; x.len()];
    new_id.iter().zip(x).for_each(|(&i, &v)| y[i as usize] = v);
    y
}

/// A result in the devices' order, in the caller's.
pub(crate) fn output_to_caller(new_id: Option<&[u32]>, o: Output) -> Output {
    let Some(id) = new_id else { return o };
    fn back<T: Copy + Send + Sync>(id: &[u32], v: &[T]) -> Vec<T> {
        id.par_iter().map(|&i| v[i as usize]).collect()
    }
    match o {
        Output::Depths(d) => Output::Depths(back(id, &d)),
        Output::Distances(Distances::Int(d)) => Output::Distances(Distances::Int(back(id, &d))),
        Output::Distances(Distances::Float(d)) => Output::Distances(Distances::Float(back(id, &d))),
        Output::Values(v) => Output::Values(back(id, &v)),
        Output::Labels(l) => Output::Labels(smallest_members(&back(id, &l))),
    }
}

/// Each vertex's label replaced by the smallest vertex carrying the same label (a
/// component's label is its smallest id, which renumbering changes).
fn smallest_members(labels: &[u32]) -> Vec<u32> {
    let smallest: Vec<AtomicU32> = (0..labels.len()).into_par_iter().map(|_| AtomicU32::new(u32::MAX)).collect();
    // Most vertices share a few labels: a load first keeps those cache lines shared
    // instead of bouncing an atomic between every thread.
    labels.par_iter().enumerate().for_each(|(v, &c)| {
        let cell = &smallest[c as usize];
        if (v as u32) < cell.load(Ordering::Relaxed) {
            cell.fetch_min(v as u32, Ordering::Relaxed);
        }
    });
    labels.par_iter().map(|&c| smallest[c as usize].load(Ordering::Relaxed)).collect()
}

#[cfg(test)]
mod tests {
    use super::smallest_members;

    #[test]
    fn labels_become_the_smallest_member_of_their_class() {
        // Vertex v in class (v * 7) % 5, classes named by an arbitrary member.
        let n = 100_000u32;
        let name = |class: u32| (0..n).rev().find(|&v| (v * 7) % 5 == class).unwrap();
        let labels: Vec<u32> = (0..n).map(|v| name((v * 7) % 5)).collect();
        let got = smallest_members(&labels);
        for v in 0..n {
            let class = (v * 7) % 5;
            assert_eq!(got[v as usize], (0..n).find(|&u| (u * 7) % 5 == class).unwrap(), "vertex {v}");
        }
        // One class over everything: the case that made a plain fetch_min contend.
        assert!(smallest_members(&vec![7; 1_500_000]).iter().all(|&x| x == 0));
    }
}
