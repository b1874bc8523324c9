//! Strongly connected components on one GPU (`kernels/scc.cu`): the host sequences
//! Multistep's phases (trimming, forward-backward from a pivot, colouring rounds), each
//! phase's steps running in batches with the control on the device. An undirected
//! graph's strong components are its weak ones: WCC answers.

use chatty_comm::cuda::Launch;

use super::{device_loop, wcc, Pending, Step};
use crate::context::Gpu;
use crate::device_graph::DeviceGraph;
use crate::layouts::QueueCtl;
use crate::{launch, GpuError, Result};

/// Trimming passes before the forward-backward search: each scans every live vertex,
/// and colouring places what trimming leaves.
const TRIM_PASSES: u32 = 32;

pub(super) fn scc(gpu: &Gpu, dg: &DeviceGraph, peak: &mut u64) -> Result<Step> {
    if !dg.directed {
        return wcc::wcc(gpu, dg, peak);
    }
    let inc = dg.inc.as_ref().ok_or_else(|| GpuError::unsupported("scc needs the in-edges uploaded"))?;
    let (out, n) = (&dg.out, dg.n as u32);
    let mut label = gpu.zeros::<u32>(dg.n, "labels")?;
    gpu.fill_u32(&mut label, n, u32::MAX)?;
    let mut mark = gpu.zeros::<u32>(dg.n, "search marks")?;
    let colour = gpu.zeros::<u32>(dg.n, "colours")?;
    let stamp = gpu.zeros::<u32>(dg.n, "queue stamps")?;
    let mut queue0 = gpu.zeros::<u32>(dg.n, "queue")?;
    let queue1 = gpu.zeros::<u32>(dg.n, "queue")?;
    let ctl = gpu.control(&QueueCtl::default())?;
    *peak = (*peak).max(gpu.used_bytes());
    let grid = || Launch::Grid(gpu.cfg());
    let done = |c: &QueueCtl| c.done != 0;
    let start = gpu.timer()?;
    // SAFETY (every launch below): CSRs over n vertices, arrays of n entries, queues
    // into which a vertex enters at most once per step.
    device_loop(gpu, &ctl, done, || unsafe {
        launch::scc_trim(gpu, grid(), n, &out.off, &out.adj, &inc.off, &inc.adj, &label, TRIM_PASSES, &ctl)
    })?;
    gpu.write_control(&ctl, &QueueCtl::default())?;
    unsafe { launch::scc_pivot(gpu, grid(), n, &out.off, &inc.off, &label, &ctl) }?;
    let best = gpu.read_control(&ctl)?.best;
    if best != 0 {
        let pivot = u32::MAX - best as u32;
        gpu.set(&mut mark, pivot as usize, 3, "the pivot's marks")?;
        for (bit, edges) in [(1, out), (2, inc)] {
            gpu.write_control(&ctl, &QueueCtl { len: [1, 0], ..Default::default() })?;
            gpu.set(&mut queue0, 0, pivot, "the pivot")?;
            device_loop(gpu, &ctl, done, || unsafe {
                launch::scc_reach(gpu, grid(), &edges.off, &edges.adj, &label, &mark, bit, &queue0, &queue1, &ctl)
            })?;
        }
        gpu.write_control(&ctl, &QueueCtl { least: u32::MAX, ..Default::default() })?;
        unsafe { launch::scc_both_least(gpu, grid(), n, &mark, &ctl) }?;
        unsafe { launch::scc_place_both(gpu, grid(), n, &label, &mark, &ctl) }?;
    }
    let mut epoch = 1;
    loop {
        gpu.write_control(&ctl, &QueueCtl::default())?;
        unsafe { launch::scc_count_live(gpu, grid(), n, &label, &ctl) }?;
        if gpu.read_control(&ctl)?.left == 0 {
            break;
        }
        gpu.write_control(&ctl, &QueueCtl::default())?;
        unsafe { launch::scc_colour_init(gpu, grid(), n, &label, &colour, &queue0, &ctl) }?;
        let spread = device_loop(gpu, &ctl, done, || unsafe {
            launch::scc_spread(gpu, grid(), &out.off, &out.adj, &label, &colour, &stamp, epoch, &queue0, &queue1, &ctl)
        })?;
        epoch += spread.steps + 1;
        gpu.write_control(&ctl, &QueueCtl::default())?;
        unsafe { launch::scc_roots(gpu, grid(), n, &label, &colour, &queue0, &ctl) }?;
        device_loop(gpu, &ctl, done, || unsafe {
            launch::scc_gather(gpu, grid(), &inc.off, &inc.adj, &label, &colour, &queue0, &queue1, &ctl)
        })?;
    }
    Ok((Pending::Labels(label), 1, start, gpu.timer()?))
}
