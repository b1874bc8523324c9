//! A graph in device memory: its edges (out, and in for a directed graph), its
//! vertices binned by in-degree for the pull kernels, and the hub masks of the
//! bottom-up BFS.

use std::time::Instant;

use chatty_comm::cuda::{Check, Launch};
use chatty_graph::{Graph, WeightType};
use cudarc::driver::{CudaSlice, LaunchConfig};
use rayon::prelude::*;

use crate::context::Gpu;
use crate::launch;
use crate::{GpuError, Result};

/// In-degree below which a pull gives a vertex one thread rather than a warp.
const SMALL_DEGREE: u64 = 32;
/// In-degree from which a pull gives a vertex a block of `HUGE_BLOCK` threads.
const HUGE_DEGREE: u64 = 8192;

/// One direction of a graph's edges in device memory.
pub(crate) struct DeviceAdjacency {
    pub(crate) off: CudaSlice<u64>,
    pub(crate) adj: CudaSlice<u32>,
    pub(crate) weights: Option<CudaSlice<u32>>,
}

impl DeviceAdjacency {
    fn upload(gpu: &Gpu, a: &chatty_graph::Adjacency) -> Result<DeviceAdjacency> {
        Ok(DeviceAdjacency {
            off: gpu.upload(a.offsets(), "offsets")?,
            adj: gpu.upload(a.targets(), "targets")?,
            weights: a.raw_weights().map(|w| gpu.upload(w, "weights")).transpose()?,
        })
    }
}

/// A graph in device memory.
pub struct DeviceGraph {
    pub(crate) n: usize,
    pub(crate) m: u64,
    pub(crate) directed: bool,
    pub(crate) weight_type: WeightType,
    pub(crate) out: DeviceAdjacency,
    /// In-edges of a directed graph (`None`: undirected, use the out-edges).
    pub(crate) inc: Option<DeviceAdjacency>,
    pub(crate) bins: Bins,
    /// The weight of every edge, where all are equal and integers (an unweighted graph:
    /// 1): SSSP then runs as a BFS.
    pub(crate) uniform_weight: Option<u32>,
    /// Vertices of out-degree `HUB_DEGREE` or more (BC sets their pairs aside).
    pub(crate) hubs: u32,
    /// bfs.cu's hub masks for bottom-up steps (power-law graphs with pull edges).
    pub(crate) pull_hubs: Option<PullHubs>,
    /// Seconds the upload took (the copies, binning vertices by degree, the hub masks).
    pub upload_seconds: f64,
    /// Of which: the edges' allocations and copies.
    pub edges_seconds: f64,
    /// Of those: the host's copies into the pinned staging (the rest is allocation and
    /// the DMA the copies did not hide).
    pub host_copy_seconds: f64,
    /// Bytes uploaded.
    pub upload_bytes: u64,
}

/// Device bytes a run needs per vertex beyond the graph (queues, distances, scores,
/// the BFS hub masks).
const WORK_BYTES_PER_VERTEX: u64 = 57;

impl DeviceGraph {
    /// Device bytes `g` and a run's per-vertex working arrays need on one GPU.
    pub fn bytes_needed(g: &Graph) -> u64 {
        g.size_bytes() + (g.num_vertices() as u64 + 1) * WORK_BYTES_PER_VERTEX
    }

    /// Uploads `g` (with its in-edges if it is directed and has them), refusing up
    /// front when it cannot fit beside the per-vertex working arrays.
    pub fn upload(gpu: &Gpu, g: &Graph) -> Result<DeviceGraph> {
        let n = g.num_vertices();
        if n >= u32::MAX as usize {
            return Err(GpuError::TooManyVertices { vertices: n });
        }
        let needed = DeviceGraph::bytes_needed(g);
        let (free, _) = gpu.ctx.mem_get_info().check("querying memory")?;
        if needed > free as u64 {
            return Err(GpuError::OutOfMemory { device: gpu.name.clone(), needed_mib: needed >> 20, free_mib: free as u64 >> 20 });
        }
        let out = g.out_edges();
        let inc_adj = if g.is_directed() { g.transpose_if_built() } else { None };
        let pull = inc_adj.unwrap_or(out);
        let uniform_weight = uniform_weight(out);
        let hubs = (0..n as u32).into_par_iter().filter(|&v| out.degree(v) as u64 >= HUB_DEGREE).count() as u32;
        let start = Instant::now();
        let copied_before = gpu.host_copy_seconds();
        let out_edges = DeviceAdjacency::upload(gpu, out)?;
        let inc = inc_adj.map(|a| DeviceAdjacency::upload(gpu, a)).transpose()?;
        gpu.stream.synchronize().check("uploading the edges")?;
        let (edges_seconds, host_copy_seconds) = (start.elapsed().as_secs_f64(), gpu.host_copy_seconds() - copied_before);
        let dg = DeviceGraph {
            n,
            m: g.num_edges(),
            directed: g.is_directed(),
            weight_type: g.weight_type(),
            out: out_edges,
            inc,
            bins: Bins::upload(gpu, 0..n as u32, |v| pull.degree(v) as u64)?,
            uniform_weight,
            hubs,
            pull_hubs: None,
            upload_seconds: 0.0,
            upload_bytes: g.size_bytes() + 4 * n as u64,
            edges_seconds,
            host_copy_seconds,
        };
        let pulls = !g.is_directed() || inc_adj.is_some();
        let pull_hubs = (pulls && !road_like(n, g.num_edges())).then(|| PullHubs::build(gpu, &dg, pull)).transpose()?;
        let dg = DeviceGraph { pull_hubs, ..dg };
        gpu.stream.synchronize().check("uploading the graph")?;
        Ok(DeviceGraph { upload_seconds: start.elapsed().as_secs_f64(), ..dg })
    }

    pub(crate) fn in_edges(&self) -> &DeviceAdjacency {
        self.inc.as_ref().unwrap_or(&self.out)
    }

    /// Whether the in-edges of a directed graph were uploaded.
    pub(crate) fn has_in_edges(&self) -> bool {
        self.inc.is_some()
    }

    pub(crate) fn pull_graph(&self) -> PullGraph<'_> {
        let inc = self.in_edges();
        PullGraph {
            in_off: &inc.off,
            in_adj: &inc.adj,
            in_weights: inc.weights.as_ref(),
            out_off: &self.out.off,
            bins: &self.bins,
            weight_type: self.weight_type,
        }
    }
}

/// `PULL_HUBS` in bfs.cu: the vertices whose in-edges its hub masks hold.
const PULL_HUBS: usize = 64;

/// The in-edges from the `PULL_HUBS` vertices of highest in-degree as one bit mask per
/// vertex (bfs.cu's `BfsPull`), built on the device from the uploaded edges.
pub(crate) struct PullHubs {
    pub(crate) ids: CudaSlice<u32>,
    pub(crate) masks: CudaSlice<u64>,
}

/// The `k` vertices of `0..n` of highest degree (ties to the lower id): each block of
/// vertices keeps its own best `k`, in parallel, and the best of those are kept. One
/// selection over every vertex on one thread was most of a large graph's upload
/// (rmat25: 0.42 of its 0.63 s went to these masks and the bins, 0.21 to the edges).
fn top_by_degree(n: u32, k: usize, degree: impl Fn(u32) -> usize + Sync) -> Vec<u32> {
    let key = |v: &u32| (std::cmp::Reverse(degree(*v)), *v);
    let best_of = |mut v: Vec<u32>| {
        if v.len() > k && k > 0 {
            v.select_nth_unstable_by_key(k - 1, key);
        }
        v.truncate(k);
        v
    };
    const BLOCK: u32 = 1 << 16;
    let kept: Vec<u32> =
        (0..n.div_ceil(BLOCK)).into_par_iter().flat_map_iter(|b| best_of((b * BLOCK..n.min((b + 1) * BLOCK)).collect())).collect();
    let mut top = best_of(kept);
    top.sort_unstable_by_key(key);
    top
}

impl PullHubs {
    fn build(gpu: &Gpu, dg: &DeviceGraph, pull: &chatty_graph::Adjacency) -> Result<PullHubs> {
        let n = dg.n;
        let mut ids = top_by_degree(n as u32, PULL_HUBS, |v| pull.degree(v));
        ids.resize(PULL_HUBS, u32::MAX);
        let ids = gpu.upload(&ids, "the pull hubs")?;
        let slot = gpu.zeros::<u8>(n, "hub slots")?;
        let masks = gpu.zeros::<u64>(n, "hub masks")?;
        let one_block = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (PULL_HUBS as u32, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: ids holds PULL_HUBS entries below n or u32::MAX; slot holds n.
        unsafe { launch::bfs_hub_slots(gpu, Launch::Grid(one_block), &ids, &slot) }?;
        let inc = dg.in_edges();
        // SAFETY: the pull edges' CSR over n vertices; slot and masks hold n entries.
        unsafe { launch::bfs_hub_masks(gpu, Launch::Grid(gpu.cfg()), n as u32, &inc.off, &inc.adj, &slot, &masks) }?;
        Ok(PullHubs { ids, masks })
    }
}

/// `HUB_DEGREE` in bfs.cu: out-degree from which the whole grid expands a vertex.
const HUB_DEGREE: u64 = 4096;

/// The weight every edge of `a` has, if all are equal integers (1 without weights).
fn uniform_weight(a: &chatty_graph::Adjacency) -> Option<u32> {
    match a.weights() {
        None => Some(1),
        Some(chatty_graph::WeightSlice::Int(w)) => {
            let first = *w.first()?;
            w.par_iter().all(|&x| x == first).then_some(first)
        }
        Some(_) => None,
    }
}

/// Vertices by in-degree, for the pull kernels: small (a thread each), large (a warp
/// each), huge (a block each), with their counts.
pub(crate) struct Bins(pub(crate) [(CudaSlice<u32>, u32); 3]);

impl Bins {
    /// Bins `vertices` by `degree`, each bin in vertex order: one parallel pass that
    /// reads each degree once (three filtering passes took three times as long).
    pub(crate) fn upload(gpu: &Gpu, vertices: std::ops::Range<u32>, degree: impl Fn(u32) -> u64 + Sync) -> Result<Bins> {
        const BLOCK: u32 = 1 << 16;
        let bin_of = |d: u64| (d >= SMALL_DEGREE) as usize + (d >= HUGE_DEGREE) as usize;
        let blocks: Vec<[Vec<u32>; 3]> = (0..vertices.len().div_ceil(BLOCK as usize) as u32)
            .into_par_iter()
            .map(|b| {
                let mut bins: [Vec<u32>; 3] = Default::default();
                let first = vertices.start + b * BLOCK;
                for v in first..vertices.end.min(first.saturating_add(BLOCK)) {
                    bins[bin_of(degree(v))].push(v);
                }
                bins
            })
            .collect();
        let bin = |i: usize| -> Result<(CudaSlice<u32>, u32)> {
            let v: Vec<u32> = blocks.par_iter().flat_map_iter(|b| b[i].iter().copied()).collect();
            Ok((gpu.upload(&v, "degree bins")?, v.len() as u32))
        };
        Ok(Bins([bin(0)?, bin(1)?, bin(2)?]))
    }
}

/// What the pull kernels read of a graph: in-edges (rows of the vertices in `bins`),
/// and out-offsets for out-degrees.
pub(crate) struct PullGraph<'a> {
    pub in_off: &'a CudaSlice<u64>,
    pub in_adj: &'a CudaSlice<u32>,
    pub in_weights: Option<&'a CudaSlice<u32>>,
    pub out_off: &'a CudaSlice<u64>,
    pub bins: &'a Bins,
    pub weight_type: WeightType,
}

/// Mean degree below 8: road networks and meshes, where traversals are deep and a
/// step holds little work, so the chase pays (power-law graphs keep it off).
pub(crate) fn road_like(n: usize, m: u64) -> bool {
    (m as f64) < 8.0 * n as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_top_vertices_by_degree_are_those_a_full_sort_finds() {
        for (n, k) in [(0u32, 64), (10, 64), (200_000, 64), (300_001, 1), (150_000, 0)] {
            // Many ties, and the largest degrees spread over every block.
            let degree = |v: u32| ((v as u64 * 2_654_435_761) % 1000) as usize;
            let mut all: Vec<u32> = (0..n).collect();
            all.sort_by_key(|&v| (std::cmp::Reverse(degree(v)), v));
            all.truncate(k);
            assert_eq!(top_by_degree(n, k, degree), all, "n {n}, k {k}");
        }
    }
}
