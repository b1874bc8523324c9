//! The GPU engines behind the engine trait: one GPU ([`GpuEngine`]) and the
//! multi-GPU engine ([`MultiGpuEngine`]). Both keep the host graph (sources are
//! picked on it, `--verify` reads it) and ready the device once per kernel.

use chatty_algo::{sssp, Algorithm, Engine, EngineInfo, Error, GraphInfo, HostGraph, Params, Transfer, Trial};
use chatty_graph::Graph;
use serde::Serialize;

use crate::device::{run, DeviceGraph, Gpu};
use crate::multi::{Comm, CommStats, Control, Mode, MultiGpu, MultiOptions};
use crate::GpuError;

/// Device figures of one trial (the report's `detail`).
#[derive(Serialize)]
struct DeviceTrial {
    download_seconds: f64,
    peak_device_memory_bytes: u64,
}

/// Host-side preparation both GPU engines share: the transpose a kernel pulls
/// through, and SSSP's weight check (done once, not per trial).
fn prepare_host(graph: &mut Graph, alg: Algorithm, multi: bool) -> Result<(), Error> {
    if alg.wants_in_edges() || (multi && alg == Algorithm::Wcc) {
        graph.build_in_edges();
    }
    if alg == Algorithm::Sssp {
        sssp::check_weights(graph)?;
    }
    Ok(())
}

/// One GPU.
pub struct GpuEngine {
    gpu: Gpu,
    graph: Graph,
    device: Option<DeviceGraph>,
}

impl GpuEngine {
    /// The engine on `gpu` over `graph` (uploaded by [`Engine::prepare`]).
    pub fn new(gpu: Gpu, graph: Graph) -> GpuEngine {
        GpuEngine { gpu, graph, device: None }
    }

    /// Frees the device and hands the host graph back.
    pub fn into_graph(self) -> Graph {
        self.graph
    }
}

impl Engine for GpuEngine {
    fn info(&self) -> EngineInfo {
        EngineInfo { name: "gpu", devices: vec![self.gpu.name().to_string()], trial_timing: "kernel time between CUDA events" }
    }

    fn graph_info(&self) -> GraphInfo {
        GraphInfo::of(&self.graph)
    }

    fn out_degree(&self, v: u32) -> u64 {
        self.graph.out_edges().degree(v) as u64
    }

    fn prepare(&mut self, alg: Algorithm) -> Result<(), Error> {
        let had_in_edges = self.graph.transpose_if_built().is_some();
        prepare_host(&mut self.graph, alg, false)?;
        let stale = self.graph.transpose_if_built().is_some() != had_in_edges;
        if self.device.is_none() || stale {
            self.device = None; // free the old copy first
            self.device = Some(DeviceGraph::upload(&self.gpu, &self.graph).map_err(Error::engine)?);
        }
        Ok(())
    }

    fn default_delta(&self) -> Option<f64> {
        Some(sssp::default_delta(&self.graph))
    }

    fn warm_up(&self) -> bool {
        true
    }

    fn run(&self, alg: Algorithm, p: &Params, sources: &[u32]) -> Result<Trial, Error> {
        let dg = self.device.as_ref().ok_or_else(|| Error::Unsupported("the GPU engine was not prepared".into()))?;
        let r = run(&self.gpu, dg, alg, p, sources).map_err(Error::engine)?;
        let detail = DeviceTrial { download_seconds: r.download_seconds, peak_device_memory_bytes: r.peak_device_bytes };
        Ok(Trial {
            output: r.output,
            sources: sources.to_vec(),
            iterations: r.iterations,
            seconds: r.kernel_seconds,
            transfers: Vec::new(),
            detail: serde_json::to_value(detail).map_err(Error::engine)?,
        })
    }

    fn reference_graph(&self) -> Result<HostGraph<'_>, Error> {
        Ok(HostGraph::Borrowed(&self.graph))
    }

    fn detail(&self) -> serde_json::Value {
        let (upload_seconds, upload_bytes) = self.device.as_ref().map_or((0.0, 0), |d| (d.upload_seconds, d.upload_bytes));
        serde_json::json!({ "upload_seconds": upload_seconds, "upload_bytes": upload_bytes, "compile_seconds": self.gpu.compile_seconds })
    }
}

/// Several GPUs (design.md §1.1), opened for each kernel with the edges it reads.
pub struct MultiGpuEngine {
    graph: Graph,
    options: MultiOptions,
    engine: Option<MultiGpu>,
    /// The kernel `engine` holds the edges of.
    prepared: Option<Algorithm>,
    notes: Vec<String>,
}

impl MultiGpuEngine {
    /// The engine over `graph` on `options.devices` (opened by [`Engine::prepare`]).
    pub fn new(graph: Graph, options: MultiOptions) -> MultiGpuEngine {
        MultiGpuEngine { graph, options, engine: None, prepared: None, notes: Vec::new() }
    }

    /// Changes who drives the GPUs, the transport and the mode of the opened engine
    /// without uploading again (the benchmark sweeps them over one upload).
    pub fn reconfigure(&mut self, control: Control, comm: Comm, mode: Mode) -> Result<(), GpuError> {
        if let Some(mg) = &mut self.engine {
            mg.set_mode(mode)?;
            mg.configure(control, comm)?;
        }
        self.options = MultiOptions { control, comm, mode, ..self.options.clone() };
        Ok(())
    }

    /// The opened engine (after [`Engine::prepare`]).
    pub fn engine(&self) -> Option<&MultiGpu> {
        self.engine.as_ref()
    }

    /// Closes the GPUs and hands the host graph back.
    pub fn into_graph(self) -> Graph {
        self.graph
    }
}

/// The multi-GPU figures of one trial (the report's `detail`).
#[derive(Serialize)]
struct MultiTrial {
    download_seconds: f64,
    peak_device_memory_bytes: u64,
    steps: u64,
    exchanges: u64,
    dense_exchanges: u64,
    updated_vertices: u64,
    communicated_vertices: u64,
    state_bytes: u64,
    state_transport: &'static str,
}

fn transfers(c: &CommStats) -> Vec<Transfer> {
    c.by_transport.iter().map(|(t, (x, b))| Transfer { transport: t.to_string(), exchanges: *x, bytes: *b }).collect()
}

impl Engine for MultiGpuEngine {
    fn info(&self) -> EngineInfo {
        let devices = match &self.engine {
            Some(mg) => mg.names(),
            None => self.options.devices.iter().map(|d| format!("GPU {d}")).collect(),
        };
        EngineInfo { name: "gpu", devices, trial_timing: "wall time from every GPU ready to every GPU done" }
    }

    fn graph_info(&self) -> GraphInfo {
        GraphInfo::of(&self.graph)
    }

    fn out_degree(&self, v: u32) -> u64 {
        self.graph.out_edges().degree(v) as u64
    }

    fn prepare(&mut self, alg: Algorithm) -> Result<(), Error> {
        prepare_host(&mut self.graph, alg, true)?;
        if self.prepared == Some(alg) {
            return Ok(());
        }
        self.engine = None; // one kernel's parts at a time
        self.prepared = None;
        let mg = MultiGpu::open(&self.graph, alg, &self.options).map_err(Error::engine)?;
        self.notes.extend(mg.notes.iter().cloned());
        self.engine = Some(mg);
        self.prepared = Some(alg);
        Ok(())
    }

    fn default_delta(&self) -> Option<f64> {
        Some(sssp::default_delta(&self.graph))
    }

    fn warm_up(&self) -> bool {
        true
    }

    fn run(&self, alg: Algorithm, p: &Params, sources: &[u32]) -> Result<Trial, Error> {
        let mg = self.engine.as_ref().ok_or_else(|| Error::Unsupported("the multi-GPU engine was not prepared".into()))?;
        let r = mg.run(alg, p, sources).map_err(Error::engine)?;
        let c = &r.comm;
        let detail = MultiTrial {
            download_seconds: r.download_seconds,
            peak_device_memory_bytes: r.peak_device_bytes,
            steps: c.steps,
            exchanges: c.exchanges,
            dense_exchanges: c.dense_exchanges,
            updated_vertices: c.updated,
            communicated_vertices: c.communicated,
            state_bytes: c.state_bytes,
            state_transport: "d2h (pinned host memory) + host barrier",
        };
        Ok(Trial {
            output: r.output,
            sources: sources.to_vec(),
            iterations: r.iterations,
            seconds: r.seconds,
            transfers: transfers(c),
            detail: serde_json::to_value(detail).map_err(Error::engine)?,
        })
    }

    fn trial_lines(&self, trial: &Trial) -> Vec<String> {
        let d = &trial.detail;
        let moved: Vec<String> = trial.transfers.iter().map(|t| format!("{} {}x {:.1} MB", t.transport, t.exchanges, t.bytes as f64 / 1e6)).collect();
        vec![format!(
            "GPUs: {} ({} control); {} steps, {} exchanges ({}), {} of {} updated vertices sent",
            self.options.devices.len(),
            self.options.control.name(),
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
        let o = &self.options;
        let Some(mg) = &self.engine else { return serde_json::Value::Null };
        serde_json::json!({
            "upload_seconds": mg.upload_seconds,
            "upload_bytes": mg.upload_bytes,
            "compile_seconds": mg.compile_seconds,
            "gpus": mg.info.len(),
            "control": mg.control().name(),
            "comm": o.comm.name(),
            "mode": o.mode.name(),
            "calibrated": mg.calibrated(),
            "partition": if o.reorder { "bfs" } else { "natural" },
            "parts": mg.info.iter().map(|p| serde_json::json!({"device": p.device, "lo": p.lo, "hi": p.hi, "edges": p.edges, "boundary": p.boundary})).collect::<Vec<_>>(),
            "notes": mg.notes,
        })
    }

    fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }
}
