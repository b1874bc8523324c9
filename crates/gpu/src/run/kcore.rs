//! k-core decomposition on one GPU (`kernels/kcore.cu`): the degrees, then scan and
//! peel steps in batches until the device says every vertex is placed.

use chatty_comm::cuda::Launch;

use super::{device_loop, Pending, Step};
use crate::context::Gpu;
use crate::device_graph::DeviceGraph;
use crate::layouts::QueueCtl;
use crate::{launch, Result};

pub(super) fn kcore(gpu: &Gpu, dg: &DeviceGraph, peak: &mut u64) -> Result<Step> {
    let n = dg.n as u32;
    let degree = gpu.zeros::<u32>(dg.n, "degrees")?;
    let mut core = gpu.zeros::<u32>(dg.n, "core numbers")?;
    gpu.fill_u32(&mut core, n, u32::MAX)?;
    let queue0 = gpu.zeros::<u32>(dg.n, "queue")?;
    let queue1 = gpu.zeros::<u32>(dg.n, "queue")?;
    let ctl = gpu.control(&QueueCtl { scan: 1, least: u32::MAX, ..Default::default() })?;
    *peak = (*peak).max(gpu.used_bytes());
    let (in_off, in_adj) = dg.inc.as_ref().filter(|_| dg.directed).map(|a| (&a.off, &a.adj)).unzip();
    let start = gpu.timer()?;
    // SAFETY: CSRs over n vertices (the in-edges both set or both null); `degree` holds n.
    unsafe { launch::kcore_degrees(gpu, Launch::Grid(gpu.cfg()), n, &dg.out.off, &dg.out.adj, in_off, in_adj, &degree) }?;
    device_loop(
        gpu,
        &ctl,
        |c: &QueueCtl| c.done != 0,
        // SAFETY: as above; each queue holds n entries and a vertex is queued once.
        || unsafe {
            launch::kcore_step(
                gpu,
                Launch::Grid(gpu.cfg()),
                n,
                &dg.out.off,
                &dg.out.adj,
                in_off,
                in_adj,
                &degree,
                &core,
                &queue0,
                &queue1,
                &ctl,
            )
        },
    )?;
    Ok((Pending::Cores(core), 1, start, gpu.timer()?))
}
