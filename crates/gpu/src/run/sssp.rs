//! SSSP on one GPU: near-far ([`super::near_far`]), or a BFS times the weight where
//! every edge weighs the same.

use chatty_comm::cuda::Launch;
use chatty_graph::WeightType;

use super::bfs::bfs_depths;
use super::near_far::near_far;
use super::{Pending, Step};
use crate::context::Gpu;
use crate::device_graph::DeviceGraph;
use crate::launch;
use crate::Result;

pub(super) fn sssp(gpu: &Gpu, dg: &DeviceGraph, source: u32, delta: f64, peak: &mut u64) -> Result<Step> {
    let n = dg.n as u32;
    if let Some(weight) = dg.uniform_weight {
        // Every edge weighs the same: distances are depths times the weight.
        let dist = gpu.zeros::<u64>(dg.n, "distances")?;
        let pull = !dg.directed || dg.inc.is_some();
        let (depth, levels, start) = bfs_depths(gpu, dg, source, pull, peak)?;
        // SAFETY: both arrays hold n entries.
        unsafe { launch::depth_to_distance(gpu, Launch::Grid(gpu.cfg()), n, &depth, &dist, weight) }?;
        return Ok((Pending::IntDistances(dist), levels, start, gpu.timer()?));
    }
    let is_float = dg.weight_type == WeightType::Float;
    let delta_bits = if is_float { delta.to_bits() } else { delta.round().max(1.0) as u64 };
    let (dist, steps, start) = near_far(gpu, dg, source, delta_bits, Some(is_float), peak)?;
    let pending = if is_float { Pending::FloatDistances(dist) } else { Pending::IntDistances(dist) };
    Ok((pending, steps, start, gpu.timer()?))
}
