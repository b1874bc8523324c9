//! Calibration: latency and bandwidth of each transport between each pair of GPUs
//! and between each GPU and the host, by message size, measured with CUDA events after
//! a warm-up (the median of several copies). Transports so far:
//!
//! - `p2p`: `cuMemcpyPeerAsync` with peer access enabled (NVLink or PCIe peer DMA);
//! - `staged`: the same call before peer access is enabled, which the driver stages
//!   through host memory (the WS-VR-style baseline);
//! - `d2h` / `h2d`: copies between a GPU and pinned host memory (the host side of the
//!   paper's zero-copy "UVA" path);
//! - `peer-store`: a kernel on the source GPU storing 16-byte words through a peer
//!   pointer into the destination's memory (direct loads/stores);
//! - `uva`: the paper's zero-copy path: a kernel on the source stores into host-mapped
//!   pinned memory, a kernel on the destination loads from it (host-timed);
//! - `nccl-bcast` / `nccl-allgather`: NCCL collectives over all GPUs, driven by one
//!   thread in a group call, timed until the slowest GPU is done, recorded for every
//!   pair they serve with the bytes that pair receives (a broadcast from `src`: all of
//!   them; an all-gather: one rank's part).
//!
//! Results are cached per machine (host name and GPU bus ids) and reused.
//!
//! Between the processes of a job ([`for_job`]) it measures whole exchanges, every
//! part sending the same bytes to every other: `mpi` (each GPU to pinned memory, an
//! MPI all-gather, back to every GPU), its all-gather alone (`mpi-host`: where the
//! time goes) and `nccl-bcast` across the ranks, cached per job (every part's host
//! and GPU).

use std::path::PathBuf;
use std::sync::Arc;

use cudarc::driver::{sys, CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use serde::{Deserialize, Serialize};

use crate::cuda::{nvrtc, primary_context, Check, CudaError, Dev, DeviceMemory, Launch, Pinned};
use crate::nccl::{Communicators, NcclError};
use crate::topology::Topology;
use crate::transport::Method;
use crate::Group;

/// One measurement: `bytes` moved by `transport` from `src` to `dst` (GPU ordinals;
/// `None` is the host) in `seconds` (median).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Sample {
    /// What moved the bytes.
    pub transport: Method,
    /// The sending GPU (`None`: the host, or a whole exchange between processes).
    pub src: Option<usize>,
    /// The receiving GPU (`None`: the host, or a whole exchange between processes).
    pub dst: Option<usize>,
    /// Bytes moved.
    pub bytes: u64,
    /// Median seconds.
    pub seconds: f64,
    /// Bytes per second, in GB/s.
    pub gb_per_s: f64,
}

/// A machine's calibration.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Calibration {
    /// The host's name (`job` for a job's calibration).
    pub host: String,
    /// The GPUs' PCI bus ids (a job's: its parts, `host/bus id`).
    pub gpus: Vec<String>,
    /// When it was measured (seconds since the Unix epoch).
    pub unix_time: u64,
    /// The measurements.
    pub samples: Vec<Sample>,
}

impl Calibration {
    /// Predicted seconds to move `bytes` from `src` to `dst` by `transport`: linear
    /// between the measured sizes around it, and beyond the largest at its bandwidth.
    pub fn predict(&self, transport: Method, src: Option<usize>, dst: Option<usize>, bytes: u64) -> Option<f64> {
        let mut points: Vec<(u64, f64)> = self
            .samples
            .iter()
            .filter(|s| s.transport == transport && s.src == src && s.dst == dst)
            .map(|s| (s.bytes, s.seconds))
            .collect();
        points.sort_by_key(|p| p.0);
        let (&(b0, t0), &(bn, tn)) = (points.first()?, points.last()?);
        if bytes <= b0 {
            return Some(t0);
        }
        if bytes >= bn {
            return Some(tn * bytes as f64 / bn as f64);
        }
        let k = points.partition_point(|p| p.0 < bytes);
        let ((xa, ya), (xb, yb)) = (points[k - 1], points[k]);
        Some(ya + (yb - ya) * (bytes - xa) as f64 / (xb - xa) as f64)
    }

    /// The fastest measured transport for a route and size, with its predicted seconds
    /// (what `--comm auto` will pick from).
    pub fn best(&self, src: Option<usize>, dst: Option<usize>, bytes: u64) -> Option<(Method, f64)> {
        let mut methods: Vec<Method> = self.samples.iter().filter(|s| s.src == src && s.dst == dst).map(|s| s.transport).collect();
        methods.sort_unstable();
        methods.dedup();
        methods.into_iter().filter_map(|t| self.predict(t, src, dst, bytes).map(|s| (t, s))).min_by(|a, b| a.1.total_cmp(&b.1))
    }
}

#[derive(Debug, thiserror::Error)]
/// Why a calibration could not be made or read.
pub enum CalibrationError {
    #[error("calibration needs a GPU; {0}")]
    /// The machine has no usable GPU (the topology's notes say why).
    NoGpu(String),
    #[error(transparent)]
    /// A CUDA call failed.
    Cuda(#[from] CudaError),
    #[error("{0}")]
    /// The cache could not be written or read (the words say which).
    Io(String),
    #[error(transparent)]
    /// NCCL failed.
    Nccl(#[from] NcclError),
    #[error("between the processes: {0}")]
    /// A collective between the job's processes failed.
    Processes(#[from] crate::GroupError),
}

/// Seconds since the Unix epoch (a calibration's `unix_time`).
fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Message sizes: 4 B, then ×16 up to `max` (and `max` itself).
pub fn sizes(max: u64) -> Vec<u64> {
    let mut v: Vec<u64> = std::iter::successors(Some(4u64), |s| s.checked_mul(16)).take_while(|&s| s <= max).collect();
    if v.last() != Some(&max) && max > 4 {
        v.push(max);
    }
    v
}

/// A copy (or kernel) enqueued on a stream, as the calibration times it.
type Copy<'a> = &'a dyn Fn(&CudaStream) -> Result<(), CudaError>;

/// A stream of one GPU, on which its copies are timed with events.
struct Timer {
    stream: Arc<CudaStream>,
}

impl Timer {
    /// A new stream of `ctx`.
    fn new(ctx: &Arc<CudaContext>) -> Result<Timer, CalibrationError> {
        Ok(Timer { stream: ctx.new_stream().check("creating a stream")? })
    }

    /// An event recorded on the stream now.
    fn mark(&self, what: &str) -> Result<cudarc::driver::CudaEvent, CudaError> {
        self.stream.record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT)).check(what)
    }

    /// Median seconds of one `copy`, after two untimed ones.
    fn median(&self, reps: usize, copy: Copy, what: &str) -> Result<f64, CalibrationError> {
        let mut times = Vec::with_capacity(reps);
        for _ in 0..2 {
            copy(&self.stream)?;
        }
        self.stream.synchronize().check(what)?;
        for _ in 0..reps {
            let start = self.mark(what)?;
            copy(&self.stream)?;
            let end = self.mark(what)?;
            end.synchronize().check(what)?;
            times.push(start.elapsed_ms(&end).check(what)? as f64 / 1e3);
        }
        times.sort_by(f64::total_cmp);
        Ok(times[times.len() / 2])
    }
}

/// A buffer of `bytes` on `timer`'s GPU (of context `ctx`), every byte `fill`.
fn filled(ctx: &Arc<CudaContext>, timer: &Timer, bytes: usize, fill: u8, what: &str) -> Result<DeviceMemory, CalibrationError> {
    let buf = DeviceMemory::new(ctx, bytes, what)?;
    // SAFETY: the buffer holds `bytes`.
    unsafe { sys::cuMemsetD8Async(buf.addr, fill, bytes, timer.stream.cu_stream()) }.check(what)?;
    Ok(buf)
}

fn reps(bytes: u64) -> usize {
    match bytes {
        0..=1_048_576 => 50,
        1_048_577..=67_108_864 => 10,
        _ => 5,
    }
}

/// The GPUs a calibration measures: each one's context, a buffer filled with its own
/// byte, and a timer.
struct Rig {
    /// Each GPU's ordinal, for messages.
    ordinals: Vec<usize>,
    ctxs: Vec<Arc<CudaContext>>,
    bufs: Vec<DeviceMemory>,
    timers: Vec<Timer>,
}

impl Rig {
    /// A buffer of `bytes` on each of GPUs `ordinals`, the i-th filled with `fill(i)`,
    /// complete when this returns.
    fn new(ordinals: &[usize], bytes: usize, fill: impl Fn(usize) -> u8) -> Result<Rig, CalibrationError> {
        let ctxs: Vec<_> =
            ordinals.iter().map(|&d| primary_context(d).check(&format!("GPU {d}: creating a context"))).collect::<Result<_, _>>()?;
        let mut rig = Rig { ordinals: ordinals.to_vec(), ctxs, bufs: Vec::new(), timers: Vec::new() };
        for (i, d) in ordinals.iter().enumerate() {
            rig.current(i)?;
            let timer = Timer::new(&rig.ctxs[i])?;
            rig.bufs.push(filled(&rig.ctxs[i], &timer, bytes, fill(i), &format!("GPU {d}: {bytes} bytes"))?);
            rig.timers.push(timer);
        }
        rig.sync("filling the buffers")?;
        Ok(rig)
    }

    fn len(&self) -> usize {
        self.ctxs.len()
    }

    /// Makes GPU `i`'s context current on this thread.
    fn current(&self, i: usize) -> Result<(), CalibrationError> {
        Ok(self.ctxs[i].bind_to_thread().check(&format!("GPU {}: binding", self.ordinals[i]))?)
    }

    /// Waits for every GPU's stream.
    fn sync(&self, what: &str) -> Result<(), CalibrationError> {
        Ok(self.timers.iter().try_for_each(|t| t.stream.synchronize().check(what))?)
    }
}

/// Measures every transport for every pair (and GPU↔host) at every size up to
/// `max_bytes`; `progress` hears one line per transport and pair.
pub fn calibrate(topology: &Topology, max_bytes: u64, progress: &mut dyn FnMut(&str)) -> Result<Calibration, CalibrationError> {
    let n = topology.gpus.len();
    if n == 0 {
        return Err(CalibrationError::NoGpu(topology.notes.join("; ")));
    }
    let max_bytes = max_bytes.max(4);
    let rig = Rig::new(&(0..n).collect::<Vec<_>>(), max_bytes as usize, |i| (i as u8).wrapping_add(1))?;
    let sizes = sizes(max_bytes);
    let pairs: Vec<(usize, usize)> = (0..n).flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j))).collect();
    let mut samples = peer_copies(&rig, topology, &pairs, &sizes, progress)?;
    samples.extend(host_copies(&rig, &sizes, progress)?);
    progress("peer-store and uva (kernels)");
    match kernel_transports(&rig, &pairs, topology, &sizes) {
        Ok(found) => samples.extend(found),
        Err(e) => progress(&format!("peer-store and uva skipped: {e}")),
    }
    if n > 1 {
        match nccl(&rig, &sizes, progress) {
            Ok(found) => samples.extend(found),
            Err(e) => progress(&format!("nccl skipped: {e}")),
        }
    }
    Ok(Calibration {
        host: host_name(),
        gpus: topology.gpus.iter().map(|g| g.pci_bus_id.clone()).collect(),
        unix_time: unix_now(),
        samples,
    })
}

/// `cuMemcpyPeerAsync` between every pair, before peer access is enabled (`staged`)
/// and after (`p2p`, where the topology allows it).
fn peer_copies(
    rig: &Rig,
    topology: &Topology,
    pairs: &[(usize, usize)],
    sizes: &[u64],
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Sample>, CalibrationError> {
    let mut out = Vec::new();
    for transport in [Method::Staged, Method::P2p] {
        if transport == Method::P2p {
            for &(i, j) in pairs.iter().filter(|&&(i, j)| topology.peer_access(i, j)) {
                rig.current(i)?;
                // SAFETY: enabling access from the current context to a live peer context.
                match unsafe { sys::cuCtxEnablePeerAccess(rig.ctxs[j].cu_ctx(), 0) } {
                    sys::CUresult::CUDA_SUCCESS | sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => {}
                    code => code.check(&format!("enabling peer access {i}->{j}"))?,
                }
            }
        }
        for &(i, j) in pairs.iter().filter(|&&(i, j)| transport == Method::Staged || topology.peer_access(i, j)) {
            progress(&format!("{} GPU{i} -> GPU{j}", transport.name()));
            rig.current(i)?;
            for &bytes in sizes {
                let (dst, src, dctx, sctx) = (rig.bufs[j].addr, rig.bufs[i].addr, rig.ctxs[j].cu_ctx(), rig.ctxs[i].cu_ctx());
                // SAFETY: both buffers hold at least `bytes`; contexts are live.
                let copy = |s: &CudaStream| {
                    unsafe { sys::cuMemcpyPeerAsync(dst, dctx, src, sctx, bytes as usize, s.cu_stream()) }.check("a peer copy")
                };
                let t = rig.timers[i].median(reps(bytes), &copy, &format!("{} {i}->{j} {bytes} B", transport.name()))?;
                out.push(sample(transport, Some(i), Some(j), bytes, t));
            }
        }
    }
    Ok(out)
}

/// Copies between each GPU and pinned host memory, both ways (`d2h`, `h2d`).
fn host_copies(rig: &Rig, sizes: &[u64], progress: &mut dyn FnMut(&str)) -> Result<Vec<Sample>, CalibrationError> {
    let max = sizes.last().copied().unwrap_or(4) as usize;
    let host = Pinned::new(&rig.ctxs[0], max, "pinned host memory")?;
    let mut out = Vec::new();
    for i in 0..rig.len() {
        rig.current(i)?;
        for transport in [Method::D2h, Method::H2d] {
            progress(&format!("{} GPU{i}", transport.name()));
            for &bytes in sizes {
                let (dev, h) = (rig.bufs[i].addr, host.host);
                // SAFETY: both buffers hold at least `bytes`; the pinned buffer is portable.
                let copy = |s: &CudaStream| {
                    let done = unsafe {
                        if transport == Method::D2h {
                            sys::cuMemcpyDtoHAsync_v2(h, dev, bytes as usize, s.cu_stream())
                        } else {
                            sys::cuMemcpyHtoDAsync_v2(dev, h, bytes as usize, s.cu_stream())
                        }
                    };
                    done.check("a copy between host and GPU")
                };
                let t = rig.timers[i].median(reps(bytes), &copy, &format!("{} GPU{i} {bytes} B", transport.name()))?;
                let (src, dst) = if transport == Method::D2h { (Some(i), None) } else { (None, Some(i)) };
                out.push(sample(transport, src, dst, bytes, t));
            }
        }
    }
    Ok(out)
}

fn sample(transport: Method, src: Option<usize>, dst: Option<usize>, bytes: u64, seconds: f64) -> Sample {
    Sample { transport, src, dst, bytes, seconds, gb_per_s: bytes as f64 / seconds.max(1e-12) / 1e9 }
}

const STORE_KERNEL: &str = r#"
extern "C" __global__ void peer_store(const uint4* __restrict__ src, uint4* dst, unsigned long long words,
                                      const unsigned char* src_tail, unsigned char* dst_tail, unsigned long long tail) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    for (; i < words; i += (unsigned long long)gridDim.x * blockDim.x) dst[i] = src[i];
    if (blockIdx.x == 0 && threadIdx.x < tail) dst_tail[threadIdx.x] = src_tail[threadIdx.x];
}
"#;

/// The copy kernel, loaded in one GPU's context.
struct StoreKernel {
    f: CudaFunction,
    blocks_max: u64,
}

impl StoreKernel {
    /// Compiles (NVRTC, through the CUDA layer's caches) and loads the kernel for GPU `i`.
    fn load(ctx: &Arc<CudaContext>, topology: &Topology, i: usize) -> Result<StoreKernel, CalibrationError> {
        let (major, minor) = topology.gpus[i].compute_capability;
        let (ptx, _) = nvrtc::module_for(STORE_KERNEL, major as i32, minor as i32)?;
        let module = ctx.load_module(ptx).check("loading the store kernel")?;
        let f = module.load_function("peer_store").check("finding the store kernel")?;
        Ok(StoreKernel { f, blocks_max: topology.gpus[i].sms.max(1) as u64 * 8 })
    }

    /// Enqueues a copy of `bytes` from `src` to `dst` (any addresses the GPU can reach,
    /// each holding `bytes`) on `stream`.
    fn launch(&self, stream: &CudaStream, src: u64, dst: u64, bytes: u64) -> Result<(), CudaError> {
        let (words, tail) = (bytes / 16, bytes % 16);
        let blocks = words.div_ceil(256).clamp(1, self.blocks_max) as u32;
        let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        // peer_store(const uint4* src, uint4* dst, u64 words, const u8* src_tail, u8* dst_tail, u64 tail)
        let (src, dst) = (Dev::<[u32; 4]>::at(src), Dev::<[u32; 4]>::at(dst));
        let (src_tail, dst_tail) = (Dev::<u8>::at(src.addr() + words * 16), Dev::<u8>::at(dst.addr() + words * 16));
        let mut args = stream.launch_builder(&self.f);
        args.arg(&src).arg(&dst).arg(&words).arg(&src_tail).arg(&dst_tail).arg(&tail);
        // SAFETY: the arguments are the kernel's parameters in order; both ranges hold `bytes`.
        unsafe { Launch::Grid(cfg).launch(args, "peer_store") }
    }
}

/// Direct stores through peer pointers (`peer-store`), and the zero-copy path through
/// host-mapped memory (`uva`: a kernel on the source stores into mapped pinned memory,
/// the host waits, a kernel on the destination loads it; host-timed, since events of
/// two contexts cannot be compared).
fn kernel_transports(rig: &Rig, pairs: &[(usize, usize)], topology: &Topology, sizes: &[u64]) -> Result<Vec<Sample>, CalibrationError> {
    let n = rig.len();
    let kernels: Vec<StoreKernel> =
        (0..n).map(|i| rig.current(i).and_then(|_| StoreKernel::load(&rig.ctxs[i], topology, i))).collect::<Result<_, _>>()?;
    let max = sizes.last().copied().unwrap_or(4) as usize;
    let mapped = Pinned::new(&rig.ctxs[0], max, "mapped host memory")?;
    let mut out = Vec::new();
    for &(i, j) in pairs {
        let peer = topology.peer_access(i, j);
        for &bytes in sizes {
            if peer {
                rig.current(i)?;
                let copy = |s: &CudaStream| kernels[i].launch(s, rig.bufs[i].addr, rig.bufs[j].addr, bytes);
                let t = rig.timers[i].median(reps(bytes), &copy, &format!("peer-store {i}->{j} {bytes} B"))?;
                out.push(sample(Method::PeerStore, Some(i), Some(j), bytes, t));
            }
            let mut times = Vec::new();
            for rep in 0..reps(bytes) + 2 {
                let start = std::time::Instant::now();
                for (g, from, to) in [(i, rig.bufs[i].addr, mapped.device), (j, mapped.device, rig.bufs[j].addr)] {
                    rig.current(g)?;
                    // Unified addressing: the mapped host memory's address is valid on every GPU.
                    kernels[g].launch(&rig.timers[g].stream, from, to, bytes)?;
                    rig.timers[g].stream.synchronize().check("a uva copy")?;
                }
                if rep >= 2 {
                    times.push(start.elapsed().as_secs_f64());
                }
            }
            times.sort_by(f64::total_cmp);
            out.push(sample(Method::Uva, Some(i), Some(j), bytes, times[times.len() / 2]));
        }
    }
    drop(kernels);
    Ok(out)
}

/// NCCL broadcast (from each root) and all-gather over every GPU, one thread, group calls.
fn nccl(rig: &Rig, sizes: &[u64], progress: &mut dyn FnMut(&str)) -> Result<Vec<Sample>, CalibrationError> {
    let n = rig.len();
    progress("nccl: creating communicators (ncclCommInitAll)");
    let comms = Communicators::new(&(0..n).collect::<Vec<_>>())?;
    // One collective call on every GPU, timed until the slowest finishes.
    let collective = |issue: &dyn Fn(usize, crate::nccl::Stream) -> Result<(), NcclError>, what: &str| -> Result<f64, CalibrationError> {
        let mut times = Vec::new();
        for rep in 0..12 {
            let starts = rig
                .timers
                .iter()
                .enumerate()
                .map(|(g, t)| rig.current(g).and_then(|_| Ok(t.mark(what)?)))
                .collect::<Result<Vec<_>, _>>()?;
            Communicators::group(|| {
                rig.timers.iter().enumerate().try_for_each(|(g, t)| issue(g, t.stream.cu_stream() as crate::nccl::Stream))
            })?;
            let mut slowest = 0f64;
            for (g, (t, start)) in rig.timers.iter().zip(&starts).enumerate() {
                rig.current(g)?;
                let end = t.mark(what)?;
                end.synchronize().check(what)?;
                slowest = slowest.max(start.elapsed_ms(&end).check(what)? as f64 / 1e3);
            }
            if rep >= 2 {
                times.push(slowest); // the first two are warm-up (lazy connection set-up)
            }
        }
        times.sort_by(f64::total_cmp);
        Ok(times[times.len() / 2])
    };
    let mut out = Vec::new();
    for root in 0..n {
        progress(&format!("nccl-bcast from GPU{root}"));
        for &bytes in sizes {
            // SAFETY: in-place broadcast of `bytes` within each GPU's buffer, on every rank.
            let issue = |g: usize, s| unsafe { comms.broadcast(g, rig.bufs[g].addr, rig.bufs[g].addr, bytes as usize, root, s) };
            let t = collective(&issue, &format!("broadcast from {root}, {bytes} B"))?;
            out.extend((0..n).filter(|&j| j != root).map(|j| sample(Method::NcclBcast, Some(root), Some(j), bytes, t)));
        }
    }
    progress("nccl-allgather");
    for &bytes in sizes.iter().filter(|&&b| b >= n as u64) {
        let part = bytes / n as u64;
        let issue = |g: usize, s| {
            let base = rig.bufs[g].addr;
            // SAFETY: in-place all-gather: rank g's part sits at g·part in a buffer of n·part ≤ bytes.
            unsafe { comms.all_gather(g, base + g as u64 * part, base, part as usize, s) }
        };
        let t = collective(&issue, &format!("all-gather of {bytes} B"))?;
        // Per pair, what an all-gather moves is one rank's part: record that, so that
        // it compares with a copy of the same bytes from src to dst.
        for i in 0..n {
            out.extend((0..n).filter(|&j| j != i).map(|j| sample(Method::NcclAllgather, Some(i), Some(j), part, t)));
        }
    }
    drop(comms);
    Ok(out)
}

/// Every part of a job, in job order, as "host/PCI bus id" of its GPU (collective:
/// every process passes its parts' ordinals). Two parts on one GPU have equal names.
pub fn job_parts(group: &dyn Group, ordinals: &[usize]) -> Result<Vec<String>, CalibrationError> {
    const NAME: usize = 128;
    let mut mine = vec![0u8; NAME * ordinals.len()];
    for (entry, &d) in mine.chunks_mut(NAME).zip(ordinals) {
        let bus = crate::topology::bus_id(d).map_err(|e| CalibrationError::Io(e.to_string()))?;
        let name = format!("{}/{bus}", host_name());
        let name = &name.as_bytes()[..name.len().min(NAME)];
        entry[..name.len()].copy_from_slice(name);
    }
    let counts = crate::Processes::counts_in(group, ordinals.len() as u64);
    let mut all = vec![0u8; NAME * counts.iter().sum::<u64>() as usize];
    group.all_gather_into(&mine, &mut all)?;
    Ok(all.chunks(NAME).map(|e| String::from_utf8_lossy(e).trim_end_matches('\0').to_string()).collect())
}

/// Two parts of the job ([`job_parts`]) on one GPU, if any.
pub fn shared_gpu(parts: &[String]) -> Option<(usize, usize)> {
    (0..parts.len()).find_map(|a| (a + 1..parts.len()).find(|&b| parts[a] == parts[b]).map(|b| (a, b)))
}

/// The calibration of the link between the processes of a job, whose parts
/// ([`job_parts`]) are on this process's GPUs `ordinals` (collective): rank 0's
/// cached one when it was made for these parts and covers `max_bytes` (unless
/// `fresh`), else measured now by every process and cached by rank 0. Its samples have
/// no route (`src`, `dst` are `None`): each is one exchange in which every part sends
/// `bytes` to every other, by MPI (through pinned host memory, as the multi-GPU engine
/// exchanges) and, where every part has its own GPU, by NCCL broadcasts; the time is
/// the slowest process's, the same on every process, so that every process makes
/// the same choice from it. Returns it and whether it was measured now.
pub fn for_job(
    group: &dyn Group,
    ordinals: &[usize],
    parts: &[String],
    max_bytes: u64,
    fresh: bool,
    progress: &mut dyn FnMut(&str),
) -> Result<(Calibration, bool), CalibrationError> {
    let cached: Vec<u8> = match group.rank() {
        0 if !fresh => load_cached_job(parts, max_bytes).map(|c| serde_json::to_vec(&c).expect("serialisable")).unwrap_or_default(),
        _ => Vec::new(),
    };
    let len = group.sum_u64(&[cached.len() as u64])[0] as usize;
    if len > 0 {
        let mut all = vec![0u8; len];
        group.all_gather_into(&cached, &mut all)?;
        let c = serde_json::from_slice(&all).map_err(|e| CalibrationError::Io(format!("rank 0's cached calibration: {e}")))?;
        return Ok((c, false));
    }
    let samples = measure_job(group, ordinals, parts, max_bytes.max(4), progress)?;
    let c = Calibration { host: JOB.into(), gpus: parts.to_vec(), unix_time: unix_now(), samples };
    if group.rank() == 0 {
        save_to(&c, &job_cache_path(&c.gpus))?;
    }
    Ok((c, true))
}

/// A job calibration's `host`.
const JOB: &str = "job";

/// The exchanges of [`for_job`], at every size.
fn measure_job(
    group: &dyn Group,
    ordinals: &[usize],
    parts: &[String],
    max_bytes: u64,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Sample>, CalibrationError> {
    let (k, mine) = (parts.len(), ordinals.len());
    let first = crate::Processes::counts_in(group, mine as u64)[..group.rank()].iter().sum::<u64>() as usize;
    let rig = Rig::new(ordinals, k * max_bytes as usize, |i| (first + i + 1) as u8)?;
    let staging = Pinned::new(&rig.ctxs[0], mine * max_bytes as usize, "pinned host memory")?;
    let gathered = Pinned::new(&rig.ctxs[0], k * max_bytes as usize, "pinned host memory")?;
    let comms = job_communicators(&rig, group, parts, first, progress);
    let mut out = Vec::new();
    let mut record = |method: Method, bytes: u64, seconds: f64| {
        let gb_per_s = ((k - 1) as u64 * bytes) as f64 / seconds / 1e9;
        out.push(Sample { transport: method, src: None, dst: None, bytes, seconds, gb_per_s })
    };
    for bytes in sizes(max_bytes) {
        let b = bytes as usize;
        let reps = if bytes <= 1 << 20 { 20 } else { 5 };
        // This process's messages from the staging to every part's in `gathered`.
        let all_gather = || -> Result<(), CalibrationError> {
            // SAFETY: both pinned buffers hold these lengths; no copy uses them now.
            let (send, into) = unsafe {
                (
                    std::slice::from_raw_parts(staging.host as *const u8, mine * b),
                    std::slice::from_raw_parts_mut(gathered.host as *mut u8, k * b),
                )
            };
            Ok(group.all_gather_into(send, into)?)
        };
        progress(&format!("mpi exchange, {bytes} B a part"));
        // As `--comm mpi` exchanges: each part's message to pinned memory, one
        // all-gather, every other part's message to each GPU.
        let mpi = || -> Result<(), CalibrationError> {
            for (i, t) in rig.timers.iter().enumerate() {
                rig.current(i)?;
                // SAFETY: the staging holds `mine` messages of `max_bytes`; the buffer holds k.
                unsafe {
                    sys::cuMemcpyDtoHAsync_v2((staging.host as *mut u8).add(i * b).cast(), rig.bufs[i].addr, b, t.stream.cu_stream())
                }
                .check("a copy to the host")?;
            }
            rig.sync("a copy to the host")?;
            all_gather()?;
            for (i, t) in rig.timers.iter().enumerate() {
                rig.current(i)?;
                for r in (0..k).filter(|&r| r != first + i) {
                    let (dst, src) = (rig.bufs[i].addr + (r * b) as u64, (gathered.host as *const u8).wrapping_add(r * b));
                    // SAFETY: both hold `b` bytes at these offsets.
                    unsafe { sys::cuMemcpyHtoDAsync_v2(dst, src.cast(), b, t.stream.cu_stream()) }.check("a copy from the host")?;
                }
            }
            rig.sync("a copy from the host")
        };
        record(Method::Mpi, bytes, slowest_median(group, &mpi, reps)?);
        record(Method::MpiHost, bytes, slowest_median(group, &all_gather, reps)?);
        if let Some(comms) = &comms {
            progress(&format!("nccl exchange, {bytes} B a part"));
            // As `--comm nccl` exchanges: a broadcast from every part, in one group.
            let nccl = || -> Result<(), CalibrationError> {
                Communicators::group(|| {
                    for (i, t) in rig.timers.iter().enumerate() {
                        for root in 0..k {
                            let at = rig.bufs[i].addr + (root * b) as u64;
                            // SAFETY: every rank issues the same broadcasts; each buffer holds k messages.
                            unsafe { comms.broadcast(i, at, at, b, root, t.stream.cu_stream() as crate::nccl::Stream)? };
                        }
                    }
                    Ok::<_, CalibrationError>(())
                })?;
                rig.sync("an NCCL exchange")
            };
            record(Method::NcclBcast, bytes, slowest_median(group, &nccl, reps)?);
        }
    }
    drop(comms);
    Ok(out)
}

/// NCCL communicators across the job's processes, one rank per part (this process's
/// parts from `first`), or none where a GPU holds two parts or NCCL fails (`progress`
/// hears why).
fn job_communicators(
    rig: &Rig,
    group: &dyn Group,
    parts: &[String],
    first: usize,
    progress: &mut dyn FnMut(&str),
) -> Option<Communicators> {
    if shared_gpu(parts).is_some() {
        progress("nccl skipped: it needs a GPU of its own for every part");
        return None;
    }
    progress("nccl: making communicators across the processes");
    let bind = |i: usize| rig.ctxs[i].bind_to_thread().map_err(|e| format!("binding GPU {}: {e:?}", rig.ordinals[i]));
    Communicators::in_job(group, &rig.ordinals, first, parts.len(), &bind).map_err(|e| progress(&format!("nccl skipped: {e}"))).ok()
}

/// The median over `reps` repetitions of `exchange` (after two untimed ones) of the
/// slowest process's time: the same on every process (collective).
fn slowest_median(group: &dyn Group, exchange: &dyn Fn() -> Result<(), CalibrationError>, reps: usize) -> Result<f64, CalibrationError> {
    let mut local = vec![0.0; group.size() * reps];
    for rep in 0..reps + 2 {
        group.sum_u64(&[0]);
        let start = std::time::Instant::now();
        exchange()?;
        if rep >= 2 {
            local[group.rank() * reps + rep - 2] = start.elapsed().as_secs_f64();
        }
    }
    let all = group.sum_f64(&local);
    let mut slowest: Vec<f64> = (0..reps).map(|r| (0..group.size()).map(|p| all[p * reps + r]).fold(0.0, f64::max)).collect();
    slowest.sort_by(f64::total_cmp);
    Ok(slowest[reps / 2])
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|s| s.trim().to_string()).unwrap_or_else(|_| "unknown".into())
}

/// Where this machine's calibration is kept: `$CHATTY_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/chatty`, else `~/.cache/chatty`.
pub fn cache_path() -> PathBuf {
    let dir = std::env::var_os("CHATTY_CACHE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::cuda::user_cache_dir().unwrap_or_else(|| PathBuf::from(".")).join("chatty"));
    dir.join(format!("calibration-{}.json", host_name()))
}

/// The cached calibration, if it was made on this machine with these GPUs and covers
/// `max_bytes`.
pub fn load_cached(topology: &Topology, max_bytes: u64) -> Option<Calibration> {
    let c: Calibration = serde_json::from_slice(&std::fs::read(cache_path()).ok()?).ok()?;
    let gpus: Vec<String> = topology.gpus.iter().map(|g| g.pci_bus_id.clone()).collect();
    let covers = c.samples.iter().any(|s| s.bytes >= max_bytes);
    (c.host == host_name() && c.gpus == gpus && covers).then_some(c)
}

/// Where a job's calibration is kept: beside [`cache_path`], named by its first
/// part's host and its number of parts.
pub fn job_cache_path(parts: &[String]) -> PathBuf {
    let first = parts.first().map_or("none", |p| p.split('/').next().unwrap_or("none"));
    cache_path().with_file_name(format!("calibration-job-{first}-{}.json", parts.len()))
}

/// The cached calibration of a job, if it was made for exactly these parts and
/// covers `max_bytes`.
fn load_cached_job(parts: &[String], max_bytes: u64) -> Option<Calibration> {
    let c: Calibration = serde_json::from_slice(&std::fs::read(job_cache_path(parts)).ok()?).ok()?;
    let covers = c.samples.iter().any(|s| s.bytes >= max_bytes);
    (c.host == JOB && c.gpus == parts && covers).then_some(c)
}

/// Writes this machine's cache (through a temporary file, so a crash leaves the old one).
pub fn save(c: &Calibration) -> Result<PathBuf, CalibrationError> {
    let path = cache_path();
    save_to(c, &path)?;
    Ok(path)
}

fn save_to(c: &Calibration, path: &std::path::Path) -> Result<(), CalibrationError> {
    let io = |e: std::io::Error| CalibrationError::Io(format!("{}: cannot write the calibration cache: {e}", path.display()));
    std::fs::create_dir_all(path.parent().expect("a file in a directory")).map_err(io)?;
    let tmp = path.with_extension("json.partial");
    std::fs::write(&tmp, serde_json::to_vec_pretty(c).expect("serialisable")).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_span_4_bytes_to_the_maximum() {
        assert_eq!(sizes(256 << 20), vec![4, 64, 1024, 16384, 262144, 4194304, 67108864, 268435456]);
        assert_eq!(sizes(1000), vec![4, 64, 1000]);
        assert_eq!(sizes(4), vec![4]);
    }

    /// Latency `lat` seconds plus `bytes / gbps`, at the standard sizes.
    fn line(transport: Method, lat: f64, gbps: f64) -> Vec<Sample> {
        sizes(1 << 28).into_iter().map(|b| sample(transport, Some(0), Some(1), b, lat + b as f64 / (gbps * 1e9))).collect()
    }

    #[test]
    fn the_model_picks_by_size_from_the_measurements() {
        // Peer copies: low latency; NCCL: higher latency, more bandwidth (as measured on 2x H200).
        let samples =
            [line(Method::P2p, 5e-6, 393.0), line(Method::NcclAllgather, 28e-6, 484.0), line(Method::Staged, 18e-6, 38.6)].concat();
        let c = Calibration { host: "h".into(), gpus: vec![], unix_time: 0, samples };
        let route = (Some(0), Some(1));
        assert_eq!(c.best(route.0, route.1, 4).unwrap().0, Method::P2p);
        assert_eq!(c.best(route.0, route.1, 1 << 20).unwrap().0, Method::P2p);
        assert_eq!(c.best(route.0, route.1, 1 << 30).unwrap().0, Method::NcclAllgather, "bandwidth wins for large messages");
        // Between measured sizes the prediction interpolates; beyond them it scales.
        let p = c.predict(Method::P2p, route.0, route.1, 3 << 20).unwrap();
        let (lo, hi) =
            (c.predict(Method::P2p, route.0, route.1, 1 << 18).unwrap(), c.predict(Method::P2p, route.0, route.1, 1 << 22).unwrap());
        assert!(lo < p && p < hi);
        let big = c.predict(Method::P2p, route.0, route.1, 1 << 30).unwrap();
        assert!((big / c.predict(Method::P2p, route.0, route.1, 1 << 28).unwrap() - 4.0).abs() < 1e-9);
        assert!(c.best(Some(1), Some(0), 4).is_none(), "no measurement, no choice");
    }

    /// Every process of a job must hold the same numbers, and rank 0's cache is what
    /// they share: it reads back bit for bit.
    #[test]
    fn a_cached_calibration_reads_back_exactly() {
        let samples = (1..300u64).map(|i| sample(Method::Mpi, None, None, i * 977, 1.0 / (i as f64 * 3.7 + 0.1))).collect();
        let c = Calibration { host: JOB.into(), gpus: vec!["h/0000:01:00.0".into()], unix_time: 1, samples };
        let back: Calibration = serde_json::from_slice(&serde_json::to_vec_pretty(&c).unwrap()).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn without_a_gpu_calibration_says_so() {
        let t = Topology { gpus: Vec::new(), pairs: Vec::new(), notes: vec!["no CUDA driver".into()] };
        let e = calibrate(&t, 1 << 20, &mut |_| {}).unwrap_err().to_string();
        assert!(e.contains("needs a GPU") && e.contains("no CUDA driver"), "{e}");
    }
}
