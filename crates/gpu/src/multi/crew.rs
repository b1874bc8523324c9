//! Who drives the GPUs: one host thread per GPU (the default, as the ChattyGraph paper
//! prescribes) or one thread for all of them (`--control single`, the paper's
//! baseline), behind one interface, so every kernel is written once as a sequence of
//! steps and each step ends with every GPU done (a barrier).
//!
//! Nothing here may hang: stream waits poll with a deadline (the watchdog) and give
//! up when another GPU has failed, and a worker that never comes back (stuck inside a
//! driver call) ends the process with a message after a grace period.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cudarc::driver::{sys, CudaContext, CudaStream};

use crate::{GpuError, Result};
use chatty_comm::cuda::Check;

/// How the host drives the GPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// One host thread per GPU.
    Threads,
    /// One thread issues every GPU's work in turn.
    Single,
}

impl Control {
    /// `threads` or `single`.
    pub fn name(self) -> &'static str {
        match self {
            Control::Threads => "threads",
            Control::Single => "single",
        }
    }

    /// Both, as `--control` lists them.
    pub const ALL: [Control; 2] = [Control::Threads, Control::Single];
}

type Job<'a> = dyn Fn(usize) -> Result<()> + Sync + 'a;

/// A job's address with its lifetime erased; valid while `Crew::each` waits for it.
#[derive(Clone, Copy)]
struct JobPtr(*const Job<'static>);
// SAFETY: the pointee is Sync and outlives every use (each() blocks until done).
unsafe impl Send for JobPtr {}

struct Shared {
    epoch: AtomicU64,
    job: Mutex<Option<JobPtr>>,
    pending: AtomicUsize,
    errors: Mutex<Vec<(usize, GpuError)>>,
    quit: AtomicBool,
    /// Set when a GPU failed: the others stop waiting for it.
    abort: AtomicBool,
    /// Deadline of the current step, as nanoseconds after `start`.
    deadline_ns: AtomicU64,
    start: Instant,
}

/// The GPUs' drivers.
pub(crate) struct Crew {
    control: Control,
    ctxs: Vec<Arc<CudaContext>>,
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    watchdog: Duration,
}

/// Time a worker stuck in a driver call gets after the deadline before the process
/// ends.
const GRACE: Duration = Duration::from_secs(10);

impl Crew {
    pub fn new(control: Control, ctxs: Vec<Arc<CudaContext>>, watchdog: Duration) -> Result<Crew> {
        let shared = Arc::new(Shared {
            epoch: AtomicU64::new(0),
            job: Mutex::new(None),
            pending: AtomicUsize::new(0),
            errors: Mutex::new(Vec::new()),
            quit: AtomicBool::new(false),
            abort: AtomicBool::new(false),
            deadline_ns: AtomicU64::new(u64::MAX),
            start: Instant::now(),
        });
        let mut workers = Vec::new();
        if control == Control::Threads {
            for (g, ctx) in ctxs.iter().enumerate() {
                let (shared, ctx) = (shared.clone(), ctx.clone());
                let spawned = std::thread::Builder::new().name(format!("gpu{g}")).spawn(move || worker(g, &ctx, &shared));
                workers.push(spawned.map_err(|e| GpuError::Thread(format!("cannot start the thread of GPU {g}: {e}")))?);
            }
        }
        Ok(Crew { control, ctxs, shared, workers, watchdog })
    }

    pub fn control(&self) -> Control {
        self.control
    }

    /// Runs `issue` then `wait` for every GPU and returns when all are done: with
    /// threads each GPU's thread runs both; with one thread, every GPU's `issue` runs
    /// before any `wait`, so the GPUs still overlap. `nccl` wraps the single thread's
    /// issues in one NCCL group, as NCCL requires when one thread drives several ranks.
    pub fn each(&self, nccl: bool, issue: &Job, wait: &Job) -> Result<()> {
        self.shared.abort.store(false, Ordering::SeqCst);
        let deadline = self.shared.start.elapsed() + self.watchdog;
        self.shared.deadline_ns.store(deadline.as_nanos() as u64, Ordering::SeqCst);
        match self.control {
            Control::Single => {
                let bind = |g: usize| self.ctxs[g].bind_to_thread().check(&format!("binding GPU {g}")).map_err(GpuError::from);
                let issue_all = || (0..self.ctxs.len()).try_for_each(|g| bind(g).and_then(|_| issue(g)).map_err(|e| on_gpu(g, e)));
                if nccl {
                    chatty_comm::nccl::Communicators::group(issue_all)?;
                } else {
                    issue_all()?;
                }
                (0..self.ctxs.len()).try_for_each(|g| bind(g).and_then(|_| wait(g)).map_err(|e| on_gpu(g, e)))
            }
            Control::Threads => {
                let both = |g: usize| issue(g).and_then(|_| wait(g));
                let job: &Job = &both;
                // SAFETY: erases the borrow's lifetime; this function does not return
                // before every worker has finished with the job (or the process ends).
                let ptr = JobPtr(unsafe { std::mem::transmute::<*const Job<'_>, *const Job<'static>>(job as *const Job) });
                *self.shared.job.lock().expect("job lock") = Some(ptr);
                self.shared.pending.store(self.ctxs.len(), Ordering::SeqCst);
                self.shared.epoch.fetch_add(1, Ordering::SeqCst);
                let mut spins = 0u32;
                while self.shared.pending.load(Ordering::Acquire) != 0 {
                    if self.shared.start.elapsed() > deadline + GRACE {
                        eprintln!(
                            "error: watchdog: a GPU thread is stuck in a driver call {} s after its deadline; stopping",
                            GRACE.as_secs()
                        );
                        std::process::exit(3);
                    }
                    backoff(&mut spins);
                }
                *self.shared.job.lock().expect("job lock") = None;
                let mut errors = std::mem::take(&mut *self.shared.errors.lock().expect("error lock"));
                // The root cause first, not the GPUs that stopped because of it.
                errors.sort_by_key(|(g, e)| (matches!(e, GpuError::Stopped(_)), *g));
                match errors.into_iter().next() {
                    Some((g, e)) => Err(on_gpu(g, e)),
                    None => Ok(()),
                }
            }
        }
    }

    /// Waits for `stream` of GPU `g`, polling, until the step's deadline; gives up
    /// when another GPU has failed.
    pub fn wait_stream(&self, g: usize, stream: &CudaStream) -> Result<()> {
        let mut spins = 0u32;
        loop {
            // SAFETY: a query on a live stream.
            match unsafe { sys::cuStreamQuery(stream.cu_stream()) } {
                sys::CUresult::CUDA_SUCCESS => return Ok(()),
                sys::CUresult::CUDA_ERROR_NOT_READY => {}
                e => return Err(GpuError::Driver { what: format!("waiting for GPU {g}"), source: cudarc::driver::DriverError(e) }),
            }
            if self.shared.abort.load(Ordering::Relaxed) {
                return Err(GpuError::Stopped(format!("GPU {g} stopped because another GPU failed")));
            }
            if self.shared.start.elapsed().as_nanos() as u64 > self.shared.deadline_ns.load(Ordering::Relaxed) {
                self.shared.abort.store(true, Ordering::SeqCst);
                return Err(GpuError::Watchdog { gpu: g, seconds: self.watchdog.as_secs_f64() });
            }
            backoff(&mut spins);
        }
    }
}

fn on_gpu(g: usize, e: GpuError) -> GpuError {
    match e {
        GpuError::Driver { what, source } if !what.contains("GPU") => GpuError::Driver { what: format!("{what} on GPU {g}"), source },
        e => e,
    }
}

/// Spin briefly, then yield, then sleep: steps follow each other within microseconds,
/// but trials are separated by host work.
fn backoff(spins: &mut u32) {
    *spins += 1;
    if *spins < 1 << 14 {
        std::hint::spin_loop();
    } else if *spins < 1 << 16 {
        std::thread::yield_now();
    } else {
        std::thread::sleep(Duration::from_micros(50));
    }
}

fn worker(g: usize, ctx: &CudaContext, shared: &Shared) {
    let bound = ctx.bind_to_thread().check(&format!("binding GPU {g} to its thread"));
    let mut seen = 0;
    loop {
        let mut spins = 0u32;
        loop {
            let e = shared.epoch.load(Ordering::Acquire);
            if e != seen {
                seen = e;
                break;
            }
            if shared.quit.load(Ordering::Relaxed) {
                return;
            }
            backoff(&mut spins);
        }
        let job = shared.job.lock().expect("job lock").expect("a job with the epoch");
        let outcome = match &bound {
            Err(e) => Err(GpuError::Thread(e.to_string())),
            // SAFETY: see JobPtr; the job outlives this call.
            Ok(()) => catch_unwind(AssertUnwindSafe(|| unsafe { (*job.0)(g) }))
                .unwrap_or_else(|_| Err(GpuError::Thread(format!("the thread of GPU {g} panicked")))),
        };
        if let Err(e) = outcome {
            shared.abort.store(true, Ordering::SeqCst);
            shared.errors.lock().expect("error lock").push((g, e));
        }
        shared.pending.fetch_sub(1, Ordering::Release);
    }
}

impl Drop for Crew {
    fn drop(&mut self) {
        self.shared.quit.store(true, Ordering::SeqCst);
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}
