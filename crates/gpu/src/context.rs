//! One GPU as the engines use it: its context, its stream, its compiled kernels, and
//! the buffers every runner needs (zeroed arrays, uploads and downloads through the
//! staging of [`crate::transfer`], control blocks).

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Instant;

use bytemuck::Pod;
use chatty_algo::tuning::Tuning;
use std::sync::atomic::Ordering::Relaxed;

use chatty_comm::cuda::{addr, Check, Dev};
use cudarc::driver::{sys, CudaContext, CudaFunction, CudaSlice, CudaStream, DeviceRepr, LaunchConfig, ValidAsZeroBits};

use crate::kernels::FUNCTIONS;
use crate::transfer::{host_array, ReadyArray};
use crate::{GpuError, Result};

/// Threads per block of the kernels.
pub(crate) const BLOCK: u32 = 256;
/// Blocks per SM of the persistent kernels: a grid barrier costs an atomic per block,
/// and on road graphs one block per SM made levels cheapest (BFS on moscow 5.1 µs a
/// level against 5.3 with two and 6.6 with four; scripts/gpu_tune.sh, docs/benchmarks/gpu.md).
pub(crate) const PERSISTENT_BLOCKS_PER_SM: u32 = 1;

/// One GPU: context, stream, compiled kernels.
pub struct Gpu {
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    pub(crate) functions: HashMap<&'static str, CudaFunction>,
    pub(crate) name: String,
    pub(crate) grid: u32,
    pub(crate) sms: u32,
    pub(crate) l2_bytes: u64,
    pub(crate) free_at_open: u64,
    pub(crate) staging: crate::transfer::StagingSlot,
    /// Seconds NVRTC took to compile the kernels for this open (0 when this process
    /// had compiled them already).
    pub compile_seconds: f64,
    /// Seconds this open took: the driver's start, the context, the stream, the
    /// kernels (`compile_seconds` included).
    pub open_seconds: f64,
}

impl Gpu {
    /// Number of CUDA devices (0 without a driver).
    pub fn count() -> usize {
        // SAFETY: only probes whether the shared library can be opened.
        if !unsafe { sys::is_culib_present() } {
            return 0;
        }
        CudaContext::device_count().map_or(0, |c| c.max(0) as usize)
    }

    /// Opens device `ordinal` and compiles the kernels for its architecture.
    pub fn open(ordinal: usize) -> Result<Gpu> {
        let opening = Instant::now();
        // SAFETY: only probes whether the shared library can be opened.
        if !unsafe { sys::is_culib_present() } {
            return Err(GpuError::NoDriver);
        }
        let count = CudaContext::device_count().check("counting devices")?;
        if ordinal >= count.max(0) as usize {
            return Err(GpuError::NoSuchDevice { ordinal, count: count.max(0) as usize });
        }
        let ctx = chatty_comm::cuda::primary_context(ordinal).check("creating a context")?;
        // One stream, in order: cudarc's per-buffer event tracking is not needed.
        // SAFETY: no other stream of this context touches our buffers.
        unsafe { ctx.disable_event_tracking() };
        // A non-blocking stream of our own: the legacy NULL stream adds implicit
        // synchronisation (it was the suspect when peer copies lost to peer stores).
        let stream = ctx.new_stream().check("creating a stream")?;
        // cudarc allocates from the stream-ordered pool, which by default returns its
        // memory to the OS at every synchronisation: each trial would map its arrays
        // afresh. Keep it. The context outlives engines, so what an earlier engine of
        // this process freed into the pool goes back first (only unused memory is
        // trimmed): the free memory measured below is then the device's.
        // SAFETY: plain driver calls on this context's device; results are checked.
        unsafe {
            let mut pool = std::ptr::null_mut();
            sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device()).result().check("getting the memory pool")?;
            sys::cuMemPoolTrimTo(pool, 0).result().check("trimming the memory pool")?;
            let mut keep = u64::MAX;
            sys::cuMemPoolSetAttribute(pool, sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, (&mut keep as *mut u64).cast())
                .result()
                .check("setting the pool's release threshold")?;
        }
        let (major, minor) = ctx.compute_capability().check("querying the compute capability")?;
        let sms = ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).check("querying SMs")?;
        let l2_bytes = ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE).check("querying the L2 size")?;
        let name = ctx.name().check("querying the device name")?;
        let (ptx, compile_seconds) = crate::kernels::kernels_for(major, minor)?;
        let module = ctx.load_module(ptx).check("loading the kernels")?;
        let mut functions = HashMap::new();
        for f in FUNCTIONS {
            functions.insert(*f, module.load_function(f).check(&format!("loading kernel {f}"))?);
        }
        let (free, _) = ctx.mem_get_info().check("querying memory")?;
        Ok(Gpu {
            ctx,
            stream,
            functions,
            name: format!("{name} (sm_{major}{minor}, GPU {ordinal})"),
            grid: sms as u32 * 8,
            sms: sms as u32,
            l2_bytes: l2_bytes.max(0) as u64,
            free_at_open: free as u64,
            staging: Default::default(),
            compile_seconds,
            open_seconds: opening.elapsed().as_secs_f64(),
        })
    }

    /// The device's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Bytes of device memory free now.
    pub fn free_bytes(&self) -> Result<u64> {
        Ok(self.ctx.mem_get_info().check("querying memory")?.0 as u64)
    }

    pub(crate) fn f(&self, name: &str) -> &CudaFunction {
        &self.functions[name]
    }

    /// The grid of a cooperative (persistent) kernel: `PERSISTENT_BLOCKS_PER_SM`
    /// blocks per SM, or fewer if fewer fit. A grid barrier costs an atomic per block,
    /// so fewer blocks make each level cheaper; `CHATTY_PERSISTENT_BLOCKS_PER_SM`
    /// overrides it for tuning runs.
    pub(crate) fn cooperative_cfg(&self, f: &CudaFunction) -> Result<LaunchConfig> {
        self.cooperative_cfg_with(f, PERSISTENT_BLOCKS_PER_SM)
    }

    /// As [`Gpu::cooperative_cfg`], with `blocks_per_sm` blocks per SM by default.
    pub(crate) fn cooperative_cfg_with(&self, f: &CudaFunction, blocks_per_sm: u32) -> Result<LaunchConfig> {
        let fit = f.occupancy_max_active_blocks_per_multiprocessor(BLOCK, 0, None).check("querying occupancy")?;
        let wanted = Tuning::get().persistent_blocks_per_sm.unwrap_or(blocks_per_sm);
        Ok(LaunchConfig { grid_dim: (self.sms * wanted.min(fit).max(1), 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 })
    }

    pub(crate) fn cfg(&self) -> LaunchConfig {
        LaunchConfig { grid_dim: (self.grid, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 }
    }

    /// Bytes of device memory in use since [`Gpu::open`] (ours, as the driver sees it).
    pub(crate) fn used_bytes(&self) -> u64 {
        self.ctx.mem_get_info().map_or(0, |(free, _)| self.free_at_open.saturating_sub(free as u64))
    }

    pub(crate) fn zeros<T: DeviceRepr + ValidAsZeroBits>(&self, len: usize, what: &str) -> Result<CudaSlice<T>> {
        Ok(self.stream.alloc_zeros(len.max(1)).check(&format!("allocating {what}"))?)
    }

    pub(crate) fn set<T: DeviceRepr>(&self, a: &mut CudaSlice<T>, index: usize, value: T, what: &str) -> Result<()> {
        Ok(self.stream.memcpy_htod(&[value], &mut a.slice_mut(index..index + 1)).check(&format!("setting {what}"))?)
    }

    pub(crate) fn timer(&self) -> Result<cudarc::driver::CudaEvent> {
        Ok(self.stream.record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT)).check("recording an event")?)
    }
    /// A control block on the device holding `c` (a kernel's `C*` parameter).
    pub(crate) fn control<C: Pod>(&self, c: &C) -> Result<ControlBlock<C>> {
        Ok(ControlBlock { bytes: self.upload(bytemuck::bytes_of(c), "a control block")?, of: PhantomData })
    }

    /// Sets the control block to `c`, in the stream's order.
    pub(crate) fn write_control<C: Pod>(&self, ctl: &ControlBlock<C>, c: &C) -> Result<()> {
        self.write_bytes(addr(&ctl.bytes), bytemuck::bytes_of(c), "setting a control block")
    }

    /// The control block's contents now (waits for the stream).
    pub(crate) fn read_control<C: Pod>(&self, ctl: &ControlBlock<C>) -> Result<C> {
        let bytes = self.stream.clone_dtoh(&ctl.bytes).check("reading the control block")?;
        Ok(bytemuck::pod_read_unaligned(&bytes[..std::mem::size_of::<C>()]))
    }
}

impl Gpu {
    /// Seconds this GPU's uploads have spent copying into its staging so far.
    pub(crate) fn host_copy_seconds(&self) -> f64 {
        self.staging.host_copy_nanos.load(Relaxed) as f64 / 1e9
    }

    /// Copies `src` to device address `dst` on the GPU's stream (see [`StagingSlot::write_bytes`]).
    pub(crate) fn write_bytes(&self, dst: u64, src: &[u8], what: &str) -> Result<()> {
        self.staging.write_bytes(&self.stream, dst, src, what)
    }

    /// Copies from device address `src` into `dst` on the GPU's stream (see [`StagingSlot::read_bytes`]).
    pub(crate) fn read_bytes(&self, src: u64, dst: &mut [u8], what: &str) -> Result<()> {
        self.staging.read_bytes(&self.stream, src, dst, what)
    }

    /// A new device array holding `data`.
    pub(crate) fn upload<T: DeviceRepr + Pod>(&self, data: &[T], what: &str) -> Result<CudaSlice<T>> {
        // SAFETY: every element is written by the copy below before any kernel reads it
        // (an empty array gets one element that no kernel reads).
        let dst = unsafe { self.stream.alloc::<T>(data.len().max(1)) }.check(&format!("allocating {what}"))?;
        self.write_bytes(addr(&dst), bytemuck::cast_slice(data), &format!("uploading {what}"))?;
        Ok(dst)
    }

    /// The first `len` elements of `data`.
    pub(crate) fn download<T: DeviceRepr + Pod>(&self, data: &CudaSlice<T>, len: usize, what: &str) -> Result<Vec<T>> {
        let mut v = host_array(len.min(data.len()));
        self.download_into(data, 0, &mut v, what)?;
        Ok(v)
    }

    /// [`Gpu::download`] into the array `ready` made while the kernels ran.
    pub(crate) fn download_answer<T: DeviceRepr + Pod>(
        &self,
        data: &CudaSlice<T>,
        len: usize,
        ready: ReadyArray,
        what: &str,
    ) -> Result<Vec<T>> {
        let mut v = ready.take(len.min(data.len()));
        self.download_into(data, 0, &mut v, what)?;
        Ok(v)
    }

    /// Elements `from..from + out.len()` of `data`, into `out`.
    pub(crate) fn download_into<T: DeviceRepr + Pod>(&self, data: &CudaSlice<T>, from: usize, out: &mut [T], what: &str) -> Result<()> {
        assert!(from + out.len() <= data.len());
        let src = addr(data) + (from * std::mem::size_of::<T>()) as u64;
        self.read_bytes(src, bytemuck::cast_slice_mut(out), &format!("downloading {what}"))
    }
}

/// A control block: one of the kernels' C structs (`C`) in device memory.
pub(crate) struct ControlBlock<C> {
    bytes: CudaSlice<u8>,
    of: PhantomData<C>,
}

impl<C> From<&ControlBlock<C>> for Dev<C> {
    fn from(c: &ControlBlock<C>) -> Dev<C> {
        Dev::at(Dev::from(&c.bytes).addr())
    }
}
