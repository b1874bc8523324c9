//! Running a kernel on the thread pool: on a worker, and how idle threads wait.
//!
//! Called from outside the pool (the CLI's main thread), each parallel loop of a
//! kernel is sent into the pool and the caller sleeps until it ends: a wake-up of a
//! worker and one of the caller per loop. Run on a worker, the loops start inside the
//! pool; the CPU and MPI engines both do (on the 16-core host, within the noise of
//! calling from outside).
//!
//! A rayon worker with nothing to do sleeps after about 32 rounds of looking for work
//! (tens of microseconds); OpenMP's threads (GAPBS's) look for some milliseconds
//! first. [`WaitPolicy::Active`] keeps the workers looking through a kernel. It was
//! faster on the 2-core development VM (PageRank on cnr-2000 at 2 threads, 1.23-1.29
//! against 1.13-1.16 ms an iteration) and slower on the 16-core host at 16 threads
//! (cnr-2000's 2-4 ms kernels, up to 4x), so it is not the default.
//! `docs/benchmarks/cpu.md`, session 26, has the measurements.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long a worker finds no work before it goes back to rayon's sleep: libgomp's
/// default spin (300,000 rounds of `pause`) is a few milliseconds.
const SPIN: Duration = Duration::from_millis(2);

/// How idle threads wait during a kernel, from `$CHATTY_WAIT_POLICY` (OpenMP's
/// `OMP_WAIT_POLICY` names; [`crate::tuning::Tuning`] reads it once): unset, a region's
/// barriers spin while waits end soon, then sleep, and workers sleep between parallel
/// loops as rayon's do; `active`,
/// workers also look for work for up to [`SPIN`]; `passive`, nothing spins, for
/// machines shared with other work. An error when a tuning variable is not understood.
pub fn wait_policy() -> crate::Result<WaitPolicy> {
    let tuning = crate::tuning::Tuning::get();
    tuning.check()?;
    Ok(tuning.wait_policy)
}

pub use crate::tuning::WaitPolicy;

/// Whether the waiting threads of a pool of `threads` may spin: not under the passive
/// policy, nor when they outnumber the cores.
pub(crate) fn may_spin(threads: usize) -> bool {
    fits_cores(threads) && wait_policy().map_or(true, |w| w != WaitPolicy::Passive)
}

/// Whether `threads` spinning threads leave a core to each: where they outnumber the
/// cores, a spinning waiter holds the core that a late arrival needs.
fn fits_cores(threads: usize) -> bool {
    // Asked once: on Linux it reads the cgroup's CPU quota from files, and BC starts a
    // region per source.
    static CORES: OnceLock<usize> = OnceLock::new();
    threads <= *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// Runs `op` on a worker of the current rayon pool, so its parallel loops start on
/// that worker rather than from outside the pool, where each one woke a worker and
/// then the caller. Under [`WaitPolicy::Active`], with no more workers than cores,
/// every other worker looks for work, never sleeping, until `op` returns or it has found none for
/// [`SPIN`]. Called from a worker (a test's `install`, a kernel within a kernel), it
/// runs `op` as it is.
pub fn run_on_pool<R: Send>(wait: WaitPolicy, op: impl FnOnce() -> R + Send) -> R {
    if rayon::current_thread_index().is_some() {
        return op();
    }
    if wait != WaitPolicy::Active || !fits_cores(rayon::current_num_threads()) {
        return rayon::scope(|_| op());
    }
    let done = AtomicBool::new(false);
    let op = Mutex::new(Some(op));
    // One call per worker, queued to every worker before any runs: a worker takes its
    // call before any other work, so its loop is at the bottom of its stack (a loop
    // begun above a job it was waiting in would hold that job until `op` ended). The
    // caller sleeps meanwhile: spinning, it would take a core from the workers.
    let mut results = rayon::broadcast(|ctx| {
        if ctx.index() != 0 {
            look_for_work(&done);
            return None;
        }
        let _done = Done(&done);
        let op = op.lock().unwrap_or_else(|e| e.into_inner()).take().expect("worker 0 runs op once");
        Some(op())
    });
    results.swap_remove(0).expect("worker 0 ran op")
}

/// Sets the flag when dropped, so the workers stop looking when `op` panics too.
struct Done<'a>(&'a AtomicBool);

impl Drop for Done<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Runs whatever work the pool has until `done`, or until none came for [`SPIN`].
fn look_for_work(done: &AtomicBool) {
    let mut last_work = Instant::now();
    while !done.load(Ordering::Relaxed) {
        match rayon::yield_now() {
            Some(rayon::Yield::Executed) => last_work = Instant::now(),
            _ if last_work.elapsed() > SPIN => return,
            _ => std::hint::spin_loop(),
        }
    }
}

#[cfg(test)]
mod tests {
    use rayon::prelude::*;

    use super::*;

    #[test]
    fn runs_the_work_and_returns_its_result() {
        for policy in [WaitPolicy::Active, WaitPolicy::Barriers, WaitPolicy::Passive] {
            for n in [0u64, 1, 1000, 100_000] {
                assert_eq!(run_on_pool(policy, || (0..n).into_par_iter().sum::<u64>()), n * n.saturating_sub(1) / 2);
            }
            // From inside the pool: as it is.
            assert_eq!(rayon::scope(|_| run_on_pool(policy, || (0..10u64).into_par_iter().sum::<u64>())), 45);
            // From outside: on a worker.
            assert!(run_on_pool(policy, || rayon::current_thread_index().is_some()));
        }
    }

    /// Kernels started at once from several threads outside the pool (tests, Python
    /// threads), each with parallel loops and regions (every worker at a barrier):
    /// a worker's loop may begin above another's job, which must not hang any of them.
    #[test]
    fn kernels_started_together_all_finish() {
        let kernel = |seed: u64| {
            (0..20u64)
                .map(|round| {
                    let sum: u64 = (0..10_000u64).into_par_iter().map(|x| x ^ seed ^ round).sum();
                    let members = crate::region::run(|member| {
                        (0..10).for_each(|_| member.wait());
                        member.index()
                    });
                    sum + members[0] as u64
                })
                .sum::<u64>()
        };
        let expected: Vec<u64> = (0..6).map(kernel).collect();
        let got: Vec<u64> = std::thread::scope(|s| {
            let runs: Vec<_> = (0..6u64).map(|seed| s.spawn(move || run_on_pool(WaitPolicy::Active, || kernel(seed)))).collect();
            runs.into_iter().map(|r| r.join().unwrap()).collect()
        });
        assert_eq!(got, expected);
    }

    #[test]
    fn a_panic_reaches_the_caller_and_the_pool_runs_on() {
        let caught = std::panic::catch_unwind(|| run_on_pool(WaitPolicy::Active, || panic!("in op")));
        assert!(caught.is_err());
        assert_eq!(run_on_pool(WaitPolicy::Active, || (0..100u64).into_par_iter().sum::<u64>()), 4950);
    }
}
