//! The CUDA driver as the engines use it, in one place: error conversion for
//! `cudarc` results and raw `CUresult`s, the typed kernel launch, device addresses,
//! pinned host memory mapped into every context, and peer access between GPUs.
//! (The per-process PTX cache is `kernels.rs`'s.)

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::{sys, CudaContext, CudaSlice, CudaStream, DevicePtr, DriverError, LaunchArgs, LaunchConfig, PushKernelArg};

use crate::{Gpu, GpuError, Result};

/// Turns a driver error into a [`GpuError`] naming what was being done.
pub(crate) trait Check<T> {
    fn check(self, what: &str) -> Result<T>;
}

impl<T> Check<T> for std::result::Result<T, cudarc::driver::DriverError> {
    fn check(self, what: &str) -> Result<T> {
        self.map_err(|source| GpuError::Driver { what: what.to_string(), source })
    }
}

impl Check<()> for sys::CUresult {
    fn check(self, what: &str) -> Result<()> {
        self.result().check(what)
    }
}

/// Copies `bytes` from `src` to `dst` on `stream` (device or host addresses: UVA tells
/// them apart) and waits for the copy.
///
/// # Safety
///
/// Both ranges must be live allocations of at least `bytes`.
pub(crate) unsafe fn copy_and_wait(stream: &CudaStream, dst: u64, src: u64, bytes: usize) -> std::result::Result<(), DriverError> {
    // SAFETY: the caller's promise.
    unsafe {
        sys::cuMemcpyAsync(dst, src, bytes, stream.cu_stream()).result()?;
        sys::cuStreamSynchronize(stream.cu_stream()).result()
    }
}

/// A launch of one kernel on a GPU's stream: push the arguments in the kernel's
/// order (cudarc's typed arguments), then launch.
pub(crate) struct Kernel<'a> {
    args: LaunchArgs<'a>,
    name: &'a str,
}

impl<'a> Kernel<'a> {
    /// Appends one argument.
    pub fn arg<T>(&mut self, a: T) -> &mut Self
    where
        LaunchArgs<'a>: PushKernelArg<T>,
    {
        self.args.arg(a);
        self
    }

    /// Launches on `cfg`.
    ///
    /// # Safety
    /// The arguments match the kernel's parameters in order and type, and every
    /// pointer addresses memory of the size the kernel indexes.
    pub unsafe fn launch(&mut self, cfg: LaunchConfig) -> Result<()> {
        // SAFETY: the caller's contract.
        unsafe { self.args.launch(cfg) }.check(self.name).map(drop)
    }

    /// Launches cooperatively (every block resident at once, for grid barriers).
    ///
    /// # Safety
    /// As [`Kernel::launch`].
    pub unsafe fn launch_cooperative(&mut self, cfg: LaunchConfig) -> Result<()> {
        // SAFETY: the caller's contract.
        unsafe { self.args.launch_cooperative(cfg) }.check(self.name).map(drop)
    }
}

impl Gpu {
    /// A launch of kernel `name` on this GPU's stream.
    pub(crate) fn kernel<'a>(&'a self, name: &'a str) -> Kernel<'a> {
        Kernel { args: self.stream.launch_builder(self.f(name)), name }
    }
}

/// The device address of `s` on `gpu`.
pub(crate) fn ptr<T>(s: &CudaSlice<T>, gpu: &Gpu) -> u64 {
    s.device_ptr(&gpu.stream).0
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
            unsafe { sys::cuDeviceCanAccessPeer(&mut can, ctxs[i].cu_device(), ctxs[j].cu_device()) }.check("querying peer access")?;
            if can == 0 && ctxs[i].cu_device() != ctxs[j].cu_device() {
                return Ok(false);
            }
        }
    }
    for i in 0..n {
        ctxs[i].bind_to_thread().check(&format!("binding GPU {i}"))?;
        for j in (0..n).filter(|&j| j != i && ctxs[j].cu_device() != ctxs[i].cu_device()) {
            // SAFETY: enabling access from the current context to a live peer context.
            match unsafe { sys::cuCtxEnablePeerAccess(ctxs[j].cu_ctx(), 0) } {
                sys::CUresult::CUDA_SUCCESS | sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => {}
                e => e.check(&format!("enabling peer access {i}->{j}"))?,
            }
            let mut pool = std::ptr::null_mut();
            let desc = sys::CUmemAccessDesc {
                location: sys::CUmemLocation { type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, id: ctxs[i].cu_device() },
                flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
            };
            // SAFETY: grants device i access to device j's default pool; checked.
            unsafe {
                sys::cuDeviceGetDefaultMemPool(&mut pool, ctxs[j].cu_device()).check("getting a memory pool")?;
                sys::cuMemPoolSetAccess(pool, &desc, 1).check(&format!("granting GPU {i} access to GPU {j}'s pool"))?;
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
        ctx.bind_to_thread().check(&format!("allocating {what}"))?;
        let mut host = std::ptr::null_mut();
        let mut device = 0;
        // SAFETY: allocation and pointer query; checked; freed on drop.
        unsafe {
            sys::cuMemHostAlloc(&mut host, bytes.max(16), sys::CU_MEMHOSTALLOC_PORTABLE | sys::CU_MEMHOSTALLOC_DEVICEMAP)
                .check(&format!("allocating {what}"))?;
            let mut p = Pinned { host, device: 0, bytes, ctx: ctx.clone() };
            sys::cuMemHostGetDevicePointer_v2(&mut device, host, 0).check(&format!("mapping {what}"))?;
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
