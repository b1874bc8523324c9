//! The multi-GPU engine (design.md §1.1; the ChattyGraph paper): bulk-synchronous
//! steps over a graph split into contiguous vertex ranges, one per GPU.
//!
//! - Owner computes: a GPU writes only its own vertices' values, reading the others'
//!   from its full copy of the value array. Each part holds the edges *into* its
//!   vertices (`plan.rs`), so pushes and pulls alike update own vertices, no remote
//!   atomics.
//! - After each step, the updated vertices another part reads (boundary vertices,
//!   marked at load) are packed with warp ballot and popcount (`mg_pack`) into the
//!   send buffer and written into every peer's receive buffer; two receive buffers
//!   alternate (double buffering), so a fast GPU never overwrites records a slow one
//!   has not applied. PageRank, where every vertex changes, sends its range as one
//!   dense slice when that is fewer bytes than the records.
//! - Per-step state (frontier sizes, convergence sums, record counts) comes back to
//!   the host through pinned memory; the host threads meet at a barrier (`crew.rs`).
//! - The values travel over the transport `--comm` names, or, with `auto`, the one
//!   the calibration (`chatty topo --calibrate`) predicts fastest for each
//!   exchange's sizes (`exchange.rs`).
//!
//! BFS (direction-optimizing per part), SSSP (frontier Bellman–Ford rounds; on
//! road-like graphs cut in BFS order the single-GPU relaxing step with its block-local
//! chase, which BFS there runs too, as hop counts), PageRank, WCC (Afforest on each
//! part, the parts' forests merged) and SpMV; BC runs on one GPU.

mod algorithms;
mod asynchronous;
mod choose;
mod crew;
pub(crate) mod exchange;
mod plan;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::{sys, CudaContext, CudaSlice};

use chatty_algo::{Algorithm, Output, Params};
use chatty_comm::calibrate::{self, Calibration};
use chatty_graph::partition::Ranges;
use chatty_graph::{Graph, WeightType};

pub use chatty_comm::{Comm, Processes, Transport};
pub use choose::{choose_gpus, choose_mode, choose_order, GpuChoice};
pub use crew::Control;

use crate::device_graph::Bins;
use crate::launch;
use crate::messaging::JobRanks;
use crate::renumber::{output_to_caller, to_device, Order, Renumbering};
use crate::transfer::ReadyArray;
use crate::{Gpu, GpuError, Messaging, MessagingConfig, Result};
use chatty_comm::cuda::{addr, enable_peer_access, Check, Dev, Launch, Pinned};
use crew::Crew;
use exchange::{Dst, Nccl, Sent};
use plan::{LocalCsr, Needs};

/// How to run on several GPUs.
#[derive(Clone, Debug)]
pub struct MultiOptions {
    /// CUDA ordinals, one part per entry.
    pub devices: Vec<usize>,
    /// One host thread per GPU, or one for all.
    pub control: Control,
    /// The transport for vertex values.
    pub comm: Comm,
    /// The vertex order before splitting (breadth-first: fewer boundary vertices on
    /// meshes and road networks).
    pub reorder: Order,
    /// A step that makes no progress for this long stops every GPU with an error.
    pub watchdog: Duration,
    /// Host-driven steps, or GPU-driven levels (BFS and SSSP).
    pub mode: Mode,
    /// The processes of the job when it spans several (`mpirun`): every process holds
    /// parts of its own on `devices`, the job's parts are all of them in rank order,
    /// and values travel between processes through MPI. `None`: this process only.
    pub processes: Option<Processes>,
}

/// Who sequences the steps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Bulk-synchronous: the host runs each step, exchange and barrier.
    #[default]
    Bsp,
    /// One kernel per GPU runs every level; GPUs meet through flags in each other's
    /// memory, no host round trip (BFS and SSSP).
    Async,
    /// As `Async`, but each level's records and counts travel as device-initiated
    /// messages (`kernels/gmpi.cuh`, served by host proxies: [`crate::Messaging`]).
    Gmpi,
    /// The engine's choice per kernel ([`choose_mode`]).
    Auto,
}

impl Mode {
    /// The `--mode` name.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Bsp => "bsp",
            Mode::Async => "async",
            Mode::Gmpi => "gmpi",
            Mode::Auto => "auto",
        }
    }

    /// Every mode that runs as itself (the ablation's), without `Auto`.
    pub const ALL: [Mode; 3] = [Mode::Bsp, Mode::Async, Mode::Gmpi];

    /// Whether the mode runs `alg` (the GPU-driven modes: bfs and sssp; auto: all).
    pub fn supports(self, alg: Algorithm) -> bool {
        matches!(self, Mode::Bsp | Mode::Auto) || matches!(alg, Algorithm::Bfs | Algorithm::Sssp)
    }

    /// Refuses kernels the mode lacks.
    fn check(self, alg: Algorithm) -> Result<()> {
        if !self.supports(alg) {
            return Err(GpuError::option("mode", format!("--mode {} has bfs and sssp, not {}; use --mode bsp", self.name(), alg.name())));
        }
        Ok(())
    }
}

/// One part, as `chatty run --json` reports it.
#[derive(Clone, Debug)]
pub struct PartInfo {
    /// The GPU.
    pub device: String,
    /// First vertex (after renumbering).
    pub lo: u32,
    /// One past the last.
    pub hi: u32,
    /// Edges into the part's vertices.
    pub edges: u64,
    /// Vertices another part reads.
    pub boundary: u64,
}

/// What a run moved between GPUs.
#[derive(Clone, Debug, Default)]
pub struct CommStats {
    /// Bulk-synchronous steps (levels, rounds or iterations).
    pub steps: u64,
    /// Steps after which values travelled.
    pub exchanges: u64,
    /// Exchanges sent as dense slices rather than records.
    pub dense_exchanges: u64,
    /// Vertex values computed (summed over GPUs).
    pub updated: u64,
    /// Vertex values sent (records, or a dense slice's values), counted once per sender.
    pub communicated: u64,
    /// Per transport: (exchanges, bytes delivered to peers).
    pub by_transport: BTreeMap<&'static str, (u64, u64)>,
    /// Bytes of per-step state read back by the host.
    pub state_bytes: u64,
    /// Host seconds spent sending (issuing the copies and waiting for them; receiving
    /// is queued with the next step).
    pub exchange_seconds: f64,
    /// Seconds copying the parts' results into the host array.
    pub gather_seconds: f64,
}

/// One trial on several GPUs.
pub struct MultiRun {
    /// The result, in the CPU engine's types and vertex ids.
    pub output: Output,
    /// Steps, as the CPU engine counts its iterations.
    pub iterations: u64,
    /// PageRank: the L1 change of its last iteration.
    pub residual: Option<f64>,
    /// Wall time from every GPU ready (arrays allocated and initialised, streams idle)
    /// to every GPU done.
    pub seconds: f64,
    /// Seconds before the timed region: allocating and initialising the arrays.
    pub setup_seconds: f64,
    /// Seconds to copy the parts' results back and return them in the caller's ids.
    pub download_seconds: f64,
    /// Peak device memory in use on the fullest GPU.
    pub peak_device_bytes: u64,
    /// Communication.
    pub comm: CommStats,
}

/// The edge sets of one part in device memory.
struct DeviceCsr {
    off: CudaSlice<u64>,
    adj: CudaSlice<u32>,
    weights: Option<CudaSlice<u32>>,
    edges: u64,
}

impl DeviceCsr {
    fn upload(gpu: &Gpu, c: &LocalCsr) -> Result<DeviceCsr> {
        Ok(DeviceCsr {
            off: gpu.upload(&c.offsets, "offsets")?,
            adj: gpu.upload(&c.targets, "edges")?,
            weights: c.weights.as_ref().map(|w| gpu.upload(w, "weights")).transpose()?,
            edges: c.targets.len() as u64,
        })
    }
}

/// One GPU's part and its exchange buffers.
struct Part {
    gpu: Gpu,
    lo: u32,
    hi: u32,
    push: Option<DeviceCsr>,
    pull: Option<DeviceCsr>,
    both: Option<DeviceCsr>,
    /// Global out-offsets (PageRank's out-degrees).
    out_off: Option<CudaSlice<u64>>,
    bins: Option<Bins>,
    send_flag: CudaSlice<u8>,
    boundary: u64,
    send: CudaSlice<u32>,
    /// Double-buffered receive records; sender r's records start at word `slot[r]`.
    recv: [CudaSlice<u32>; 2],
    slot: Vec<u64>,
    /// Host-mapped staging for the uva and staged transports.
    staging: Pinned,
    /// Per-step state, copied here for the host.
    status: Pinned,
    /// The pack kernel's record count.
    counter: CudaSlice<u32>,
}

/// Words of `Part::status`: the algorithm's state first, the record count at 16.
const STATUS_WORDS: usize = 32;
const STATUS_COUNT: usize = 16;
/// Value words per record, at most (SSSP's u64 distances).
const MAX_WIDTH: u64 = 2;

/// Words of the send buffer of a part with `boundary` boundary vertices: an id and
/// the widest value for each.
fn send_words(boundary: u64) -> u64 {
    boundary * (1 + MAX_WIDTH)
}

/// Zeroes `words` u32 at `p` on `gpu`'s stream.
fn zero_words(gpu: &Gpu, p: u64, words: usize) -> Result<()> {
    // SAFETY: callers pass a device pointer to at least `words` words.
    Ok(unsafe { sys::cuMemsetD32Async(p, 0, words, gpu.stream.cu_stream()) }.check("clearing a counter")?)
}

/// Copies `bytes` from device address `src` into `dst` in `status` (host) on `gpu`'s stream.
fn to_status(gpu: &Gpu, status: &Pinned, word: usize, src: u64, bytes: usize) -> Result<()> {
    assert!(word * 4 + bytes <= STATUS_WORDS * 4);
    // SAFETY: `status` holds STATUS_WORDS words; `src` holds `bytes`.
    let copy = unsafe { sys::cuMemcpyDtoHAsync_v2((status.host as *mut u32).add(word).cast(), src, bytes, gpu.stream.cu_stream()) };
    Ok(copy.check("reading state")?)
}

/// Checks that part `p` fits on `gpu`, uploads its edges and allocates its exchange
/// buffers; returns it with the bytes uploaded.
fn upload_part(gpu: Gpu, local: &plan::LocalGraph, p: usize, send_words: &[u64], alg: Algorithm, graph: &Graph) -> Result<(Part, u64)> {
    let (k, n) = (send_words.len(), graph.num_vertices());
    let own = (local.hi - local.lo) as u64;
    let csr_bytes: u64 = [&local.push, &local.pull, &local.both].iter().filter_map(|c| c.as_ref()).map(|c| c.bytes()).sum();
    let recv_words: u64 = (0..k).filter(|&r| r != p).map(|r| send_words[r]).sum();
    let out_off_bytes = if alg == Algorithm::Pr { 8 * (n as u64 + 1) } else { 0 };
    let needed = csr_bytes + out_off_bytes + own * 5 + 4 * (send_words[p] + 2 * recv_words) + run_bytes_per_vertex(alg, k) * (n as u64 + 1);
    let (free, _) = gpu.ctx.mem_get_info().check("querying memory")?;
    if needed > free as u64 {
        return Err(GpuError::PartTooLarge { device: gpu.name().to_string(), needed_mib: needed >> 20, free_mib: free as u64 >> 20 });
    }
    let upload = |c: &Option<LocalCsr>| c.as_ref().map(|c| DeviceCsr::upload(&gpu, c)).transpose();
    let (push, pull, both) = (upload(&local.push)?, upload(&local.pull)?, upload(&local.both)?);
    let bins = match &local.pull {
        Some(c) => Some(Bins::upload(&gpu, local.lo..local.hi, |v| c.offsets[v as usize + 1] - c.offsets[v as usize])?),
        None => None,
    };
    let out_off = if alg == Algorithm::Pr { Some(gpu.upload(graph.out_edges().offsets(), "out-offsets")?) } else { None };
    let mut slot = vec![0u64; k];
    let mut at = 0;
    for r in (0..k).filter(|&r| r != p) {
        slot[r] = at;
        at += send_words[r];
    }
    let staging_words = staging_words(alg, n, send_words[p], own);
    let part = Part {
        lo: local.lo,
        hi: local.hi,
        push,
        pull,
        both,
        out_off,
        bins,
        send_flag: gpu.upload(&local.send_flag, "boundary flags")?,
        boundary: local.boundary,
        send: gpu.zeros(send_words[p] as usize, "the send buffer")?,
        recv: [gpu.zeros(at as usize, "a receive buffer")?, gpu.zeros(at as usize, "a receive buffer")?],
        slot,
        staging: Pinned::new(&gpu.ctx, 4 * staging_words as usize, "host staging")?,
        status: Pinned::new(&gpu.ctx, 4 * STATUS_WORDS, "host state")?,
        counter: gpu.zeros(1, "a counter")?,
        gpu,
    };
    part.gpu.stream.synchronize().check("uploading a part")?;
    Ok((part, csr_bytes + out_off_bytes + own))
}

/// Words of host staging a part needs: its largest message (WCC's merges send whole
/// label arrays; PageRank may send its range dense).
fn staging_words(alg: Algorithm, n: usize, send_words: u64, own: u64) -> u64 {
    if alg == Algorithm::Wcc {
        n as u64
    } else {
        send_words.max(own)
    }
}

fn needs_of(alg: Algorithm) -> Needs {
    match alg {
        Algorithm::Bfs => Needs { push: true, pull: true, ..Needs::default() },
        Algorithm::Sssp => Needs { push: true, weights: true, ..Needs::default() },
        Algorithm::Pr => Needs { pull: true, ..Needs::default() },
        Algorithm::Spmv => Needs { pull: true, weights: true, ..Needs::default() },
        Algorithm::Wcc => Needs { both: true, ..Needs::default() },
        // BC has an engine of its own; the rest run on one GPU or none (`splits`).
        _ => Needs::default(),
    }
}

/// Device bytes per vertex of each kernel's run arrays (values, queues, stamps) on
/// one of `k` parts.
fn run_bytes_per_vertex(alg: Algorithm, k: usize) -> u64 {
    match alg {
        Algorithm::Bfs => 16,
        Algorithm::Sssp => 20,
        Algorithm::Pr => 24,
        Algorithm::Wcc => 4 * k as u64,
        Algorithm::Spmv | Algorithm::Bc => 16,
        _ => 0, // not split (`splits`)
    }
}

/// This machine's calibration: the cached one, or measured now (up to 64 MiB) and
/// cached. `None` with a note when it cannot be had.
fn calibration(notes: &mut Vec<String>) -> Option<Calibration> {
    let topology = match chatty_comm::probe() {
        Ok(t) => t,
        Err(e) => {
            notes.push(format!("--comm auto without a calibration ({e}); using p2p"));
            return None;
        }
    };
    if let Some(c) = calibrate::load_cached(&topology, 4) {
        return Some(c);
    }
    notes.push("no transport calibration was cached for this machine: measured it now (`chatty topo --calibrate` does it ahead)".into());
    match calibrate::calibrate(&topology, 64 << 20, &mut |_| {}) {
        Ok(c) => {
            if let Err(e) = calibrate::save(&c) {
                notes.push(format!("calibration not cached: {e}"));
            }
            Some(c)
        }
        Err(e) => {
            notes.push(format!("--comm auto without a calibration ({e}); using p2p"));
            None
        }
    }
}

/// NCCL communicators across the job's processes (collective), for `--comm nccl`, or
/// for `--comm auto` where every part ([`calibrate::job_parts`]) has a GPU of its own
/// (NCCL refuses two ranks on one GPU); `auto` without them exchanges through MPI and
/// says why.
fn nccl_across(
    p: &Processes,
    ctxs: &[std::sync::Arc<cudarc::driver::CudaContext>],
    devices: &[usize],
    parts: &[String],
    first: usize,
    comm: Comm,
    notes: &mut Vec<String>,
) -> Result<Option<Nccl>> {
    let why = match (calibrate::shared_gpu(parts), comm) {
        (Some((a, b)), Comm::Forced(_)) => {
            return Err(GpuError::option(
                "comm",
                format!("--comm nccl needs a GPU of its own for every part, and parts {a} and {b} share {}; use --comm mpi", parts[a]),
            ))
        }
        (Some((a, b)), _) => format!("parts {a} and {b} share {}", parts[a]),
        (None, _) => match Nccl::across(ctxs, devices, first, parts.len(), p) {
            Ok(c) => return Ok(Some(c)),
            Err(e) if comm == Comm::Auto => e.to_string(),
            Err(e) => return Err(e),
        },
    };
    notes.push(format!("nccl across processes unavailable ({why}): exchanging through MPI"));
    Ok(None)
}

/// The job's calibration between its processes: cached, or measured now by every
/// process (up to 64 MiB a part; collective).
fn job_calibration(p: &Processes, devices: &[usize], parts: &[String], notes: &mut Vec<String>) -> Result<Calibration> {
    let (c, measured) = calibrate::for_job(&*p.0, devices, parts, 64 << 20, false, &mut |_| {})
        .map_err(|e| GpuError::Processes(format!("calibrating the link between the processes: {e}")))?;
    if measured {
        notes.push(format!(
            "calibrated the link between the processes (mpi and nccl exchanges, 4 B to 64 MiB a part; `mpirun ... chatty topo --calibrate` shows it), cached in {}",
            calibrate::job_cache_path(&c.gpus).display()
        ));
    }
    Ok(c)
}

/// The graph on several GPUs, ready to run one kernel.
pub struct MultiGpu {
    /// This process's parts: the job's `first..first + parts.len()`.
    parts: Vec<Part>,
    first: usize,
    /// Every part of the job: its vertices and boundary vertices.
    ranges: Ranges,
    boundaries: Vec<u64>,
    /// The other processes, when the parts span several, and the pinned host memory
    /// every part's message of an exchange lands in, in part order.
    processes: Option<Processes>,
    gathered: Option<Pinned>,
    /// The trial's answer array, made ready while its kernels run.
    answer: std::sync::Mutex<Option<ReadyArray>>,
    crew: Crew,
    nccl: Option<Nccl>,
    available: Vec<Transport>,
    calibration: Option<Calibration>,
    comm: Comm,
    mode: Mode,
    /// The proxies and rings of `--mode gmpi`, open while that mode is set.
    messaging: Option<Messaging>,
    ordinals: Vec<usize>,
    watchdog: Duration,
    n: usize,
    weight_type: WeightType,
    /// Mean degree below 8 (`device::road_like`): what `--mode auto` goes by.
    road_like: bool,
    /// The vertex order the parts were cut in (`--reorder`, resolved).
    order: Order,
    /// Block-local chase rounds of SSSP (and BFS) on this graph (0: none): on
    /// road-like graphs cut in BFS order, where it was measured (docs/benchmarks/gpu.md,
    /// "fifth pass"); in the graph's own order the parts share more boundary and the
    /// chase's rounds cost more, unmeasured against the plain rounds.
    local_rounds: u32,
    alg: Algorithm,
    /// `new_id[v]` of original vertex v, when renumbered.
    new_id: Option<Vec<u32>>,
    /// The parts.
    pub info: Vec<PartInfo>,
    /// Seconds to reorder (when asked) and split the graph on the host.
    pub split_seconds: f64,
    /// Seconds to upload the parts (all GPUs at once, each from its own thread).
    pub upload_seconds: f64,
    /// Bytes uploaded (all GPUs).
    pub upload_bytes: u64,
    /// Seconds NVRTC took (all GPUs).
    pub compile_seconds: f64,
    /// Seconds to open the GPUs (contexts, kernel modules, peer access, NCCL, the
    /// calibration), before the split.
    pub open_seconds: f64,
    /// Seconds after the upload: control threads, pinned buffers, the mode's set-up.
    pub finish_seconds: f64,
    /// What the engine had to settle for (no NCCL, no calibration...).
    pub notes: Vec<String>,
}

/// The request checked before any GPU is touched, and where this process's parts sit
/// in the job.
fn check_request(g: &Graph, alg: Algorithm, o: &MultiOptions) -> Result<Job> {
    let mine = o.devices.len();
    if mine == 0 {
        return Err(GpuError::option("devices", "no GPUs to run on"));
    }
    o.mode.check(alg)?;
    let processes = o.processes.clone().filter(|p| p.0.size() > 1);
    let (first, k) = match &processes {
        None => (0, mine),
        Some(p) => {
            let counts = p.counts(mine as u64);
            (counts[..p.0.rank()].iter().sum::<u64>() as usize, counts.iter().sum::<u64>() as usize)
        }
    };
    if processes.is_some() {
        if o.mode == Mode::Async {
            return Err(GpuError::option(
                "mode",
                "--mode async stores into the other GPUs' memory, within one process; across processes use --mode bsp or gmpi",
            ));
        }
        if !matches!(o.comm, Comm::Auto | Comm::Forced(Transport::Mpi | Transport::Nccl)) {
            return Err(GpuError::option(
                "comm",
                format!("--comm {}: across processes the GPUs exchange through MPI or NCCL (--comm mpi, nccl or auto)", o.comm.name()),
            ));
        }
    } else if o.comm == Comm::Forced(Transport::Mpi) {
        return Err(GpuError::option("comm", "--comm mpi exchanges between processes: run under mpirun"));
    }
    if alg == Algorithm::Bc {
        return Err(GpuError::unsupported(
            "bc does not split the graph: the GPU engine runs it on every GPU's whole copy, splitting the sources",
        ));
    }
    if !crate::run::splits(alg) {
        let why = match crate::has_kernel(alg) {
            true => format!("{} runs on one GPU, not split over several: use --gpus 1", alg.name()),
            false => crate::no_kernel(alg),
        };
        return Err(GpuError::unsupported(why));
    }
    let n = g.num_vertices();
    if n >= u32::MAX as usize {
        return Err(GpuError::TooManyVertices { vertices: n });
    }
    if n < k {
        return Err(GpuError::option("devices", format!("{n} vertices cannot be split into {k} parts, one per GPU: use fewer --devices")));
    }
    Ok(Job { processes, first, k })
}

/// Where this process's parts sit in the job.
struct Job {
    /// The other processes of the job, if there are others.
    processes: Option<Processes>,
    /// The first of this process's parts, in the job's part order.
    first: usize,
    /// The job's parts.
    k: usize,
}

/// This process's GPUs opened, and the transports among them.
struct Links {
    gpus: Vec<Gpu>,
    ctxs: Vec<Arc<CudaContext>>,
    nccl: Option<Nccl>,
    available: Vec<Transport>,
    calibration: Option<Calibration>,
}

/// Opens the GPUs of `o.devices` and what they exchange through (peer access, NCCL,
/// the calibration that `--comm auto` chooses by); what had to be settled for goes to
/// `notes`.
fn open_links(o: &MultiOptions, job: &Job, notes: &mut Vec<String>) -> Result<Links> {
    let (processes, first, k) = (&job.processes, job.first, job.k);
    let mine = o.devices.len();
    let mut distinct = o.devices.clone();
    distinct.sort_unstable();
    distinct.dedup();
    let distinct = distinct.len() == mine;
    let local = processes.is_none() && k > 1;
    // Calibrate before this process enables peer access: the staged measurement
    // needs it off.
    let mut calibration = if o.comm == Comm::Auto && local && distinct { calibration(notes) } else { None };
    let gpus: Vec<Gpu> = o.devices.iter().map(|&d| Gpu::open(d)).collect::<Result<_>>()?;
    let ctxs: Vec<_> = gpus.iter().map(|g| g.ctx.clone()).collect();
    let peer = local && enable_peer_access(&ctxs)?;
    let nccl = if local && matches!(o.comm, Comm::Auto | Comm::Forced(Transport::Nccl)) {
        let made = if distinct { Nccl::new(&o.devices) } else { Err(GpuError::option("comm", "NCCL needs distinct GPUs")) };
        match made {
            Ok(c) => Some(c),
            Err(e) if o.comm == Comm::Auto => {
                notes.push(format!("nccl unavailable: {e}"));
                None
            }
            Err(e) => return Err(e),
        }
    } else if let (Some(p), Comm::Auto | Comm::Forced(Transport::Nccl)) = (&processes, o.comm) {
        let parts = calibrate::job_parts(&*p.0, &o.devices).map_err(|e| GpuError::Processes(e.to_string()))?;
        let made = nccl_across(p, &ctxs, &o.devices, &parts, first, o.comm, notes)?;
        // `--comm auto` chooses between MPI and NCCL from the job's calibration,
        // when both are there to choose from.
        if made.is_some() && o.comm == Comm::Auto {
            calibration = Some(job_calibration(p, &o.devices, &parts, notes)?);
        }
        made
    } else {
        None
    };
    let available: Vec<Transport> = Transport::ALL
        .into_iter()
        .filter(|t| match t {
            Transport::P2p | Transport::Peer => peer || !distinct,
            Transport::Nccl => nccl.is_some(),
            Transport::Uva | Transport::Staged => true,
            Transport::Mpi => false,
        })
        .collect();
    let available = match (&processes, &nccl) {
        (Some(_), Some(_)) => vec![Transport::Mpi, Transport::Nccl],
        (Some(_), None) => vec![Transport::Mpi],
        (None, _) => available,
    };
    if let Comm::Forced(t) = o.comm {
        if local && !available.contains(&t) {
            return Err(GpuError::option(
                "comm",
                format!(
                    "--comm {} needs peer access between every pair of GPUs, which this machine lacks; use --comm auto, uva or staged",
                    t.name()
                ),
            ));
        }
    }

    Ok(Links { gpus, ctxs, nccl, available, calibration })
}

/// Uploads each local part to its GPU, each GPU fed by its own thread (its own staging
/// buffers and copy engine); returns the parts and the bytes uploaded.
fn upload_parts(
    gpus: Vec<Gpu>,
    locals: &[plan::LocalGraph],
    first: usize,
    send_words: &[u64],
    alg: Algorithm,
    graph: &Graph,
) -> Result<(Vec<Part>, u64)> {
    let made: Vec<Result<(Part, u64)>> = std::thread::scope(|s| {
        let threads: Vec<_> = gpus
            .into_iter()
            .zip(locals)
            .enumerate()
            .map(|(p, (gpu, local))| s.spawn(move || upload_part(gpu, local, first + p, send_words, alg, graph)))
            .collect();
        threads.into_iter().map(|t| t.join().unwrap_or_else(|_| Err(GpuError::Thread("an upload thread panicked".into())))).collect()
    });
    let mut parts = Vec::with_capacity(made.len());
    let mut upload_bytes = 0;
    for m in made {
        let (part, bytes) = m?;
        upload_bytes += bytes;
        parts.push(part);
    }
    Ok((parts, upload_bytes))
}

/// `g` renumbered in `reorder`'s order (auto: [`choose_order`]'s, said in `notes`);
/// every process of a job must have renumbered it alike.
fn renumber(g: &Graph, reorder: Order, processes: Option<&Processes>, notes: &mut Vec<String>) -> Result<(Order, Option<Renumbering>)> {
    let order = match reorder {
        Order::Auto => {
            let (order, why) = choose_order(g);
            notes.push(format!("reorder: {} (auto: {why})", order.name()));
            order
        }
        order => order,
    };
    let renumbered = Renumbering::of(g, order)?;
    if let (Some(r), Some(p)) = (&renumbered, processes) {
        let digest = xxhash_rust::xxh3::xxh3_64(bytemuck::cast_slice(&r.new_id));
        if p.counts(digest).iter().any(|&d| d != digest) {
            return Err(GpuError::option(
                "reorder",
                format!("the processes renumbered the graph differently (--reorder {})", order.name()),
            ));
        }
    }
    Ok((order, renumbered))
}

impl MultiGpu {
    /// Splits `g` over `o.devices` and uploads the parts with the edge sets `alg` reads.
    pub fn open(g: &Graph, alg: Algorithm, o: &MultiOptions) -> Result<MultiGpu> {
        let opening = Instant::now();
        let job = check_request(g, alg, o)?;
        let mut notes = Vec::new();
        let Links { gpus, ctxs, nccl, available, calibration } = open_links(o, &job, &mut notes)?;
        let Job { processes, first, k } = job;
        let (n, mine) = (g.num_vertices(), o.devices.len());
        let road_like = crate::device_graph::road_like(n, g.num_edges());
        let open_seconds = opening.elapsed().as_secs_f64();
        let start = Instant::now();
        let (order, renumbered) = renumber(g, o.reorder, processes.as_ref(), &mut notes)?;
        let graph = renumbered.as_ref().map_or(g, |r| &r.graph);
        let ranges = Ranges::of(graph, k);
        let needs = needs_of(alg);
        let locals = plan::split(graph, &ranges, first..first + mine, needs);
        let mut boundaries: Vec<u64> = locals.iter().map(|l| l.boundary).collect();
        if let Some(p) = &processes {
            boundaries = p.gather_parts(k, first, &boundaries);
        }
        let send_words: Vec<u64> = boundaries.iter().map(|&b| send_words(b)).collect();
        let split_seconds = start.elapsed().as_secs_f64();
        let start = Instant::now();
        let (parts, upload_bytes) = upload_parts(gpus, &locals, first, &send_words, alg, graph)?;
        let upload_seconds = start.elapsed().as_secs_f64();
        let finishing = Instant::now();
        let info = parts
            .iter()
            .map(|p| {
                let edges = [&p.push, &p.pull, &p.both].iter().filter_map(|c| c.as_ref()).map(|c| c.edges).max().unwrap_or(0);
                PartInfo { device: p.gpu.name().to_string(), lo: p.lo, hi: p.hi, edges, boundary: p.boundary }
            })
            .collect();
        let compile_seconds = parts.iter().map(|p| p.gpu.compile_seconds).sum();
        let crew = Crew::new(o.control, ctxs, o.watchdog)?;
        let gathered = match processes {
            Some(_) => {
                let words: u64 = (0..k).map(|p| staging_words(alg, n, send_words[p], ranges.range(p).len() as u64)).sum();
                Some(Pinned::new(&parts[0].gpu.ctx, 4 * words as usize, "host memory for other processes' values")?)
            }
            None => None,
        };
        let mut mg = MultiGpu {
            parts,
            first,
            ranges,
            boundaries,
            processes,
            gathered,
            answer: Default::default(),
            crew,
            nccl,
            available,
            calibration,
            comm: o.comm,
            mode: Mode::Bsp,
            messaging: None,
            ordinals: o.devices.clone(),
            watchdog: o.watchdog,
            n,
            weight_type: g.weight_type(),
            road_like,
            order,
            local_rounds: if order == Order::Bfs { crate::run::near_far::sssp_local_rounds(n, g.num_edges()) } else { 0 },
            alg,
            new_id: renumbered.map(|r| r.new_id),
            info,
            split_seconds,
            upload_seconds,
            upload_bytes,
            compile_seconds,
            open_seconds,
            finish_seconds: 0.0,
            notes,
        };
        mg.set_mode(o.mode)?;
        mg.finish_seconds = finishing.elapsed().as_secs_f64();
        Ok(mg)
    }

    /// The control mode.
    pub fn control(&self) -> Control {
        self.crew.control()
    }

    /// Changes the control mode and transport of an open engine (the ablation
    /// benchmark runs every mode on one upload). `Comm::Forced(Transport::Nccl)` needs
    /// the engine opened with `Comm::Auto` or NCCL.
    pub fn configure(&mut self, control: Control, comm: Comm) -> Result<()> {
        if let Comm::Forced(t) = comm {
            if self.k() > 1 && !self.available.contains(&t) {
                return Err(GpuError::option(
                    "comm",
                    format!("--comm {} is not available here (available: {:?})", t.name(), self.available),
                ));
            }
        }
        if control != self.crew.control() {
            let ctxs = self.parts.iter().map(|p| p.gpu.ctx.clone()).collect();
            self.crew = Crew::new(control, ctxs, self.watchdog)?;
        }
        self.comm = comm;
        Ok(())
    }

    /// Who sequences the steps (resolved: never `Auto`).
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The vertex order the parts were cut in (resolved: never `Auto`).
    pub fn order(&self) -> Order {
        self.order
    }

    /// Changes who sequences the steps (the benchmark runs both modes on one upload).
    pub fn set_mode(&mut self, mode: Mode) -> Result<()> {
        mode.check(self.alg)?;
        let mode = match mode {
            Mode::Auto => {
                let (mode, why) = choose_mode(self.alg, self.road_like);
                self.notes.push(format!("mode: {} (auto: {why})", mode.name()));
                mode
            }
            mode => mode,
        };
        // Proxies spin while they wait: run them only for the mode that needs them.
        self.messaging = match (mode, self.messaging.take()) {
            (Mode::Gmpi, Some(m)) => Some(m),
            (Mode::Gmpi, None) => {
                let config = MessagingConfig { timeout: self.watchdog, ..MessagingConfig::default() };
                let m = match &self.processes {
                    None => Messaging::open(&self.ordinals, 0, config)?,
                    Some(p) => {
                        let owner = p.counts(self.parts.len() as u64).iter().enumerate().flat_map(|(q, &c)| vec![q; c as usize]).collect();
                        let link = p.0.link().map_err(|e| GpuError::Processes(e.to_string()))?;
                        Messaging::open_in_job(&self.ordinals, config, JobRanks { first: self.first as u32, owner, link })?
                    }
                };
                self.notes.extend(m.notes.iter().cloned());
                Some(m)
            }
            _ => None,
        };
        self.mode = mode;
        Ok(())
    }

    /// The transport `--comm auto` picks for an exchange of `bytes` from each part.
    pub fn auto_choice(&self, bytes: &[u64]) -> Transport {
        match self.processes {
            Some(_) => chatty_comm::choose_across(self.calibration.as_ref(), bytes, &self.available),
            None => chatty_comm::choose(self.calibration.as_ref(), &self.ordinals, bytes, &self.available),
        }
    }

    /// The GPUs' names.
    pub fn names(&self) -> Vec<String> {
        self.parts.iter().map(|p| p.gpu.name().to_string()).collect()
    }

    /// Whether a calibration backs `--comm auto`.
    pub fn calibrated(&self) -> bool {
        self.calibration.is_some()
    }

    /// One trial of the kernel the graph was opened for, from `sources` (ids and
    /// results in the numbering of the graph given to [`MultiGpu::open`]); `p` has its
    /// defaults resolved and the weights were checked when the engine was prepared.
    pub fn run(&self, alg: Algorithm, p: &Params, sources: &[u32]) -> Result<MultiRun> {
        if alg != self.alg {
            return Err(GpuError::unsupported(format!("the GPUs hold the edges {} reads, not {}", self.alg.name(), alg.name())));
        }
        let renamed = |v: u32| to_device(self.new_id.as_deref(), v);
        let mut stats = CommStats::default();
        let mut residual = None;
        let called = Instant::now();
        *self.answer.lock().unwrap_or_else(|e| e.into_inner()) = Some(ReadyArray::for_answer(alg, self.n));
        let outcome = match alg {
            Algorithm::Bfs if self.mode != Mode::Bsp => self.traverse_async(renamed(sources[0]), false, &mut stats),
            Algorithm::Bfs => self.bfs(renamed(sources[0]), &mut stats),
            Algorithm::Sssp => match self.mode {
                Mode::Async | Mode::Gmpi => self.traverse_async(renamed(sources[0]), true, &mut stats),
                // set_mode resolves Auto.
                Mode::Bsp | Mode::Auto => self.sssp(renamed(sources[0]), &mut stats),
            },
            Algorithm::Pr => self.pagerank(p, &mut stats, &mut residual),
            Algorithm::Spmv => {
                let x = match (&p.x, &self.new_id) {
                    (Some(x), Some(id)) => Some(std::borrow::Cow::Owned(chatty_algo::renumber::values_to_kernel(id, x))),
                    (x, _) => x.as_deref().map(std::borrow::Cow::Borrowed),
                };
                self.spmv(x.as_deref(), &mut stats)
            }
            Algorithm::Wcc => self.wcc(&mut stats),
            _ => unreachable!("refused at open: bc and the kernels that are not split (`splits`)"),
        };
        let (values, iterations, seconds, peak) = outcome.inspect_err(|_| {
            if let Some(c) = &self.nccl {
                c.0.mark_failed();
            }
        })?;
        let finished = called.elapsed().as_secs_f64();
        let renumber = Instant::now();
        let output = output_to_caller(self.new_id.as_deref(), values);
        Ok(MultiRun {
            output,
            iterations,
            seconds,
            residual,
            setup_seconds: (finished - seconds - stats.gather_seconds).max(0.0),
            download_seconds: stats.gather_seconds + renumber.elapsed().as_secs_f64(),
            peak_device_bytes: peak,
            comm: stats,
        })
    }

    /// Parts in the job.
    fn k(&self) -> usize {
        self.ranges.parts()
    }

    /// The job's per-part vector of which this process holds `mine` (one entry per
    /// part of `parts`): collective when the parts span processes.
    fn across(&self, mine: Vec<u64>) -> Vec<u64> {
        match &self.processes {
            None => mine,
            Some(p) => p.gather_parts(self.k(), self.first, &mine),
        }
    }

    /// Waits for every GPU's stream (outside timed regions).
    fn sync_all(&self) -> Result<()> {
        self.parts.iter().try_for_each(|p| Ok(p.gpu.stream.synchronize().check("waiting for a GPU")?))
    }

    fn peak(&self) -> u64 {
        self.parts.iter().map(|p| p.gpu.used_bytes()).max().unwrap_or(0)
    }

    /// Runs one step: `issue` queues GPU g's work; then every GPU is waited for.
    fn step(&self, issue: &(dyn Fn(usize) -> Result<()> + Sync)) -> Result<()> {
        self.crew.each(false, issue, &|g| self.crew.wait_stream(g, &self.parts[g].gpu.stream))
    }

    /// Counts a finished step whose state read-back was `state_bytes` per part, and
    /// returns the values updated on all parts (status word `word`).
    fn tally(&self, stats: &mut CommStats, state_bytes: u64, word: usize) -> u64 {
        let updated = self.across(self.parts.iter().map(|p| p.status.word(word) as u64).collect()).iter().sum();
        stats.steps += 1;
        stats.state_bytes += state_bytes * self.parts.len() as u64;
        stats.updated += updated;
        updated
    }

    /// Sends the records the pack kernels left in the send buffers (`width` value
    /// words each), into the receive buffer this exchange's parity selects; `None`
    /// when no part packed any.
    fn send_records(&self, width: u32, stats: &mut CommStats) -> Result<Option<Sent>> {
        let counts = self.across(self.parts.iter().map(|p| p.status.word(STATUS_COUNT) as u64).collect());
        if counts.iter().all(|&c| c == 0) {
            return Ok(None);
        }
        let src = self.parts.iter().map(|p| addr(&p.send)).collect();
        let bytes = counts.iter().map(|c| 4 * (1 + width as u64) * c).collect();
        let x = (stats.exchanges % 2) as usize;
        self.send(src, bytes, Dst::Records { x }, width, stats).map(Some)
    }

    /// Queues `mg_pack` of `list` (device list and its length's address, or the
    /// part's whole range when `list` is 0) with `width` words of `values` per record,
    /// and the copy of the count to the status words.
    fn pack(&self, g: usize, list: u64, list_len: u64, values: u64, width: u32) -> Result<()> {
        let p = &self.parts[g];
        let gpu = &p.gpu;
        let counter = addr(&p.counter);
        zero_words(gpu, counter, 1)?;
        let (list, list_len, values) = (Dev::at(list), Dev::at(list_len), Dev::at(values));
        // SAFETY: the send buffer holds (1 + MAX_WIDTH) words per boundary vertex and a
        // vertex is packed at most once per step; a null list means the whole range.
        unsafe {
            launch::mg_pack(
                gpu,
                Launch::Grid(gpu.cfg()),
                list,
                list_len,
                p.hi - p.lo,
                p.lo,
                &p.send_flag,
                values,
                width,
                &p.send,
                Dev::at(counter),
            )
        }?;
        to_status(gpu, &p.status, STATUS_COUNT, counter, 4)
    }

    /// Every part's own slice of its array, side by side in one host array (the
    /// result in renumbered ids): each GPU copies its slice straight into place, all
    /// at once, each from its own thread; across processes, each process's slices then
    /// travel to every other (collective).
    fn gather<T: cudarc::driver::DeviceRepr + bytemuck::Pod + Send>(
        &self,
        arrays: &[CudaSlice<T>],
        stats: &mut CommStats,
    ) -> Result<Vec<T>> {
        let start = Instant::now();
        let ready = self.answer.lock().unwrap_or_else(|e| e.into_inner()).take();
        let mut all: Vec<T> = match ready {
            Some(ready) => ready.take(self.n),
            None => crate::transfer::host_array(self.n),
        };
        let mut slices = Vec::with_capacity(self.parts.len());
        let mine = self.ranges.range(self.first).start as usize..self.parts.last().map_or(0, |p| p.hi as usize);
        let mut rest = &mut all[mine.clone()];
        for p in &self.parts {
            let (own, tail) = rest.split_at_mut((p.hi - p.lo) as usize);
            slices.push(own);
            rest = tail;
        }
        std::thread::scope(|s| {
            let copies: Vec<_> = self
                .parts
                .iter()
                .zip(arrays)
                .zip(slices)
                .map(|((p, a), own)| s.spawn(move || p.gpu.download_into(a, p.lo as usize, own, "a result")))
                .collect();
            copies.into_iter().try_for_each(|c| c.join().map_err(|_| GpuError::Thread("a download thread panicked".into()))?)
        })?;
        if let Some(p) = &self.processes {
            let own: Vec<u8> = bytemuck::cast_slice(&all[mine]).to_vec();
            p.0.all_gather_into(&own, bytemuck::cast_slice_mut(&mut all)).map_err(|e| GpuError::Processes(e.to_string()))?;
        }
        stats.gather_seconds += start.elapsed().as_secs_f64();
        Ok(all)
    }

    /// Allocates per-part arrays with `make`, then waits for every GPU.
    fn per_part<T>(&self, make: impl Fn(&Part) -> Result<T>) -> Result<Vec<T>> {
        let made = self
            .parts
            .iter()
            .map(|p| p.gpu.ctx.bind_to_thread().check("binding a GPU").map_err(GpuError::from).and_then(|_| make(p)))
            .collect::<Result<Vec<T>>>()?;
        self.sync_all()?;
        Ok(made)
    }
}
