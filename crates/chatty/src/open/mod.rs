//! [`open`]: the one function in the workspace that opens an engine.

mod mpi;

use std::path::Path;

use chatty_algo::{CpuEngine, Engine};
use chatty_gpu::{Comm, Gpu, GpuEngine, Mode, MultiOptions, Order};
use chatty_graph::{Graph, Progress, ReadOptions};
use chatty_ssd::{EngineConfig, IoConfig, SsdEngine};

use crate::policy::{self, Choice, Workload};
use crate::spec::{EngineKind, EngineSpec, GpuCount, GpuSpec, SsdSpec};
use crate::{process, Error, Note, Result};

/// Where the graph comes from.
#[allow(clippy::large_enum_variant)] // made once per open, and moved into the engine
pub enum GraphSource<'a> {
    /// A file: any input format or a `.cgr` (read as `read` says), or an SSD layout
    /// (opened, not read: its edges stay on disk).
    File {
        /// The path.
        path: &'a Path,
        /// Format and transforms for inputs that are read.
        read: ReadOptions,
    },
    /// A graph in memory.
    Memory(Graph),
}

impl<'a> GraphSource<'a> {
    /// A file read with the default options (format from its name and content).
    pub fn file(path: &'a Path) -> GraphSource<'a> {
        GraphSource::File { path, read: ReadOptions::default() }
    }
}

/// An engine holding the graph, and what the front end should say about it.
pub struct Opened {
    /// The engine.
    pub engine: Box<dyn Engine>,
    /// The auto policy's choice and why (`None` when the spec named the engine).
    pub choice: Option<Choice>,
    /// Notes for the user: options the engine runs without, how many GPUs it took,
    /// thread counts capped.
    pub notes: Vec<Note>,
    /// Whether this process speaks for the run: `false` on the ranks of an MPI job
    /// other than 0, which print nothing and write no files.
    pub speaks: bool,
}

/// Opens the engine `spec` asks for on the graph of `source`, for `work` (which the
/// auto policy weighs and the GPU count follows). Options are checked before the
/// graph is read, and a machine without the GPU asked for fails before it too;
/// `progress` sees the read.
pub fn open(spec: &EngineSpec, source: GraphSource, work: &Workload, progress: &dyn Progress) -> Result<Opened> {
    match source {
        GraphSource::File { path, read } => open_from(spec, Some((path, read)), &mut None, work, progress),
        GraphSource::Memory(g) => open_from(spec, None, &mut Some(g), work, progress),
    }
}

/// [`open`] on the graph in `held`, which the engine takes only once it opens: on an
/// error the graph stays in `held` for the next try (another engine, other options).
pub fn open_held(spec: &EngineSpec, held: &mut Option<Graph>, work: &Workload) -> Result<Opened> {
    open_from(spec, None, held, work, &chatty_graph::NoProgress)
}

/// [`open`] on `file` (read into `held`) or on the graph in `held`. Everything that
/// can fail comes before the engine takes the graph out of `held`.
fn open_from(
    spec: &EngineSpec,
    file: Option<(&Path, ReadOptions)>,
    held: &mut Option<Graph>,
    work: &Workload,
    progress: &dyn Progress,
) -> Result<Opened> {
    let mut notes = Vec::new();
    let threads = spec.threads.map(|t| process::threads("threads", t)).transpose()?.map(|(t, note)| {
        notes.extend(note);
        t
    });
    refuse_gpu_options(spec)?;
    check_gpu_options(&spec.gpu, work)?;
    if spec.kind == EngineKind::Mpi || (spec.kind == EngineKind::Auto && process::under_mpirun() && cfg!(feature = "mpi")) {
        return mpi::open(spec, file.map(|f| f.0), notes);
    }
    if spec.kind == EngineKind::Gpu && process::under_mpirun() && cfg!(feature = "mpi") {
        return mpi::open_gpu_job(spec, file, held, progress, notes);
    }
    if spec.mpi.split_sources {
        return Err(Error::Unsupported { option: Some("split_sources"), what: "applies to the MPI engine".into() });
    }
    if spec.kind == EngineKind::Ssd || file.is_some_and(|(path, _)| chatty_ssd::layout::is_layout(path)) {
        return open_ssd(spec, file, notes);
    }
    // One GPU asked for: opened before the (possibly long) read, so that a machine
    // without it fails at once.
    let (multi, gpus_auto) = match spec.kind {
        EngineKind::Gpu => multi_options(&spec.gpu, spec.reorder)?,
        _ => (None, false),
    };
    let mut gpu = match spec.kind {
        EngineKind::Gpu if multi.is_none() || gpus_auto => Some(open_gpu(0)?),
        _ => None,
    };
    if let Some((path, read)) = file {
        *held = Some(chatty_graph::read_graph(path, read, progress)?);
    }
    let graph = held.as_ref().ok_or_else(|| Error::Parameter { name: "graph", problem: "was given to an engine already".into() })?;
    let choice = (spec.kind == EngineKind::Auto).then(|| auto_choice(spec, graph, work, &mut gpu, &mut notes));
    let multi = match (gpus_auto, multi) {
        (true, Some(o)) => gpus_chosen(graph, work, o, &mut gpu, &mut notes)?,
        (_, multi) => multi,
    };
    // The CPU engine's own pool where the caller's has another size (built now: nothing
    // may fail once the graph is taken).
    let pool = match (&gpu, &multi, threads) {
        (None, None, Some(t)) if t != rayon::current_num_threads() => Some(process::pool(t)?),
        _ => None,
    };
    let graph = held.take().expect("checked above");
    let engine: Box<dyn Engine> = match (gpu, multi, pool) {
        (Some(gpu), _, _) => Box::new(GpuEngine::one(gpu, graph, spec.reorder)),
        (None, Some(o), _) => {
            policy::gpu_started();
            Box::new(GpuEngine::several(graph, o))
        }
        (None, None, Some(pool)) => Box::new(CpuEngine::with_pool(graph, pool)),
        (None, None, None) => Box::new(CpuEngine::new(graph)),
    };
    Ok(Opened { engine, choice, notes, speaks: true })
}

/// The auto policy's engine for `graph` and `work`; a GPU it chooses is opened into
/// `gpu` (the CPU instead, said in the reason, when it cannot be).
fn auto_choice(spec: &EngineSpec, graph: &Graph, work: &Workload, gpu: &mut Option<Gpu>, notes: &mut Vec<Note>) -> Choice {
    let mut chosen = policy::choose(graph, work, &policy::gpu_state());
    if chosen.engine == EngineKind::Gpu {
        match open_gpu(0) {
            Ok(g) => {
                chosen.why = format!("{} on {}", chosen.why, g.name());
                *gpu = Some(g);
            }
            Err(e) => chosen = Choice { engine: EngineKind::Cpu, why: format!("the GPU could not be used: {e}") },
        }
    }
    if chosen.engine == EngineKind::Cpu {
        notes.extend(unused_gpu_options(spec, "CPU"));
    }
    chosen
}

/// `--gpus auto`: how many of `o.devices` the graph and work call for
/// ([`chatty_gpu::choose_gpus`], from the free memory of the GPU opened in `gpu`);
/// one keeps that GPU, several drop it for the multi-GPU engine's options.
fn gpus_chosen(
    graph: &Graph,
    work: &Workload,
    mut o: MultiOptions,
    gpu: &mut Option<Gpu>,
    notes: &mut Vec<Note>,
) -> Result<Option<MultiOptions>> {
    let Some(one) = gpu.as_ref() else { return Ok(Some(o)) };
    let bc = work.kernels.contains(&chatty_algo::Algorithm::Bc).then(|| work.bc_sources.count(graph.num_vertices()) as u64);
    let chosen = chatty_gpu::choose_gpus(graph, &work.kernels, bc, o.devices.len(), one.free_bytes()?);
    notes.push(Note { option: None, text: format!("gpus: {} of {} (auto: {})", chosen.gpus, o.devices.len(), chosen.why) });
    if chosen.gpus == 1 {
        return Ok(None);
    }
    o.devices.truncate(chosen.gpus);
    *gpu = None;
    Ok(Some(o))
}

/// Refuses read options for an SSD layout, which opens as it was converted.
fn refuse_read_options(read: Option<ReadOptions>) -> Result<()> {
    let Some(read) = read else { return Ok(()) };
    let b = read.build;
    if read.format.is_some() || b.symmetrize || b.dedup || b.drop_self_loops || read.ids.keep_id_range || read.ids.header.is_some() {
        let what = "the format, the load transforms (symmetrize, dedup, drop self-loops) and how ids are read apply to graph files, not to an SSD layout, which opens as `convert --layout ssd` wrote it; convert again with them".into();
        return Err(Error::Unsupported { option: None, what });
    }
    Ok(())
}

/// A GPU, recorded as started for the auto policy.
fn open_gpu(ordinal: usize) -> Result<Gpu> {
    let gpu = Gpu::open(ordinal)?;
    policy::gpu_started();
    Ok(gpu)
}

/// Refuses GPU options for an engine named without a GPU.
fn refuse_gpu_options(spec: &EngineSpec) -> Result<()> {
    let engine = match spec.kind {
        EngineKind::Cpu => "CPU",
        EngineKind::Ssd => "SSD",
        _ => return Ok(()),
    };
    match spec.gpu_options_given().first() {
        Some(&option) => {
            Err(Error::Unsupported { option: Some(option), what: format!("applies to the GPU engine, not the {engine} engine") })
        }
        None => Ok(()),
    }
}

/// What auto says of GPU options when it picked `engine`, which has no GPU.
fn unused_gpu_options(spec: &EngineSpec, engine: &str) -> impl Iterator<Item = Note> {
    let text = format!("applies to the GPU engine; the {engine} engine runs without it");
    spec.gpu_options_given().into_iter().map(move |o| Note { option: Some(o), text: text.clone() })
}

/// The SSD engine on a layout (the only engine that runs on one, and only on one).
fn open_ssd(spec: &EngineSpec, file: Option<(&Path, ReadOptions)>, notes: Vec<Note>) -> Result<Opened> {
    let read = file.map(|f| f.1);
    let path = match file.map(|f| f.0) {
        Some(path) if chatty_ssd::layout::is_layout(path) => path,
        Some(path) => {
            std::fs::metadata(path).map_err(|source| chatty_graph::Error::Io { path: path.to_path_buf(), what: "cannot open", source })?;
            let what = format!(
                "{}: the SSD engine runs on an SSD layout; make one with `chatty convert GRAPH -o NAME.ssd --layout ssd --stripes K`",
                path.display()
            );
            return Err(Error::Unsupported { option: None, what });
        }
        None => {
            let what = "the SSD engine runs on an SSD layout: write one (`chatty convert --layout ssd`, or g.write(PATH, layout='ssd')) and open that";
            return Err(Error::Unsupported { option: None, what: what.into() });
        }
    };
    refuse_read_options(read)?;
    if !matches!(spec.kind, EngineKind::Ssd | EngineKind::Auto) {
        return Err(Error::Unsupported {
            option: Some("engine"),
            what: format!("ssd (or auto) runs {}: it is an SSD layout", path.display()),
        });
    }
    let mut notes = notes;
    let choice = (spec.kind == EngineKind::Auto).then(|| {
        notes.extend(unused_gpu_options(spec, "SSD"));
        Choice { engine: EngineKind::Ssd, why: "an SSD layout: its edges stay on disk".into() }
    });
    let engine = SsdEngine::open(path, ssd_config(&spec.ssd, &mut notes)?, ssd_budget(&spec.ssd)?)?;
    Ok(Opened { engine: Box::new(engine), choice, notes, speaks: true })
}

/// The SSD engine's configuration, checked (thread counts capped, with a note).
fn ssd_config(s: &SsdSpec, notes: &mut Vec<Note>) -> Result<EngineConfig> {
    if !(1..=4096).contains(&s.io_depth) {
        return Err(Error::Parameter { name: "io_depth", problem: format!("takes 1 to 4096, not {}", s.io_depth) });
    }
    if !(1..=256).contains(&s.merge_pages) {
        return Err(Error::Parameter { name: "merge_pages", problem: format!("takes 1 to 256, not {}", s.merge_pages) });
    }
    let mut cfg = EngineConfig {
        io: IoConfig { queue_depth: s.io_depth, merge_pages: s.merge_pages, direct: s.direct, uring: s.uring },
        binning: s.binning,
        ..EngineConfig::default()
    };
    for (name, asked, threads) in
        [("scatter_threads", s.scatter_threads, &mut cfg.scatter_threads), ("gather_threads", s.gather_threads, &mut cfg.gather_threads)]
    {
        if let Some(t) = asked {
            let (t, note) = process::threads(name, t)?;
            *threads = t;
            notes.extend(note);
        }
    }
    Ok(cfg)
}

/// The SSD engine's memory budget: the spec's, else what the machine has available.
fn ssd_budget(s: &SsdSpec) -> Result<u64> {
    Ok(match s.budget {
        Some(b) => b,
        None => chatty_graph::available_memory()?,
    })
}

/// The multi-GPU options, or `None` for one GPU, and whether the GPU count is left to
/// [`chatty_gpu::choose_gpus`] once the graph is read (`GpuCount::Auto` on a machine
/// with several).
fn multi_options(g: &GpuSpec, reorder: Order) -> Result<(Option<MultiOptions>, bool)> {
    let mut auto = false;
    let devices = match &g.devices {
        Some(d) => d.clone(),
        None => {
            let count = Gpu::count();
            let wanted = match g.gpus {
                GpuCount::All => count,
                GpuCount::Auto => {
                    // A multi-GPU option asks for the split: it stays on every GPU.
                    // Degree order is not one: it serves one GPU as well.
                    auto = g.comm.is_none() && g.mode == Mode::Auto && g.control == chatty_gpu::Control::Threads && reorder != Order::Bfs;
                    count
                }
                GpuCount::Count(k) => k,
            };
            if count > 0 && wanted > count {
                return Err(Error::Parameter {
                    name: "gpus",
                    problem: format!("{wanted} asked for; this machine has {count} GPU{}", if count == 1 { "" } else { "s" }),
                });
            }
            if wanted <= 1 {
                return Ok((None, false));
            }
            (0..wanted).collect()
        }
    };
    Ok((Some(multi(g, reorder, devices, None)), auto))
}

/// The multi-GPU engine's options over `devices` (`processes`: the job's, under `mpirun`).
pub(crate) fn multi(g: &GpuSpec, reorder: Order, devices: Vec<usize>, processes: Option<chatty_comm::Processes>) -> MultiOptions {
    MultiOptions {
        devices,
        control: g.control,
        comm: g.comm.unwrap_or(Comm::Auto),
        reorder,
        watchdog: g.watchdog,
        mode: g.settled_mode(),
        processes,
    }
}

/// The GPU options that make sense on their own and with the kernels asked for.
fn check_gpu_options(g: &GpuSpec, work: &Workload) -> Result<()> {
    if g.watchdog.is_zero() {
        return Err(Error::Parameter { name: "watchdog", problem: "takes a positive number of seconds".into() });
    }
    if g.devices.as_ref().is_some_and(Vec::is_empty) {
        return Err(Error::Parameter { name: "devices", problem: "needs at least one ordinal".into() });
    }
    if g.gpus == GpuCount::Count(0) {
        return Err(Error::Parameter { name: "gpus", problem: "takes a positive count, auto or all".into() });
    }
    if let Some(alg) = work.kernels.iter().find(|&&alg| !g.mode.supports(alg)) {
        return Err(Error::Unsupported { option: Some("mode"), what: format!("{} has bfs and sssp, not {}", g.mode.name(), alg.name()) });
    }
    if let (Some(c), Mode::Async | Mode::Gmpi) = (g.comm, g.mode) {
        let what = format!("{} applies to mode bsp; mode {} moves levels its own way", c.name(), g.mode.name());
        return Err(Error::Unsupported { option: Some("comm"), what });
    }
    Ok(())
}
