//! The device, the device graph and one runner per kernel.
//!
//! Control flow of the traversals (BFS, SSSP) stays on the device: the host enqueues
//! launches in growing batches, each launch's last block decides the next step, and
//! the host reads a 64-byte control block once per batch. A road graph's thousands of
//! levels then cost a queued launch each (a few µs) instead of a host round trip
//! (about 20 µs on an H200).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use bytemuck::{Pod, Zeroable};
use cudarc::driver::{sys, CudaContext, CudaFunction, CudaSlice, CudaStream, DeviceRepr, LaunchConfig, ValidAsZeroBits};
use rayon::prelude::*;

use chatty_algo::{tuning_override, Algorithm, Distances, Output, Params};
use chatty_graph::{Graph, Progress, WeightType};

use crate::driver::{ptr, Kernel};
use crate::kernels::FUNCTIONS;
use crate::transfer::ReadyArray;
use crate::{Check, GpuError, Result};

pub(crate) const BLOCK: u32 = 256;
/// Blocks per SM of the persistent kernels: a grid barrier costs an atomic per block,
/// and on road graphs one block per SM made levels cheapest (BFS on moscow 5.1 µs a
/// level against 5.3 with two and 6.6 with four; scripts/gpu_tune.sh, docs/benchmarks/gpu.md).
const PERSISTENT_BLOCKS_PER_SM: u32 = 1;
/// Blocks per SM of the BFS on graphs that are not road-like (roads run BFS through
/// the SSSP chase): its few big levels are bottom-up sweeps bound by memory latency,
/// which want warps in flight more than cheap barriers (kron22: the levels took
/// 0.74 ms launched one by one on 8 blocks per SM, 1.33 ms as one launch on 1).
const BFS_WIDE_BLOCKS_PER_SM: u32 = 8;
/// In-degree below which a pull gives a vertex one thread rather than a warp.
const SMALL_DEGREE: u64 = 32;
/// In-degree from which a pull gives a vertex a block of `HUGE_BLOCK` threads.
const HUGE_DEGREE: u64 = 8192;
const HUGE_BLOCK: u32 = 1024;

/// One GPU: context, stream, compiled kernels.
pub struct Gpu {
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    functions: HashMap<&'static str, CudaFunction>,
    name: String,
    grid: u32,
    sms: u32,
    l2_bytes: u64,
    free_at_open: u64,
    pub(crate) staging: crate::transfer::StagingSlot,
    /// Seconds NVRTC took to compile the kernels for this open (0 when this process
    /// had compiled them already).
    pub compile_seconds: f64,
    /// Seconds this open took: the driver's start, the context, the stream, the
    /// kernels (`compile_seconds` included).
    pub open_seconds: f64,
}

impl Gpu {
    /// Number of CUDA devices (0 without a driver).
    pub fn count() -> usize {
        // SAFETY: only probes whether the shared library can be opened.
        if !unsafe { sys::is_culib_present() } {
            return 0;
        }
        CudaContext::device_count().map_or(0, |c| c.max(0) as usize)
    }

    /// Opens device `ordinal` and compiles the kernels for its architecture.
    pub fn open(ordinal: usize) -> Result<Gpu> {
        let opening = Instant::now();
        // SAFETY: only probes whether the shared library can be opened.
        if !unsafe { sys::is_culib_present() } {
            return Err(GpuError::NoDriver);
        }
        let count = CudaContext::device_count().check("counting devices")?;
        if ordinal >= count.max(0) as usize {
            return Err(GpuError::Unsupported(format!("GPU {ordinal} does not exist ({count} found)")));
        }
        let ctx = chatty_comm::topology::primary_context(ordinal).check("creating a context")?;
        // One stream, in order: cudarc's per-buffer event tracking is not needed.
        // SAFETY: no other stream of this context touches our buffers.
        unsafe { ctx.disable_event_tracking() };
        // A non-blocking stream of our own: the legacy NULL stream adds implicit
        // synchronisation (it was the suspect when peer copies lost to peer stores).
        let stream = ctx.new_stream().check("creating a stream")?;
        // cudarc allocates from the stream-ordered pool, which by default returns its
        // memory to the OS at every synchronisation: each trial would map its arrays
        // afresh. Keep it. The context outlives engines, so what an earlier engine of
        // this process freed into the pool goes back first (only unused memory is
        // trimmed): the free memory measured below is then the device's.
        // SAFETY: plain driver calls on this context's device; results are checked.
        unsafe {
            let mut pool = std::ptr::null_mut();
            sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device()).result().check("getting the memory pool")?;
            sys::cuMemPoolTrimTo(pool, 0).result().check("trimming the memory pool")?;
            let mut keep = u64::MAX;
            sys::cuMemPoolSetAttribute(pool, sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, (&mut keep as *mut u64).cast())
                .result()
                .check("setting the pool's release threshold")?;
        }
        let (major, minor) = ctx.compute_capability().check("querying the compute capability")?;
        let sms = ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).check("querying SMs")?;
        let l2_bytes = ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE).check("querying the L2 size")?;
        let name = ctx.name().check("querying the device name")?;
        let (ptx, compile_seconds) = crate::kernels::kernels_for(major, minor)?;
        let module = ctx.load_module(ptx).check("loading the kernels")?;
        let mut functions = HashMap::new();
        for f in FUNCTIONS {
            functions.insert(*f, module.load_function(f).check(&format!("loading kernel {f}"))?);
        }
        let (free, _) = ctx.mem_get_info().check("querying memory")?;
        Ok(Gpu {
            ctx,
            stream,
            functions,
            name: format!("{name} (sm_{major}{minor}, GPU {ordinal})"),
            grid: sms as u32 * 8,
            sms: sms as u32,
            l2_bytes: l2_bytes.max(0) as u64,
            free_at_open: free as u64,
            staging: Default::default(),
            compile_seconds,
            open_seconds: opening.elapsed().as_secs_f64(),
        })
    }

    /// The device's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Bytes of device memory free now.
    pub fn free_bytes(&self) -> Result<u64> {
        Ok(self.ctx.mem_get_info().check("querying memory")?.0 as u64)
    }

    pub(crate) fn f(&self, name: &str) -> &CudaFunction {
        &self.functions[name]
    }

    /// The grid of a cooperative (persistent) kernel: `PERSISTENT_BLOCKS_PER_SM`
    /// blocks per SM, or fewer if fewer fit. A grid barrier costs an atomic per block,
    /// so fewer blocks make each level cheaper; `CHATTY_PERSISTENT_BLOCKS_PER_SM`
    /// overrides it for tuning runs.
    pub(crate) fn cooperative_cfg(&self, f: &CudaFunction) -> Result<LaunchConfig> {
        self.cooperative_cfg_with(f, PERSISTENT_BLOCKS_PER_SM)
    }

    /// As [`Gpu::cooperative_cfg`], with `blocks_per_sm` blocks per SM by default.
    pub(crate) fn cooperative_cfg_with(&self, f: &CudaFunction, blocks_per_sm: u32) -> Result<LaunchConfig> {
        let fit = f.occupancy_max_active_blocks_per_multiprocessor(BLOCK, 0, None).check("querying occupancy")?;
        let wanted = tuning_override("CHATTY_PERSISTENT_BLOCKS_PER_SM").unwrap_or(blocks_per_sm);
        Ok(LaunchConfig { grid_dim: (self.sms * wanted.min(fit).max(1), 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 })
    }

    pub(crate) fn cfg(&self) -> LaunchConfig {
        LaunchConfig { grid_dim: (self.grid, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 }
    }

    /// Bytes of device memory in use since [`Gpu::open`] (ours, as the driver sees it).
    pub(crate) fn used_bytes(&self) -> u64 {
        self.ctx.mem_get_info().map_or(0, |(free, _)| self.free_at_open.saturating_sub(free as u64))
    }

    pub(crate) fn zeros<T: DeviceRepr + ValidAsZeroBits>(&self, len: usize, what: &str) -> Result<CudaSlice<T>> {
        self.stream.alloc_zeros(len.max(1)).check(&format!("allocating {what}"))
    }

    pub(crate) fn fill_u32(&self, a: &mut CudaSlice<u32>, n: u32, value: u32) -> Result<()> {
        let mut l = self.kernel("fill_u32");
        l.arg(a).arg(&n).arg(&value);
        // SAFETY: the kernel writes a[0..n), which the slice holds.
        unsafe { l.launch(self.cfg()) }
    }

    pub(crate) fn fill_u64(&self, a: &mut CudaSlice<u64>, n: u32, value: u64) -> Result<()> {
        let mut l = self.kernel("fill_u64");
        l.arg(a).arg(&n).arg(&value);
        // SAFETY: as fill_u32.
        unsafe { l.launch(self.cfg()) }
    }

    pub(crate) fn fill_f64(&self, a: &mut CudaSlice<f64>, n: u32, value: f64) -> Result<()> {
        let bits = value.to_bits();
        let mut l = self.kernel("fill_u64");
        l.arg(a).arg(&n).arg(&bits);
        // SAFETY: as fill_u32 (a double is written as its bits).
        unsafe { l.launch(self.cfg()) }
    }

    /// SpMV's `x` on the device: the user's vector, or ones filled on the device (the
    /// default of [`chatty_algo::spmv_x`], without building it on the host).
    pub(crate) fn spmv_x(&self, x: Option<&[f64]>, n: usize) -> Result<CudaSlice<f64>> {
        match x {
            Some(x) => self.upload(x, "x"),
            None => {
                let mut ones = self.zeros::<f64>(n, "x")?;
                self.fill_f64(&mut ones, n as u32, 1.0)?;
                Ok(ones)
            }
        }
    }

    pub(crate) fn set<T: DeviceRepr>(&self, a: &mut CudaSlice<T>, index: usize, value: T, what: &str) -> Result<()> {
        self.stream.memcpy_htod(&[value], &mut a.slice_mut(index..index + 1)).check(&format!("setting {what}"))
    }

    fn timer(&self) -> Result<cudarc::driver::CudaEvent> {
        self.stream.record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT)).check("recording an event")
    }
}

/// One direction of a graph's edges in device memory.
struct DeviceAdjacency {
    off: CudaSlice<u64>,
    adj: CudaSlice<u32>,
    weights: Option<CudaSlice<u32>>,
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
    n: usize,
    m: u64,
    directed: bool,
    weight_type: WeightType,
    out: DeviceAdjacency,
    /// In-edges of a directed graph (`None`: undirected, use the out-edges).
    inc: Option<DeviceAdjacency>,
    bins: Bins,
    /// The weight of every edge, where all are equal and integers (an unweighted graph:
    /// 1): SSSP then runs as a BFS.
    uniform_weight: Option<u32>,
    /// Vertices of out-degree `HUB_DEGREE` or more (BC sets their pairs aside).
    hubs: u32,
    /// bfs.cu's hub masks for bottom-up steps (power-law graphs with pull edges).
    pull_hubs: Option<PullHubs>,
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
            return Err(GpuError::Unsupported(format!("{n} vertices: the GPU engine takes fewer than {}", u32::MAX)));
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

    fn in_edges(&self) -> &DeviceAdjacency {
        self.inc.as_ref().unwrap_or(&self.out)
    }

    /// Whether the in-edges of a directed graph were uploaded.
    pub(crate) fn has_in_edges(&self) -> bool {
        self.inc.is_some()
    }

    fn pull_graph(&self) -> PullGraph<'_> {
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
struct PullHubs {
    ids: CudaSlice<u32>,
    masks: CudaSlice<u64>,
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
        let mut l = gpu.kernel("bfs_hub_slots");
        l.arg(&ids).arg(&slot);
        // SAFETY: ids holds PULL_HUBS entries below n or u32::MAX; slot holds n.
        unsafe { l.launch(LaunchConfig { grid_dim: (1, 1, 1), block_dim: (PULL_HUBS as u32, 1, 1), shared_mem_bytes: 0 }) }?;
        let inc = dg.in_edges();
        let n32 = n as u32;
        let mut l = gpu.kernel("bfs_hub_masks");
        l.arg(&n32).arg(&inc.off).arg(&inc.adj).arg(&slot).arg(&masks);
        // SAFETY: the pull edges' CSR over n vertices; slot and masks hold n entries.
        unsafe { l.launch(gpu.cfg()) }?;
        Ok(PullHubs { ids, masks })
    }
}

/// `BfsPull` in bfs.cu.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(crate) struct BfsPull {
    levels: u64,
    hub_ids: u64,
    hub_masks: u64,
    words: u32,
    pad: u32,
}

// SAFETY: plain device addresses and integers, laid out as the kernel's struct.
unsafe impl DeviceRepr for BfsPull {}

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
pub(crate) struct Bins([(CudaSlice<u32>, u32); 3]);

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

/// One trial on the GPU.
pub struct GpuRun {
    /// The result, in the CPU engine's types.
    pub output: Output,
    /// Levels, rounds, iterations or sources, as the CPU engine counts them.
    pub iterations: u64,
    /// Seconds between the first and last kernel, measured with CUDA events.
    pub kernel_seconds: f64,
    /// PageRank: the L1 change of its last iteration.
    pub residual: Option<f64>,
    /// Seconds from the call to the kernels' end that the kernels did not take
    /// (allocating and initialising the run's arrays, launch gaps).
    pub setup_seconds: f64,
    /// Seconds to copy the result back to the host.
    pub download_seconds: f64,
    /// Peak device memory in use during the run (graph included), in bytes.
    pub peak_device_bytes: u64,
}

/// Mirrors `BfsCtl` in bfs.cu.
#[repr(C, align(16))]
#[derive(Copy, Clone, Pod, Zeroable, Default, Debug)]
pub(crate) struct BfsCtl {
    pub level: u32,
    pub flags: u32,
    pub parity: u32,
    pub pad0: u32,
    pub len: [u32; 2],
    pub blocks_done: u32,
    pub generation: u32,
    pub hub_len: u32,
    pub pad1: u32,
    pub scout: u64,
    pub unexplored: u64,
    pub pad2: [u32; 2],
}

/// `BFS_DONE` in bfs.cu.
const BFS_DONE: u32 = 4;

/// Mirrors `SsspCtl` in sssp.cu.
#[repr(C)]
#[derive(Copy, Clone, Pod, Zeroable, Default, Debug)]
pub(crate) struct SsspCtl {
    pub split: u32,
    pub parity: u32,
    pub far_parity: u32,
    pub done: u32,
    pub near_len: [u32; 2],
    pub far_len: [u32; 2],
    pub blocks_done: u32,
    pub step: u32,
    pub threshold: u64,
    pub far_min: u64,
    pub delta: u64,
    pub generation: u32,
    pub hub_len: u32,
    pub hubs_now: u32,
    pub pad: u32,
}

/// Launches per batch between host checks grow from here to `MAX_BATCH`.
const FIRST_BATCH: u32 = 8;
const MAX_BATCH: u32 = 512;

/// Whether `CHATTY_TRACE_STEPS` asks for each step timed and its control block
/// printed (one launch per step, so the steps are the per-step driver's).
fn trace_steps() -> bool {
    std::env::var_os("CHATTY_TRACE_STEPS").is_some_and(|v| v != "0")
}

/// Runs `launch` in growing batches until the control block says done; returns it.
fn device_loop<C: Pod + std::fmt::Debug>(
    gpu: &Gpu,
    ctl: &CudaSlice<u8>,
    done: impl Fn(&C) -> bool,
    mut launch: impl FnMut() -> Result<()>,
) -> Result<C> {
    let trace = trace_steps();
    let mut batch = if trace { 1 } else { FIRST_BATCH };
    let mut step = 0u64;
    loop {
        let before = if trace { Some(gpu.timer()?) } else { None };
        for _ in 0..batch {
            launch()?;
        }
        let bytes = gpu.stream.clone_dtoh(ctl).check("reading the control block")?;
        let c: C = bytemuck::pod_read_unaligned(&bytes[..std::mem::size_of::<C>()]);
        if let Some(before) = before {
            let us = before.elapsed_ms(&gpu.timer()?).check("reading the timer")? * 1e3;
            eprintln!("step {step}: {us:.1} µs, then {c:?}");
        } else {
            batch = (batch * 2).min(MAX_BATCH);
        }
        if done(&c) {
            return Ok(c);
        }
        step += 1;
    }
}

pub(crate) fn control<C: Pod>(gpu: &Gpu, c: &C) -> Result<CudaSlice<u8>> {
    gpu.upload(bytemuck::bytes_of(c), "a control block")
}

/// Runs one trial of `alg` on the device graph from `sources`; `p` has its defaults
/// resolved (Δ) and the weights were checked when the engine was prepared. BC
/// reports its sources and PageRank its iterations to `progress` (host-driven loops).
pub fn run(gpu: &Gpu, dg: &DeviceGraph, alg: Algorithm, p: &Params, sources: &[u32], progress: &dyn Progress) -> Result<GpuRun> {
    if matches!(alg, Algorithm::Bfs | Algorithm::Pr | Algorithm::Spmv) && dg.directed && dg.inc.is_none() {
        return Err(GpuError::Unsupported(format!("{} on a directed graph needs its in-edges uploaded", alg.name())));
    }
    let called = Instant::now();
    let answer = ReadyArray::for_answer(alg, dg.n);
    let mut peak = gpu.used_bytes();
    let (output, iterations, start, stop) = match alg {
        Algorithm::Bfs => bfs(gpu, dg, sources[0], &mut peak)?,
        Algorithm::Sssp => {
            let delta = p.delta.ok_or_else(|| GpuError::Unsupported("SSSP needs its delta resolved".into()))?;
            sssp(gpu, dg, sources[0], delta, &mut peak)?
        }
        Algorithm::Pr => pagerank(gpu, dg, p, progress, &mut peak)?,
        Algorithm::Spmv => spmv(gpu, dg, p.x.as_deref(), &mut peak)?,
        Algorithm::Wcc => wcc(gpu, dg, &mut peak)?,
        Algorithm::Bc => bc(gpu, dg, sources, progress, &mut peak)?,
    };
    stop.synchronize().check("waiting for the kernels")?;
    let kernel_seconds = start.elapsed_ms(&stop).check("reading the timer")? as f64 / 1e3;
    let setup_seconds = (called.elapsed().as_secs_f64() - kernel_seconds).max(0.0);
    let download = Instant::now();
    let (output, residual) = output.fetch(gpu, dg, answer)?;
    Ok(GpuRun {
        output,
        iterations,
        kernel_seconds,
        residual,
        setup_seconds,
        download_seconds: download.elapsed().as_secs_f64(),
        peak_device_bytes: peak,
    })
}

/// A result still on the device.
enum Pending {
    Depths(CudaSlice<u32>),
    IntDistances(CudaSlice<u64>),
    FloatDistances(CudaSlice<u64>),
    Values(CudaSlice<f64>),
    Labels(CudaSlice<u32>),
    /// PageRank's scores and its sums (the last iteration's L1 change first).
    PageRank {
        scores: CudaSlice<f64>,
        sums: CudaSlice<f64>,
    },
}

impl Pending {
    /// The output, into `answer`, and PageRank's residual.
    fn fetch(self, gpu: &Gpu, dg: &DeviceGraph, answer: ReadyArray) -> Result<(Output, Option<f64>)> {
        let n = dg.n;
        Ok(match self {
            Pending::Depths(d) => (Output::Depths(gpu.download_answer(&d, n, answer, "depths")?), None),
            Pending::IntDistances(d) => (Output::Distances(Distances::Int(gpu.download_answer(&d, n, answer, "distances")?)), None),
            Pending::FloatDistances(d) => {
                (Output::Distances(Distances::Float(float_distances(gpu.download_answer(&d, n, answer, "distances")?))), None)
            }
            Pending::Values(v) => (Output::Values(gpu.download_answer(&v, n, answer, "values")?), None),
            Pending::Labels(l) => (Output::Labels(gpu.download_answer(&l, n, answer, "labels")?), None),
            Pending::PageRank { scores, sums } => {
                let residual = gpu.download(&sums, 1, "the residual")?[0];
                (Output::Values(gpu.download_answer(&scores, n, answer, "scores")?), Some(residual))
            }
        })
    }
}

/// Float distances from the kernels' encoding (the bits of non-negative doubles;
/// all ones for unreached).
pub(crate) fn float_distances(bits: Vec<u64>) -> Vec<f64> {
    let mut d: Vec<f64> = bytemuck::allocation::cast_vec(bits);
    d.par_iter_mut().filter(|x| x.to_bits() == u64::MAX).for_each(|x| *x = f64::INFINITY);
    d
}

/// A run's result on the device, its iterations, and events around its kernels
/// (recorded after the per-run arrays are allocated and initialised).
type Step = (Pending, u64, cudarc::driver::CudaEvent, cudarc::driver::CudaEvent);

/// Runs a traversal whose control block `ctl` says when it is done: one cooperative
/// launch of `persistent` on `blocks_per_sm` blocks per SM (every step on the device,
/// a grid barrier between steps),
/// or, where a cooperative launch is refused (or `CHATTY_STEP_DRIVER=launch` asks for
/// it, to compare), one launch of `step` per step in growing batches.
fn drive<C: Pod + std::fmt::Debug>(
    gpu: &Gpu,
    ctl: &CudaSlice<u8>,
    persistent: &str,
    blocks_per_sm: u32,
    launch_persistent: impl FnOnce(LaunchConfig) -> Result<()>,
    launch_step: impl FnMut() -> Result<()>,
    done: impl Fn(&C) -> bool,
) -> Result<C> {
    let per_step = trace_steps() || std::env::var("CHATTY_STEP_DRIVER").is_ok_and(|d| d == "launch");
    if !per_step && launch_persistent(gpu.cooperative_cfg_with(gpu.f(persistent), blocks_per_sm)?).is_ok() {
        let bytes = gpu.stream.clone_dtoh(ctl).check("reading the control block")?;
        return Ok(bytemuck::pod_read_unaligned(&bytes[..std::mem::size_of::<C>()]));
    }
    device_loop(gpu, ctl, done, launch_step)
}

fn bfs(gpu: &Gpu, dg: &DeviceGraph, source: u32, peak: &mut u64) -> Result<Step> {
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
    let delta = tuning_override("CHATTY_BFS_CHASE_DELTA").unwrap_or(if road_like(dg.n, dg.m) { BFS_CHASE_DELTA } else { 0 });
    (delta > 0).then_some(delta)
}

/// Depths from `source` and the levels; bottom-up steps only if `pull` (they need
/// the in-edges of a directed graph); and an event recorded once the arrays are ready.
fn bfs_depths(
    gpu: &Gpu,
    dg: &DeviceGraph,
    source: u32,
    pull: bool,
    peak: &mut u64,
) -> Result<(CudaSlice<u32>, u64, cudarc::driver::CudaEvent)> {
    let n = dg.n as u32;
    if let Some(delta) = bfs_chase_delta(dg) {
        let (dist, _, start) = near_far(gpu, dg, source, delta, None, peak)?;
        let depth = gpu.zeros::<u32>(dg.n, "depths")?;
        let deepest = gpu.zeros::<u32>(1, "the deepest level")?;
        let mut l = gpu.kernel("distance_to_depth");
        l.arg(&n).arg(&dist).arg(&depth).arg(&deepest);
        // SAFETY: arguments match distance_to_depth; both arrays hold n entries.
        unsafe { l.launch(gpu.cfg()) }?;
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
    let mut bfs_pull = BfsPull { levels: ptr(&bits, gpu), words, ..Default::default() };
    if let Some(h) = dg.pull_hubs.as_ref().filter(|_| tuning_override::<u32>("CHATTY_BFS_HUB_MASKS") != Some(0)) {
        (bfs_pull.hub_ids, bfs_pull.hub_masks) = (ptr(&h.ids, gpu), ptr(&h.masks, gpu));
    }
    if tuning_override::<u32>("CHATTY_BFS_BITMAP") == Some(0) {
        bfs_pull = BfsPull::default();
    }
    let ctl = control(gpu, &BfsCtl { level: 1, len: [1, 0], unexplored: dg.m, ..Default::default() })?;
    *peak = (*peak).max(gpu.used_bytes());
    let start = gpu.timer()?;
    let (in_off, in_adj) = (&dg.in_edges().off, &dg.in_edges().adj);
    // Beamer's alpha and beta; alpha 0 keeps every step top-down.
    let (alpha, beta) = (if pull { 15u32 } else { 0 }, 18u32);
    // Both drivers take the same arguments.
    macro_rules! bfs_args {
        ($l:expr) => {
            $l.arg(&ctl)
                .arg(&dg.out.off)
                .arg(&dg.out.adj)
                .arg(in_off)
                .arg(in_adj)
                .arg(&depth)
                .arg(&queue0)
                .arg(&queue1)
                .arg(&hubs)
                .arg(&bfs_pull)
        };
    }
    let c: BfsCtl = drive(
        gpu,
        &ctl,
        "bfs_persistent",
        if road_like(dg.n, dg.m) { PERSISTENT_BLOCKS_PER_SM } else { BFS_WIDE_BLOCKS_PER_SM },
        |cfg| {
            let mut l = gpu.kernel("bfs_persistent");
            bfs_args!(l).arg(&n).arg(&alpha).arg(&beta);
            // SAFETY: arguments match bfs_persistent's signature; queues hold n entries
            // and a vertex enters a queue once. A cooperative launch guarantees every
            // block is resident, which the kernel's grid barrier needs.
            unsafe { l.launch_cooperative(cfg) }
        },
        || {
            let mut l = gpu.kernel("bfs_level");
            let (lo, pause) = (0u32, 0u32);
            bfs_args!(l).arg(&lo).arg(&n).arg(&alpha).arg(&beta).arg(&pause);
            // SAFETY: as above, for bfs_level.
            unsafe { l.launch(gpu.cfg()) }
        },
        |c: &BfsCtl| c.flags & BFS_DONE != 0,
    )?;
    Ok((depth, c.level as u64 - 1, start))
}

/// `SsspArrays` in sssp.cu: the arrays of a run, passed by value.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(crate) struct SsspArrays {
    pub off: u64,
    pub adj: u64,
    pub weight: u64,
    pub dist: u64,
    pub stamp: u64,
    pub in_far: u64,
    pub near: [u64; 2],
    pub far: [u64; 2],
    pub hubs: u64,
    pub shared: u64,
    pub is_float: u32,
    pub local_rounds: u32,
    pub lo: u32,
    pub pad: u32,
}

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
    tuning_override("CHATTY_SSSP_LOCAL_ROUNDS").unwrap_or(if road_like(n, m) { SSSP_LOCAL_ROUNDS } else { 0 })
}

/// Mean degree below 8: road networks and meshes, where traversals are deep and a
/// step holds little work, so the chase pays (power-law graphs keep it off).
pub(crate) fn road_like(n: usize, m: u64) -> bool {
    (m as f64) < 8.0 * n as f64
}

// SAFETY: plain device addresses and integers, laid out as the kernel's struct.
unsafe impl DeviceRepr for SsspArrays {}

fn sssp(gpu: &Gpu, dg: &DeviceGraph, source: u32, delta: f64, peak: &mut u64) -> Result<Step> {
    let n = dg.n as u32;
    if let Some(weight) = dg.uniform_weight {
        // Every edge weighs the same: distances are depths times the weight.
        let dist = gpu.zeros::<u64>(dg.n, "distances")?;
        let pull = !dg.directed || dg.inc.is_some();
        let (depth, levels, start) = bfs_depths(gpu, dg, source, pull, peak)?;
        let mut l = gpu.kernel("depth_to_distance");
        l.arg(&n).arg(&depth).arg(&dist).arg(&weight);
        // SAFETY: arguments match depth_to_distance; both arrays hold n entries.
        unsafe { l.launch(gpu.cfg()) }?;
        return Ok((Pending::IntDistances(dist), levels, start, gpu.timer()?));
    }
    let is_float = dg.weight_type == WeightType::Float;
    let delta_bits = if is_float { delta.to_bits() } else { delta.round().max(1.0) as u64 };
    let (dist, steps, start) = near_far(gpu, dg, source, delta_bits, Some(is_float), peak)?;
    let pending = if is_float { Pending::FloatDistances(dist) } else { Pending::IntDistances(dist) };
    Ok((pending, steps, start, gpu.timer()?))
}

/// Near-far distances from `source` with threshold step `delta_bits` (in the
/// distances' encoding), and the grid-wide steps it took. `weights`: the graph's
/// weights, float or not; `None` counts every edge as 1 (hops).
fn near_far(
    gpu: &Gpu,
    dg: &DeviceGraph,
    source: u32,
    delta_bits: u64,
    weights: Option<bool>,
    peak: &mut u64,
) -> Result<(CudaSlice<u64>, u64, cudarc::driver::CudaEvent)> {
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
    let ctl = control(
        gpu,
        &SsspCtl { near_len: [1, 0], step: 1, threshold: delta_bits, far_min: u64::MAX, delta: delta_bits, ..Default::default() },
    )?;
    let weight = match (weights, dg.out.weights.as_ref()) {
        (Some(_), Some(w)) => ptr(w, gpu),
        _ => 0,
    };
    let arrays = SsspArrays {
        off: ptr(&dg.out.off, gpu),
        adj: ptr(&dg.out.adj, gpu),
        weight,
        dist: ptr(&dist, gpu),
        stamp: ptr(&stamp, gpu),
        in_far: ptr(&in_far, gpu),
        near: [ptr(&near0, gpu), ptr(&near1, gpu)],
        far: [ptr(&far0, gpu), ptr(&far1, gpu)],
        hubs: ptr(&hubs, gpu),
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
            let mut l = gpu.kernel("sssp_persistent");
            l.arg(&ctl).arg(&arrays);
            // SAFETY: arguments match sssp_persistent; the arrays live until the run's
            // result is read; near queues and far piles hold n entries and admit a
            // vertex at most once each (stamps, far flags). Cooperative: see bfs.
            unsafe { l.launch_cooperative(cfg) }
        },
        || {
            let mut l = gpu.kernel("sssp_step");
            l.arg(&ctl).arg(&arrays);
            // SAFETY: as above, for sssp_step.
            unsafe { l.launch(gpu.cfg()) }
        },
        |c: &SsspCtl| c.done != 0,
    )?;
    Ok((dist, c.step as u64 - 1, start))
}

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

/// Passes `buffer`, or a null device pointer for a kernel that tests for one.
pub(crate) fn arg_or_null<'a, T>(l: &mut Kernel<'a>, buffer: Option<&'a CudaSlice<T>>, null: &'a u64) {
    match buffer {
        Some(b) => l.arg(b),
        None => l.arg(null),
    };
}

pub(crate) fn pull(gpu: &Gpu, pg: &PullGraph, a: &PullArgs) -> Result<()> {
    let (in_off, in_adj, in_w) = (pg.in_off, pg.in_adj, pg.in_weights);
    let wkind: u32 = match (a.x.is_some(), pg.weight_type) {
        (false, _) | (_, WeightType::None) => 0,
        (_, WeightType::Int) => 1,
        (_, WeightType::Float) => 2,
    };
    let null = 0u64;
    for (kernel, (vertices, count)) in ["pull_small", "pull_large", "pull_huge"].into_iter().zip(&pg.bins.0) {
        let count = *count;
        if count == 0 {
            continue;
        }
        let cfg = if kernel == "pull_huge" {
            LaunchConfig { grid_dim: (count.min(gpu.sms * 4), 1, 1), block_dim: (HUGE_BLOCK, 1, 1), shared_mem_bytes: 0 }
        } else {
            gpu.cfg()
        };
        let mut l = gpu.kernel(kernel);
        l.arg(vertices).arg(&count).arg(in_off).arg(in_adj);
        arg_or_null(&mut l, a.contrib, &null);
        arg_or_null(&mut l, a.x, &null);
        arg_or_null(&mut l, in_w.filter(|_| wkind != 0), &null);
        l.arg(&wkind).arg(a.y);
        arg_or_null(&mut l, a.score, &null);
        arg_or_null(&mut l, a.contrib_next, &null);
        l.arg(pg.out_off).arg(&a.base).arg(&a.damping);
        arg_or_null(&mut l, a.sums, &null);
        // SAFETY: arguments match the pull kernels; null pointers are passed exactly
        // where the kernel tests for them (contrib vs x, score, sums).
        unsafe { l.launch(cfg) }?;
    }
    Ok(())
}

fn pagerank(gpu: &Gpu, dg: &DeviceGraph, p: &Params, progress: &dyn Progress, peak: &mut u64) -> Result<Step> {
    let n = dg.n;
    let mut score = gpu.zeros::<f64>(n, "scores")?;
    gpu.fill_f64(&mut score, n as u32, 1.0 / n.max(1) as f64)?;
    let mut next = gpu.zeros::<f64>(n, "scores")?;
    let mut contrib = gpu.zeros::<f32>(n, "contributions")?;
    let mut contrib_next = gpu.zeros::<f32>(n, "contributions")?;
    let mut sums = gpu.zeros::<f64>(2, "sums")?;
    *peak = (*peak).max(gpu.used_bytes());
    let start = gpu.timer()?;
    let nn = n as u32;
    let mut l = gpu.kernel("pr_init");
    l.arg(&nn).arg(&score).arg(&contrib).arg(&dg.out.off).arg(&sums);
    // SAFETY: arguments match pr_init.
    unsafe { l.launch(gpu.cfg()) }?;
    let mut iters = 0;
    progress.start("pr: iterations (at most)", p.pr.max_iters as u64);
    while iters < p.pr.max_iters && n > 0 {
        progress.advance(1);
        let [change, dangling]: [f64; 2] = gpu.download(&sums, 2, "sums")?.try_into().expect("two sums");
        if iters > 0 && p.pr.converged(change, n) {
            break;
        }
        iters += 1;
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
    }
    Ok((Pending::PageRank { scores: score, sums }, iters as u64, start, gpu.timer()?))
}

fn spmv(gpu: &Gpu, dg: &DeviceGraph, x: Option<&[f64]>, peak: &mut u64) -> Result<Step> {
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

fn wcc(gpu: &Gpu, dg: &DeviceGraph, peak: &mut u64) -> Result<Step> {
    let n = dg.n as u32;
    let comp = gpu.zeros::<u32>(dg.n, "labels")?;
    let sampled = gpu.zeros::<u32>(afforest::SAMPLES as usize, "sampled labels")?;
    *peak = (*peak).max(gpu.used_bytes());
    let start = gpu.timer()?;
    let edges = (&dg.out.off, &dg.out.adj);
    afforest::link_first(gpu, n, edges, &comp)?;
    // The largest intermediate component may skip its vertices' edges only if every
    // edge into it is seen from its other end: undirected, or in-edges on the device.
    let in_edges = dg.inc.as_ref().filter(|_| dg.directed).map(|a| (&a.off, &a.adj));
    let skip = if dg.directed && in_edges.is_none() { u32::MAX } else { afforest::largest(gpu, n, &comp, &sampled)? };
    afforest::link_rest(gpu, n, edges, in_edges, &comp, skip)?;
    afforest::compress(gpu, n, &comp)?;
    Ok((Pending::Labels(comp), afforest::NEIGHBOR_ROUNDS as u64 + 1, start, gpu.timer()?))
}

/// The steps of WCC by Afforest (wcc.cu), over one adjacency given as its offsets and
/// targets: the single-GPU kernel runs them once; the multi-GPU one on each part's rows,
/// merging the parts' forests between them.
pub(crate) mod afforest {
    use cudarc::driver::CudaSlice;

    use super::{arg_or_null, most_frequent};
    use crate::{Gpu, Result};

    /// Sampling rounds: each vertex links to this many of its first neighbours.
    pub const NEIGHBOR_ROUNDS: u32 = 2;
    /// Labels sampled to find the largest intermediate component.
    pub const SAMPLES: u32 = 1024;

    pub type Edges<'a> = (&'a CudaSlice<u64>, &'a CudaSlice<u32>);

    /// Every vertex its own component, then linked to its first `NEIGHBOR_ROUNDS`
    /// neighbours, compressing after each round.
    pub fn link_first(gpu: &Gpu, n: u32, (off, adj): Edges, comp: &CudaSlice<u32>) -> Result<()> {
        let mut l = gpu.kernel("iota_u32");
        l.arg(comp).arg(&n);
        // SAFETY: arguments match iota_u32; comp holds n labels.
        unsafe { l.launch(gpu.cfg()) }?;
        for r in 0..NEIGHBOR_ROUNDS {
            let mut l = gpu.kernel("wcc_sample");
            l.arg(&n).arg(off).arg(adj).arg(comp).arg(&r);
            // SAFETY: arguments match wcc_sample; it reads an edge only below off[u + 1].
            unsafe { l.launch(gpu.cfg()) }?;
            compress(gpu, n, comp)?;
        }
        Ok(())
    }

    /// Points every vertex at its root.
    pub fn compress(gpu: &Gpu, n: u32, comp: &CudaSlice<u32>) -> Result<()> {
        let mut l = gpu.kernel("wcc_compress");
        l.arg(&n).arg(comp);
        // SAFETY: arguments match wcc_compress.
        unsafe { l.launch(gpu.cfg()) }
    }

    /// The most frequent root among `SAMPLES` vertices of a compressed `comp`
    /// (`sampled` holds them; the host waits for this).
    pub fn largest(gpu: &Gpu, n: u32, comp: &CudaSlice<u32>, sampled: &CudaSlice<u32>) -> Result<u32> {
        if n == 0 {
            return Ok(u32::MAX);
        }
        let mut l = gpu.kernel("wcc_sample_labels");
        l.arg(&n).arg(comp).arg(sampled).arg(&SAMPLES);
        // SAFETY: arguments match wcc_sample_labels; `sampled` holds SAMPLES labels.
        unsafe { l.launch(gpu.cfg()) }?;
        Ok(most_frequent(gpu.download(sampled, SAMPLES as usize, "sampled labels")?))
    }

    /// Vertices outside component `skip` link along the rest of their edges and all
    /// of `in_edges` (a directed graph's, where the largest component is skipped).
    pub fn link_rest(gpu: &Gpu, n: u32, (off, adj): Edges, in_edges: Option<Edges>, comp: &CudaSlice<u32>, skip: u32) -> Result<()> {
        let null = 0u64;
        let mut l = gpu.kernel("wcc_finish");
        l.arg(&n).arg(off).arg(adj);
        arg_or_null(&mut l, in_edges.map(|e| e.0), &null);
        arg_or_null(&mut l, in_edges.map(|e| e.1), &null);
        l.arg(comp).arg(&skip).arg(&NEIGHBOR_ROUNDS);
        // SAFETY: arguments match wcc_finish; the in-edge pointers are both null or both set.
        unsafe { l.launch(gpu.cfg()) }
    }

    /// Joins into `comp` the forest `other` (another part's labels of the same `n`
    /// vertices), then compresses: the union of both parts' components.
    pub fn merge(gpu: &Gpu, n: u32, comp: &CudaSlice<u32>, other: u64) -> Result<()> {
        let mut l = gpu.kernel("wcc_merge");
        l.arg(&n).arg(comp).arg(&other);
        // SAFETY: arguments match wcc_merge; `other` holds n labels on this GPU.
        unsafe { l.launch(gpu.cfg()) }?;
        compress(gpu, n, comp)
    }
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

/// Blocks per SM of the BC sweeps on road-like graphs, whose thousands of small levels
/// pay for every block at each grid barrier (moscow one source 8.76 / 9.78 ms, path5k
/// from all sources 111 / 124 ms at 4 / 5 blocks), and on the others, whose big levels
/// need warps in flight (kron22 one source 5.71 / 5.58 / 5.77 ms at 4 / 6 / 8 blocks,
/// 8 spilling registers). One H200 (docs/benchmarks/gpu.md, "fifth pass"). bc.cu
/// bounds the kernel's registers so the wide grid fits (`BC_MAX_BLOCKS_PER_SM`).
const BC_BLOCKS_PER_SM: u32 = 4;
const BC_WIDE_BLOCKS_PER_SM: u32 = 6;
/// Bits a BC batch holds per (source, vertex) pair: its state (value and depth), its
/// place in the order of discovery, and its bits in bc.cu's four bitmaps.
const BC_PAIR_BITS: u64 = (BC_PAIR_STATE_BYTES + 4) * 8 + BC_BITMAPS;
/// bc.cu's BcPair.
const BC_PAIR_STATE_BYTES: u64 = 16;
/// bc.cu's BC_BITMAPS: visited, and three rotating levels.
const BC_BITMAPS: u64 = 4;
/// bc.cu's BC_BITS_*: the forward sweep keeps the bitmaps (its bottom-up levels test
/// them), the backward sweep tests successors in them (when the pairs reached outgrow
/// the L2). On for undirected graphs that are not road-like (kron22 from 64 sources
/// 284 -> 198 ms, urand22 from one 5.3 -> 3.6 ms); off on road-like graphs (top-down
/// only there: the bitmaps' upkeep costs each of thousands of levels) and on directed
/// graphs, where they lost 8-15% (cnr-2000, soc-Slashdot0902) for a cause not yet
/// found. docs/benchmarks/gpu.md, "Issue 26, session 15". `CHATTY_BC_BITS` overrides,
/// for the tuning sweep.
const BC_BITS_FORWARD: u32 = 1;
const BC_BITS_BACKWARD: u32 = 2;
/// Device memory a BC batch may take, at most.
const BC_BATCH_BYTES: u64 = 4 << 30;

/// Sources per BC sweep on a graph of `n` vertices with `free` bytes of device memory:
/// as many as `BC_BATCH_BYTES` (or half the free memory) holds, with every pair's index
/// b * n + v a u32.
fn bc_batch_size(n: usize, sources: usize, free: u64) -> usize {
    let n = n.max(1) as u64;
    let by_memory = BC_BATCH_BYTES.min(free / 2) * 8 / (BC_PAIR_BITS * n);
    by_memory.min(u32::MAX as u64 / n).clamp(1, sources.max(1) as u64) as usize
}

/// Predicted seconds of [`bc`] from `sources` sources on a graph of `n` vertices and
/// `m` edges, about `levels` deep: per batch a launch and two grid barriers a level
/// (about 8 µs each: 11.4 on a 5,000-vertex path, 5.5 on moscow), plus about 0.05 ns
/// per edge and source (kron22: 6.6 ms from one source). Measured on one H200
/// (docs/benchmarks/gpu.md, "Issue 18, second pass").
pub fn bc_predicted_seconds(n: usize, m: u64, sources: usize, levels: u32) -> f64 {
    let batches = sources.div_ceil(bc_batch_size(n, sources, u64::MAX));
    batches as f64 * (20e-6 + 2.0 * levels as f64 * 8e-6) + sources as f64 * m as f64 * 0.05e-9
}

/// `BcCtl` in bc.cu.
#[repr(C)]
#[derive(Copy, Clone, Pod, Zeroable, Default, Debug)]
struct BcCtl {
    blocks_done: u32,
    generation: u32,
    tail: u32,
    hub_len: u32,
    hubs_now: u32,
    pad: u32,
    level_edges: [u64; 2],
    explored: u64,
}

/// `BcArrays` in bc.cu.
#[repr(C)]
#[derive(Clone, Copy)]
struct BcArrays {
    off: u64,
    adj: u64,
    in_off: u64,
    in_adj: u64,
    sources: u64,
    pair: u64,
    hub_sum: u64,
    order: u64,
    level_end: u64,
    hubs: u64,
    bc: u64,
    bits: u64,
    n: u32,
    batch: u32,
    up_share: u32,
    words: u32,
    bit_use: u32,
    l2_pairs: u32,
}

/// A BC level holding more than 1 / `BC_UP_SHARE` of a batch's pairs (or, by bc.cu's
/// edge rule, many edges) is expanded bottom-up, except on road-like graphs, whose
/// bottom-up levels came only at the tail of a search and lost (road-NE from 64 sources
/// 130 -> 124 ms top-down only, path5k from all 111 -> 100 ms; moscow from one 8.76 ->
/// 9.18 ms); `CHATTY_BC_UP_SHARE` overrides (0: top-down only), for the tuning sweep.
const BC_UP_SHARE: u32 = 20;

// SAFETY: plain device addresses and integers, laid out as the kernel's struct.
unsafe impl DeviceRepr for BcArrays {}

fn bc(gpu: &Gpu, dg: &DeviceGraph, sources: &[u32], progress: &dyn Progress, peak: &mut u64) -> Result<Step> {
    let n = dg.n as u32;
    let (free, _) = gpu.ctx.mem_get_info().check("querying memory")?;
    // CHATTY_BC_BATCH caps the batch, for the tuning sweep.
    let batch = bc_batch_size(dg.n, sources.len(), free as u64).min(tuning_override("CHATTY_BC_BATCH").unwrap_or(usize::MAX).max(1));
    let pairs = batch * dg.n;
    let road = road_like(dg.n, dg.m);
    let bit_use = tuning_override("CHATTY_BC_BITS").unwrap_or(if road || dg.directed { 0 } else { BC_BITS_FORWARD | BC_BITS_BACKWARD });
    let words = if bit_use == 0 { 0 } else { pairs.div_ceil(32) };
    let bits = gpu.zeros::<u32>((BC_BITMAPS as usize * words).max(1), "pair bitmaps")?;
    // bc.cu's BcPair: two 8-byte words per pair, zero while unreached.
    let state = gpu.zeros::<u64>(2 * pairs, "path counts and depths")?;
    let order = gpu.zeros::<u32>(pairs, "levels")?;
    let level_end = gpu.zeros::<u32>(dg.n + 1, "level ends")?;
    let hubs = gpu.zeros::<u32>(batch * dg.hubs as usize, "hub pairs")?;
    let hub_sum = gpu.zeros::<f64>((batch * dg.hubs as usize).max(1), "hub sums")?;
    let scores = gpu.zeros::<f64>(dg.n, "scores")?;
    let mut batch_sources = gpu.zeros::<u32>(batch, "sources")?;
    let ctl = gpu.zeros::<u8>(std::mem::size_of::<BcCtl>(), "a control block")?;
    // Bottom-up levels read in-edges: the out-edges of an undirected graph.
    let in_edges = (!dg.directed).then_some(&dg.out).or(dg.inc.as_ref());
    let up_share = tuning_override("CHATTY_BC_UP_SHARE").unwrap_or(if road { 0 } else { BC_UP_SHARE });
    let mut arrays = BcArrays {
        off: ptr(&dg.out.off, gpu),
        adj: ptr(&dg.out.adj, gpu),
        in_off: in_edges.map_or(0, |e| ptr(&e.off, gpu)),
        in_adj: in_edges.map_or(0, |e| ptr(&e.adj, gpu)),
        sources: ptr(&batch_sources, gpu),
        pair: ptr(&state, gpu),
        hub_sum: ptr(&hub_sum, gpu),
        order: ptr(&order, gpu),
        level_end: ptr(&level_end, gpu),
        hubs: ptr(&hubs, gpu),
        bc: ptr(&scores, gpu),
        bits: ptr(&bits, gpu),
        n,
        batch: 0,
        up_share: if in_edges.is_some() { up_share } else { 0 },
        words: words as u32,
        bit_use,
        l2_pairs: (gpu.l2_bytes / BC_PAIR_STATE_BYTES).min(u32::MAX as u64) as u32,
    };
    *peak = (*peak).max(gpu.used_bytes());
    let blocks_per_sm = if road { BC_BLOCKS_PER_SM } else { BC_WIDE_BLOCKS_PER_SM };
    let cfg = gpu.cooperative_cfg_with(gpu.f("bc_batch"), blocks_per_sm)?;
    let start = gpu.timer()?;
    progress.start("bc: sources", sources.len() as u64);
    for chunk in sources.chunks(batch) {
        gpu.stream.memcpy_htod(chunk, &mut batch_sources.slice_mut(0..chunk.len())).check("uploading sources")?;
        arrays.batch = chunk.len() as u32;
        let mut l = gpu.kernel("bc_batch");
        l.arg(&ctl).arg(&arrays);
        // SAFETY: arguments match bc_batch; every array holds batch x n pairs (hubs and
        // their sums: batch x the hub vertices, level ends n + 1, bitmaps a bit per pair),
        // the kernel leaves the pairs, bitmaps and sums zero. Cooperative: its grid barriers need every block resident.
        unsafe { l.launch_cooperative(cfg) }.map_err(|e| {
            GpuError::Unsupported(format!("bc needs a cooperative launch, which this GPU refused ({e}); run it with --engine cpu"))
        })?;
        progress.advance(chunk.len() as u64);
    }
    Ok((Pending::Values(scores), sources.len() as u64, start, gpu.timer()?))
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

    /// The control blocks' layouts as bfs.cu and sssp.cu declare them.
    #[test]
    fn control_blocks_match_the_kernels() {
        assert_eq!(
            (std::mem::size_of::<BfsCtl>(), std::mem::offset_of!(BfsCtl, scout), std::mem::offset_of!(BfsCtl, hub_len)),
            (64, 40, 32)
        );
        assert_eq!(
            (std::mem::size_of::<SsspCtl>(), std::mem::offset_of!(SsspCtl, threshold), std::mem::offset_of!(SsspCtl, generation)),
            (80, 40, 64)
        );
        assert_eq!((std::mem::size_of::<SsspArrays>(), std::mem::offset_of!(SsspArrays, local_rounds)), (112, 100));
        assert_eq!(std::mem::size_of::<BfsPull>(), 32);
        assert_eq!((std::mem::size_of::<BcCtl>(), std::mem::size_of::<BcArrays>(), std::mem::offset_of!(BcArrays, n)), (48, 120, 96));
    }
}
