//! Vertex orders on the devices. A renumbering is applied on the host before upload
//! and undone on every answer, so callers see their own ids: breadth-first order keeps
//! road networks' neighbours in one part (few boundary vertices between GPUs); degree
//! order puts the hubs first, so a bottom-up BFS step finds a parent on its first probe
//! and the frontier words it asks about stay in cache.

use std::time::Instant;

use chatty_algo::Output;
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
    /// The engine's choice: breadth-first where a split over several GPUs cuts a
    /// road-like graph ([`crate::multi::choose_order`]), else the graph's own (one GPU
    /// keeps it: reordering costs more than it saves in one run).
    Auto,
}

impl Order {
    /// The name reports use.
    pub fn name(self) -> &'static str {
        match self {
            Order::Natural => "none",
            Order::Bfs => "bfs",
            Order::Degree => "degree",
            Order::Auto => "auto",
        }
    }

    /// `new_id[v]` for each vertex v of `g` in this order; `None` for the natural one
    /// (and for `Auto`, which a split resolves before it gets here).
    pub fn new_id(self, g: &Graph) -> Option<Vec<u32>> {
        match self {
            Order::Natural | Order::Auto => None,
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
        let graph = chatty_graph::transform::relabel(g, &new_id).map_err(|e| GpuError::unsupported(e.to_string()))?;
        Ok(Some(Renumbering { new_id, graph, seconds: start.elapsed().as_secs_f64() }))
    }
}

/// The caller's vertex `v` on the devices.
pub(crate) fn to_device(new_id: Option<&[u32]>, v: u32) -> u32 {
    new_id.map_or(v, |id| id[v as usize])
}

/// A result in the devices' order, in the caller's.
pub(crate) fn output_to_caller(new_id: Option<&[u32]>, o: Output) -> Output {
    match new_id {
        Some(id) => chatty_algo::renumber::output_to_caller(id, o),
        None => o,
    }
}
