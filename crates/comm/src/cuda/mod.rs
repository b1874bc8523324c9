//! The CUDA driver as every layer above uses it, in one place: the primary contexts,
//! errors that say what was being done, device addresses typed by what they point at
//! ([`Dev`]), kernel launches ([`Launch`]), pinned host memory mapped into every
//! context ([`Pinned`]), peer access between GPUs, and NVRTC with its caches
//! ([`nvrtc`]). The GPU engine (`chatty-gpu`) and the calibration both stand on it;
//! `cudarc` loads `libcuda` and `libnvrtc` at run time.

pub mod nvrtc;

use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

use cudarc::driver::{sys, CudaContext, CudaSlice, CudaStream, DeviceRepr, DriverError, LaunchArgs, LaunchConfig};

/// Errors of the CUDA layer.
#[derive(Debug, thiserror::Error)]
pub enum CudaError {
    /// A driver call failed.
    #[error("CUDA error during {what}: {source}")]
    Driver {
        /// What we were doing.
        what: String,
        /// The driver's error.
        source: DriverError,
    },
    /// No NVRTC library to compile kernels.
    #[error("NVRTC (libnvrtc.so.13) not found: install the CUDA toolkit or `pip install nvidia-cuda-nvrtc` and add its lib directory to LD_LIBRARY_PATH")]
    NoNvrtc,
    /// Kernels failed to compile.
    #[error("NVRTC could not compile the kernels: {0}")]
    Compile(String),
}

/// Turns a driver result into a [`CudaError`] naming what was being done.
pub trait Check<T> {
    /// The value, or the error with `what` we were doing.
    fn check(self, what: &str) -> Result<T, CudaError>;
}

impl<T> Check<T> for Result<T, DriverError> {
    fn check(self, what: &str) -> Result<T, CudaError> {
        self.map_err(|source| CudaError::Driver { what: what.to_string(), source })
    }
}

impl Check<()> for sys::CUresult {
    fn check(self, what: &str) -> Result<(), CudaError> {
        self.result().check(what)
    }
}

/// GPU `ordinal`'s primary context, retained once and then held for the life of the
/// process, as the CUDA runtime holds it. Every engine, part and calibration shares it.
/// Why: releasing the last retain destroys the context, and driver 580 crashed now and
/// then in its own event-handler thread while a context was destroyed, in processes
/// that open and close engine after engine (the GPU tests; docs/benchmarks/wall-time.md).
pub fn primary_context(ordinal: usize) -> Result<Arc<CudaContext>, DriverError> {
    type Slot = Arc<Mutex<Option<Arc<CudaContext>>>>;
    static HELD: Mutex<Vec<Slot>> = Mutex::new(Vec::new());
    // A slot per GPU, so threads opening different GPUs make their contexts at once.
    let slot = {
        let mut held = HELD.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if held.len() <= ordinal {
            held.resize_with(ordinal + 1, Slot::default);
        }
        held[ordinal].clone()
    };
    let mut held = slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(ctx) = &*held {
        return Ok(ctx.clone());
    }
    let ctx = CudaContext::new(ordinal)?;
    *held = Some(ctx.clone());
    Ok(ctx)
}

/// A device address of `T`s: what a kernel's `T*` parameter takes. Made from the
/// buffer it points into (or null, where a kernel tests for null), so a launch's
/// argument list is checked against the kernel's parameter types at compile time.
#[repr(transparent)]
pub struct Dev<T> {
    addr: u64,
    of: PhantomData<fn() -> T>,
}

impl<T> Clone for Dev<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Dev<T> {}

impl<T> std::fmt::Debug for Dev<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Dev({:#x})", self.addr)
    }
}

// SAFETY: a device address, passed by value as the kernel's pointer parameter.
unsafe impl<T> DeviceRepr for Dev<T> {}

impl<T> Dev<T> {
    /// The null pointer.
    pub const NULL: Dev<T> = Dev { addr: 0, of: PhantomData };

    /// The address `addr` (a peer's buffer, mapped host memory, an offset into a
    /// buffer), as a pointer to `T`s.
    pub fn at(addr: u64) -> Dev<T> {
        Dev { addr, of: PhantomData }
    }

    /// The address.
    pub fn addr(self) -> u64 {
        self.addr
    }
}

impl<T> From<&CudaSlice<T>> for Dev<T> {
    fn from(s: &CudaSlice<T>) -> Dev<T> {
        Dev::at(cudarc::driver::DevicePtr::device_ptr(s, s.stream()).0)
    }
}

impl<T> From<&mut CudaSlice<T>> for Dev<T> {
    fn from(s: &mut CudaSlice<T>) -> Dev<T> {
        Dev::from(&*s)
    }
}

impl<T> From<Option<&CudaSlice<T>>> for Dev<T> {
    fn from(s: Option<&CudaSlice<T>>) -> Dev<T> {
        s.map_or(Dev::NULL, Dev::from)
    }
}

/// The user's cache directory: `$XDG_CACHE_HOME`, else `~/.cache` (where the kernel
/// cache and the calibrations live unless their own variables say otherwise).
pub fn user_cache_dir() -> Option<std::path::PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache")))
}

/// The device address of `s`.
pub fn addr<T>(s: &CudaSlice<T>) -> u64 {
    Dev::from(s).addr()
}

/// How a kernel is launched: over a grid, or cooperatively (every block resident at
/// once, for kernels with grid barriers).
#[derive(Clone, Copy, Debug)]
pub enum Launch {
    /// An ordinary launch.
    Grid(LaunchConfig),
    /// A cooperative launch.
    Cooperative(LaunchConfig),
}

impl Launch {
    /// Launches `kernel` with its arguments pushed.
    ///
    /// # Safety
    /// The arguments match the kernel's parameters in order and type, and every
    /// pointer addresses memory of the size the kernel indexes.
    pub unsafe fn launch(self, mut args: LaunchArgs, kernel: &str) -> Result<(), CudaError> {
        // SAFETY: the caller's contract.
        let launched = unsafe {
            match self {
                Launch::Grid(cfg) => args.launch(cfg),
                Launch::Cooperative(cfg) => args.launch_cooperative(cfg),
            }
        };
        launched.check(kernel).map(drop)
    }
}

/// Copies `bytes` from `src` to `dst` on `stream` (device or host addresses: UVA tells
/// them apart) and waits for the copy.
///
/// # Safety
///
/// Both ranges must be live allocations of at least `bytes`.
pub unsafe fn copy_and_wait(stream: &CudaStream, dst: u64, src: u64, bytes: usize) -> Result<(), DriverError> {
    // SAFETY: the caller's promise.
    unsafe {
        sys::cuMemcpyAsync(dst, src, bytes, stream.cu_stream()).result()?;
        sys::cuStreamSynchronize(stream.cu_stream()).result()
    }
}

/// Lets every GPU of `ctxs` read and write every other's memory, including the
/// stream-ordered pool that cudarc allocates from (which `cuCtxEnablePeerAccess` does
/// not cover). Returns false, changing nothing, when some pair has no peer access.
pub fn enable_peer_access(ctxs: &[Arc<CudaContext>]) -> Result<bool, CudaError> {
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

/// Device memory from `cuMemAlloc`, outside the stream-ordered pool, so that peer
/// access enabled per context reaches it (the calibration measures with and without
/// it); freed on drop.
pub struct DeviceMemory {
    /// Its device address.
    pub addr: u64,
    ctx: Arc<CudaContext>,
}

impl DeviceMemory {
    /// Allocates `bytes` in `ctx`.
    pub fn new(ctx: &Arc<CudaContext>, bytes: usize, what: &str) -> Result<DeviceMemory, CudaError> {
        ctx.bind_to_thread().check(&format!("allocating {what}"))?;
        let mut addr = 0;
        // SAFETY: an allocation in the bound context; checked; freed on drop.
        unsafe { sys::cuMemAlloc_v2(&mut addr, bytes.max(1)) }.check(&format!("allocating {what}"))?;
        Ok(DeviceMemory { addr, ctx: ctx.clone() })
    }
}

impl Drop for DeviceMemory {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        // SAFETY: allocated by cuMemAlloc_v2; freed once.
        unsafe { sys::cuMemFree_v2(self.addr) };
    }
}

/// Pinned host memory mapped into every context (freed on drop).
pub struct Pinned {
    /// Its host address.
    pub host: *mut c_void,
    /// Its address in every context (unified addressing).
    pub device: sys::CUdeviceptr,
    /// Its size.
    pub bytes: usize,
    ctx: Arc<CudaContext>,
}

// SAFETY: plain memory; the engine orders accesses with stream waits and barriers.
unsafe impl Send for Pinned {}
// SAFETY: as above.
unsafe impl Sync for Pinned {}

impl Pinned {
    /// Allocates `bytes` in `ctx`.
    pub fn new(ctx: &Arc<CudaContext>, bytes: usize, what: &str) -> Result<Pinned, CudaError> {
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
