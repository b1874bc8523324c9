//! Arrays that are either owned or borrowed from a memory-mapped `.cgr` file.

use std::ops::Deref;
use std::sync::Arc;

use bytemuck::Pod;
use memmap2::Mmap;

/// A read-only array of `T`, owned (built in memory) or mapped (loaded from a `.cgr`).
///
/// Mapping lets a multi-gigabyte graph load in milliseconds with no parsing: the
/// kernels read the page cache directly. The slice is resolved once at construction,
/// so `deref` is a pointer and a length: kernels index it per edge.
pub struct Buf<T: Pod> {
    ptr: *const T,
    len: usize,
    _owner: Owner<T>,
}

/// What keeps the memory behind `ptr` alive: held, never read.
#[allow(dead_code)]
enum Owner<T> {
    Vec(Vec<T>),
    Map(Arc<Mmap>),
}

// SAFETY: a Buf is an immutable view of memory its `_owner` keeps alive and never
// mutates; Vec<T> and Arc<Mmap> are themselves Send + Sync for Pod T.
unsafe impl<T: Pod> Send for Buf<T> {}
unsafe impl<T: Pod> Sync for Buf<T> {}

impl<T: Pod> Buf<T> {
    /// An array borrowed from `map`: `len` elements starting at byte `offset`.
    ///
    /// Panics if the range is out of bounds or misaligned; the `.cgr` loader validates
    /// both before it calls this.
    pub(crate) fn mapped(map: Arc<Mmap>, offset: usize, len: usize) -> Buf<T> {
        let bytes = len.checked_mul(std::mem::size_of::<T>()).expect("section size overflows");
        let slice: &[T] = bytemuck::cast_slice(&map[offset..offset + bytes]);
        Buf { ptr: slice.as_ptr(), len, _owner: Owner::Map(map) }
    }
}

impl<T: Pod> From<Vec<T>> for Buf<T> {
    fn from(v: Vec<T>) -> Buf<T> {
        // Moving the Vec into `owner` does not move its heap buffer.
        Buf { ptr: v.as_ptr(), len: v.len(), _owner: Owner::Vec(v) }
    }
}

impl<T: Pod> Deref for Buf<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        // SAFETY: ptr/len describe memory owned by `self._owner` (see the constructors).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: Pod + std::fmt::Debug> std::fmt::Debug for Buf<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter().take(16)).finish()
    }
}
