//! Atomic views of plain arrays: a kernel owns its arrays between exchanges and lets
//! rayon threads update them with atomics during a step.

use std::sync::atomic::{AtomicU32, AtomicU64};

/// `values` as atomics, for the duration of the borrow.
pub fn as_atomic_u32(values: &mut [u32]) -> &[AtomicU32] {
    // SAFETY: AtomicU32 has the size and alignment of u32, and the exclusive borrow
    // means no plain access overlaps the atomic ones.
    unsafe { &*(values as *mut [u32] as *const [AtomicU32]) }
}

/// `values`' bits as atomics, for the duration of the borrow.
pub fn as_atomic_f32(values: &mut [f32]) -> &[AtomicU32] {
    // SAFETY: as above; f32 has the size and alignment of u32.
    unsafe { &*(values as *mut [f32] as *const [AtomicU32]) }
}

/// `values`' bits as atomics, for the duration of the borrow.
pub fn as_atomic_f64(values: &mut [f64]) -> &[AtomicU64] {
    // SAFETY: as below; f64 has the size and alignment of u64.
    unsafe { &*(values as *mut [f64] as *const [AtomicU64]) }
}

/// `values` as atomics, for the duration of the borrow.
pub fn as_atomic_u64(values: &mut [u64]) -> &[AtomicU64] {
    // SAFETY: as above; AtomicU64 has the size and alignment of u64 on every target
    // with 64-bit atomics, which rayon's platforms are.
    unsafe { &*(values as *mut [u64] as *const [AtomicU64]) }
}
