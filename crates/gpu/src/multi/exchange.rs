//! Every transport that carries updated vertex values between GPUs (design.md §1.1),
//! behind one contract: [`MultiGpu::send`] (the senders' half, before the barrier)
//! returns a [`Sent`] that [`MultiGpu::receive`] completes on each receiver (queued
//! before the kernels that read the data). The choice among transports is
//! `chatty_comm::choose`'s (`choose_across`'s between processes). Every exchange has the same
//! shape: each part g of the job offers `bytes[g]` at `src[g]` in its GPU's memory, to
//! be written at `dst(g, j)` in the memory of every other part j.

use cudarc::driver::sys;

use chatty_comm::nccl::{Communicators, NcclError};
use chatty_comm::{Comm, Transport};

use chatty_comm::cuda::{addr, Check, Dev, Launch};

use super::{CommStats, MultiGpu};
use crate::launch;
use crate::{GpuError, Result};

/// One NCCL communicator per GPU (`chatty_comm::nccl`), and the broadcasts of an
/// exchange.
pub(crate) struct Nccl(pub Communicators);

impl Nccl {
    /// Communicators for devices `ordinals` (distinct).
    pub fn new(ordinals: &[usize]) -> Result<Nccl> {
        Communicators::new(ordinals).map(Nccl).map_err(|e| match e {
            NcclError::Missing => GpuError::Nccl(format!("{e}; use --comm p2p, peer, uva or staged")),
            e => GpuError::Nccl(e.to_string()),
        })
    }

    /// This process's ranks of communicators over the parts of every process (rank
    /// `first + i` on `devices[i]`; collective).
    pub fn across(
        ctxs: &[std::sync::Arc<cudarc::driver::CudaContext>],
        devices: &[usize],
        first: usize,
        k: usize,
        processes: &chatty_comm::Processes,
    ) -> Result<Nccl> {
        let bind = |i: usize| ctxs[i].bind_to_thread().map_err(|e| format!("binding GPU {}: {e:?}", devices[i]));
        Communicators::in_job(&*processes.0, devices, first, k, &bind).map(Nccl).map_err(|e| GpuError::Nccl(format!("{e}; use --comm mpi")))
    }

    /// Broadcasts `bytes[r]` from `src` of each part r (this process's part g is part
    /// `me` of the job) into `dst(r, g)` on every other part; called by part g's
    /// driver, in an NCCL group.
    fn broadcast(
        &self,
        g: usize,
        me: usize,
        stream: sys::CUstream,
        src: &[u64],
        bytes: &[u64],
        dst: &dyn Fn(usize, usize) -> u64,
    ) -> Result<()> {
        Communicators::group(|| {
            for root in (0..bytes.len()).filter(|&root| bytes[root] > 0) {
                let (send, recv) = if root == me { (src[g], src[g]) } else { (src[g], dst(root, g)) };
                // SAFETY: every rank issues the same broadcasts with the same counts,
                // known to all after the step's barrier; buffers hold `bytes[root]`.
                unsafe { self.0.broadcast(g, send, recv, bytes[root] as usize, root, stream as chatty_comm::nccl::Stream)? };
            }
            Ok(())
        })
    }
}

/// A finished sender half: what the receivers must still do.
pub(super) struct Sent {
    transport: Transport,
    /// Per part of the job.
    bytes: Vec<u64>,
    /// Where each part's values land in every other part.
    dst: Dst,
    /// Record layout (`Dst::Records`): value words per record.
    width: u32,
}

pub(super) enum Dst {
    /// Into receive buffer `x` at the sender's slot.
    Records { x: usize },
    /// Into the same slice of an array at `base[j]` on each part j (`elem` bytes per vertex).
    Slices { base: Vec<u64>, elem: u64 },
    /// Whole arrays of `bytes`, each part's into its own place at `base[j]` on each
    /// other part j, in part order (WCC's forests).
    Forests { base: Vec<u64>, bytes: u64 },
}

impl MultiGpu {
    /// The transport for an exchange of `bytes` per sender.
    pub(super) fn transport(&self, bytes: &[u64]) -> Transport {
        match self.comm {
            Comm::Forced(t) => t,
            Comm::Auto => self.auto_choice(bytes),
        }
    }

    /// Where part r's values land on this process's part j (`parts[j]`); `base` holds
    /// addresses on this process's parts.
    pub(super) fn dst(&self, dst: &Dst, r: usize, j: usize) -> u64 {
        let pj = &self.parts[j];
        let in_job = self.first + j;
        match dst {
            Dst::Records { x } => addr(&pj.recv[*x]) + 4 * pj.slot[r],
            Dst::Slices { base, elem } => base[j] + elem * self.ranges.range(r).start as u64,
            Dst::Forests { base, bytes } => base[j] + bytes * (r - (r > in_job) as usize) as u64,
        }
    }

    /// The senders' half of an exchange of `bytes[g]` (every part of the job) at
    /// `src[g]` (this process's parts), ending when every sender is done; the
    /// receivers' half is [`MultiGpu::receive`].
    pub(super) fn send(&self, src: Vec<u64>, bytes: Vec<u64>, dst: Dst, width: u32, stats: &mut CommStats) -> Result<Sent> {
        let started = std::time::Instant::now();
        let t = self.transport(&bytes);
        let k = self.k();
        let issue = |g: usize| -> Result<()> {
            let p = &self.parts[g];
            let gpu = &p.gpu;
            let stream = gpu.stream.cu_stream();
            let b = bytes[self.first + g];
            match t {
                Transport::Nccl => {
                    let nccl = self.nccl.as_ref().expect("nccl is available");
                    return nccl.broadcast(g, self.first + g, stream, &src, &bytes, &|r, j| self.dst(&dst, r, j));
                }
                _ if b == 0 => {}
                Transport::P2p => {
                    for j in (0..k).filter(|&j| j != g) {
                        let pj = &self.parts[j];
                        // SAFETY: both ranges hold `b` bytes; peer access is enabled.
                        unsafe {
                            sys::cuMemcpyPeerAsync(self.dst(&dst, g, j), pj.gpu.ctx.cu_ctx(), src[g], gpu.ctx.cu_ctx(), b as usize, stream)
                        }
                        .check("a peer copy")?;
                    }
                }
                Transport::Peer => {
                    for j in (0..k).filter(|&j| j != g) {
                        let to = Dev::at(self.dst(&dst, g, j));
                        // SAFETY: through a peer pointer; both hold `b` bytes.
                        unsafe { launch::mg_copy_words(gpu, Launch::Grid(gpu.cfg()), Dev::at(src[g]), to, b / 4) }?;
                    }
                }
                // SAFETY: the staging buffer holds the largest message of this part.
                Transport::Uva => unsafe {
                    launch::mg_copy_words(gpu, Launch::Grid(gpu.cfg()), Dev::at(src[g]), Dev::at(p.staging.device), b / 4)?
                },
                // SAFETY: as above.
                Transport::Staged | Transport::Mpi => {
                    unsafe { sys::cuMemcpyDtoHAsync_v2(p.staging.host, src[g], b as usize, stream) }.check("a copy to the host")?
                }
            }
            Ok(())
        };
        let wait = |g: usize| self.crew.wait_stream(g, &self.parts[g].gpu.stream);
        self.crew.each(t == Transport::Nccl, &issue, &wait)?;
        // Across processes every part's message lands in `gathered`, in part order,
        // untouched until the next exchange.
        if let (Some(group), Some(into), Transport::Mpi) = (&self.processes, &self.gathered, t) {
            // SAFETY: the streams that filled the staging buffers were waited for;
            // each holds its part's message.
            let staged =
                |g: usize| unsafe { std::slice::from_raw_parts(self.parts[g].staging.host as *const u8, bytes[self.first + g] as usize) };
            let mine = match self.parts.len() {
                1 => std::borrow::Cow::Borrowed(staged(0)),
                _ => std::borrow::Cow::Owned((0..self.parts.len()).flat_map(staged).copied().collect()),
            };
            let total = bytes.iter().sum::<u64>() as usize;
            assert!(total <= into.bytes, "an exchange larger than every part's staging");
            // SAFETY: `into` holds every part's largest message; the copies out of it
            // of the last exchange finished with the step that preceded this one.
            let all = unsafe { std::slice::from_raw_parts_mut(into.host as *mut u8, total) };
            group.0.all_gather_into(&mine, all).map_err(|e| GpuError::Processes(e.to_string()))?;
        }
        let use_ = stats.by_transport.entry(t.name()).or_default();
        use_.0 += 1;
        use_.1 += bytes.iter().sum::<u64>() * (k as u64 - 1);
        stats.exchanges += 1;
        stats.communicated += bytes.iter().map(|b| b / 4 / (1 + width as u64)).sum::<u64>();
        stats.exchange_seconds += started.elapsed().as_secs_f64();
        Ok(Sent { transport: t, bytes, dst, width })
    }

    /// The receivers' half on this process's part g: brings the values in (uva,
    /// staged, mpi) and, for records, applies them (`fill` for width 0) and appends
    /// the vertices to `queue` (a device list and its length's address; 0 for none).
    pub(super) fn receive(&self, g: usize, sent: &Sent, values: u64, fill: u32, queue: (u64, u64)) -> Result<()> {
        let p = &self.parts[g];
        let gpu = &p.gpu;
        let mut at = 0;
        for r in 0..self.k() {
            let b = sent.bytes[r];
            let from = at;
            at += b as usize;
            if r == self.first + g || b == 0 {
                continue;
            }
            let dst = self.dst(&sent.dst, r, g);
            match sent.transport {
                // SAFETY: from r's host-mapped staging (mapped in every context).
                Transport::Uva => unsafe {
                    launch::mg_copy_words(gpu, Launch::Grid(gpu.cfg()), Dev::at(self.parts[r].staging.device), Dev::at(dst), b / 4)?
                },
                Transport::Staged => {
                    // SAFETY: r's staging holds `b` bytes, written before the barrier.
                    unsafe { sys::cuMemcpyHtoDAsync_v2(dst, self.parts[r].staging.host, b as usize, gpu.stream.cu_stream()) }
                        .check("a copy from the host")?
                }
                // SAFETY: `gathered` holds r's `b` bytes from `from`, pinned, untouched
                // until the next exchange, which follows this step.
                Transport::Mpi => unsafe {
                    let gathered = self.gathered.as_ref().expect("processes have a gathered buffer");
                    let src = (gathered.host as *const u8).add(from).cast();
                    sys::cuMemcpyHtoDAsync_v2(dst, src, b as usize, gpu.stream.cu_stream())
                }
                .check("a copy from the host")?,
                _ => {}
            }
            if let Dst::Records { .. } = sent.dst {
                let count = b / 4 / (1 + sent.width as u64);
                let (values, queue, queue_len) = (Dev::at(values), Dev::at(queue.0), Dev::at(queue.1));
                // SAFETY: `count` records at `dst`; ids index `values`; the queue has
                // room for every vertex.
                unsafe {
                    launch::mg_apply(gpu, Launch::Grid(gpu.cfg()), Dev::at(dst), count as u32, sent.width, fill, values, queue, queue_len)
                }?;
            }
        }
        Ok(())
    }
}
