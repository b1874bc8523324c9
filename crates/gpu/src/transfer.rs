//! Copies between host memory and a GPU through two pinned staging buffers per GPU
//! (per stream that copies: the GPU's own, and each messaging proxy's).
//!
//! The driver's pageable path moves about 2–5 GB/s: it stages through its own small
//! buffers on one thread, and a fresh destination faults its pages in as the copy goes.
//! Here each chunk's host side is copied by every core (rayon) while the DMA engine
//! moves the other chunk, so both directions run near the slower of the link and the
//! host's memory bandwidth. Small copies take the driver's path.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard};

use bytemuck::Pod;
use cudarc::driver::{sys, CudaContext, CudaEvent, CudaStream};
use rayon::prelude::*;

use chatty_comm::cuda::{Check, Pinned};

use crate::Result;

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
pub(crate) struct StagingSlot {
    staging: Mutex<Option<Staging>>,
    /// Nanoseconds its uploads spent copying into it (the host's share of an upload).
    pub(crate) host_copy_nanos: AtomicU64,
}

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

/// An answer's host array made ready on another thread while the kernels run:
/// allocated as [`host_array`] and every page faulted in, so that the download after
/// the kernels only copies. On the lent H200 host the copy out of the staging into
/// fresh pages ran at 12–16 GB/s, faults included (docs/benchmarks/wall-time.md).
pub(crate) struct ReadyArray {
    len: usize,
    made: Option<std::thread::JoinHandle<Words>>,
}

/// Answers are arrays of 4- or 8-byte elements.
enum Words {
    Four(Vec<u32>),
    Eight(Vec<u64>),
}

/// A [`host_array`] with every page faulted in, by every core.
fn faulted_in<W: Pod + Send>(len: usize) -> Vec<W> {
    let mut v: Vec<W> = host_array(len);
    let page = 4096 / std::mem::size_of::<W>();
    // One write per 4 KiB page faults it in (a huge page at its first).
    v.par_chunks_mut(PIECE / std::mem::size_of::<W>()).for_each(|c| c.iter_mut().step_by(page).for_each(|w| *w = W::zeroed()));
    v
}

impl ReadyArray {
    /// Starts making the array for `alg`'s answer on `n` vertices: 4-byte depths and
    /// labels, 8-byte distances and values.
    pub(crate) fn for_answer(alg: chatty_algo::Algorithm, n: usize) -> ReadyArray {
        use chatty_algo::Algorithm;
        ReadyArray::start(
            n,
            if matches!(alg, Algorithm::Bfs | Algorithm::Wcc | Algorithm::Kcore | Algorithm::Scc | Algorithm::Louvain) { 4 } else { 8 },
        )
    }

    /// Starts making an array of `len` elements of `elem` bytes (4 or 8).
    fn start(len: usize, elem: usize) -> ReadyArray {
        let made = std::thread::Builder::new()
            .name("answer pages".into())
            .spawn(move || match elem {
                4 => Words::Four(faulted_in(len)),
                _ => Words::Eight(faulted_in(len)),
            })
            .ok();
        ReadyArray { len, made }
    }

    /// The array for `len` elements of T: the one made ready if it fits, else a fresh one.
    pub(crate) fn take<T: Pod>(mut self, len: usize) -> Vec<T> {
        let made = self.made.take().filter(|_| len == self.len).and_then(|t| t.join().ok());
        let cast = match made {
            Some(Words::Four(v)) => bytemuck::allocation::try_cast_vec(v).ok(),
            Some(Words::Eight(v)) => bytemuck::allocation::try_cast_vec(v).ok(),
            None => None,
        };
        cast.unwrap_or_else(|| host_array(len))
    }
}

fn par_copy(src: &[u8], dst: &mut [u8]) {
    dst.par_chunks_mut(PIECE).zip(src.par_chunks(PIECE)).for_each(|(d, s)| d.copy_from_slice(s));
}

/// An event after the copies queued on `stream` so far.
fn marker(stream: &CudaStream, what: &str) -> Result<CudaEvent> {
    Ok(stream.record_event(Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)).check(what)?)
}

impl StagingSlot {
    fn staging(&self, ctx: &Arc<CudaContext>) -> Result<MutexGuard<'_, Option<Staging>>> {
        let mut slot = self.staging.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
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
            return Ok(unsafe { sys::cuMemcpyHtoDAsync_v2(dst, src.as_ptr().cast(), src.len(), cu) }.check(what)?);
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
            let copying = std::time::Instant::now();
            par_copy(chunk, buf);
            self.host_copy_nanos.fetch_add(copying.elapsed().as_nanos() as u64, Relaxed);
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
            return Ok(unsafe { sys::cuMemcpyDtoHAsync_v2(dst.as_mut_ptr().cast(), src, dst.len(), cu) }.check(what)?);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ready_array_is_zeroed_and_sized_or_a_fresh_one_is() {
        let n = (3 << 20) + 5;
        let words: Vec<u32> = ReadyArray::start(n, 4).take(n);
        assert!(words.len() == n && words.iter().all(|&w| w == 0));
        let doubles: Vec<f64> = ReadyArray::start(n, 8).take(n);
        assert!(doubles.len() == n && doubles.iter().all(|&d| d == 0.0));
        // Another length or element size than it was made for: a fresh array.
        let other: Vec<u64> = ReadyArray::start(n, 4).take(n - 1);
        assert!(other.len() == n - 1 && other.iter().all(|&w| w == 0));
        let wider: Vec<u64> = ReadyArray::start(n, 4).take(n);
        assert_eq!(wider.len(), n);
    }
}
