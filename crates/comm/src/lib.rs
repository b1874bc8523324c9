//! The communication layer of the multi-GPU engine (design.md §1.1, §2): what the GPUs
//! of this machine are and how each pair is linked, so that transports are chosen from
//! this machine's facts, not from constants tuned on another box.
//!
//! - [`topology`]: the probe behind `chatty topo`: every GPU (name, PCI bus id, memory,
//!   SMs), and for every ordered pair the CUDA peer-access attributes and the NVML link
//!   (NVLink count, direct or through a switch, or the PCIe level).
//!
//! - [`calibrate`]: latency and bandwidth by message size of each transport (peer
//!   copies with and without peer access, peer stores, NCCL broadcast and all-gather,
//!   GPU↔host), cached per machine; and of a job's link between its processes (MPI
//!   through host memory, NCCL across ranks), cached per job.
//!
//! - [`transport`]: the typed names of what moves bytes ([`Method`] measured,
//!   [`Transport`] exchanged, [`Comm`] asked for).
//!
//! - [`choice`]: [`choose`], the choice among transports from the measurements
//!   (`--comm auto`), and [`choose_across`] between processes.
//!
//! - [`cuda`]: the CUDA driver layer every GPU user stands on: primary contexts,
//!   checked calls, typed device addresses and launches, pinned memory, peer access,
//!   NVRTC and its caches.
//!
//! - [`nccl`]: NCCL communicators, made in one place for the calibration and the
//!   multi-GPU engine.
//!
//! - [`messaging`]: device-initiated messaging's host side (GMPI-style): the request
//!   ring GPU threads write, MPI-style tag matching, and the proxy that moves the
//!   bytes and reports completion, with timeouts instead of hangs.
//!
//! - [`group`]: the processes of a job as the multi-GPU engine sees them when its
//!   parts span processes (implemented over MPI by `chatty-dist`): collectives, and
//!   a point-to-point link that messaging forwards through.
//!
//! The transports themselves run in the multi-GPU engine (`chatty-gpu`). This crate
//! knows nothing of graphs or algorithms.

#![deny(missing_docs)]

pub mod calibrate;
pub mod choice;
pub mod cuda;
pub mod group;
pub mod messaging;
pub mod nccl;
pub mod topology;
pub mod transport;

pub use choice::{choose, choose_across};
pub use group::{Group, GroupError, ProcessLink, Processes, Threads};
pub use topology::{probe, Gpu, Link, Pair, Topology};
pub use transport::{Comm, Method, Transport};
