//! The processes of a job (the ranks of an MPI job) as the multi-GPU engine uses them
//! when its parts live in several processes: two collectives, called by every process
//! in the same order, from one thread at a time. `chatty-dist` implements it over MPI;
//! this crate, like the GPU crate, needs no MPI to build.

use std::sync::Arc;

/// A failed collective (the implementation's message).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct GroupError(pub String);

/// Every process of a job, each calling the same collectives in the same order.
pub trait Group: Send + Sync {
    /// This process's index, 0 to `size() - 1`.
    fn rank(&self) -> usize;

    /// Number of processes.
    fn size(&self) -> usize;

    /// Element-wise wrapping sums of `mine` over every process (every process passes
    /// the same length). Also an all-gather of fixed-size entries: each process fills
    /// its own entries and leaves the others zero.
    fn sum_u64(&self, mine: &[u64]) -> Vec<u64>;

    /// Element-wise sums of `mine` over every process.
    fn sum_f64(&self, mine: &[f64]) -> Vec<f64>;

    /// Every process's `mine`, concatenated in rank order into `all` (the lengths may
    /// differ; they must add up to `all.len()`).
    fn all_gather_into(&self, mine: &[u8], all: &mut [u8]) -> Result<(), GroupError>;
}

/// A shared [`Group`], as engine options carry it.
#[derive(Clone)]
pub struct Processes(pub Arc<dyn Group>);

impl std::fmt::Debug for Processes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "process {} of {}", self.0.rank(), self.0.size())
    }
}

impl Processes {
    /// Each process's `count` (say, its GPUs), in rank order.
    pub fn counts(&self, count: u64) -> Vec<u64> {
        let mut mine = vec![0; self.0.size()];
        mine[self.0.rank()] = count;
        self.0.sum_u64(&mine)
    }

    /// The `k` entries of a per-part vector of which this process holds `mine`, from
    /// entry `first` on (each process fills its own, the sum gathers them).
    pub fn gather_parts(&self, k: usize, first: usize, mine: &[u64]) -> Vec<u64> {
        let mut all = vec![0; k];
        all[first..first + mine.len()].copy_from_slice(mine);
        self.0.sum_u64(&all)
    }
}
