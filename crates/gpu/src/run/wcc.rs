//! WCC on one GPU by Afforest (Sutton et al., IPDPS 2018), and its steps over one
//! adjacency given as its offsets and targets: the single-GPU kernel runs them once;
//! the multi-GPU one on each part's rows, merging the parts' forests between them.

use chatty_comm::cuda::{Dev, Launch};
use cudarc::driver::CudaSlice;

use super::{Pending, Step};
use crate::context::Gpu;
use crate::device_graph::DeviceGraph;
use crate::launch;
use crate::Result;

pub(super) fn wcc(gpu: &Gpu, dg: &DeviceGraph, peak: &mut u64) -> Result<Step> {
    let n = dg.n as u32;
    let comp = gpu.zeros::<u32>(dg.n, "labels")?;
    let sampled = gpu.zeros::<u32>(SAMPLES as usize, "sampled labels")?;
    *peak = (*peak).max(gpu.used_bytes());
    let start = gpu.timer()?;
    let edges = (&dg.out.off, &dg.out.adj);
    link_first(gpu, n, edges, &comp)?;
    // The largest intermediate component may skip its vertices' edges only if every
    // edge into it is seen from its other end: undirected, or in-edges on the device.
    let in_edges = dg.inc.as_ref().filter(|_| dg.directed).map(|a| (&a.off, &a.adj));
    let skip = if dg.directed && in_edges.is_none() { u32::MAX } else { largest(gpu, n, &comp, &sampled)? };
    link_rest(gpu, n, edges, in_edges, &comp, skip)?;
    compress(gpu, n, &comp)?;
    Ok((Pending::Labels(comp), NEIGHBOR_ROUNDS as u64 + 1, start, gpu.timer()?))
}

/// Sampling rounds: each vertex links to this many of its first neighbours.
pub(crate) const NEIGHBOR_ROUNDS: u32 = 2;
/// Labels sampled to find the largest intermediate component.
pub(crate) const SAMPLES: u32 = 1024;

pub(crate) type Edges<'a> = (&'a CudaSlice<u64>, &'a CudaSlice<u32>);

/// Every vertex its own component, then linked to its first `NEIGHBOR_ROUNDS`
/// neighbours, compressing after each round.
pub(crate) fn link_first(gpu: &Gpu, n: u32, (off, adj): Edges, comp: &CudaSlice<u32>) -> Result<()> {
    // SAFETY: comp holds n labels.
    unsafe { launch::iota_u32(gpu, Launch::Grid(gpu.cfg()), comp, n) }?;
    for r in 0..NEIGHBOR_ROUNDS {
        // SAFETY: a CSR over n vertices; the kernel reads an edge only below off[u + 1].
        unsafe { launch::wcc_sample(gpu, Launch::Grid(gpu.cfg()), n, off, adj, comp, r) }?;
        compress(gpu, n, comp)?;
    }
    Ok(())
}

/// Points every vertex at its root.
pub(crate) fn compress(gpu: &Gpu, n: u32, comp: &CudaSlice<u32>) -> Result<()> {
    // SAFETY: comp holds n labels, each a vertex below n.
    unsafe { launch::wcc_compress(gpu, Launch::Grid(gpu.cfg()), n, comp) }
}

/// The most frequent root among `SAMPLES` vertices of a compressed `comp`
/// (`sampled` holds them; the host waits for this).
pub(crate) fn largest(gpu: &Gpu, n: u32, comp: &CudaSlice<u32>, sampled: &CudaSlice<u32>) -> Result<u32> {
    if n == 0 {
        return Ok(u32::MAX);
    }
    // SAFETY: comp holds n labels; `sampled` holds SAMPLES.
    unsafe { launch::wcc_sample_labels(gpu, Launch::Grid(gpu.cfg()), n, comp, sampled, SAMPLES) }?;
    Ok(most_frequent(gpu.download(sampled, SAMPLES as usize, "sampled labels")?))
}

/// Vertices outside component `skip` link along the rest of their edges and all
/// of `in_edges` (a directed graph's, where the largest component is skipped).
pub(crate) fn link_rest(gpu: &Gpu, n: u32, (off, adj): Edges, in_edges: Option<Edges>, comp: &CudaSlice<u32>, skip: u32) -> Result<()> {
    // SAFETY: CSRs over n vertices; the in-edge pointers are both null or both set.
    unsafe {
        launch::wcc_finish(
            gpu,
            Launch::Grid(gpu.cfg()),
            n,
            off,
            adj,
            in_edges.map(|e| e.0),
            in_edges.map(|e| e.1),
            comp,
            skip,
            NEIGHBOR_ROUNDS,
        )
    }
}

/// Joins into `comp` the forest `other` (another part's labels of the same `n`
/// vertices), then compresses: the union of both parts' components.
pub(crate) fn merge(gpu: &Gpu, n: u32, comp: &CudaSlice<u32>, other: u64) -> Result<()> {
    // SAFETY: `other` holds n labels on this GPU.
    unsafe { launch::wcc_merge(gpu, Launch::Grid(gpu.cfg()), n, comp, Dev::<u32>::at(other)) }?;
    compress(gpu, n, comp)
}

/// The most frequent value of `labels` (the smallest among ties).
fn most_frequent(mut labels: Vec<u32>) -> u32 {
    labels.sort_unstable();
    let mut best = (0, u32::MAX);
    for run in labels.chunk_by(|a, b| a == b) {
        if run.len() > best.0 {
            best = (run.len(), run[0]);
        }
    }
    best.1
}
