//! ChattyGraph's front door: open any engine on a graph, then run kernels on it
//! through the one harness. The CLI (`chatty run`, `demo`, `bench`), the Python
//! package and Rust programs all come in here, so that an engine is opened in one
//! function ([`open`]) under one auto policy ([`policy`]), parameters are checked in
//! one place (thread counts here, kernel parameters by the harness's
//! [`chatty_algo::check_params`]), and the process runs under one set of settings
//! ([`process`]).
//!
//! ```
//! use chatty::{harness, open, Algorithm, EngineSpec, GraphSource, Params, Workload};
//! let graph = chatty::graph::from_edges(4, &[(0, 1), (1, 2), (2, 3)], false)?;
//! let work = Workload::one(Algorithm::Pr);
//! let mut opened = open(&EngineSpec::auto(), GraphSource::Memory(graph), &work, &chatty::graph::NoProgress)?;
//! let opts = harness::Options { trials: 1, verify: true, against: None };
//! let report = harness::run(opened.engine.as_mut(), Algorithm::Pr, &Params::default(), &opts, |_| {})?;
//! assert!(report.verification.unwrap().is_ok());
//! # Ok::<(), chatty::Error>(())
//! ```
//!
//! What it is not: the kernels (`chatty-algo`), the engines (`chatty-gpu`,
//! `chatty-ssd`, `chatty-dist`), file formats (`chatty-graph`), or the command line's
//! words and output (`chatty-cli`). It prints nothing: what a front end should tell
//! the user comes back as values ([`Opened::notes`], [`policy::Choice`]).
#![deny(missing_docs)]

mod error;
mod open;
pub mod policy;
pub mod process;
mod spec;

pub use chatty_algo::community::CommunityParams;
pub use chatty_algo::{
    harness, Algorithm, BcSources, DegreeKind, Direction, Distances, Engine, KatzParams, Output, Params, PrMethod, PrParams,
};
pub use chatty_gpu::{Comm, Control, Mode, Order};
/// Graphs: reading, writing, generating, checking.
pub use chatty_graph as graph;
pub use error::{Error, ErrorKind, Note, Result};
pub use open::{open, open_held, GraphSource, Opened};
pub use policy::Workload;
pub use spec::{Distribute, EngineKind, EngineSpec, GpuCount, GpuSpec, MpiSpec, MulticastSpec, SsdSpec};
