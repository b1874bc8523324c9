//! The transports that carry updated vertex values between GPUs (design.md §1.1) and
//! the choice among them. Every exchange has the same shape: each GPU g offers
//! `bytes[g]` at `src[g]` in its memory, to be written at `dst(g, j)` in the memory of
//! every other GPU j. A transport is two halves: the sender's (before the barrier) and
//! the receiver's (after it, queued before the kernels that read the data).

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::{sys, CudaContext};
use cudarc::nccl::sys as nccl;

use chatty_comm::calibrate::Calibration;

use crate::{GpuError, Result};

/// How vertex values travel between GPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Transport {
    /// `cuMemcpyPeerAsync` with peer access enabled.
    P2p,
    /// A kernel storing through peer pointers.
    Peer,
    /// Zero-copy through host-mapped pinned memory: the sender's kernel writes it, the
    /// receivers' kernels read it (the paper's UVA path).
    Uva,
    /// Copied to pinned host memory and back (the WS-VR baseline).
    Staged,
    /// NCCL broadcast from each GPU in turn.
    Nccl,
}

impl Transport {
    /// Every transport, in the order `--comm auto` breaks ties.
    pub const ALL: [Transport; 5] = [Transport::P2p, Transport::Peer, Transport::Nccl, Transport::Uva, Transport::Staged];

    /// The `--comm` name.
    pub fn name(self) -> &'static str {
        match self {
            Transport::P2p => "p2p",
            Transport::Peer => "peer",
            Transport::Uva => "uva",
            Transport::Staged => "staged",
            Transport::Nccl => "nccl",
        }
    }

    /// Parses a `--comm` name.
    pub fn from_name(s: &str) -> Option<Transport> {
        Transport::ALL.into_iter().find(|t| t.name() == s)
    }

    /// Its name in `chatty topo --calibrate`'s measurements.
    fn measured_as(self) -> &'static str {
        match self {
            Transport::P2p => "p2p",
            Transport::Peer => "peer-store",
            Transport::Uva => "uva",
            Transport::Staged => "staged",
            Transport::Nccl => "nccl-bcast",
        }
    }
}

/// `--comm`: one transport for everything, or the calibration's choice per exchange.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Comm {
    /// The fastest predicted transport for each exchange's sizes.
    Auto,
    /// Always this one.
    Forced(Transport),
}

impl Comm {
    /// `auto` or the transport's name.
    pub fn name(&self) -> &'static str {
        match self {
            Comm::Auto => "auto",
            Comm::Forced(t) => t.name(),
        }
    }

    /// Every choice, as `--comm` lists them.
    pub const ALL: [Comm; 6] = [
        Comm::Auto,
        Comm::Forced(Transport::P2p),
        Comm::Forced(Transport::Peer),
        Comm::Forced(Transport::Nccl),
        Comm::Forced(Transport::Uva),
        Comm::Forced(Transport::Staged),
    ];
}

/// Picks the transport with the least predicted time for one exchange: per sender,
/// its copies to every peer one after another; the exchange lasts as long as the
/// slowest sender. NCCL broadcasts run one root after another. Without a
/// measurement for a transport, it is not a candidate; without any, p2p (or staged
/// without peer access). Part g runs on device `ordinals[g]`.
pub(crate) fn choose(c: Option<&Calibration>, ordinals: &[usize], bytes: &[u64], available: &[Transport]) -> Transport {
    let n = bytes.len();
    let dev = |g: usize| Some(ordinals[g]);
    let predict = |t: Transport| -> Option<f64> {
        let c = c?;
        if t == Transport::Nccl {
            let mut sum = 0.0;
            for (r, &b) in bytes.iter().enumerate().filter(|(_, &b)| b > 0) {
                sum += c.predict(t.measured_as(), dev(r), dev((r + 1) % n), b)?;
            }
            return Some(sum);
        }
        let mut slowest = 0f64;
        for (g, &b) in bytes.iter().enumerate().filter(|(_, &b)| b > 0) {
            let mut t_g = 0.0;
            for j in (0..n).filter(|&j| j != g) {
                t_g += c.predict(t.measured_as(), dev(g), dev(j), b)?;
            }
            slowest = slowest.max(t_g);
        }
        Some(slowest)
    };
    available
        .iter()
        .filter_map(|&t| predict(t).map(|s| (t, s)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(t, _)| t)
        .unwrap_or(if available.contains(&Transport::P2p) { Transport::P2p } else { Transport::Staged })
}

fn ok(r: sys::CUresult, what: &str) -> Result<()> {
    r.result().map_err(|source| GpuError::Driver { what: what.to_string(), source })
}

/// Lets every GPU of `ctxs` read and write every other's memory, including the
/// stream-ordered pool that cudarc allocates from (which `cuCtxEnablePeerAccess` does
/// not cover). Returns false, changing nothing, when some pair has no peer access.
pub(crate) fn enable_peer_access(ctxs: &[Arc<CudaContext>]) -> Result<bool> {
    let n = ctxs.len();
    for i in 0..n {
        for j in (0..n).filter(|&j| j != i) {
            let mut can = 0;
            // SAFETY: a query on two valid devices.
            ok(unsafe { sys::cuDeviceCanAccessPeer(&mut can, ctxs[i].cu_device(), ctxs[j].cu_device()) }, "querying peer access")?;
            if can == 0 && ctxs[i].cu_device() != ctxs[j].cu_device() {
                return Ok(false);
            }
        }
    }
    for i in 0..n {
        ctxs[i].bind_to_thread().map_err(|source| GpuError::Driver { what: format!("binding GPU {i}"), source })?;
        for j in (0..n).filter(|&j| j != i && ctxs[j].cu_device() != ctxs[i].cu_device()) {
            // SAFETY: enabling access from the current context to a live peer context.
            match unsafe { sys::cuCtxEnablePeerAccess(ctxs[j].cu_ctx(), 0) } {
                sys::CUresult::CUDA_SUCCESS | sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => {}
                e => ok(e, &format!("enabling peer access {i}->{j}"))?,
            }
            let mut pool = std::ptr::null_mut();
            let desc = sys::CUmemAccessDesc {
                location: sys::CUmemLocation { type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, id: ctxs[i].cu_device() },
                flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
            };
            // SAFETY: grants device i access to device j's default pool; checked.
            unsafe {
                ok(sys::cuDeviceGetDefaultMemPool(&mut pool, ctxs[j].cu_device()), "getting a memory pool")?;
                ok(sys::cuMemPoolSetAccess(pool, &desc, 1), &format!("granting GPU {i} access to GPU {j}'s pool"))?;
            }
        }
    }
    Ok(true)
}

/// Pinned host memory mapped into every context (freed on drop).
pub(crate) struct Pinned {
    pub host: *mut c_void,
    pub device: sys::CUdeviceptr,
    pub bytes: usize,
    ctx: Arc<CudaContext>,
}

// SAFETY: plain memory; the engine orders accesses with stream waits and barriers.
unsafe impl Send for Pinned {}
// SAFETY: as above.
unsafe impl Sync for Pinned {}

impl Pinned {
    /// Allocates `bytes` in `ctx`.
    pub fn new(ctx: &Arc<CudaContext>, bytes: usize, what: &str) -> Result<Pinned> {
        ctx.bind_to_thread().map_err(|source| GpuError::Driver { what: format!("allocating {what}"), source })?;
        let mut host = std::ptr::null_mut();
        let mut device = 0;
        // SAFETY: allocation and pointer query; checked; freed on drop.
        unsafe {
            ok(
                sys::cuMemHostAlloc(&mut host, bytes.max(16), sys::CU_MEMHOSTALLOC_PORTABLE | sys::CU_MEMHOSTALLOC_DEVICEMAP),
                &format!("allocating {what}"),
            )?;
            let mut p = Pinned { host, device: 0, bytes, ctx: ctx.clone() };
            ok(sys::cuMemHostGetDevicePointer_v2(&mut device, host, 0), &format!("mapping {what}"))?;
            p.device = device;
            Ok(p)
        }
    }

    /// Word `i`, read after the stream that wrote it was waited for.
    pub fn word(&self, i: usize) -> u32 {
        assert!(4 * i + 4 <= self.bytes.max(16));
        // SAFETY: in bounds; volatile because a device wrote it.
        unsafe { std::ptr::read_volatile((self.host as *const u32).add(i)) }
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        // SAFETY: allocated by cuMemHostAlloc; freed once.
        unsafe { sys::cuMemFreeHost(self.host) };
    }
}

fn nccl_ok(r: nccl::ncclResult_t, what: &str) -> Result<()> {
    if r == nccl::ncclResult_t::ncclSuccess {
        Ok(())
    } else {
        Err(GpuError::Usage(format!("NCCL {what} failed: {r:?}")))
    }
}

/// Opens (`true`) or closes an NCCL group.
pub(crate) fn nccl_group(start: bool) -> Result<()> {
    // SAFETY: group calls nest and need no arguments.
    nccl_ok(
        unsafe {
            if start {
                nccl::ncclGroupStart()
            } else {
                nccl::ncclGroupEnd()
            }
        },
        "group call",
    )
}

/// One NCCL communicator per GPU (`ncclCommInitAll`); aborted, not destroyed, after a
/// failure, so that no call waits for a GPU that will never answer.
pub(crate) struct Nccl {
    comms: Vec<nccl::ncclComm_t>,
    pub failed: std::sync::atomic::AtomicBool,
}

// SAFETY: each communicator is used by one thread at a time (its GPU's).
unsafe impl Send for Nccl {}
// SAFETY: as above.
unsafe impl Sync for Nccl {}

impl Nccl {
    /// Communicators for devices `ordinals` (distinct), with NVLink multicast off
    /// unless the caller's environment says otherwise.
    pub fn new(ordinals: &[usize]) -> Result<Nccl> {
        // SAFETY: only probes whether the shared library can be opened.
        if !unsafe { nccl::is_culib_present() } {
            return Err(GpuError::Usage("NCCL (libnccl.so) is not installed; use --comm p2p, peer, uva or staged".into()));
        }
        if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
            std::env::set_var("NCCL_NVLS_ENABLE", "0");
        }
        let devs: Vec<i32> = ordinals.iter().map(|&d| d as i32).collect();
        let mut comms = vec![std::ptr::null_mut(); devs.len()];
        // SAFETY: one communicator per listed device; checked; freed on drop.
        nccl_ok(unsafe { nccl::ncclCommInitAll(comms.as_mut_ptr(), devs.len() as i32, devs.as_ptr()) }, "ncclCommInitAll")?;
        Ok(Nccl { comms, failed: false.into() })
    }

    /// Broadcasts `bytes[r]` from `src[r]` on each root r into `dst(r, g)` on every
    /// other GPU g; called by GPU g's driver, in an NCCL group.
    pub fn broadcast(&self, g: usize, stream: sys::CUstream, src: &[u64], bytes: &[u64], dst: &dyn Fn(usize, usize) -> u64) -> Result<()> {
        nccl_group(true)?;
        let mut r = Ok(());
        for root in (0..bytes.len()).filter(|&root| bytes[root] > 0) {
            let (send, recv) = if root == g { (src[g], src[g]) } else { (src[g], dst(root, g)) };
            // SAFETY: every rank issues the same broadcasts with the same counts, known
            // to all after the step's barrier; buffers hold `bytes[root]`.
            r = nccl_ok(
                unsafe {
                    nccl::ncclBroadcast(
                        send as *const c_void,
                        recv as *mut c_void,
                        bytes[root] as usize,
                        nccl::ncclDataType_t::ncclUint8,
                        root as i32,
                        self.comms[g],
                        stream as nccl::cudaStream_t,
                    )
                },
                "broadcast",
            );
            if r.is_err() {
                break;
            }
        }
        nccl_group(false)?;
        r
    }
}

impl Drop for Nccl {
    fn drop(&mut self) {
        let failed = self.failed.load(std::sync::atomic::Ordering::SeqCst);
        for &c in &self.comms {
            // SAFETY: created by ncclCommInitAll; released once.
            unsafe {
                let _ = if failed { nccl::ncclCommAbort(c) } else { nccl::ncclCommDestroy(c) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chatty_comm::calibrate::Sample;

    fn line(transport: &str, src: usize, dst: usize, lat: f64, gbps: f64) -> Vec<Sample> {
        [4u64, 1 << 20, 1 << 28]
            .into_iter()
            .map(|b| Sample {
                transport: transport.into(),
                src: Some(src),
                dst: Some(dst),
                bytes: b,
                seconds: lat + b as f64 / gbps / 1e9,
                gb_per_s: 0.0,
            })
            .collect()
    }

    #[test]
    fn the_choice_follows_the_measurements_by_size() {
        let mut samples = Vec::new();
        for (s, d) in [(0, 1), (1, 0)] {
            samples.extend(line("p2p", s, d, 10e-6, 400.0));
            samples.extend(line("peer-store", s, d, 2e-6, 50.0));
            samples.extend(line("staged", s, d, 20e-6, 30.0));
        }
        let c = Calibration { host: "h".into(), gpus: vec![], unix_time: 0, samples };
        let all = Transport::ALL;
        assert_eq!(choose(Some(&c), &[0, 1], &[64, 128], &all), Transport::Peer);
        assert_eq!(choose(Some(&c), &[0, 1], &[64 << 20, 1 << 20], &all), Transport::P2p);
        assert_eq!(choose(Some(&c), &[0, 1], &[64 << 20, 0], &[Transport::Staged, Transport::Uva]), Transport::Staged);
        assert_eq!(choose(None, &[0, 1], &[1, 1], &all), Transport::P2p);
        assert_eq!(choose(None, &[0, 1], &[1, 1], &[Transport::Staged, Transport::Uva]), Transport::Staged);
    }

    #[test]
    fn names_round_trip() {
        for t in Transport::ALL {
            assert_eq!(Transport::from_name(t.name()), Some(t));
        }
        assert_eq!(Transport::from_name("carrier-pigeon"), None);
        let names: std::collections::HashSet<_> = Comm::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(names.len(), Comm::ALL.len(), "--comm names are distinct");
    }
}
