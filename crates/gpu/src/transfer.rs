//! Copies between host memory and a GPU through two pinned staging buffers per GPU
//! (per stream that copies: the GPU's own, and each messaging proxy's).
//!
//! The driver's pageable path moves about 2–5 GB/s: it stages through its own small
//! buffers on one thread, and a fresh destination faults its pages in as the copy goes.
//! Here each chunk's host side is copied by every core (rayon) while the DMA engine
//! moves the other chunk, so both directions run near the slower of the link and the
//! host's memory bandwidth. Small copies take the driver's path.

use std::sync::{Arc, Mutex, MutexGuard};

use bytemuck::Pod;
use cudarc::driver::{sys, CudaContext, CudaEvent, CudaSlice, CudaStream, DeviceRepr};
use rayon::prelude::*;

use crate::driver::{ptr, Pinned};
use crate::{Check, Gpu, Result};

/// Bytes per staging buffer (two per GPU, allocated on first use).
const CHUNK: usize = 32 << 20;
/// Copies smaller than this take the driver's pageable path.
const DIRECT_BELOW: usize = 2 << 20;
/// The host side of a chunk is copied in pieces of this many bytes, one rayon task each.
const PIECE: usize = 1 << 20;

/// A GPU's staging buffers and the copy each one last fed (waited for before reuse).
pub(crate) struct Staging {
    bufs: [Pinned; 2],
    in_flight: [Option<CudaEvent>; 2],
}

/// The staging of one GPU's stream, allocated on first use.
#[derive(Default)]
pub(crate) struct StagingSlot(Mutex<Option<Staging>>);

/// A zeroed host array for `len` downloaded elements. Its pages are fresh (calloc maps
/// them untouched), so faulting them in as the copy writes costs more than the copy;
/// asking for huge pages first makes that 512 times fewer faults where the kernel has them.
pub(crate) fn host_array<T: Pod>(len: usize) -> Vec<T> {
    const HUGE: usize = 2 << 20;
    let mut v: Vec<T> = bytemuck::zeroed_vec(len);
    let bytes = std::mem::size_of_val(v.as_slice());
    if bytes >= 2 * HUGE {
        let start = v.as_mut_ptr() as usize;
        let aligned = start.next_multiple_of(HUGE);
        let len = (start + bytes - aligned) / HUGE * HUGE;
        // SAFETY: advice on whole pages inside this allocation; it changes no contents
        // (an error only means no huge pages, which the copy does not need).
        unsafe { libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE) };
    }
    v
}

fn par_copy(src: &[u8], dst: &mut [u8]) {
    dst.par_chunks_mut(PIECE).zip(src.par_chunks(PIECE)).for_each(|(d, s)| d.copy_from_slice(s));
}

/// An event after the copies queued on `stream` so far.
fn marker(stream: &CudaStream, what: &str) -> Result<CudaEvent> {
    stream.record_event(Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)).check(what)
}

impl StagingSlot {
    fn staging(&self, ctx: &Arc<CudaContext>) -> Result<MutexGuard<'_, Option<Staging>>> {
        let mut slot = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if slot.is_none() {
            let bufs = [Pinned::new(ctx, CHUNK, "a staging buffer")?, Pinned::new(ctx, CHUNK, "a staging buffer")?];
            *slot = Some(Staging { bufs, in_flight: [None, None] });
        }
        Ok(slot)
    }

    /// Copies `src` to device address `dst` in `stream`'s order; returns once `src` may
    /// be reused (the last chunk may still be in flight).
    pub(crate) fn write_bytes(&self, stream: &CudaStream, dst: u64, src: &[u8], what: &str) -> Result<()> {
        stream.context().bind_to_thread().check(what)?;
        let cu = stream.cu_stream();
        if src.len() < DIRECT_BELOW {
            // SAFETY: `dst` holds `src.len()` bytes; a pageable source is copied out
            // before the call returns.
            return unsafe { sys::cuMemcpyHtoDAsync_v2(dst, src.as_ptr().cast(), src.len(), cu) }.check(what);
        }
        let mut guard = self.staging(stream.context())?;
        let st = guard.as_mut().expect("allocated above");
        for (i, chunk) in src.chunks(CHUNK).enumerate() {
            let b = i % 2;
            if let Some(e) = st.in_flight[b].take() {
                e.synchronize().check(what)?;
            }
            // SAFETY: the buffer holds CHUNK bytes and no copy reads it (waited above).
            let buf = unsafe { std::slice::from_raw_parts_mut(st.bufs[b].host.cast::<u8>(), chunk.len()) };
            par_copy(chunk, buf);
            // SAFETY: pinned source of `chunk.len()` bytes, device range inside `dst`.
            unsafe { sys::cuMemcpyHtoDAsync_v2(dst + (i * CHUNK) as u64, st.bufs[b].host, chunk.len(), cu) }.check(what)?;
            st.in_flight[b] = Some(marker(stream, what)?);
        }
        Ok(())
    }

    /// Copies `dst.len()` bytes from device address `src` into `dst`, after the work
    /// already queued on `stream`.
    pub(crate) fn read_bytes(&self, stream: &CudaStream, src: u64, dst: &mut [u8], what: &str) -> Result<()> {
        stream.context().bind_to_thread().check(what)?;
        let cu = stream.cu_stream();
        if dst.len() < DIRECT_BELOW {
            // SAFETY: `src` holds `dst.len()` bytes; a pageable copy returns when done.
            return unsafe { sys::cuMemcpyDtoHAsync_v2(dst.as_mut_ptr().cast(), src, dst.len(), cu) }.check(what);
        }
        let mut guard = self.staging(stream.context())?;
        let st = guard.as_mut().expect("allocated above");
        let chunks: Vec<&mut [u8]> = dst.chunks_mut(CHUNK).collect();
        let issue = |st: &mut Staging, i: usize, len: usize| -> Result<()> {
            let b = i % 2;
            if let Some(e) = st.in_flight[b].take() {
                e.synchronize().check(what)?;
            }
            // SAFETY: the buffer holds CHUNK ≥ len bytes and nothing else uses it now.
            unsafe { sys::cuMemcpyDtoHAsync_v2(st.bufs[b].host, src + (i * CHUNK) as u64, len, cu) }.check(what)?;
            st.in_flight[b] = Some(marker(stream, what)?);
            Ok(())
        };
        let lens: Vec<usize> = chunks.iter().map(|c| c.len()).collect();
        issue(st, 0, lens[0])?;
        for (i, out) in chunks.into_iter().enumerate() {
            if i + 1 < lens.len() {
                issue(st, i + 1, lens[i + 1])?;
            }
            let b = i % 2;
            if let Some(e) = st.in_flight[b].take() {
                e.synchronize().check(what)?;
            }
            // SAFETY: the copy into this buffer finished (waited above).
            let buf = unsafe { std::slice::from_raw_parts(st.bufs[b].host.cast::<u8>(), out.len()) };
            par_copy(buf, out);
        }
        Ok(())
    }
}

impl Gpu {
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
        self.write_bytes(ptr(&dst, self), bytemuck::cast_slice(data), &format!("uploading {what}"))?;
        Ok(dst)
    }

    /// The first `len` elements of `data`.
    pub(crate) fn download<T: DeviceRepr + Pod>(&self, data: &CudaSlice<T>, len: usize, what: &str) -> Result<Vec<T>> {
        let mut v = host_array(len.min(data.len()));
        self.download_into(data, 0, &mut v, what)?;
        Ok(v)
    }

    /// Elements `from..from + out.len()` of `data`, into `out`.
    pub(crate) fn download_into<T: DeviceRepr + Pod>(&self, data: &CudaSlice<T>, from: usize, out: &mut [T], what: &str) -> Result<()> {
        assert!(from + out.len() <= data.len());
        let src = ptr(data, self) + (from * std::mem::size_of::<T>()) as u64;
        self.read_bytes(src, bytemuck::cast_slice_mut(out), &format!("downloading {what}"))
    }
}
