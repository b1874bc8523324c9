//! The semi-external (SSD) engine, after Blaze (Kim et al., SC 2022): vertex data in
//! memory, edge data streamed from 4 KiB pages striped round-robin over K files (one
//! per SSD), read with io_uring and `O_DIRECT`, decoded by scatter threads into bins
//! of contiguous destination ranges that gather threads apply without atomics.
//!
//! - [`layout`]: the on-disk layout (`chatty convert --layout ssd`) and its index.
//! - [`io`]: one IO thread and ring per file, registered buffer pools, `pread` fallback.
//! - [`engine`]: [`SsdGraph`] and its streamed `edge_map`, with IO statistics.
//! - [`kernels`]: BFS, SSSP, PageRank, WCC, SpMV and BC through the program model.
//!
//! Not here: graph construction (the `graph` crate builds the CSR that [`layout::write`]
//! lays out) and GPUs.

pub mod engine;
pub mod io;
pub mod kernels;
pub mod layout;

use std::path::{Path, PathBuf};

pub use engine::{EngineConfig, IoStats, SsdGraph};
pub use io::IoConfig;

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum SsdError {
    #[error("{path}: {what}: {source}")]
    Io { path: PathBuf, what: &'static str, source: std::io::Error },
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Config(String),
    #[error(transparent)]
    Graph(#[from] chatty_graph::Error),
}

impl SsdError {
    pub(crate) fn io(path: &Path, what: &'static str, source: std::io::Error) -> SsdError {
        SsdError::Io { path: path.to_path_buf(), what, source }
    }
}
