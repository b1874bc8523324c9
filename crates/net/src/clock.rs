//! One clock for every process of a host: `CLOCK_MONOTONIC` in nanoseconds, so that a
//! receiver process can subtract a sender process's timestamp.

/// Nanoseconds of `CLOCK_MONOTONIC` (never 0).
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec we pass; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64).max(1)
}
