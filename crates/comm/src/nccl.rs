//! NCCL communicators over the GPUs of one process, or over the GPUs of several
//! processes (each making its own ranks from a shared unique id), made and released in
//! one place for the calibration and the multi-GPU engine.
//!
//! NVLink multicast (NVLS) is forbidden on the shared GPU machines: the `chatty`
//! binary sets `NCCL_NVLS_ENABLE=0` at start-up (unless the environment says
//! otherwise); this library never touches the environment, so other programs using
//! it set that themselves.

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};

use cudarc::nccl::sys as nccl;

use crate::Group;

pub use nccl::cudaStream_t as Stream;

/// What went wrong in NCCL.
#[derive(Debug, thiserror::Error)]
pub enum NcclError {
    /// No `libnccl.so` on this machine.
    #[error("NCCL (libnccl.so) is not installed")]
    Missing,
    /// A process of the job cannot take part (named in the message).
    #[error("{0}")]
    Job(String),
    /// A call failed.
    #[error("NCCL {what} failed: {code:?}")]
    Call {
        /// The call.
        what: String,
        /// NCCL's result.
        code: nccl::ncclResult_t,
    },
}

fn ok(code: nccl::ncclResult_t, what: &str) -> Result<(), NcclError> {
    match code {
        nccl::ncclResult_t::ncclSuccess => Ok(()),
        code => Err(NcclError::Call { what: what.to_string(), code }),
    }
}

/// The id that names a communicator across processes (`ncclGetUniqueId`, on one
/// process; the others receive it).
fn unique_id() -> Result<[u8; 128], NcclError> {
    // SAFETY: only probes whether the shared library can be opened.
    if !unsafe { nccl::is_culib_present() } {
        return Err(NcclError::Missing);
    }
    let mut id = nccl::ncclUniqueId { internal: [0; 128] };
    // SAFETY: writes the 128-byte id.
    ok(unsafe { nccl::ncclGetUniqueId(&mut id) }, "ncclGetUniqueId")?;
    Ok(id.internal.map(|c| c as u8))
}

/// One communicator per GPU (`ncclCommInitAll`), destroyed on drop, or aborted after
/// [`Communicators::mark_failed`] so that no call waits for a GPU that will never answer.
pub struct Communicators {
    comms: Vec<nccl::ncclComm_t>,
    failed: AtomicBool,
}

// SAFETY: each communicator is used by one thread at a time (its GPU's driver).
unsafe impl Send for Communicators {}
// SAFETY: as above.
unsafe impl Sync for Communicators {}

impl Communicators {
    /// Communicators for `ordinals` (distinct devices), ranks in that order.
    pub fn new(ordinals: &[usize]) -> Result<Communicators, NcclError> {
        // SAFETY: only probes whether the shared library can be opened.
        if !unsafe { nccl::is_culib_present() } {
            return Err(NcclError::Missing);
        }
        let devs: Vec<i32> = ordinals.iter().map(|&d| d as i32).collect();
        let mut comms = vec![std::ptr::null_mut(); devs.len()];
        // SAFETY: one communicator per listed device; checked; released on drop.
        ok(unsafe { nccl::ncclCommInitAll(comms.as_mut_ptr(), devs.len() as i32, devs.as_ptr()) }, "ncclCommInitAll")?;
        Ok(Communicators { comms, failed: AtomicBool::new(false) })
    }

    /// This process's ranks `first..first + ordinals.len()` of a communicator of
    /// `ranks` over several processes named by `id` ([`unique_id`] of one of them);
    /// `bind(i)` makes device `ordinals[i]` current on this thread (NCCL creates each
    /// rank on the current device). Every process calls it at once.
    fn across(
        ordinals: &[usize],
        first: usize,
        ranks: usize,
        id: [u8; 128],
        bind: &dyn Fn(usize) -> Result<(), String>,
    ) -> Result<Communicators, NcclError> {
        // SAFETY: only probes whether the shared library can be opened.
        if !unsafe { nccl::is_culib_present() } {
            return Err(NcclError::Missing);
        }
        let id = nccl::ncclUniqueId { internal: id.map(|b| b as std::ffi::c_char) };
        // Aborted on drop (those made so far) unless every rank is made.
        let mut made = Communicators { comms: vec![std::ptr::null_mut(); ordinals.len()], failed: AtomicBool::new(true) };
        Communicators::group(|| {
            for (i, comm) in made.comms.iter_mut().enumerate() {
                bind(i).map_err(|what| NcclError::Call { what, code: nccl::ncclResult_t::ncclInvalidUsage })?;
                // SAFETY: one rank per device of this process; checked; released on drop.
                ok(unsafe { nccl::ncclCommInitRank(comm, ranks as i32, id, (first + i) as i32) }, "ncclCommInitRank")?;
            }
            Ok::<_, NcclError>(())
        })?;
        made.failed.store(false, Ordering::SeqCst);
        Ok(made)
    }

    /// `Communicators::across` over every part of a job, run by every process at
    /// once: the first makes the id, and every process hears whether each could take
    /// part before any enters NCCL, whose set-up would otherwise wait forever for a
    /// process that never joins. Made everywhere or nowhere: a process whose ranks
    /// failed tells the others, which abort theirs.
    pub fn in_job(
        group: &dyn Group,
        ordinals: &[usize],
        first: usize,
        ranks: usize,
        bind: &dyn Fn(usize) -> Result<(), String>,
    ) -> Result<Communicators, NcclError> {
        const ENTRY: usize = 129;
        let job = |e: crate::GroupError| NcclError::Job(format!("between the processes: {e}"));
        // SAFETY: only probes whether the shared library can be opened.
        let present = unsafe { nccl::is_culib_present() };
        let mut mine = [0u8; ENTRY];
        let made = match (group.rank(), present) {
            (_, false) => Err(NcclError::Missing),
            (0, true) => unique_id().map(|id| mine[1..].copy_from_slice(&id)),
            _ => Ok(()),
        };
        mine[0] = made.is_ok() as u8;
        let mut all = vec![0u8; ENTRY * group.size()];
        group.all_gather_into(&mine, &mut all).map_err(job)?;
        made?;
        if let Some(p) = all.chunks(ENTRY).position(|e| e[0] == 0) {
            return Err(NcclError::Job(format!("process {p} of the job cannot use NCCL (see its error)")));
        }
        let id: [u8; 128] = all[1..ENTRY].try_into().expect("128 bytes");
        let made = Communicators::across(ordinals, first, ranks, id, bind);
        let failed = group.sum_u64(&[made.is_err() as u64])[0];
        match made {
            Err(e) => Err(e),
            Ok(c) if failed > 0 => {
                c.mark_failed();
                Err(NcclError::Job(format!("{failed} process(es) of the job could not make their NCCL ranks (see their errors)")))
            }
            Ok(c) => Ok(c),
        }
    }

    /// Number of ranks in this process.
    pub fn len(&self) -> usize {
        self.comms.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.comms.is_empty()
    }

    /// Runs `calls` between `ncclGroupStart` and `ncclGroupEnd` (the group ends even
    /// when a call fails; the first error is returned).
    pub fn group<R, E: From<NcclError>>(calls: impl FnOnce() -> Result<R, E>) -> Result<R, E> {
        // SAFETY: group calls nest and take no arguments.
        ok(unsafe { nccl::ncclGroupStart() }, "group start")?;
        let r = calls();
        // SAFETY: as above.
        let end = ok(unsafe { nccl::ncclGroupEnd() }, "group end");
        r.and_then(|r| end.map(|_| r).map_err(E::from))
    }

    /// This process's `rank`-th rank's part of a broadcast of `bytes` from `root` (a
    /// rank of the whole communicator): `send` on the root, `recv` elsewhere (the same
    /// pointer for in place).
    ///
    /// # Safety
    /// `send` and `recv` are device pointers of rank `rank`'s GPU holding `bytes`, and
    /// every rank issues the same broadcast.
    pub unsafe fn broadcast(&self, rank: usize, send: u64, recv: u64, bytes: usize, root: usize, stream: Stream) -> Result<(), NcclError> {
        let comm = self.comms[rank];
        // SAFETY: the caller's contract.
        ok(
            unsafe {
                nccl::ncclBroadcast(
                    send as *const c_void,
                    recv as *mut c_void,
                    bytes,
                    nccl::ncclDataType_t::ncclUint8,
                    root as i32,
                    comm,
                    stream,
                )
            },
            "broadcast",
        )
    }

    /// Rank `rank`'s part of an all-gather of `part` bytes per rank.
    ///
    /// # Safety
    /// `send` holds `part` bytes and `recv` `len() · part` bytes on rank `rank`'s GPU,
    /// and every rank issues the same all-gather.
    pub unsafe fn all_gather(&self, rank: usize, send: u64, recv: u64, part: usize, stream: Stream) -> Result<(), NcclError> {
        let comm = self.comms[rank];
        // SAFETY: the caller's contract.
        ok(
            unsafe { nccl::ncclAllGather(send as *const c_void, recv as *mut c_void, part, nccl::ncclDataType_t::ncclUint8, comm, stream) },
            "all-gather",
        )
    }

    /// Aborts rather than destroys on drop: a GPU failed mid-collective.
    pub fn mark_failed(&self) {
        self.failed.store(true, Ordering::SeqCst);
    }
}

impl Drop for Communicators {
    fn drop(&mut self) {
        let failed = self.failed.load(Ordering::SeqCst);
        for &c in self.comms.iter().filter(|c| !c.is_null()) {
            // SAFETY: created by ncclCommInitAll or ncclCommInitRank; released once.
            unsafe {
                let _ = if failed { nccl::ncclCommAbort(c) } else { nccl::ncclCommDestroy(c) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job whose processes cannot all make their ranks (here: no NCCL, or no GPU to
    /// bind) fails on every process; none waits in NCCL for another.
    #[test]
    fn a_job_that_cannot_make_its_ranks_fails_everywhere() {
        let started = std::time::Instant::now();
        let results: Vec<bool> = std::thread::scope(|s| {
            let members: Vec<_> = crate::Threads::job(2)
                .into_iter()
                .map(|m| s.spawn(move || Communicators::in_job(&m, &[0], m.rank(), 2, &|_| Err("no GPU here".into())).is_err()))
                .collect();
            members.into_iter().map(|m| m.join().unwrap()).collect()
        });
        assert_eq!(results, [true, true]);
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
    }
}
