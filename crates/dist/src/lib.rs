//! The multi-process engine: ChattyGraph across processes (and servers) over MPI.
//!
//! Started under `mpirun -np P chatty run ALGO G.cgr --engine mpi`, every rank opens
//! the same `.cgr` and keeps only its own vertex range's rows ([`graph::LocalGraph`]:
//! the owner-computes ranges the multi-GPU engine splits by too,
//! [`chatty_graph::partition::Ranges`]), runs rayon threads inside the
//! rank, and exchanges per superstep only the boundary vertices that changed, each to
//! the ranks that read it, sparse or dense per destination by the multi-GPU engine's
//! rule ([`chatty_graph::partition::Form`], in [`halo::Halo`]). One
//! module per kernel: [`bfs`], [`sssp`], [`pr`] (PageRank and SpMV), [`wcc`], [`bc`].
//! [`DistEngine`] implements [`chatty_algo::Engine`], so the harness, the report and
//! the front ends are the ones every engine shares; every rank runs the harness in
//! lockstep and holds the gathered answer, and the front end lets rank 0 speak.
//!
//! Every rank keeps per-vertex arrays over all n vertices (only its own and its
//! ghosts' entries are read): edges, the bulk of a graph, are what is split.
//!
//! [`Comm`] is also the [`chatty_comm::Group`] through which the multi-GPU engine runs
//! across processes (`mpirun ... chatty run ... --engine gpu`): [`start`] begins the
//! job, the GPU engine does the rest; its link (`link.rs`) carries `--mode gmpi`'s
//! messages between processes.
//!
//! This crate needs MPI (Open MPI or MPICH, through the `mpi` crate) to build; the
//! CLI includes it behind its `mpi` feature. It knows nothing of GPUs or file formats
//! other than `.cgr`.

#![deny(missing_docs)]

mod atomic;
pub mod bc;
pub mod bfs;
mod comm;
mod engine;
pub mod graph;
pub mod halo;
mod link;
pub mod multicast;
pub mod pr;
mod push;
pub mod sssp;
pub mod wcc;

pub use comm::Comm;
pub use engine::{abort_job, finish, start, DistEngine, Options};
pub use graph::Distribute;
pub use multicast::{Distribution, Multicast};

/// What stops the multi-process engine.
#[derive(Debug, thiserror::Error)]
pub enum DistError {
    /// The graph file (on this rank).
    #[error(transparent)]
    Graph(chatty_graph::Error),
    /// MPI could not start.
    #[error("MPI: {0}")]
    Mpi(String),
    /// One exchange would exceed MPI's counts.
    #[error("one exchange of {0} elements exceeds what MPI's int counts can carry; use more ranks")]
    TooLarge(u64),
    /// The ranks disagree (different graphs or flags) or a rank's part is inconsistent.
    #[error("{0}")]
    Inconsistent(String),
    /// `--distribute multicast` could not give a place its copy of the file.
    #[error("{0}")]
    Distribute(String),
    /// Another rank failed at the same step.
    #[error("rank {rank}: {message}")]
    Peer {
        /// The lowest failing rank.
        rank: usize,
        /// Its error.
        message: String,
    },
}

/// `mine` if every rank succeeded, else an error on every rank (collective): the
/// failing ranks keep their own error, the others get the lowest failing rank's
/// ([`DistError::Peer`]), so no rank goes on to a collective the others left and
/// rank 0 can say what went wrong.
pub(crate) fn agree<T>(comm: &Comm, mine: Result<T, DistError>) -> Result<T, DistError> {
    let failed = if mine.is_err() { comm.rank() as u64 } else { u64::MAX };
    let first = comm.min_u64(failed);
    if first == u64::MAX {
        return mine;
    }
    let text = mine.as_ref().err().map(ToString::to_string).unwrap_or_default();
    let message = String::from_utf8_lossy(&comm.broadcast_bytes(first as usize, text.into_bytes())).into_owned();
    match mine {
        Err(e) => Err(e),
        Ok(_) => Err(DistError::Peer { rank: first as usize, message }),
    }
}
