//! Arrays that are either owned or borrowed from a memory-mapped `.cgr` file.

use std::ops::Deref;
use std::sync::Arc;

use bytemuck::Pod;
use memmap2::Mmap;

/// A read-only array of `T`, owned (built in memory) or mapped (loaded from a `.cgr`).
///
/// Mapping lets a multi-gigabyte graph load in milliseconds with no parsing: the
/// kernels read the page cache directly.
pub struct Buf<T: Pod> {
    inner: Inner<T>,
}

enum Inner<T> {
    Owned(Vec<T>),
    Mapped { map: Arc<Mmap>, offset: usize, len: usize },
}

impl<T: Pod> Buf<T> {
    /// An array borrowed from `map`: `len` elements starting at byte `offset`.
    ///
    /// Panics if the range is out of bounds or misaligned; the `.cgr` loader validates
    /// both before it calls this.
    pub(crate) fn mapped(map: Arc<Mmap>, offset: usize, len: usize) -> Buf<T> {
        let bytes = len.checked_mul(std::mem::size_of::<T>()).expect("section size overflows");
        assert!(offset + bytes <= map.len(), "section beyond the end of the map");
        assert_eq!((map.as_ptr() as usize + offset) % std::mem::align_of::<T>(), 0, "misaligned section");
        Buf { inner: Inner::Mapped { map, offset, len } }
    }

    /// Takes ownership of `vec`, or copies a mapped array into memory.
    pub fn into_vec(self) -> Vec<T> {
        match self.inner {
            Inner::Owned(v) => v,
            Inner::Mapped { .. } => self.deref().to_vec(),
        }
    }
}

impl<T: Pod> From<Vec<T>> for Buf<T> {
    fn from(v: Vec<T>) -> Buf<T> {
        Buf { inner: Inner::Owned(v) }
    }
}

impl<T: Pod> Deref for Buf<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match &self.inner {
            Inner::Owned(v) => v,
            Inner::Mapped { map, offset, len } => {
                let bytes = &map[*offset..*offset + len * std::mem::size_of::<T>()];
                bytemuck::cast_slice(bytes)
            }
        }
    }
}

impl<T: Pod + std::fmt::Debug> std::fmt::Debug for Buf<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter().take(16)).finish()
    }
}
