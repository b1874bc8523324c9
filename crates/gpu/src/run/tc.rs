//! Triangle counting on one GPU (`kernels/tc.cu`): the oriented lists built on the
//! device in two passes (their offsets summed on the host between them), then one
//! intersection per oriented edge. Clustering divides the counts on the host.

use chatty_comm::cuda::Launch;
use cudarc::driver::CudaSlice;

use super::{Pending, Step};
use crate::context::Gpu;
use crate::device_graph::DeviceGraph;
use crate::{launch, GpuError, Result};

/// The triangles on each vertex.
pub(super) fn triangles(gpu: &Gpu, dg: &DeviceGraph, peak: &mut u64) -> Result<Step> {
    let (triangles, _, start, stop) = count(gpu, dg, peak)?;
    Ok((Pending::Triangles(triangles), 1, start, stop))
}

/// Each vertex's clustering coefficient (undirected graphs).
pub(super) fn clustering(gpu: &Gpu, dg: &DeviceGraph, peak: &mut u64) -> Result<Step> {
    chatty_algo::tc::clustering_defined(dg.directed).map_err(|e| GpuError::unsupported(e.to_string()))?;
    let (triangles, degrees, start, stop) = count(gpu, dg, peak)?;
    Ok((Pending::Clustering { triangles, degrees }, 1, start, stop))
}

/// The triangles on each vertex and its degree in the simple graph, and events
/// around the work (the host's sum of the list lengths included).
fn count(
    gpu: &Gpu,
    dg: &DeviceGraph,
    peak: &mut u64,
) -> Result<(CudaSlice<u64>, CudaSlice<u32>, cudarc::driver::CudaEvent, cudarc::driver::CudaEvent)> {
    let n = dg.n;
    let lengths = gpu.zeros::<u32>(n, "oriented list lengths")?;
    let split = gpu.zeros::<u32>(n, "oriented lists' first runs")?;
    let degrees = gpu.zeros::<u32>(n, "simple degrees")?;
    let (in_off, in_adj) = dg.inc.as_ref().map(|a| (&a.off, &a.adj)).unzip();
    // The first pass counts into `lengths` and `degrees`; the second writes the lists.
    type Lists<'a> = (&'a CudaSlice<u64>, &'a CudaSlice<u32>, &'a CudaSlice<u32>);
    let orient = |counts: Option<(&CudaSlice<u32>, &CudaSlice<u32>)>, lists: Option<Lists>| {
        let (lengths, degrees) = counts.unzip();
        let (dag_off, dag, src) = lists.map_or((None, None, None), |(o, d, s)| (Some(o), Some(d), Some(s)));
        // SAFETY: CSRs over n vertices (the in-edges both set or both null); the first
        // pass writes n entries of each count array, the second each vertex's own range
        // of the lists, which dag_off sums from the first pass's lengths.
        unsafe {
            launch::tc_orient(
                gpu,
                Launch::Grid(gpu.cfg()),
                n as u32,
                &dg.out.off,
                &dg.out.adj,
                in_off,
                in_adj,
                lengths,
                &split,
                degrees,
                dag_off,
                dag,
                src,
            )
        }
    };
    let start = gpu.timer()?;
    orient(Some((&lengths, &degrees)), None)?;
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0u64);
    for len in gpu.download(&lengths, n, "oriented list lengths")? {
        offsets.push(offsets[offsets.len() - 1] + len as u64);
    }
    drop(lengths);
    let m = offsets[n];
    let dag_off = gpu.upload(&offsets, "oriented offsets")?;
    let dag = gpu.zeros::<u32>(m as usize, "oriented lists")?;
    let src = gpu.zeros::<u32>(m as usize, "oriented edges' first vertices")?;
    let triangles = gpu.zeros::<u64>(n, "triangles")?;
    *peak = (*peak).max(gpu.used_bytes());
    orient(None, Some((&dag_off, &dag, &src)))?;
    // SAFETY: as above; `triangles` holds n zeroed counts.
    unsafe { launch::tc_count(gpu, Launch::Grid(gpu.cfg()), m, &dag_off, &split, &dag, &src, &triangles) }?;
    Ok((triangles, degrees, start, gpu.timer()?))
}
