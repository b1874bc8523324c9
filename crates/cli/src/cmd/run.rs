//! `chatty run`: the GAPBS-style benchmark harness (load once, time each trial,
//! `Trial Time:` / `Verification:` / `Average Time:` lines, or one JSON object).

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use chatty_algo::{Algorithm, BcSources, Direction, Output, Params, PrParams, RunResult};
use chatty_graph::write::AtomicFile;
use chatty_graph::WeightType;

use super::load_graph;
use crate::args::RunArgs;
use crate::progress::Bar;

/// Validates flags before any file is opened.
fn params(a: &RunArgs, alg: Algorithm) -> Result<Params> {
    let direction = match a.direction.as_str() {
        "auto" => Direction::Auto,
        "push" => Direction::Push,
        "pull" => Direction::Pull,
        d => bail!("unknown --direction `{d}`: expected auto, push or pull"),
    };
    let bc_sources = match a.sources.as_deref() {
        None => BcSources::One,
        Some("all") => BcSources::All,
        Some(k) => match k.parse::<usize>() {
            Ok(k) if k > 0 => BcSources::Random(k),
            _ => bail!("--sources takes a positive count or `all`, not `{k}`"),
        },
    };
    if a.sources.is_some() && alg != Algorithm::Bc {
        bail!("--sources applies to bc only; use --source for {}", alg.name());
    }
    if a.trials == 0 {
        bail!("--trials must be at least 1");
    }
    if a.tolerance.is_nan() || a.tolerance < 0.0 || a.max_iters == 0 {
        bail!("--tolerance must be non-negative and --max-iters positive");
    }
    Ok(Params {
        source: a.source,
        seed: a.seed,
        delta: a.delta,
        pr: PrParams { tolerance: a.tolerance, max_iters: a.max_iters, ..PrParams::default() },
        bc_sources,
        x: None,
        direction,
    })
}

pub(crate) fn read_x(path: &Path, n: usize) -> Result<Vec<f64>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read --x {}", path.display()))?;
    let x: Vec<f64> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|(i, l)| {
            let last = l.split_whitespace().last().unwrap_or("");
            last.parse::<f64>().with_context(|| format!("{}:{}: not a number: `{l}`", path.display(), i + 1))
        })
        .collect::<Result<_>>()?;
    if x.len() != n {
        bail!("{}: {} values for {n} vertices", path.display(), x.len());
    }
    Ok(x)
}

/// Peak resident memory of this process (VmHWM), in bytes.
pub(crate) fn peak_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("VmHWM:").map(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().unwrap_or(0))))
        .unwrap_or(0)
        * 1024
}

pub fn run(a: &RunArgs, quiet: bool) -> Result<i32> {
    let Some(alg) = Algorithm::from_name(&a.algorithm) else {
        bail!("unknown algorithm `{}`: expected one of bfs, sssp, pr, wcc, bc, spmv", a.algorithm);
    };
    let mut p = params(a, alg)?;
    let engine_name = a.engine.as_str();
    if !matches!(engine_name, "auto" | "cpu" | "gpu" | "ssd") {
        bail!("unknown engine `{engine_name}`: expected auto, cpu, gpu or ssd");
    }
    if let Some(t) = a.threads {
        rayon::ThreadPoolBuilder::new().num_threads(t).build_global().context("cannot size the thread pool")?;
    }
    if let Some(out) = &a.output {
        // Fail on a bad output path before the (possibly long) load and run.
        drop(AtomicFile::create(out)?);
    }
    // A layout goes to the SSD engine, unless another engine was asked for.
    let layout = chatty_ssd::layout::is_layout(&a.graph);
    if engine_name == "ssd" || (engine_name == "auto" && layout) {
        return super::ssd::run(a, alg, p);
    }
    if layout {
        bail!("{}: an SSD layout runs on --engine ssd (or auto)", a.graph.display());
    }

    let multi = if engine_name == "gpu" { multi_options(&a.gpu, alg)? } else { None };
    // Probe the device before the (possibly long) load, so `--engine gpu` on a
    // machine without one fails at once.
    let gpu = match engine_name {
        "gpu" if multi.is_none() => Some(chatty_gpu::Gpu::open(0)?),
        "auto" => super::auto_gpu(!a.json),
        _ => None,
    };
    let bar = Bar::new(quiet);
    let load_start = Instant::now();
    let mut g = load_graph(&a.graph, &a.load, &bar)?;
    if alg.wants_in_edges() || (multi.is_some() && alg == Algorithm::Wcc) {
        g = g.with_in_edges();
    }
    drop(bar);
    let load_seconds = load_start.elapsed().as_secs_f64();
    let device = match (gpu, &multi) {
        (Some(gpu), _) => {
            let dg = chatty_gpu::DeviceGraph::upload(&gpu, &g)?;
            if engine_name == "auto" && !a.json {
                eprintln!("engine: gpu (auto: {})", gpu.name());
            }
            Some(Device::One(gpu, dg))
        }
        (None, Some(o)) => {
            let mg = chatty_gpu::MultiGpu::open(&g, alg, o)?;
            for note in &mg.notes {
                eprintln!("note: {note}");
            }
            Some(Device::Multi(mg))
        }
        (None, None) => None,
    };
    let engine = if device.is_some() { "gpu" } else { "cpu" };
    if let Some(x) = &a.x {
        p.x = Some(read_x(x, g.num_vertices())?);
    }
    if alg == Algorithm::Sssp {
        // The default Δ is a pass over the weights: resolve it once, outside the trials.
        p.delta = Some(chatty_algo::sssp_delta(&g, &p).map_err(anyhow::Error::msg)?);
    }
    if let Some(device) = &device {
        // One untimed trial: GPU clocks ramp up from idle, the memory pool fills, and
        // NCCL connects lazily.
        device.run(&g, alg, &p, 0)?;
    }
    if !a.json {
        println!(
            "Graph: {} ({} vertices, {} edges, {}, {} weights), loaded in {load_seconds:.3} s",
            a.graph.display(),
            g.num_vertices(),
            g.num_edges(),
            if g.is_directed() { "directed" } else { "undirected" },
            g.weight_type().name()
        );
    }

    let mut trial_seconds = Vec::new();
    let mut end_to_end_seconds = Vec::new();
    let mut download_seconds = Vec::new();
    let mut peak_device_bytes = 0;
    let mut verification = Verification::default();
    let mut last: Option<RunResult> = None;
    let mut comm: Option<chatty_gpu::CommStats> = None;
    for trial in 0..a.trials as u64 {
        let start = Instant::now();
        let (r, t) = match &device {
            None => {
                let r = chatty_algo::run(alg, &g, &p, trial).map_err(anyhow::Error::msg)?;
                (r, start.elapsed().as_secs_f64())
            }
            Some(device) => {
                let run = device.run(&g, alg, &p, trial)?;
                download_seconds.push(run.download_seconds);
                peak_device_bytes = peak_device_bytes.max(run.peak_device_bytes);
                comm = run.comm;
                (run.result, run.seconds)
            }
        };
        end_to_end_seconds.push(start.elapsed().as_secs_f64());
        trial_seconds.push(t);
        if !a.json {
            println!("Trial Time:          {t:.5}");
        }
        if a.verify {
            verification.record(chatty_algo::verify(alg, &g, &p, &r), !a.json);
        }
        last = Some(r);
    }
    let r = last.expect("at least one trial");
    let average = trial_seconds.iter().sum::<f64>() / trial_seconds.len() as f64;
    if let Some(out) = &a.output {
        write_output(out, &r.output)?;
    }
    let edges_traversed = chatty_algo::edges_traversed(alg, &g, &r);
    let gteps = edges_traversed as f64 / average / 1e9;
    if a.json {
        let json = serde_json::json!({
            "algorithm": alg.name(),
            "engine": engine,
            "devices": match &device {
                Some(d) => d.names(),
                None => vec![format!("cpu ({} threads)", rayon::current_num_threads())],
            },
            "graph": {
                "path": a.graph.display().to_string(),
                "n": g.num_vertices(),
                "m": g.num_edges(),
                "directed": g.is_directed(),
                "weighted": g.weight_type() != WeightType::None,
            },
            "parameters": {
                "sources": r.sources.iter().take(64).collect::<Vec<_>>(),
                "source_count": r.sources.len(),
                "delta": p.delta,
                "tolerance": p.pr.tolerance,
                "max_iters": p.pr.max_iters,
                "damping": p.pr.damping,
                "seed": p.seed,
            },
            "load_seconds": load_seconds,
            "trial_seconds": trial_seconds,
            "trial_timing": match &device {
                Some(Device::One(..)) => "kernel time between CUDA events",
                Some(Device::Multi(_)) => "wall time from every GPU ready to every GPU done",
                None => "wall time of the kernel",
            },
            "end_to_end_seconds": end_to_end_seconds,
            "upload_seconds": device.as_ref().map(|d| d.upload().0),
            "upload_bytes": device.as_ref().map(|d| d.upload().1),
            "download_seconds": download_seconds,
            "compile_seconds": device.as_ref().map(|d| d.upload().2),
            "peak_device_memory_bytes": device.as_ref().map(|_| peak_device_bytes),
            "average_seconds": average,
            "iterations": r.iterations,
            "edges_traversed": edges_traversed,
            "edges_counting": "stored directed edges examined: out-edges of reached vertices per source (bfs, sssp, bc), m per iteration (pr), m (wcc, spmv)",
            "gteps": gteps,
            "transports": comm.as_ref().map_or(Vec::new(), |c| c.by_transport.iter().map(|(t, (x, b))| serde_json::json!({"transport": t, "exchanges": x, "bytes": b})).collect()),
            "bytes_between_devices": comm.as_ref().map_or(0, |c| c.by_transport.values().map(|v| v.1).sum::<u64>()),
            "multi_gpu": match (&device, &comm) {
                (Some(Device::Multi(mg)), Some(c)) => multi_json(mg, &a.gpu, c),
                _ => serde_json::Value::Null,
            },
            "verification": verification.json(),
            "peak_memory_bytes": peak_rss(),
            "graph_bytes": g.size_bytes(),
            "version": env!("CARGO_PKG_VERSION"),
            "commit": env!("CHATTY_COMMIT"),
        });
        println!("{json}");
    } else {
        if let (Some(Device::Multi(mg)), Some(c)) = (&device, &comm) {
            let moved: Vec<String> = c.by_transport.iter().map(|(t, (x, b))| format!("{t} {x}x {:.1} MB", *b as f64 / 1e6)).collect();
            println!(
                "GPUs: {} ({} control); {} steps, {} exchanges ({}), {} of {} updated vertices sent",
                mg.info.len(),
                mg.control().name(),
                c.steps,
                c.exchanges,
                if moved.is_empty() { "none".to_string() } else { moved.join(", ") },
                c.communicated,
                c.updated
            );
        }
        print_averages(average, r.iterations, gteps, edges_traversed);
        println!("{}", summary(&r.output));
    }
    Ok(verification.exit_code())
}

/// The GPU engine of a run: one GPU, or several (one value per run, so the size
/// difference does not matter).
#[allow(clippy::large_enum_variant)]
enum Device {
    One(chatty_gpu::Gpu, chatty_gpu::DeviceGraph),
    Multi(chatty_gpu::MultiGpu),
}

/// One GPU trial, in the shape both engines share.
struct DeviceRun {
    result: RunResult,
    seconds: f64,
    download_seconds: f64,
    peak_device_bytes: u64,
    comm: Option<chatty_gpu::CommStats>,
}

impl Device {
    fn run(&self, g: &chatty_graph::Graph, alg: Algorithm, p: &Params, trial: u64) -> Result<DeviceRun> {
        Ok(match self {
            Device::One(gpu, dg) => {
                let r = chatty_gpu::run(gpu, dg, g, alg, p, trial)?;
                DeviceRun { result: r.result, seconds: r.kernel_seconds, download_seconds: r.download_seconds, peak_device_bytes: r.peak_device_bytes, comm: None }
            }
            Device::Multi(mg) => {
                let r = mg.run(g, alg, p, trial)?;
                DeviceRun { result: r.result, seconds: r.seconds, download_seconds: r.download_seconds, peak_device_bytes: r.peak_device_bytes, comm: Some(r.comm) }
            }
        })
    }

    fn names(&self) -> Vec<String> {
        match self {
            Device::One(gpu, _) => vec![gpu.name().to_string()],
            Device::Multi(mg) => mg.names(),
        }
    }

    /// (upload seconds, upload bytes, compile seconds).
    fn upload(&self) -> (f64, u64, f64) {
        match self {
            Device::One(gpu, dg) => (dg.upload_seconds, dg.upload_bytes, gpu.compile_seconds),
            Device::Multi(mg) => (mg.upload_seconds, mg.upload_bytes, mg.compile_seconds),
        }
    }
}

/// The multi-GPU engine's options from the flags, or `None` for one GPU. Checked
/// before the graph is loaded.
fn multi_options(a: &crate::args::GpuArgs, alg: Algorithm) -> Result<Option<chatty_gpu::MultiOptions>> {
    let Some(control) = chatty_gpu::Control::from_name(&a.control) else {
        bail!("unknown --control `{}`: expected threads or single", a.control);
    };
    let Some(comm) = chatty_gpu::Comm::from_name(&a.comm) else {
        bail!("unknown --comm `{}`: expected auto, p2p, peer, uva, staged or nccl", a.comm);
    };
    let reorder = match a.partition.as_str() {
        "natural" => false,
        "bfs" => true,
        o => bail!("unknown --partition `{o}`: expected natural or bfs"),
    };
    if !(a.watchdog > 0.0 && a.watchdog.is_finite()) {
        bail!("--watchdog takes a positive number of seconds");
    }
    let mode =
        chatty_gpu::Mode::from_name(&a.mode).with_context(|| format!("unknown --mode `{}`: expected one of {}", a.mode, chatty_gpu::Mode::NAMES))?;
    if !mode.supports(alg) {
        bail!("--mode {} has bfs and sssp, not {}", a.mode, alg.name());
    }
    let devices = match &a.devices {
        Some(d) if d.is_empty() => bail!("--devices needs at least one ordinal"),
        Some(d) => d.clone(),
        None => {
            let count = chatty_gpu::Gpu::count();
            let wanted = match a.gpus.as_str() {
                "all" => count,
                k => match k.parse::<usize>() {
                    Ok(k) if k > 0 => k,
                    _ => bail!("--gpus takes a positive count or `all`, not `{k}`"),
                },
            };
            if count > 0 && wanted > count {
                bail!("--gpus {wanted}: this machine has {count} GPU{}", if count == 1 { "" } else { "s" });
            }
            if wanted <= 1 {
                return Ok(None);
            }
            if alg == Algorithm::Bc {
                if a.gpus == "all" {
                    eprintln!("note: bc runs on one GPU");
                    return Ok(None);
                }
                bail!("bc runs on one GPU (--gpus 1); the multi-GPU engine has bfs, sssp, pr, wcc and spmv");
            }
            (0..wanted).collect()
        }
    };
    let watchdog = std::time::Duration::from_secs_f64(a.watchdog);
    Ok(Some(chatty_gpu::MultiOptions { devices, control, comm, reorder, watchdog, mode }))
}

fn multi_json(mg: &chatty_gpu::MultiGpu, a: &crate::args::GpuArgs, c: &chatty_gpu::CommStats) -> serde_json::Value {
    serde_json::json!({
        "gpus": mg.info.len(),
        "control": mg.control().name(),
        "comm": a.comm,
        "calibrated": mg.calibrated(),
        "partition": a.partition,
        "parts": mg.info.iter().map(|p| serde_json::json!({"device": p.device, "lo": p.lo, "hi": p.hi, "edges": p.edges, "boundary": p.boundary})).collect::<Vec<_>>(),
        "steps": c.steps,
        "exchanges": c.exchanges,
        "dense_exchanges": c.dense_exchanges,
        "updated_vertices": c.updated,
        "communicated_vertices": c.communicated,
        "state_bytes": c.state_bytes,
        "state_transport": "d2h (pinned host memory) + host barrier",
        "notes": mg.notes,
    })
}

/// The verdicts of `--verify` over the trials.
#[derive(Default)]
pub(crate) struct Verification(Option<Result<(), String>>);

impl Verification {
    /// Adds one trial's verdict, printing its `Verification:` line if `print`.
    pub(crate) fn record(&mut self, outcome: Result<(), String>, print: bool) {
        if print {
            match &outcome {
                Ok(()) => println!("Verification:        PASS"),
                Err(e) => println!("Verification:        FAIL ({e})"),
            }
        }
        self.0 = Some(self.0.take().unwrap_or(Ok(())).and(outcome));
    }

    /// `PASS`, `FAIL: ...`, or null when nothing was verified.
    pub(crate) fn json(&self) -> Option<String> {
        self.0.as_ref().map(|v| match v {
            Ok(()) => "PASS".to_string(),
            Err(e) => format!("FAIL: {e}"),
        })
    }

    /// 1 if a trial failed verification, else 0.
    pub(crate) fn exit_code(&self) -> i32 {
        i32::from(matches!(self.0, Some(Err(_))))
    }
}

/// GAPBS's closing lines.
pub(crate) fn print_averages(average: f64, iterations: u64, gteps: f64, edges: u64) {
    println!("Average Time:        {average:.5}");
    println!("Iterations:          {iterations}");
    println!("GTEPS:               {gteps:.3} ({edges} edges examined)");
}

/// One line about the result, as a human reads it.
pub(crate) fn summary(o: &Output) -> String {
    match o {
        Output::Depths(d) => {
            let reached: Vec<u32> = d.iter().copied().filter(|&x| x != chatty_algo::bfs::UNREACHED).collect();
            format!("Reached:             {} vertices, max depth {}", reached.len(), reached.iter().max().unwrap_or(&0))
        }
        Output::Distances(chatty_algo::Distances::Int(d)) => {
            format!("Reached:             {} vertices", d.iter().filter(|&&x| x != u64::MAX).count())
        }
        Output::Distances(chatty_algo::Distances::Float(d)) => {
            format!("Reached:             {} vertices", d.iter().filter(|x| x.is_finite()).count())
        }
        Output::Labels(l) => {
            let comps = l.iter().enumerate().filter(|&(v, &c)| v as u32 == c).count();
            format!("Components:          {comps}")
        }
        Output::Values(s) => {
            let (top, max) = s.iter().enumerate().fold((0, f64::MIN), |acc, (v, &x)| if x > acc.1 { (v, x) } else { acc });
            format!("Largest value:       {max:.6e} at vertex {top}")
        }
    }
}

/// Writes `vertex value` per line, through a temporary file.
pub(crate) fn write_output(path: &Path, o: &Output) -> Result<()> {
    let mut f = AtomicFile::create(path)?;
    let mut line = |v: usize, value: std::fmt::Arguments| writeln!(f, "{v} {value}");
    match o {
        Output::Depths(d) => d.iter().enumerate().try_for_each(|(v, &x)| if x == chatty_algo::bfs::UNREACHED { line(v, format_args!("-1")) } else { line(v, format_args!("{x}")) }),
        Output::Distances(chatty_algo::Distances::Int(d)) => d.iter().enumerate().try_for_each(|(v, &x)| if x == u64::MAX { line(v, format_args!("inf")) } else { line(v, format_args!("{x}")) }),
        Output::Distances(chatty_algo::Distances::Float(d)) => d.iter().enumerate().try_for_each(|(v, &x)| if x.is_infinite() { line(v, format_args!("inf")) } else { line(v, format_args!("{x}")) }),
        Output::Values(s) => s.iter().enumerate().try_for_each(|(v, &x)| line(v, format_args!("{x}"))),
        Output::Labels(l) => l.iter().enumerate().try_for_each(|(v, &x)| line(v, format_args!("{x}"))),
    }
    .with_context(|| format!("cannot write {}", path.display()))?;
    f.commit()?;
    Ok(())
}
