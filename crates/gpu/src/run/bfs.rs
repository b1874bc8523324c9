//! BFS on one GPU: level by level (direction-optimising, Beamer et al., SC 2012), or
//! on road-like graphs as a hop-count SSSP with the block-local chase.

use chatty_algo::bfs::{BEAMER_ALPHA, BEAMER_BETA};
use chatty_algo::tuning::Tuning;
use chatty_comm::cuda::{Dev, Launch};
use cudarc::driver::{CudaEvent, CudaSlice};

use super::near_far::near_far;
use super::{drive, Pending, Step};
use crate::context::{Gpu, PERSISTENT_BLOCKS_PER_SM};
use crate::device_graph::{road_like, DeviceGraph};
use crate::launch;
use crate::layouts::{BfsCtl, BfsPull, BFS_DONE};
use crate::Result;

/// Blocks per SM of the BFS on graphs that are not road-like (roads run BFS through
/// the SSSP chase): its few big levels are bottom-up sweeps bound by memory latency,
/// which want warps in flight more than cheap barriers (kron22: the levels took
/// 0.74 ms launched one by one on 8 blocks per SM, 1.33 ms as one launch on 1).
const BFS_WIDE_BLOCKS_PER_SM: u32 = 8;

pub(super) fn bfs(gpu: &Gpu, dg: &DeviceGraph, source: u32, peak: &mut u64) -> Result<Step> {
    let (depth, levels, start) = bfs_depths(gpu, dg, source, true, peak)?;
    Ok((Pending::Depths(depth), levels, start, gpu.timer()?))
}

/// The near-far threshold step, in hops, at which a BFS runs as a hop-count SSSP with
/// the block-local chase (sssp.cu) rather than level by level: on graphs of mean degree
/// below 8 (roads), where a level holds little work and costs a grid barrier, the
/// chase settles many levels per barrier. Measured on one H200 (scripts/gpu_tune.sh
/// `SWEEPS=bfschase`, docs/benchmarks/gpu.md), level by level / delta 16 / 64 / 256:
/// moscow 3.46 / 2.90 / 2.49 / 2.44 ms, road-NE 9.68 / 9.42 / 8.09 / 7.92 ms, the 4096²
/// grid 59.6 / 35.2 / 33.0 / 32.4 ms. `CHATTY_BFS_CHASE_DELTA` overrides (0: off).
const BFS_CHASE_DELTA: u64 = 256;

fn bfs_chase_delta(dg: &DeviceGraph) -> Option<u64> {
    let delta = Tuning::get().bfs_chase_delta.unwrap_or(if road_like(dg.n, dg.m) { BFS_CHASE_DELTA } else { 0 });
    (delta > 0).then_some(delta)
}

/// Depths from `source` and the levels; bottom-up steps only if `pull` (they need
/// the in-edges of a directed graph); and an event recorded once the arrays are ready.
pub(super) fn bfs_depths(gpu: &Gpu, dg: &DeviceGraph, source: u32, pull: bool, peak: &mut u64) -> Result<(CudaSlice<u32>, u64, CudaEvent)> {
    let n = dg.n as u32;
    if let Some(delta) = bfs_chase_delta(dg) {
        let (dist, _, start) = near_far(gpu, dg, source, delta, None, peak)?;
        let depth = gpu.zeros::<u32>(dg.n, "depths")?;
        let deepest = gpu.zeros::<u32>(1, "the deepest level")?;
        // SAFETY: both arrays hold n entries; `deepest` one.
        unsafe { launch::distance_to_depth(gpu, Launch::Grid(gpu.cfg()), n, &dist, &depth, &deepest) }?;
        let levels = gpu.download(&deepest, 1, "the deepest level")?[0];
        return Ok((depth, levels as u64, start));
    }
    let mut depth = gpu.zeros::<u32>(dg.n, "depths")?;
    let mut queue0 = gpu.zeros::<u32>(dg.n, "queue")?;
    let queue1 = gpu.zeros::<u32>(dg.n, "queue")?;
    let hubs = gpu.zeros::<u32>(dg.n, "hub list")?;
    gpu.fill_u32(&mut depth, n, u32::MAX)?;
    gpu.set(&mut depth, source as usize, 0, "the source depth")?;
    gpu.set(&mut queue0, 0, source, "the first frontier")?;
    // bfs.cu's level bitmaps, level 0 (the source) in the first, and hub masks.
    let words = dg.n.div_ceil(32) as u32;
    let mut bits = gpu.zeros::<u32>(3 * words as usize, "level bitmaps")?;
    gpu.set(&mut bits, source as usize / 32, 1 << (source % 32), "the source's bit")?;
    let mut bfs_pull = BfsPull { levels: Dev::from(&bits).addr(), words, ..Default::default() };
    if let Some(h) = dg.pull_hubs.as_ref().filter(|_| Tuning::get().bfs_hub_masks) {
        (bfs_pull.hub_ids, bfs_pull.hub_masks) = (Dev::from(&h.ids).addr(), Dev::from(&h.masks).addr());
    }
    if !Tuning::get().bfs_bitmap {
        bfs_pull = BfsPull::default();
    }
    let ctl = gpu.control(&BfsCtl { level: 1, len: [1, 0], unexplored: dg.m, ..Default::default() })?;
    *peak = (*peak).max(gpu.used_bytes());
    let start = gpu.timer()?;
    let (in_off, in_adj) = (&dg.in_edges().off, &dg.in_edges().adj);
    // Beamer's alpha and beta; alpha 0 keeps every step top-down.
    let (alpha, beta) = (if pull { BEAMER_ALPHA as u32 } else { 0 }, BEAMER_BETA as u32);
    // Both drivers take the same leading arguments.
    macro_rules! bfs_launch {
        ($kernel:path, $how:expr, $($tail:expr),*) => {
            $kernel(gpu, $how, &ctl, &dg.out.off, &dg.out.adj, in_off, in_adj, &depth, &queue0, &queue1, &hubs, bfs_pull, $($tail),*)
        };
    }
    let c: BfsCtl = drive(
        gpu,
        &ctl,
        "bfs_persistent",
        if road_like(dg.n, dg.m) { PERSISTENT_BLOCKS_PER_SM } else { BFS_WIDE_BLOCKS_PER_SM },
        // SAFETY: queues hold n entries and a vertex enters a queue once. A cooperative
        // launch guarantees every block is resident, which the kernel's grid barrier needs.
        |cfg| unsafe { bfs_launch!(launch::bfs_persistent, Launch::Cooperative(cfg), n, alpha, beta) },
        // SAFETY: as above, for one level.
        || unsafe { bfs_launch!(launch::bfs_level, Launch::Grid(gpu.cfg()), 0, n, alpha, beta, 0) },
        |c: &BfsCtl| c.flags & BFS_DONE != 0,
    )?;
    Ok((depth, c.level as u64 - 1, start))
}
