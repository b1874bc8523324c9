//! The GPU engine behind the engine trait: one GPU, or the multi-GPU engine over
//! several (or several parts on one). It keeps the host graph (sources are picked on
//! it, `--verify` reads it) and readies the devices once per kernel.

use chatty_algo::{sssp, Algorithm, Breakdown, Engine, EngineInfo, Error, GraphInfo, HostGraph, Params, PrMethod, Transfer, Trial};
use chatty_graph::Graph;
use rayon::prelude::*;
use serde::Serialize;

use crate::context::Gpu;
use crate::device_graph::DeviceGraph;
use crate::multi::{Comm, Control, Mode, MultiGpu, MultiOptions};
use crate::renumber::{output_to_caller, to_device, Order, Renumbering};
use crate::run::run;
use crate::GpuError;
use chatty_comm::cuda::Check;

/// The GPU engine over a graph in host memory.
pub struct GpuEngine {
    graph: Graph,
    devices: Devices,
}

enum Devices {
    One {
        gpu: Gpu,
        device: Option<DeviceGraph>,
        order: Order,
        /// `new_id[v]`: vertex v's id on the device, when `order` renumbers.
        new_id: Option<Vec<u32>>,
        reorder_seconds: f64,
    },
    Several {
        options: MultiOptions,
        engine: Option<MultiGpu>,
        prepared: Option<Algorithm>,
        notes: Vec<String>,
        /// BC: the whole graph on each of this process's GPUs, each running its share
        /// of the sources (split across processes first), the scores summed.
        bc: Vec<(Gpu, DeviceGraph)>,
    },
}

/// Device figures of one trial (the report's `detail`).
#[derive(Serialize)]
struct DeviceTrial {
    peak_device_memory_bytes: u64,
}

/// The multi-GPU figures of one trial (the report's `detail`).
#[derive(Serialize)]
struct MultiTrial {
    peak_device_memory_bytes: u64,
    steps: u64,
    exchanges: u64,
    dense_exchanges: u64,
    updated_vertices: u64,
    communicated_vertices: u64,
    state_bytes: u64,
    state_transport: &'static str,
}

fn gb_per_s(bytes: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        bytes as f64 / seconds / 1e9
    } else {
        0.0
    }
}

fn detail(d: impl Serialize) -> Result<serde_json::Value, Error> {
    serde_json::to_value(d).map_err(Error::engine)
}

/// BC from `sources` on this process's GPUs, each holding the whole graph of `n`
/// vertices: the sources dealt round-robin, every GPU from its own thread, the scores
/// summed. The kernel time is the slowest GPU's; a GPU (or process) with no sources
/// adds zeros.
fn bc_split(
    gpus: &[(Gpu, DeviceGraph)],
    p: &Params,
    sources: &[u32],
    n: usize,
    progress: &dyn chatty_graph::Progress,
) -> Result<(Vec<f64>, f64, Breakdown, DeviceTrial), Error> {
    let k = gpus.len();
    let runs: Vec<_> = std::thread::scope(|s| {
        let threads: Vec<_> = gpus
            .iter()
            .enumerate()
            .map(|(i, (gpu, device))| {
                let share: Vec<u32> = sources.iter().skip(i).step_by(k).copied().collect();
                // One bar: the first GPU's.
                let progress: &dyn chatty_graph::Progress = if i == 0 { progress } else { &chatty_graph::NoProgress };
                s.spawn(move || {
                    if share.is_empty() {
                        return Ok(None);
                    }
                    gpu.ctx.bind_to_thread().check("binding a GPU")?;
                    run(gpu, device, Algorithm::Bc, p, &share, progress).map(Some)
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap_or_else(|_| Err(GpuError::Thread("a BC thread panicked".into())))).collect()
    });
    let (mut scores, mut seconds, mut b, mut d) = (vec![0.0; n], 0.0f64, Breakdown::default(), DeviceTrial { peak_device_memory_bytes: 0 });
    for r in runs {
        let Some(r) = r.map_err(Error::engine)? else { continue };
        let chatty_algo::Output::Values(v) = r.output else { unreachable!("bc answers values") };
        scores.par_iter_mut().zip(&v).for_each(|(s, x)| *s += x);
        seconds = seconds.max(r.kernel_seconds);
        b.setup_seconds = b.setup_seconds.max(r.setup_seconds);
        b.download_seconds = b.download_seconds.max(r.download_seconds);
        d.peak_device_memory_bytes = d.peak_device_memory_bytes.max(r.peak_device_bytes);
    }
    Ok((scores, seconds, b, d))
}

impl GpuEngine {
    /// One GPU over `graph`, uploaded in `order` by [`Engine::prepare`] (`Auto`: the
    /// graph's own).
    pub fn one(gpu: Gpu, graph: Graph, order: Order) -> GpuEngine {
        let order = if order == Order::Auto { Order::Natural } else { order };
        GpuEngine { graph, devices: Devices::One { gpu, device: None, order, new_id: None, reorder_seconds: 0.0 } }
    }

    /// The multi-GPU engine over `graph` on `options.devices` (opened by [`Engine::prepare`]).
    pub fn several(graph: Graph, options: MultiOptions) -> GpuEngine {
        GpuEngine { graph, devices: Devices::Several { options, engine: None, prepared: None, notes: Vec::new(), bc: Vec::new() } }
    }

    /// The host graph.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// Frees the devices and hands the host graph back.
    pub fn into_graph(self) -> Graph {
        self.graph
    }

    /// Changes who drives the GPUs, the transport and the mode of the multi-GPU
    /// engine without uploading again (the benchmark sweeps them over one upload).
    pub fn reconfigure(&mut self, control: Control, comm: Comm, mode: Mode) -> Result<(), GpuError> {
        let Devices::Several { options, engine, .. } = &mut self.devices else {
            return Err(GpuError::unsupported("one GPU has no transports to choose"));
        };
        if let Some(mg) = engine {
            mg.set_mode(mode)?;
            mg.configure(control, comm)?;
        }
        *options = MultiOptions { control, comm, mode, ..options.clone() };
        Ok(())
    }
}

/// Near-far's Δ on the GPU, from the mean weight w and mean degree d. A GPU step costs
/// a grid barrier whatever its size, so sparse, deep graphs (d < 8: roads, grids) take
/// wide buckets, w × 1024 / d (moscow: 13.6 ms against 60.8 at w); on denser graphs
/// the work of re-relaxing edges dominates and narrow buckets win, w / 16 (rmat22 with
/// weights 1..255: 16.5 ms at Δ 8 against 20–21 at 64 and beyond). At least 1.
/// Measured on one H200 (scripts/gpu_tune.sh, docs/benchmarks/gpu.md).
pub fn default_delta(g: &Graph) -> f64 {
    let degree = g.num_edges() as f64 / g.num_vertices().max(1) as f64;
    let w = sssp::default_delta(g);
    (if degree < 8.0 { w * 1024.0 / degree.max(1.0) } else { w / 16.0 }).max(1.0)
}

/// Refuses the PageRank and BC options the GPU kernels do not have (the auto policy
/// asks too, and runs such work on the CPU).
pub fn refuse_options(alg: Algorithm, p: &Params) -> Result<(), Error> {
    if alg == Algorithm::Bc && p.weighted {
        return Err(Error::Unsupported("weighted bc runs on the CPU engine (the GPU kernels count hops)".into()));
    }
    if alg != Algorithm::Pr {
        return Ok(());
    }
    if p.personalization.is_some() {
        return Err(Error::Unsupported("--personalization runs on the CPU and SSD engines (the GPU kernels teleport uniformly)".into()));
    }
    if p.weighted {
        return Err(Error::Unsupported("weighted PageRank runs on the CPU and SSD engines (the GPU kernels share by out-degree)".into()));
    }
    if p.pr.method != PrMethod::Jacobi {
        return Err(Error::Unsupported(format!(
            "--pr-method {} runs on the CPU engine (the GPU kernels iterate as jacobi)",
            p.pr.method.name()
        )));
    }
    Ok(())
}

impl Engine for GpuEngine {
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }

    fn info(&self) -> EngineInfo {
        let (devices, trial_timing) = match &self.devices {
            Devices::One { gpu, .. } => (vec![gpu.name().to_string()], "kernel time between CUDA events"),
            Devices::Several { engine: Some(mg), .. } => (mg.names(), "wall time from every GPU ready to every GPU done"),
            Devices::Several { options, .. } => {
                (options.devices.iter().map(|d| format!("GPU {d}")).collect(), "wall time from every GPU ready to every GPU done")
            }
        };
        EngineInfo { name: "gpu", devices, trial_timing }
    }

    fn graph_info(&self) -> GraphInfo {
        GraphInfo::of(&self.graph)
    }

    fn out_degree(&self, v: u32) -> u64 {
        self.graph.out_edges().degree(v) as u64
    }

    fn prepare(&mut self, alg: Algorithm) -> Result<(), Error> {
        if !crate::has_kernel(alg) {
            return Err(Error::Unsupported(crate::no_kernel(alg)));
        }
        let multi = matches!(self.devices, Devices::Several { .. });
        // The multi-GPU WCC reads edges both ways.
        if alg.wants_in_edges() || (multi && alg == Algorithm::Wcc) {
            self.graph.build_in_edges().map_err(Error::engine)?;
        }
        if alg == Algorithm::Sssp {
            sssp::check_weights(&self.graph)?;
        }
        if alg == Algorithm::Clustering {
            chatty_algo::tc::clustering_defined(self.graph.is_directed())?;
        }
        if alg == Algorithm::Louvain {
            chatty_algo::community::check_weights(&self.graph)?;
        }
        match &mut self.devices {
            Devices::One { gpu, device, order, new_id, reorder_seconds } => {
                // Upload again where the host graph has gained in-edges since (built for
                // this kernel, here or by the harness).
                let has_in_edges = self.graph.is_directed() && self.graph.transpose_if_built().is_some();
                if device.as_ref().is_none_or(|d| d.has_in_edges() != has_in_edges) {
                    *device = None; // free the old copy first
                    let renumbered = Renumbering::of(&self.graph, *order).map_err(Error::engine)?;
                    let graph = renumbered.as_ref().map_or(&self.graph, |r| &r.graph);
                    *device = Some(DeviceGraph::upload(gpu, graph).map_err(Error::engine)?);
                    *reorder_seconds = renumbered.as_ref().map_or(0.0, |r| r.seconds);
                    *new_id = renumbered.map(|r| r.new_id);
                }
            }
            Devices::Several { options, bc, engine, prepared, .. } if alg == Algorithm::Bc => {
                // One kernel's device memory at a time.
                (*engine, *prepared) = (None, None);
                if bc.is_empty() {
                    for &d in &options.devices {
                        let gpu = Gpu::open(d).map_err(Error::engine)?;
                        let device = DeviceGraph::upload(&gpu, &self.graph).map_err(Error::engine)?;
                        bc.push((gpu, device));
                    }
                }
            }
            Devices::Several { options, engine, prepared, notes, bc } => {
                if *prepared != Some(alg) {
                    // One kernel's parts at a time.
                    (*engine, *prepared) = (None, None);
                    bc.clear();
                    let mg = MultiGpu::open(&self.graph, alg, options).map_err(Error::engine)?;
                    notes.extend(mg.notes.iter().cloned());
                    (*engine, *prepared) = (Some(mg), Some(alg));
                }
            }
        }
        Ok(())
    }

    fn default_delta(&self) -> Option<f64> {
        Some(default_delta(&self.graph))
    }

    fn warm_up(&self) -> bool {
        true
    }

    fn run(&self, alg: Algorithm, p: &Params, sources: &[u32], progress: &dyn chatty_graph::Progress) -> Result<Trial, Error> {
        let unprepared = || Error::Unsupported("the GPU engine was not prepared".into());
        refuse_options(alg, p)?;
        let trial = |output, iterations, seconds, breakdown, residual, transfers, detail| Trial {
            output,
            sources: sources.to_vec(),
            iterations,
            seconds,
            breakdown,
            residual,
            transfers,
            detail,
        };
        match &self.devices {
            Devices::One { gpu, device, new_id, .. } => {
                let id = new_id.as_deref();
                let on_device: Vec<u32> = sources.iter().map(|&v| to_device(id, v)).collect();
                let renumbered_x;
                let p = match (id, &p.x) {
                    (Some(id), Some(x)) => {
                        renumbered_x = Params { x: Some(chatty_algo::renumber::values_to_kernel(id, x)), ..p.clone() };
                        &renumbered_x
                    }
                    _ => p,
                };
                let r = run(gpu, device.as_ref().ok_or_else(unprepared)?, alg, p, &on_device, progress).map_err(Error::engine)?;
                let renumber = std::time::Instant::now();
                let output = output_to_caller(id, r.output);
                let d = DeviceTrial { peak_device_memory_bytes: r.peak_device_bytes };
                let b = Breakdown {
                    setup_seconds: r.setup_seconds,
                    exchange_seconds: 0.0,
                    download_seconds: r.download_seconds + renumber.elapsed().as_secs_f64(),
                };
                Ok(trial(output, r.iterations, r.kernel_seconds, b, r.residual, Vec::new(), detail(d)?))
            }
            Devices::Several { options, bc, .. } if alg == Algorithm::Bc => {
                if bc.is_empty() {
                    return Err(unprepared());
                }
                let (rank, size) = options.processes.as_ref().map_or((0, 1), |p| (p.0.rank(), p.0.size()));
                let mine: Vec<u32> = sources.iter().skip(rank).step_by(size).copied().collect();
                let (scores, seconds, mut b, d) = bc_split(bc, p, &mine, self.graph.num_vertices(), progress)?;
                let summed = std::time::Instant::now();
                let scores = match &options.processes {
                    Some(processes) => processes.0.sum_f64(&scores),
                    None => scores,
                };
                b.download_seconds += summed.elapsed().as_secs_f64();
                Ok(trial(chatty_algo::Output::Values(scores), sources.len() as u64, seconds, b, None, Vec::new(), detail(d)?))
            }
            Devices::Several { engine, .. } => {
                let r = engine.as_ref().ok_or_else(unprepared)?.run(alg, p, sources).map_err(Error::engine)?;
                let c = &r.comm;
                let transfers =
                    c.by_transport.iter().map(|(t, (x, b))| Transfer { transport: t.to_string(), exchanges: *x, bytes: *b }).collect();
                let b = Breakdown {
                    setup_seconds: r.setup_seconds,
                    exchange_seconds: c.exchange_seconds,
                    download_seconds: r.download_seconds,
                };
                let d = MultiTrial {
                    peak_device_memory_bytes: r.peak_device_bytes,
                    steps: c.steps,
                    exchanges: c.exchanges,
                    dense_exchanges: c.dense_exchanges,
                    updated_vertices: c.updated,
                    communicated_vertices: c.communicated,
                    state_bytes: c.state_bytes,
                    state_transport: "d2h (pinned host memory) + host barrier",
                };
                Ok(trial(r.output, r.iterations, r.seconds, b, r.residual, transfers, detail(d)?))
            }
        }
    }

    fn trial_lines(&self, trial: &Trial) -> Vec<String> {
        let Devices::Several { options, .. } = &self.devices else { return Vec::new() };
        let d = &trial.detail;
        let moved: Vec<String> =
            trial.transfers.iter().map(|t| format!("{} {}x {:.1} MB", t.transport, t.exchanges, t.bytes as f64 / 1e6)).collect();
        let processes = options.processes.as_ref().map_or(1, |p| p.0.size());
        if d.get("steps").is_none() {
            return vec![format!("GPUs: {} sources split over {processes} processes, one GPU each, scores summed", trial.sources.len())];
        }
        let gpus = match processes {
            1 => options.devices.len().to_string(),
            p => format!("{} here, {p} processes", options.devices.len()),
        };
        vec![format!(
            "GPUs: {gpus} ({} control); {} steps, {} exchanges ({}), {} of {} updated vertices sent",
            options.control.name(),
            d["steps"],
            d["exchanges"],
            if moved.is_empty() { "none".to_string() } else { moved.join(", ") },
            d["communicated_vertices"],
            d["updated_vertices"],
        )]
    }

    fn reference_graph(&self) -> Result<HostGraph<'_>, Error> {
        Ok(HostGraph::Borrowed(&self.graph))
    }

    fn detail(&self) -> serde_json::Value {
        match &self.devices {
            Devices::One { gpu, device, order, reorder_seconds, .. } => {
                let (upload_seconds, upload_bytes) = device.as_ref().map_or((0.0, 0), |d| (d.upload_seconds, d.upload_bytes));
                let (edges_seconds, host_copy_seconds) = device.as_ref().map_or((0.0, 0.0), |d| (d.edges_seconds, d.host_copy_seconds));
                serde_json::json!({
                    "reorder": order.name(),
                    "reorder_seconds": reorder_seconds,
                    "upload_seconds": upload_seconds,
                    "upload_bytes": upload_bytes,
                    "upload_gb_per_s": gb_per_s(upload_bytes, upload_seconds),
                    "upload_edges_seconds": edges_seconds,
                    "upload_host_copy_seconds": host_copy_seconds,
                    "compile_seconds": gpu.compile_seconds,
                    "open_seconds": gpu.open_seconds,
                })
            }
            Devices::Several { engine: None, .. } => serde_json::Value::Null,
            Devices::Several { options: o, engine: Some(mg), .. } => serde_json::json!({
                "split_seconds": mg.split_seconds,
                "upload_seconds": mg.upload_seconds,
                "upload_bytes": mg.upload_bytes,
                "upload_gb_per_s": gb_per_s(mg.upload_bytes, mg.upload_seconds),
                "compile_seconds": mg.compile_seconds,
                "open_seconds": mg.open_seconds,
                "finish_seconds": mg.finish_seconds,
                "gpus": mg.info.len(),
                "processes": o.processes.as_ref().map_or(1, |p| p.0.size()),
                "control": mg.control().name(),
                "comm": o.comm.name(),
                "mode": mg.mode().name(),
                "calibrated": mg.calibrated(),
                "reorder": mg.order().name(),
                "parts": mg.info.iter().map(|p| serde_json::json!({"device": p.device, "lo": p.lo, "hi": p.hi, "edges": p.edges, "boundary": p.boundary})).collect::<Vec<_>>(),
                "notes": mg.notes,
            }),
        }
    }

    fn host_graph_mut(&mut self) -> Option<&mut Graph> {
        Some(&mut self.graph)
    }

    fn take_notes(&mut self) -> Vec<String> {
        match &mut self.devices {
            Devices::One { .. } => Vec::new(),
            Devices::Several { notes, .. } => std::mem::take(notes),
        }
    }

    fn into_graph(self: Box<Self>) -> Option<Graph> {
        Some(self.graph)
    }
}
