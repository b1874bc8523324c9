//! Near-far SSSP on one GPU (Davidson et al., IPDPS 2014) with a block-local chase on
//! road-like graphs: the distances of SSSP, and the hop counts of BFS on roads.

use chatty_algo::tuning::Tuning;
use chatty_comm::cuda::{Dev, Launch};
use cudarc::driver::{CudaEvent, CudaSlice};

use super::drive;
use crate::context::{Gpu, PERSISTENT_BLOCKS_PER_SM};
use crate::device_graph::{road_like, DeviceGraph};
use crate::launch;
use crate::layouts::{SsspArrays, SsspCtl};
use crate::Result;

/// Block-local rounds per SSSP step (sssp.cu's `sssp_chase`): on graphs of mean degree
/// below 8 (roads) a step chases what it improved within each block; on power-law
/// graphs the buckets are wide and shallow and the grid-wide step already holds the
/// work (rmat22 with weights 1..255: 17.0 ms with or without). Measured on one H200
/// (scripts/gpu_tune.sh, docs/benchmarks/gpu.md): moscow 13.6 ms without, 5.8 / 4.5 /
/// 5.5 / 8.3 ms at 4 / 16 / 64 / 256 rounds; the 16M-vertex grid 639 ms without,
/// 99 ms at 16, 84 at 64. `CHATTY_SSSP_LOCAL_ROUNDS` overrides (0: off).
const SSSP_LOCAL_ROUNDS: u32 = 16;

/// The chase's rounds on a graph of `n` vertices and `m` stored edges (the multi-GPU
/// engine's Bellman–Ford rounds use it too).
pub(crate) fn sssp_local_rounds(n: usize, m: u64) -> u32 {
    Tuning::get().sssp_local_rounds.unwrap_or(if road_like(n, m) { SSSP_LOCAL_ROUNDS } else { 0 })
}

/// Near-far distances from `source` with threshold step `delta_bits` (in the
/// distances' encoding), and the grid-wide steps it took. `weights`: the graph's
/// weights, float or not; `None` counts every edge as 1 (hops).
pub(super) fn near_far(
    gpu: &Gpu,
    dg: &DeviceGraph,
    source: u32,
    delta_bits: u64,
    weights: Option<bool>,
    peak: &mut u64,
) -> Result<(CudaSlice<u64>, u64, CudaEvent)> {
    let n = dg.n as u32;
    let mut dist = gpu.zeros::<u64>(dg.n, "distances")?;
    gpu.fill_u64(&mut dist, n, u64::MAX)?;
    gpu.set(&mut dist, source as usize, 0, "the source distance")?;
    let stamp = gpu.zeros::<u32>(dg.n, "stamps")?;
    let in_far = gpu.zeros::<u32>(dg.n, "far flags")?;
    let mut near0 = gpu.zeros::<u32>(dg.n, "near queue")?;
    let near1 = gpu.zeros::<u32>(dg.n, "near queue")?;
    let far0 = gpu.zeros::<u32>(dg.n, "far pile")?;
    let far1 = gpu.zeros::<u32>(dg.n, "far pile")?;
    // A vertex is relaxed at most once per step.
    let hubs = gpu.zeros::<u32>(dg.hubs as usize, "hub list")?;
    gpu.set(&mut near0, 0, source, "the first frontier")?;
    let ctl = gpu.control(&SsspCtl {
        near_len: [1, 0],
        step: 1,
        threshold: delta_bits,
        far_min: u64::MAX,
        delta: delta_bits,
        ..Default::default()
    })?;
    let weight = match (weights, dg.out.weights.as_ref()) {
        (Some(_), Some(w)) => Dev::from(w).addr(),
        _ => 0,
    };
    let arrays = SsspArrays {
        off: Dev::from(&dg.out.off).addr(),
        adj: Dev::from(&dg.out.adj).addr(),
        weight,
        dist: Dev::from(&dist).addr(),
        stamp: Dev::from(&stamp).addr(),
        in_far: Dev::from(&in_far).addr(),
        near: [Dev::from(&near0).addr(), Dev::from(&near1).addr()],
        far: [Dev::from(&far0).addr(), Dev::from(&far1).addr()],
        hubs: Dev::from(&hubs).addr(),
        is_float: weights.unwrap_or(false) as u32,
        local_rounds: sssp_local_rounds(dg.n, dg.m),
        ..Default::default()
    };
    *peak = (*peak).max(gpu.used_bytes());
    let start = gpu.timer()?;
    let c: SsspCtl = drive(
        gpu,
        &ctl,
        "sssp_persistent",
        PERSISTENT_BLOCKS_PER_SM,
        |cfg| {
            // SAFETY: the arrays live until the run's result is read; near queues and
            // far piles hold n entries and admit a vertex at most once each (stamps,
            // far flags). Cooperative: see bfs.
            unsafe { launch::sssp_persistent(gpu, Launch::Cooperative(cfg), &ctl, arrays) }
        },
        // SAFETY: as above, for one step.
        || unsafe { launch::sssp_step(gpu, Launch::Grid(gpu.cfg()), &ctl, arrays) },
        |c: &SsspCtl| c.done != 0,
    )?;
    Ok((dist, c.step as u64 - 1, start))
}
