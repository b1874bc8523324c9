//! The semi-external (SSD) engine, after Blaze (Kim et al., SC 2022): vertex data in
//! memory, edge data streamed from 4 KiB pages striped round-robin over K files (one
//! per SSD), read with io_uring and `O_DIRECT`, decoded by scatter threads into bins
//! of contiguous destination ranges that gather threads apply without atomics.
//!
//! - [`layout`]: the on-disk layout (`chatty convert --layout ssd`) and its index.
//! - `io`: one IO thread and ring per file, registered buffer pools, `pread` fallback.
//! - [`stream`]: [`SsdGraph`], its streamed edge map (the program model's
//!   `EdgeMapGraph`, so the kernels of `chatty_algo` run on it unchanged), with IO
//!   statistics.
//! - [`SsdEngine`]: the engine trait over a layout, under a memory budget.
//!
//! Not here: the kernels (written once in `chatty_algo`), graph construction (the
//! `graph` crate builds the CSR that [`layout::write`] lays out) and GPUs.

#![deny(missing_docs)]

mod engine;
mod io;
pub mod layout;
pub mod stream;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub use engine::SsdEngine;
pub use io::IoConfig;
pub use stream::{EngineConfig, IoStats, SsdGraph};

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum SsdError {
    /// A file could not be read or written.
    #[error("{path}: {what}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done.
        what: &'static str,
        /// The system's error.
        source: std::io::Error,
    },
    #[error("{0}")]
    /// A layout file is not what it should be (the words say how).
    Invalid(String),
    #[error("{0}")]
    /// A configuration that cannot work (the words say which).
    Config(String),
    #[error(transparent)]
    /// The graph layer refused the input.
    Graph(#[from] chatty_graph::Error),
    /// The engine would need more memory than its budget.
    #[error("the ssd engine needs {} for {what} but --mem-budget is {}", chatty_graph::human_bytes(*needed), chatty_graph::human_bytes(*budget))]
    Budget {
        /// Bytes needed.
        needed: u64,
        /// The budget, bytes.
        budget: u64,
        /// What needs them.
        what: String,
    },
}

/// Notes on fallbacks taken, each said once, for the front end to print.
#[derive(Default)]
pub(crate) struct Notes(Mutex<Vec<String>>);

impl Notes {
    pub(crate) fn add(&self, note: String) {
        let mut notes = self.0.lock().expect("notes");
        if !notes.contains(&note) {
            notes.push(note);
        }
    }

    pub(crate) fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().expect("notes"))
    }
}

impl SsdError {
    pub(crate) fn io(path: &Path, what: &'static str, source: std::io::Error) -> SsdError {
        SsdError::Io { path: path.to_path_buf(), what, source }
    }
}
