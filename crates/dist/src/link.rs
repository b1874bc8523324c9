//! The job's point-to-point link ([`chatty_comm::ProcessLink`]) over MPI: GMPI's
//! proxies forward requests addressed to other processes through it while the engine's
//! collectives go on, so it runs on its own communicator (a duplicate of the world's:
//! none of its messages can meet a collective's) and needs MPI_THREAD_MULTIPLE.
//! Sends are non-blocking and own their bytes until MPI is done with them; receives
//! are matched probes, so two proxies polling at once never take each other's message.

use std::sync::Mutex;

use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::request::{Request, StaticScope};
use mpi::topology::{Communicator, SimpleCommunicator};

use chatty_comm::{GroupError, ProcessLink};

/// A send in flight and the bytes it owns (freed once MPI is done with them).
struct InFlight {
    request: Request<'static, [u8], StaticScope>,
    bytes: *mut [u8],
}

pub(crate) struct MpiLink {
    comm: SimpleCommunicator,
    rank: usize,
    size: usize,
    sending: Mutex<Vec<InFlight>>,
}

// SAFETY: a link is made only where MPI provides MPI_THREAD_MULTIPLE (`Comm::link`), so
// its communicator may be used from several threads at once; the sends in flight are
// behind a mutex, and their buffers are touched by nothing but MPI until freed.
unsafe impl Send for MpiLink {}
// SAFETY: as above.
unsafe impl Sync for MpiLink {}

impl MpiLink {
    /// A link on `comm` (the caller's own duplicate of the world).
    pub(crate) fn new(comm: SimpleCommunicator) -> MpiLink {
        let (rank, size) = (comm.rank() as usize, comm.size() as usize);
        MpiLink { comm, rank, size, sending: Mutex::new(Vec::new()) }
    }

    /// Frees the buffers of the sends that completed.
    fn reap(sending: &mut Vec<InFlight>) {
        for InFlight { request, bytes } in std::mem::take(sending) {
            match request.test() {
                // SAFETY: MPI no longer reads the buffer; it came from Box::into_raw.
                Ok(_) => drop(unsafe { Box::from_raw(bytes) }),
                Err(request) => sending.push(InFlight { request, bytes }),
            }
        }
    }
}

impl ProcessLink for MpiLink {
    fn rank(&self) -> usize {
        self.rank
    }

    fn send(&self, to: usize, bytes: Vec<u8>) -> Result<(), GroupError> {
        if to >= self.size {
            return Err(GroupError(format!("no process {to} in a job of {}", self.size)));
        }
        if bytes.len() > i32::MAX as usize {
            return Err(GroupError(format!("a message of {} bytes exceeds what MPI's int counts can carry", bytes.len())));
        }
        let raw = Box::into_raw(bytes.into_boxed_slice());
        // SAFETY: the box stays alive, unmoved and unread by us, until `reap` or `drop`
        // sees the send complete.
        let buf: &'static [u8] = unsafe { &*raw };
        let request = self.comm.process_at_rank(to as i32).immediate_send(StaticScope, buf);
        let mut sending = self.sending.lock().expect("sends in flight");
        sending.push(InFlight { request, bytes: raw });
        MpiLink::reap(&mut sending);
        Ok(())
    }

    fn poll(&self) -> Result<Option<(usize, Vec<u8>)>, GroupError> {
        if let Ok(mut sending) = self.sending.try_lock() {
            MpiLink::reap(&mut sending);
        }
        Ok(self.comm.any_process().immediate_matched_probe().map(|probed| {
            let (bytes, status) = probed.matched_receive_vec::<u8>();
            (status.source_rank() as usize, bytes)
        }))
    }
}

/// How long a closing link waits for its sends to be received: a peer that stopped
/// receiving (its run failed) must not hold this process forever.
const CLOSING: std::time::Duration = std::time::Duration::from_secs(10);

impl Drop for MpiLink {
    fn drop(&mut self) {
        let sending = self.sending.get_mut().expect("sends in flight");
        let start = std::time::Instant::now();
        while !sending.is_empty() && start.elapsed() < CLOSING {
            MpiLink::reap(sending);
            std::thread::yield_now();
        }
        // What no receiver took stays with MPI; its bytes are left to the process's end.
        for InFlight { request, .. } in sending.drain(..) {
            std::mem::forget(request);
        }
    }
}
