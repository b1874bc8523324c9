//! The MPI communicator as the engine uses it: collectives over `u64` words (so one
//! exchange may carry 16 GiB under MPI's `int` counts), with the bytes and exchanges
//! counted for the report.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use bytemuck::Pod;
use mpi::collective::SystemOperation;
use mpi::datatype::Equivalence;
use mpi::datatype::{Partition, PartitionMut};
use mpi::environment::Threading;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use rayon::prelude::*;

use crate::DistError;

/// MPI_COMM_WORLD, its rank and size, the thread level MPI provides, and traffic
/// counters.
pub struct Comm {
    world: SimpleCommunicator,
    rank: usize,
    size: usize,
    threading: Threading,
    exchanges: AtomicU64,
    bytes: AtomicU64,
}

// SAFETY: MPI provides at least `Threading::Serialized`, and the engines call this
// communicator from one thread at a time (the link, used from several, has its own
// communicator and needs MPI_THREAD_MULTIPLE): the harness's thread, or the rayon worker a
// trial's kernel runs on (never from the parallel steps inside it); `Sync` is needed
// because `Engine: Sync`, `Send` because the GPU engine holds it shared.
unsafe impl Sync for Comm {}
// SAFETY: as above; the communicator is a handle, valid on any thread.
unsafe impl Send for Comm {}

impl chatty_comm::Group for Comm {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn sum_u64(&self, mine: &[u64]) -> Vec<u64> {
        let mut all = vec![0u64; mine.len()];
        if !mine.is_empty() {
            self.world.all_reduce_into(mine, &mut all[..], SystemOperation::sum());
        }
        all
    }

    fn sum_f64(&self, mine: &[f64]) -> Vec<f64> {
        self.sum_f64s(mine)
    }

    fn all_gather_into(&self, mine: &[u8], all: &mut [u8]) -> Result<(), chatty_comm::GroupError> {
        let counts = self.gather_counts(mine.len()).map_err(|e| chatty_comm::GroupError(e.to_string()))?;
        let total: usize = counts.iter().map(|&c| c as usize).sum();
        if total != all.len() {
            return Err(chatty_comm::GroupError(format!("the processes offered {total} bytes for {} places", all.len())));
        }
        if total > i32::MAX as usize {
            return Err(chatty_comm::GroupError(DistError::TooLarge(total as u64).to_string()));
        }
        let displs = displacements(&counts);
        self.world.all_gather_varcount_into(mine, &mut PartitionMut::new(all, &counts[..], &displs[..]));
        let sent = (mine.len() * (self.size - 1)) as u64;
        self.exchanges.fetch_add(1, Relaxed);
        self.bytes.fetch_add(sent, Relaxed);
        Ok(())
    }

    fn link(&self) -> Result<std::sync::Arc<dyn chatty_comm::ProcessLink>, chatty_comm::GroupError> {
        if self.threading < Threading::Multiple {
            return Err(chatty_comm::GroupError(format!(
                "messages between processes need an MPI with MPI_THREAD_MULTIPLE; this one provides {:?}",
                self.threading
            )));
        }
        Ok(std::sync::Arc::new(crate::link::MpiLink::new(self.world.duplicate())))
    }
}

impl Comm {
    pub(crate) fn new(world: SimpleCommunicator, threading: Threading) -> Comm {
        let (rank, size) = (world.rank() as usize, world.size() as usize);
        Comm { world, rank, size, threading, exchanges: AtomicU64::new(0), bytes: AtomicU64::new(0) }
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Number of processes.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Exchanges and bytes sent since the last call.
    pub fn take_traffic(&self) -> (u64, u64) {
        (self.exchanges.swap(0, Relaxed), self.bytes.swap(0, Relaxed))
    }

    /// Element-wise sums over every rank (wrapping for integers).
    pub fn sum_u64<const K: usize>(&self, mine: [u64; K]) -> [u64; K] {
        let mut all = [0u64; K];
        self.world.all_reduce_into(&mine[..], &mut all[..], SystemOperation::sum());
        all
    }

    /// Element-wise sums over every rank.
    pub fn sum_f64<const K: usize>(&self, mine: [f64; K]) -> [f64; K] {
        let mut all = [0f64; K];
        self.world.all_reduce_into(&mine[..], &mut all[..], SystemOperation::sum());
        all
    }

    /// Element-wise sums of a vector over every rank.
    pub fn sum_f64s(&self, mine: &[f64]) -> Vec<f64> {
        let mut all = vec![0f64; mine.len()];
        if !mine.is_empty() {
            self.world.all_reduce_into(mine, &mut all[..], SystemOperation::sum());
        }
        all
    }

    /// The minimum over every rank.
    pub fn min_u64(&self, mine: u64) -> u64 {
        let mut lo = 0u64;
        self.world.all_reduce_into(&mine, &mut lo, SystemOperation::min());
        lo
    }

    /// The minimum and maximum over every rank.
    pub fn min_max_u64(&self, mine: u64) -> (u64, u64) {
        let (mut lo, mut hi) = (0u64, 0u64);
        self.world.all_reduce_into(&mine, &mut lo, SystemOperation::min());
        self.world.all_reduce_into(&mine, &mut hi, SystemOperation::max());
        (lo, hi)
    }

    /// Rank 0's value, on every rank.
    pub fn broadcast_u64(&self, mut x: u64) -> u64 {
        self.world.process_at_rank(0).broadcast_into(&mut x);
        x
    }

    /// Rank `root`'s bytes, on every rank.
    pub fn broadcast_bytes(&self, root: usize, mut bytes: Vec<u8>) -> Vec<u8> {
        let root = self.world.process_at_rank(root as i32);
        let mut len = bytes.len() as u64;
        root.broadcast_into(&mut len);
        bytes.resize(len as usize, 0);
        root.broadcast_into(&mut bytes[..]);
        bytes
    }

    /// Rank 0's `values` on rank `to` (call on both; point-to-point, in pieces of at
    /// most 2^28 words so that no message exceeds MPI's int counts).
    pub fn send_to<T: Pod>(&self, to: usize, values: &[T]) {
        const PIECE: usize = 1 << 28;
        let words = words_of(values);
        let peer = self.world.process_at_rank(to as i32);
        peer.send(&[values.len() as u64][..]);
        for piece in words.chunks(PIECE) {
            peer.send(piece);
        }
        self.exchanges.fetch_add(1, Relaxed);
        self.bytes.fetch_add(words.len() as u64 * 8, Relaxed);
    }

    /// What rank `from` sent here with [`Comm::send_to`].
    pub fn receive_from<T: Pod>(&self, from: usize) -> Vec<T> {
        const PIECE: usize = 1 << 28;
        let peer = self.world.process_at_rank(from as i32);
        let (len, _) = peer.receive_vec::<u64>();
        let bytes = len[0] as usize * std::mem::size_of::<T>();
        let mut words: Vec<u64> = Vec::with_capacity(bytes.div_ceil(8));
        while words.len() < bytes.div_ceil(8) {
            let (piece, _) = peer.receive_vec::<u64>();
            words.extend_from_slice(&piece);
            if piece.len() < PIECE {
                break;
            }
        }
        bytemuck::cast_slice::<u8, T>(&bytemuck::cast_slice::<u64, u8>(&words)[..bytes]).to_vec()
    }

    /// `bytes` to rank `to` (MPI_Send; the receiver calls [`Comm::receive_bytes`]).
    pub fn send_bytes(&self, to: usize, bytes: &[u8]) -> Result<(), DistError> {
        if bytes.len() > i32::MAX as usize {
            return Err(DistError::TooLarge(bytes.len() as u64));
        }
        self.world.process_at_rank(to as i32).send(bytes);
        Ok(())
    }

    /// Rank `from`'s [`Comm::send_bytes`] into `into` (MPI_Recv), which must be its size.
    pub fn receive_bytes(&self, from: usize, into: &mut [u8]) -> Result<(), DistError> {
        if into.len() > i32::MAX as usize {
            return Err(DistError::TooLarge(into.len() as u64));
        }
        let status = self.world.process_at_rank(from as i32).receive_into(into);
        let got = status.count(u8::equivalent_datatype()) as usize;
        if got != into.len() {
            return Err(DistError::Inconsistent(format!("rank {from} sent {got} bytes where {} were expected", into.len())));
        }
        Ok(())
    }

    /// Every rank's `mine`, concatenated in rank order (one copy, MPI's).
    pub fn all_gather<T: Pod + Equivalence + Send + Sync>(&self, mine: &[T]) -> Result<Vec<T>, DistError> {
        if self.size == 1 {
            return Ok(mine.par_iter().copied().collect());
        }
        let counts = self.gather_counts(mine.len())?;
        let displs = displacements(&counts);
        let total = counts.iter().map(|&c| c as usize).sum();
        let mut all: Vec<T> = vec![T::zeroed(); total];
        self.world.all_gather_varcount_into(mine, &mut PartitionMut::new(&mut all[..], &counts[..], &displs[..]));
        Ok(all)
    }

    fn gather_counts(&self, mine: usize) -> Result<Vec<i32>, DistError> {
        let mine = i32::try_from(mine).map_err(|_| DistError::TooLarge(mine as u64))?;
        let mut counts = vec![0i32; self.size];
        self.world.all_gather_into(&mine, &mut counts[..]);
        Ok(counts)
    }

    /// Sends `out[r]` to rank `r` for every `r`; returns what each rank sent here.
    pub fn all_to_all(&self, out: &[Vec<u64>]) -> Result<Vec<Vec<u64>>, DistError> {
        let send_counts: Vec<i32> =
            out.iter().map(|m| i32::try_from(m.len()).map_err(|_| DistError::TooLarge(m.len() as u64))).collect::<Result<_, _>>()?;
        let mut recv_counts = vec![0i32; self.size];
        self.world.all_to_all_into(&send_counts[..], &mut recv_counts[..]);
        let flat: Vec<u64> = out.concat();
        let send_displs = displacements(&send_counts);
        let recv_displs = displacements(&recv_counts);
        let total = recv_counts.iter().map(|&c| c as usize).sum();
        let mut all = vec![0u64; total];
        self.world.all_to_all_varcount_into(
            &Partition::new(&flat[..], &send_counts[..], &send_displs[..]),
            &mut PartitionMut::new(&mut all[..], &recv_counts[..], &recv_displs[..]),
        );
        let sent: u64 = out.iter().enumerate().filter(|&(r, _)| r != self.rank).map(|(_, m)| m.len() as u64 * 8).sum();
        self.exchanges.fetch_add(1, Relaxed);
        self.bytes.fetch_add(sent, Relaxed);
        Ok(recv_counts.iter().zip(&recv_displs).map(|(&c, &d)| all[d as usize..(d + c) as usize].to_vec()).collect())
    }

    /// Stops every rank of the job with `code` (MPI_Abort): what a rank does on an
    /// error, so that no other rank waits forever in a collective.
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }
}

fn displacements(counts: &[i32]) -> Vec<i32> {
    counts.iter().scan(0i32, |at, &c| Some(std::mem::replace(at, *at + c))).collect()
}

/// `values` as whole `u64` words, the last one zero-padded.
pub(crate) fn words_of<T: Pod>(values: &[T]) -> Vec<u64> {
    let bytes: &[u8] = bytemuck::cast_slice(values);
    let mut words = vec![0u64; bytes.len().div_ceil(8)];
    bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..bytes.len()].copy_from_slice(bytes);
    words
}
