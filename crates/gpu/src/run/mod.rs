//! One trial of a kernel on one GPU ([`run`]), a runner per kernel in the modules
//! below, and the drivers of the traversals.
//!
//! Control flow of the traversals (BFS, SSSP) stays on the device: the host enqueues
//! launches in growing batches, each launch's last block decides the next step, and
//! the host reads a 64-byte control block once per batch. A road graph's thousands of
//! levels then cost a queued launch each (a few µs) instead of a host round trip
//! (about 20 µs on an H200).

pub(crate) mod bc;
mod bfs;
mod kcore;
mod louvain;
pub(crate) mod near_far;
pub(crate) mod pull;
mod scc;
pub(crate) mod sssp;
mod tc;
pub(crate) mod wcc;

use std::time::Instant;

use bytemuck::Pod;
use chatty_algo::{Algorithm, Distances, Output, Params};
use chatty_comm::cuda::Check;
use chatty_graph::Progress;
use cudarc::driver::{CudaEvent, CudaSlice, LaunchConfig};
use rayon::prelude::*;

use crate::context::{ControlBlock, Gpu};
use crate::device_graph::DeviceGraph;
use crate::transfer::ReadyArray;
use crate::{GpuError, Result};

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

/// Launches per batch between host checks grow from here to `MAX_BATCH`.
const FIRST_BATCH: u32 = 8;
const MAX_BATCH: u32 = 512;

/// Whether `CHATTY_TRACE_STEPS` asks for each step timed and its control block
/// printed (one launch per step, so the steps are the per-step driver's).
fn trace_steps() -> bool {
    chatty_algo::tuning::Tuning::get().trace_steps
}

/// Runs `launch` in growing batches until the control block says done; returns it.
fn device_loop<C: Pod + std::fmt::Debug>(
    gpu: &Gpu,
    ctl: &ControlBlock<C>,
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
        let c = gpu.read_control(ctl)?;
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

/// Whether the GPU engine has a kernel for `alg`: the six every engine has, and tc,
/// clustering, kcore, scc and louvain (the others run on the CPU engine for now; the auto policy
/// opens the CPU for them).
pub fn has_kernel(alg: Algorithm) -> bool {
    alg.on_every_engine() || matches!(alg, Algorithm::Tc | Algorithm::Clustering | Algorithm::Kcore | Algorithm::Scc | Algorithm::Louvain)
}

/// Whether the multi-GPU engine splits `alg` over its GPUs (the others run on one).
pub fn splits(alg: Algorithm) -> bool {
    alg.on_every_engine()
}

/// Why the GPU engines refuse `alg`.
pub fn no_kernel(alg: Algorithm) -> String {
    format!("the GPU engine has no {} kernel yet; run it with --engine cpu (or auto, which picks the CPU for it)", alg.name())
}

/// Runs one trial of `alg` on the device graph from `sources`; `p` has its defaults
/// resolved (Δ) and the weights were checked when the engine was prepared. BC
/// reports its sources and PageRank its iterations to `progress` (host-driven loops).
pub fn run(gpu: &Gpu, dg: &DeviceGraph, alg: Algorithm, p: &Params, sources: &[u32], progress: &dyn Progress) -> Result<GpuRun> {
    if !has_kernel(alg) {
        return Err(GpuError::unsupported(no_kernel(alg)));
    }
    if matches!(alg, Algorithm::Bfs | Algorithm::Pr | Algorithm::Spmv | Algorithm::Kcore | Algorithm::Scc | Algorithm::Louvain)
        && dg.directed
        && dg.inc.is_none()
    {
        return Err(GpuError::unsupported(format!("{} on a directed graph needs its in-edges uploaded", alg.name())));
    }
    let called = Instant::now();
    let answer = ReadyArray::for_answer(alg, dg.n);
    let mut peak = gpu.used_bytes();
    let (output, iterations, start, stop) = match alg {
        Algorithm::Bfs => bfs::bfs(gpu, dg, sources[0], &mut peak)?,
        Algorithm::Sssp => {
            let delta = p.delta.ok_or_else(|| GpuError::unsupported("SSSP needs its delta resolved"))?;
            sssp::sssp(gpu, dg, sources[0], delta, &mut peak)?
        }
        Algorithm::Pr => pull::pagerank(gpu, dg, p, progress, &mut peak)?,
        Algorithm::Spmv => pull::spmv(gpu, dg, p.x.as_deref(), &mut peak)?,
        Algorithm::Wcc => wcc::wcc(gpu, dg, &mut peak)?,
        Algorithm::Bc => bc::bc(gpu, dg, sources, progress, &mut peak)?,
        Algorithm::Tc => tc::triangles(gpu, dg, &mut peak)?,
        Algorithm::Clustering => tc::clustering(gpu, dg, &mut peak)?,
        Algorithm::Kcore => kcore::kcore(gpu, dg, &mut peak)?,
        Algorithm::Scc => scc::scc(gpu, dg, &mut peak)?,
        Algorithm::Louvain => louvain::louvain(gpu, dg, p, progress, &mut peak)?,
        Algorithm::Lpa
        | Algorithm::Eigenvector
        | Algorithm::Katz
        | Algorithm::Hits
        | Algorithm::Degree
        | Algorithm::Closeness
        | Algorithm::Leiden => {
            unreachable!("refused above")
        }
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
pub(super) enum Pending {
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
    Triangles(CudaSlice<u64>),
    Cores(CudaSlice<u32>),
    /// Louvain's labels and the partition's modularity.
    Communities {
        labels: CudaSlice<u32>,
        modularity: f64,
    },
    /// Triangles and degrees in the simple graph, divided on the host.
    Clustering {
        triangles: CudaSlice<u64>,
        degrees: CudaSlice<u32>,
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
            Pending::Triangles(t) => (Output::Triangles(gpu.download_answer(&t, n, answer, "triangles")?), None),
            Pending::Cores(c) => (Output::Cores(gpu.download_answer(&c, n, answer, "core numbers")?), None),
            Pending::Communities { labels, modularity } => {
                (Output::Communities { labels: gpu.download_answer(&labels, n, answer, "labels")?, modularity }, None)
            }
            Pending::Clustering { triangles, degrees } => {
                let t = gpu.download(&triangles, n, "triangles")?;
                let d = gpu.download(&degrees, n, "degrees")?;
                (Output::Values(chatty_algo::tc::coefficients(&t, |v| d[v] as u64)), None)
            }
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
pub(super) type Step = (Pending, u64, CudaEvent, CudaEvent);

/// Runs a traversal whose control block `ctl` says when it is done: one cooperative
/// launch of `persistent` on `blocks_per_sm` blocks per SM (every step on the device,
/// a grid barrier between steps),
/// or, where a cooperative launch is refused (or `CHATTY_STEP_DRIVER=launch` asks for
/// it, to compare), one launch of `step` per step in growing batches.
pub(super) fn drive<C: Pod + std::fmt::Debug>(
    gpu: &Gpu,
    ctl: &ControlBlock<C>,
    persistent: &str,
    blocks_per_sm: u32,
    launch_persistent: impl FnOnce(LaunchConfig) -> Result<()>,
    launch_step: impl FnMut() -> Result<()>,
    done: impl Fn(&C) -> bool,
) -> Result<C> {
    let per_step = trace_steps() || chatty_algo::tuning::Tuning::get().launch_per_step;
    if !per_step && launch_persistent(gpu.cooperative_cfg_with(gpu.f(persistent), blocks_per_sm)?).is_ok() {
        return gpu.read_control(ctl);
    }
    device_loop(gpu, ctl, done, launch_step)
}
