//! The pull kernels over in-edges, binned by in-degree, and the two kernels made of
//! them: PageRank (Page et al., 1999) and SpMV.

use chatty_algo::Params;
use chatty_comm::cuda::{Check, Launch};
use chatty_graph::{Progress, WeightType};
use cudarc::driver::{CudaSlice, LaunchConfig};

use super::{Pending, Step};
use crate::context::Gpu;
use crate::device_graph::{DeviceGraph, PullGraph};
use crate::launch;
use crate::{GpuError, Result};

/// Threads of a block of `pull_huge`.
const HUGE_BLOCK: u32 = 1024;

/// Arguments of the pull kernels that differ between PageRank and SpMV.
pub(crate) struct PullArgs<'a> {
    pub contrib: Option<&'a CudaSlice<f32>>,
    pub x: Option<&'a CudaSlice<f64>>,
    pub y: &'a CudaSlice<f64>,
    pub score: Option<&'a CudaSlice<f64>>,
    pub contrib_next: Option<&'a CudaSlice<f32>>,
    pub base: f64,
    pub damping: f64,
    pub sums: Option<&'a CudaSlice<f64>>,
}

/// One launch per degree bin of the pull kernels (a thread, a warp or a block per
/// vertex), which share their parameters.
pub(crate) fn pull(gpu: &Gpu, pg: &PullGraph, a: &PullArgs) -> Result<()> {
    let wkind: u32 = match (a.x.is_some(), pg.weight_type) {
        (false, _) | (_, WeightType::None) => 0,
        (_, WeightType::Int) => 1,
        (_, WeightType::Float) => 2,
    };
    let weights = pg.in_weights.filter(|_| wkind != 0);
    for (bin, (vertices, count)) in pg.bins.0.iter().enumerate() {
        let count = *count;
        if count == 0 {
            continue;
        }
        macro_rules! pull_bin {
            ($kernel:path, $cfg:expr) => {
                $kernel(
                    gpu,
                    Launch::Grid($cfg),
                    vertices,
                    count,
                    pg.in_off,
                    pg.in_adj,
                    a.contrib,
                    a.x,
                    weights,
                    wkind,
                    a.y,
                    a.score,
                    a.contrib_next,
                    pg.out_off,
                    a.base,
                    a.damping,
                    a.sums,
                )
            };
        }
        // SAFETY: the bins' vertices index the in-edges' CSR; null pointers are passed
        // exactly where the kernels test for them (contrib vs x, weights, score, sums).
        unsafe {
            match bin {
                0 => pull_bin!(launch::pull_small, gpu.cfg()),
                1 => pull_bin!(launch::pull_large, gpu.cfg()),
                _ => pull_bin!(
                    launch::pull_huge,
                    LaunchConfig { grid_dim: (count.min(gpu.sms * 4), 1, 1), block_dim: (HUGE_BLOCK, 1, 1), shared_mem_bytes: 0 }
                ),
            }
        }?;
    }
    Ok(())
}

pub(super) fn pagerank(gpu: &Gpu, dg: &DeviceGraph, p: &Params, progress: &dyn Progress, peak: &mut u64) -> Result<Step> {
    let n = dg.n;
    let mut score = gpu.zeros::<f64>(n, "scores")?;
    gpu.fill_f64(&mut score, n as u32, 1.0 / n.max(1) as f64)?;
    let mut next = gpu.zeros::<f64>(n, "scores")?;
    let mut contrib = gpu.zeros::<f32>(n, "contributions")?;
    let mut contrib_next = gpu.zeros::<f32>(n, "contributions")?;
    let mut sums = gpu.zeros::<f64>(2, "sums")?;
    *peak = (*peak).max(gpu.used_bytes());
    let start = gpu.timer()?;
    // SAFETY: scores and contributions hold n entries, sums two.
    unsafe { launch::pr_init(gpu, Launch::Grid(gpu.cfg()), n as u32, &score, &contrib, &dg.out.off, &sums) }?;
    // The sums: the last iteration's change, and the dangling mass of the scores.
    let mut dangling = gpu.download(&sums, 2, "sums")?[1];
    let (iters, _) = p.pr.iterate(n, progress, |_| {
        gpu.stream.memset_zeros(&mut sums).check("clearing sums")?;
        let base = p.pr.spread(dangling) / n as f64;
        pull(
            gpu,
            &dg.pull_graph(),
            &PullArgs {
                contrib: Some(&contrib),
                x: None,
                y: &next,
                score: Some(&score),
                contrib_next: Some(&contrib_next),
                base,
                damping: p.pr.damping,
                sums: Some(&sums),
            },
        )?;
        std::mem::swap(&mut score, &mut next);
        std::mem::swap(&mut contrib, &mut contrib_next);
        let [change, next_dangling]: [f64; 2] = gpu.download(&sums, 2, "sums")?.try_into().expect("two sums");
        dangling = next_dangling;
        Ok::<_, GpuError>(change)
    })?;
    Ok((Pending::PageRank { scores: score, sums }, iters as u64, start, gpu.timer()?))
}

pub(super) fn spmv(gpu: &Gpu, dg: &DeviceGraph, x: Option<&[f64]>, peak: &mut u64) -> Result<Step> {
    let x = gpu.spmv_x(x, dg.n)?;
    let y = gpu.zeros::<f64>(dg.n, "y")?;
    *peak = (*peak).max(gpu.used_bytes());
    let start = gpu.timer()?;
    pull(
        gpu,
        &dg.pull_graph(),
        &PullArgs { contrib: None, x: Some(&x), y: &y, score: None, contrib_next: None, base: 0.0, damping: 0.0, sums: None },
    )?;
    Ok((Pending::Values(y), 1, start, gpu.timer()?))
}
