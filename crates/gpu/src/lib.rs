//! ChattyGraph's GPU engine on one GPU: the device graph, the CUDA kernels (`.cu`
//! sources embedded in the binary and compiled once per process by NVRTC for the
//! device's architecture), and a runner per kernel whose results match the CPU
//! engine's ([`chatty_algo`] holds the references).
//!
//! # Brief overview
//!
//! - [`Gpu`]: a CUDA context, its stream and the compiled module; [`Gpu::open`] fails
//!   with [`GpuError::NoDriver`] on machines without CUDA (the binary still runs).
//! - [`DeviceGraph`]: CSR in device memory; refused up front when it does not fit.
//! - [`run`]: one trial of a kernel, timed with CUDA events.
//! - [`GpuEngine`]: one GPU or several behind `chatty_algo`'s engine trait, which is
//!   how the CLI and every other front end drive them.
//! - [`MultiGpu`]: the multi-GPU engine (design.md §1.1): the graph split into
//!   contiguous parts, one per GPU, with updated boundary vertices exchanged after
//!   each step over the transport the calibration predicts fastest.
//! - [`Messaging`]: device-initiated messaging (design.md §1.3): GPU threads post
//!   MPI-style sends and receives (`kernels/gmpi.cuh`) that host proxies serve.
//! - [`compile_kernels`]: NVRTC only (no GPU needed), which CI runs so a kernel that
//!   does not compile fails the build.
//!
//! Every driver call is checked; `cudarc` loads `libcuda` and `libnvrtc` at run time.
//! This crate knows nothing of file formats.
#![deny(missing_docs)]

mod context;
mod device_graph;
mod engine;
mod kernels;
mod launch;
mod layouts;
pub mod messaging;
pub mod multi;
mod renumber;
mod run;
mod transfer;

pub use chatty_comm::{Comm, Transport};
pub use context::Gpu;
pub use device_graph::DeviceGraph;
pub use engine::{refuse_options, GpuEngine};
pub use messaging::{JobRanks, Messaging, MessagingConfig, MessagingRow};
pub use multi::{choose_gpus, choose_mode, choose_order, CommStats, Control, GpuChoice, Mode, MultiGpu, MultiOptions, MultiRun};
pub use renumber::Order;
pub use run::bc::bc_predicted_seconds;
pub use run::{has_kernel, no_kernel, run, GpuRun};

pub use kernels::{compile_kernels, KERNEL_SOURCE};

/// Errors of the GPU engine.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GpuError {
    /// No CUDA driver library on this machine.
    #[error("no CUDA driver on this machine (libcuda.so not found); use --engine cpu")]
    NoDriver,
    /// No NVRTC library to compile the kernels.
    #[error("NVRTC (libnvrtc.so.13) not found: install the CUDA toolkit or `pip install nvidia-cuda-nvrtc` and add its lib directory to LD_LIBRARY_PATH")]
    NoNvrtc,
    /// A driver call failed.
    #[error("CUDA error during {what}: {source}")]
    Driver {
        /// What we were doing.
        what: String,
        /// The driver's error.
        source: cudarc::driver::DriverError,
    },
    /// A kernel failed to compile.
    #[error("NVRTC could not compile the kernels: {0}")]
    Compile(String),
    /// The graph and its arrays do not fit in device memory.
    #[error("the graph needs {needed_mib} MiB of GPU memory but {device} has {free_mib} MiB free; use a smaller graph, more GPUs, or --engine cpu")]
    OutOfMemory {
        /// The device.
        device: String,
        /// MiB needed.
        needed_mib: u64,
        /// MiB free.
        free_mib: u64,
    },
    /// The request cannot run on the GPU engine as asked.
    #[error("{what}")]
    Unsupported {
        /// The option that cannot be honoured, by its name in `chatty::EngineSpec`
        /// (`devices`, `comm`, `mode`, `reorder`), when one is the cause.
        option: Option<&'static str>,
        /// What was asked, and what to do instead.
        what: String,
    },
    /// A GPU that is not there was asked for.
    #[error("GPU {ordinal} does not exist ({count} found)")]
    NoSuchDevice {
        /// The ordinal asked for.
        ordinal: usize,
        /// GPUs on this machine.
        count: usize,
    },
    /// More vertices than the device's 32-bit ids hold.
    #[error("{vertices} vertices: the GPU engine takes fewer than {}", u32::MAX)]
    TooManyVertices {
        /// The graph's vertices.
        vertices: usize,
    },
    /// A thread driving a GPU could not start or panicked.
    #[error("{0}")]
    Thread(String),
    /// A device-initiated message failed or timed out.
    #[error("{0}")]
    Messaging(String),
    /// The graph does not fit in the GPUs of a multi-GPU run.
    #[error(
        "the graph needs {needed_mib} MiB on {device} but it has {free_mib} MiB free; use more GPUs, or --engine ssd (edges stay on disk)"
    )]
    PartTooLarge {
        /// The device.
        device: String,
        /// MiB needed.
        needed_mib: u64,
        /// MiB free.
        free_mib: u64,
    },
    /// A GPU made no progress within the watchdog's time.
    #[error("watchdog: GPU {gpu} made no progress for {seconds:.0} s (a hung kernel or collective); every GPU was stopped")]
    Watchdog {
        /// The GPU (part index).
        gpu: usize,
        /// The watchdog's time.
        seconds: f64,
    },
    /// A GPU stopped because another one failed.
    #[error("{0}")]
    Stopped(String),
    /// NCCL is missing or a collective failed.
    #[error("{0}")]
    Nccl(String),
    /// A collective between the processes of a job failed.
    #[error("between processes: {0}")]
    Processes(String),
}

impl GpuError {
    /// [`GpuError::Unsupported`] not caused by one option.
    pub(crate) fn unsupported(what: impl Into<String>) -> GpuError {
        GpuError::Unsupported { option: None, what: what.into() }
    }

    /// [`GpuError::Unsupported`] because of `option` (its name in `chatty::EngineSpec`).
    pub(crate) fn option(option: &'static str, what: impl Into<String>) -> GpuError {
        GpuError::Unsupported { option: Some(option), what: what.into() }
    }
}

impl From<chatty_comm::cuda::CudaError> for GpuError {
    fn from(e: chatty_comm::cuda::CudaError) -> GpuError {
        use chatty_comm::cuda::CudaError;
        match e {
            CudaError::Driver { what, source } => GpuError::Driver { what, source },
            CudaError::NoNvrtc => GpuError::NoNvrtc,
            CudaError::Compile(why) => GpuError::Compile(why),
        }
    }
}

impl From<chatty_comm::nccl::NcclError> for GpuError {
    fn from(e: chatty_comm::nccl::NcclError) -> GpuError {
        GpuError::Nccl(e.to_string())
    }
}

/// Result alias for the GPU engine.
pub type Result<T, E = GpuError> = std::result::Result<T, E>;
