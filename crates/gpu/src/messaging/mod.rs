//! Device-initiated messaging on real GPUs (design.md §1.3; the GMPI report): the
//! request rings and completion records of [`chatty_comm::messaging`] placed in
//! host-mapped pinned memory, and one proxy thread per rank that moves matched
//! messages with CUDA copies (or a plain copy when both buffers are host memory).
//! The multi-GPU engine's `--mode gmpi` uses it; the report's experiments (ping-pong,
//! raw round trips, message rate) are in [`experiments`], apart from the library's
//! working parts.
//!
//! Ranks `0..gpus` are GPUs (a device may appear twice: two ranks on one GPU), the
//! `hosts` ranks after them are host threads that post through the same rings. In a
//! job of several processes ([`Messaging::open_in_job`]) this process's GPUs are the
//! job's ranks `first..`, and messages to the others go through the job's link (GMPI
//! over MPI). The device API is `kernels/gmpi.cuh`; the matching rules are the comm
//! crate's.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::thread::JoinHandle;
use std::time::Duration;

use cudarc::driver::{CudaSlice, CudaStream, LaunchConfig};

use chatty_comm::messaging::{Copier, Hub, Layout, ProxyStats, Region};
use chatty_comm::ProcessLink;

use chatty_comm::cuda::{addr, copy_and_wait, enable_peer_access, Check, Dev, Launch, Pinned};

use crate::context::ControlBlock;
use crate::layouts::GmpiCtx;

pub mod experiments;
use crate::{Gpu, GpuError, Result};
pub use experiments::MessagingRow;

/// Sizes of the rings and how long anything may wait.
#[derive(Clone, Copy, Debug)]
pub struct MessagingConfig {
    /// Request slots per rank (a power of two).
    pub ring_slots: usize,
    /// Completion records per rank (a power of two): at most this many requests
    /// outstanding.
    pub max_requests: usize,
    /// An operation unmatched for this long fails (the proxy's timeout); device
    /// threads give up after twice this plus a second.
    pub timeout: Duration,
}

impl Default for MessagingConfig {
    fn default() -> Self {
        MessagingConfig { ring_slots: 1024, max_requests: 1 << 16, timeout: Duration::from_secs(10) }
    }
}

/// Moves matched messages: a plain copy when both buffers are host-mapped memory we
/// allocated, else `cuMemcpyAsync` (UVA: peer, device↔host or local) on the stream of
/// the GPU that holds the source (or, for host sources, the destination). Small
/// messages come inline and are written here only into host-mapped buffers.
struct CudaCopier {
    /// Per GPU rank of this process (job ranks `first..`): its stream for proxy
    /// copies, one copy at a time.
    streams: Vec<Mutex<ProxyStream>>,
    first: u32,
    /// Host-mapped buffers: (device address, bytes, host address).
    /// Read by every proxy for every small message: a read lock, never contended by them.
    host: RwLock<Vec<(u64, u64, usize)>>,
}

impl CudaCopier {
    fn host_address(&self, addr: u64, bytes: u64) -> Option<*mut u8> {
        let host = self.host.read().expect("host ranges");
        host.iter().find(|(d, len, _)| addr >= *d && addr + bytes <= d + len).map(|(d, _, h)| (h + (addr - d) as usize) as *mut u8)
    }

    /// The stream of `rank`'s GPU, if it is one of this process's GPU ranks.
    fn stream(&self, rank: u32) -> Option<&Mutex<ProxyStream>> {
        self.streams.get(rank.checked_sub(self.first)? as usize)
    }

    fn locked(&self, rank: u32) -> std::result::Result<std::sync::MutexGuard<'_, ProxyStream>, String> {
        Ok(self.stream(rank).ok_or_else(|| format!("rank {rank} has no GPU here"))?.lock().expect("proxy stream"))
    }

    /// `bytes` from `src` to `dst` (device or host addresses, UVA) on `rank`'s stream,
    /// waited for.
    fn copy_on(&self, rank: u32, dst: u64, src: u64, bytes: usize) -> std::result::Result<(), String> {
        let stream = &self.locked(rank)?.stream;
        stream.context().bind_to_thread().map_err(|e| e.to_string())?;
        // SAFETY: the addresses come from posted requests of live buffers.
        unsafe { copy_and_wait(stream, dst, src, bytes) }.map_err(|e| e.to_string())
    }
}

impl Copier for CudaCopier {
    fn write_host(&self, _dst: u32, dst_addr: u64, data: &[u8]) -> bool {
        match self.host_address(dst_addr, data.len() as u64) {
            Some(d) => {
                // SAFETY: inside a live pinned allocation (checked by host_address).
                unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), d, data.len()) };
                true
            }
            None => false,
        }
    }

    fn copy(&self, src: u32, src_addr: u64, dst: u32, dst_addr: u64, bytes: u64) -> std::result::Result<(), String> {
        if let (Some(s), Some(d)) = (self.host_address(src_addr, bytes), self.host_address(dst_addr, bytes)) {
            // SAFETY: both ranges lie in live pinned allocations (checked above); a
            // matched receive's buffer is not touched by its rank until completion.
            unsafe { std::ptr::copy(s, d, bytes as usize) };
            return Ok(());
        }
        let rank = if self.stream(src).is_some() { src } else { dst };
        self.copy_on(rank, dst_addr, src_addr, bytes as usize)
    }

    fn read(&self, src: u32, src_addr: u64, into: &mut [u8]) -> std::result::Result<(), String> {
        if let Some(s) = self.host_address(src_addr, into.len() as u64) {
            // SAFETY: inside a live pinned allocation (checked by host_address).
            unsafe { std::ptr::copy_nonoverlapping(s, into.as_mut_ptr(), into.len()) };
            return Ok(());
        }
        let p = self.locked(src)?;
        p.staging.read_bytes(&p.stream, src_addr, into, "a message").map_err(|e| e.to_string())
    }

    fn write(&self, dst: u32, dst_addr: u64, data: &[u8]) -> std::result::Result<(), String> {
        if self.write_host(dst, dst_addr, data) {
            return Ok(());
        }
        let p = self.locked(dst)?;
        p.staging.write_bytes(&p.stream, dst_addr, data, "a message").map_err(|e| e.to_string())?;
        p.stream.synchronize().map_err(|e| e.to_string())
    }
}

/// This process's place in a job whose GPU ranks span processes: its first rank,
/// the process serving each rank, and the link to the others.
pub struct JobRanks {
    /// The job's rank of this process's first GPU.
    pub first: u32,
    /// The process serving each rank of the job.
    pub owner: Vec<usize>,
    /// The job's point-to-point link.
    pub link: Arc<dyn ProcessLink>,
}

/// A GPU rank's stream for the proxies' copies, and the pinned staging its copies
/// between the GPU and pageable host memory (messages of other processes) go through.
struct ProxyStream {
    stream: Arc<CudaStream>,
    staging: crate::transfer::StagingSlot,
}

/// A rank's state on its GPU.
struct GpuRank {
    ctx: ControlBlock<GmpiCtx>,
    _counters: CudaSlice<u64>,
    _recv_addr: CudaSlice<u64>,
}

/// The messaging layer over some GPUs and host ranks, with its proxies running.
pub struct Messaging {
    gpus: Vec<Gpu>,
    ranks: Vec<GpuRank>,
    hosts: usize,
    hub: Arc<Hub>,
    copier: Arc<CudaCopier>,
    config: MessagingConfig,
    stop: Arc<AtomicBool>,
    proxies: Vec<JoinHandle<ProxyStats>>,
    /// Host-mapped buffers handed out (kept alive for the copier's registry).
    buffers: Vec<Arc<Pinned>>,
    /// What it had to settle for (no peer access), for the front end to say.
    pub notes: Vec<String>,
}

/// A host-mapped buffer a kernel and the host both address.
#[derive(Clone)]
pub struct HostBuffer(Arc<Pinned>);

impl HostBuffer {
    /// Its address for kernels and requests.
    pub fn device(&self) -> u64 {
        self.0.device
    }
    /// The u32 words, read on the host.
    pub fn words(&self, n: usize) -> Vec<u32> {
        (0..n).map(|i| self.0.word(i)).collect()
    }
}

impl Messaging {
    /// Opens `devices` as GPU ranks (in order) plus `hosts` host ranks, lays the
    /// rings out in pinned memory and starts one proxy per rank.
    pub fn open(devices: &[usize], hosts: usize, config: MessagingConfig) -> Result<Messaging> {
        Messaging::start(devices, hosts, config, None)
    }

    /// Opens `devices` as the job's GPU ranks `job.first..` (in order); ranks of other
    /// processes are reached through `job.link`.
    pub fn open_in_job(devices: &[usize], config: MessagingConfig, job: JobRanks) -> Result<Messaging> {
        Messaging::start(devices, 0, config, Some(job))
    }

    fn start(devices: &[usize], hosts: usize, config: MessagingConfig, job: Option<JobRanks>) -> Result<Messaging> {
        let first = job.as_ref().map_or(0, |j| j.first);
        if devices.is_empty() {
            return Err(GpuError::unsupported("messaging needs at least one GPU"));
        }
        let gpus = devices.iter().map(|&d| Gpu::open(d)).collect::<Result<Vec<_>>>()?;
        let ctxs: Vec<_> = gpus.iter().map(|g| g.ctx.clone()).collect();
        let mut notes = Vec::new();
        if !enable_peer_access(&ctxs)? && gpus.len() > 1 {
            notes.push("no peer access between these GPUs; messages are staged through the host".to_string());
        }
        let layout = Layout::new(config.ring_slots, config.max_requests.next_power_of_two());
        let regions = (0..gpus.len() + hosts)
            .map(|_| {
                let r = Pinned::new(&gpus[0].ctx, layout.bytes(), "a request ring")?;
                // SAFETY: `bytes` bytes just allocated; the layout expects zeroes.
                unsafe { std::ptr::write_bytes(r.host.cast::<u8>(), 0, r.bytes) };
                Ok(Arc::new(r))
            })
            .collect::<Result<Vec<_>>>()?;
        let timeout_ns = (2 * config.timeout + Duration::from_secs(1)).as_nanos() as u64;
        let ranks = gpus
            .iter()
            .enumerate()
            .map(|(r, gpu)| {
                let counters = gpu.zeros::<u64>(2, "request counters")?;
                let recv_addr = gpu.zeros::<u64>(layout.requests, "receive addresses")?;
                let base = addr(&counters);
                let region = &regions[r];
                let c = GmpiCtx {
                    ring: region.device,
                    mask: layout.slots as u64 - 1,
                    head: base,
                    tail: region.device + layout.tail_offset() as u64,
                    done: region.device + layout.records_offset() as u64,
                    recv_addr: addr(&recv_addr),
                    tail_seen: base + 8,
                    timeout_ns,
                    max_requests: layout.requests as u32,
                    rank: first + r as u32,
                };
                Ok(GpuRank { ctx: gpu.control(&c)?, _counters: counters, _recv_addr: recv_addr })
            })
            .collect::<Result<Vec<_>>>()?;
        let streams = gpus
            .iter()
            .map(|g| {
                Ok(Mutex::new(ProxyStream { stream: g.ctx.new_stream().check("creating a proxy stream")?, staging: Default::default() }))
            })
            .collect::<Result<Vec<_>>>()?;
        let copier = Arc::new(CudaCopier { streams, first, host: RwLock::new(Vec::new()) });
        let regions = regions.iter().map(|r| r.clone() as Arc<dyn Region>).collect();
        let hub = Arc::new(match job {
            None => Hub::with_regions(layout, regions, config.timeout),
            Some(j) => Hub::spanning(layout, regions, config.timeout, first, j.owner, j.link).map_err(GpuError::Messaging)?,
        });
        let mut m = Messaging {
            gpus,
            ranks,
            hosts,
            hub,
            copier,
            config,
            stop: Arc::new(AtomicBool::new(false)),
            proxies: Vec::new(),
            buffers: Vec::new(),
            notes,
        };
        m.proxies = (first..first + m.ranks() as u32)
            .map(|rank| {
                let (hub, copier, stop) = (m.hub.clone(), m.copier.clone(), m.stop.clone());
                std::thread::spawn(move || hub.serve(rank, copier.as_ref(), &stop))
            })
            .collect();
        Ok(m)
    }

    /// GPU ranks plus host ranks (of this process).
    pub fn ranks(&self) -> usize {
        self.gpus.len() + self.hosts
    }

    /// The GPUs' names, by rank.
    pub fn gpu_names(&self) -> Vec<String> {
        self.gpus.iter().map(|g| g.name().to_string()).collect()
    }

    /// Host-mapped memory of `bytes`, reachable by every GPU and copied by the proxy
    /// with a plain copy when both ends are such buffers.
    pub fn host_buffer(&mut self, bytes: usize) -> Result<HostBuffer> {
        let p = Arc::new(Pinned::new(&self.gpus[0].ctx, bytes.max(64), "a message buffer")?);
        // SAFETY: just allocated, `bytes` long.
        unsafe { std::ptr::write_bytes(p.host.cast::<u8>(), 0, p.bytes) };
        self.copier.host.write().expect("host ranges").push((p.device, p.bytes as u64, p.host as usize));
        self.buffers.push(p.clone());
        Ok(HostBuffer(p))
    }

    /// Stops every proxy (what a crashed proxy looks like to the kernels): operations
    /// waiting for a match fail with "peer gone", later ones time out on the device.
    pub fn stop_proxies(&mut self) -> Vec<ProxyStats> {
        self.stop.store(true, Ordering::SeqCst);
        self.proxies.drain(..).map(|p| p.join().unwrap_or_default()).collect()
    }

    /// GPU rank `rank`, bound to this thread, and a launch of `threads` threads on it.
    fn on(&self, rank: usize, threads: u32) -> Result<(&Gpu, Launch)> {
        let gpu = &self.gpus[rank];
        gpu.ctx.bind_to_thread().check("binding the GPU")?;
        let block = threads.clamp(1, 256);
        Ok((gpu, Launch::Grid(LaunchConfig { grid_dim: (threads.div_ceil(block), 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 })))
    }

    /// The `GmpiCtx` of this process's GPU rank `rank` (counted from its first), for
    /// kernels that message (`--mode gmpi`).
    pub(crate) fn ctx(&self, rank: usize) -> Dev<GmpiCtx> {
        Dev::from(&self.ranks[rank].ctx)
    }
}

impl Drop for Messaging {
    fn drop(&mut self) {
        self.stop_proxies();
    }
}
