//! The front door's error: the layers' errors, plus what opening an engine refuses,
//! each with an [`ErrorKind`] a caller can act on (Python maps it to an exception type).

use chatty_gpu::GpuError;
use chatty_ssd::SsdError;

/// What went wrong, as a caller acts on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// A parameter or option out of its domain: change the call.
    Parameter,
    /// Not available on this engine, build or graph: pick another.
    Unsupported,
    /// More memory (host or device) than there is.
    OutOfMemory,
    /// The GPU, its driver, NVRTC or an MPI peer failed.
    Device,
    /// A file could not be read or written.
    Io,
    /// The input is malformed, corrupt or inconsistent.
    Input,
    /// A result differs from the sequential reference.
    Verification,
}

/// Everything [`crate::open`] and a run through it can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A parameter or option out of its domain.
    #[error("{name} {problem}")]
    Parameter {
        /// The option, by its name in [`crate::EngineSpec`] (each front end spells it
        /// its own way: `--io-depth`, `io_depth=`).
        name: &'static str,
        /// What is wrong with its value.
        problem: String,
    },
    /// An option the chosen engine does not have, or an engine that cannot run here.
    #[error("{}{what}", option.map(|o| format!("{o} ")).unwrap_or_default())]
    Unsupported {
        /// The option refused, by its name in [`crate::EngineSpec`], if one is.
        option: Option<&'static str>,
        /// What was asked, and what to do instead.
        what: String,
    },
    /// Reading, checking or building the graph.
    #[error(transparent)]
    Graph(#[from] chatty_graph::Error),
    /// A kernel, the harness or an engine through the engine trait.
    #[error(transparent)]
    Run(#[from] chatty_algo::Error),
    /// The GPU engine.
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// The SSD engine.
    #[error(transparent)]
    Ssd(#[from] SsdError),
    /// The MPI engine.
    #[cfg(feature = "mpi")]
    #[error(transparent)]
    Mpi(#[from] chatty_dist::DistError),
}

/// Something a front end should tell the user, about an option where `option` names
/// one (by its name in [`crate::EngineSpec`]; each front end spells it its own way).
#[derive(Clone, Debug, PartialEq)]
pub struct Note {
    /// The option it is about.
    pub option: Option<&'static str>,
    /// What to say (after the option's name, where there is one).
    pub text: String,
}

impl std::fmt::Display for Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.option {
            Some(o) => write!(f, "{o} {}", self.text),
            None => f.write_str(&self.text),
        }
    }
}

/// Result alias of the front door.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The option or parameter the error is about, by its name in [`crate::EngineSpec`]
    /// or [`crate::Params`], and what is wrong with it: a front end spells the name
    /// its own way (`--max-iters`).
    pub fn option(&self) -> Option<(&'static str, &str)> {
        match self {
            Error::Parameter { name, problem } | Error::Run(chatty_algo::Error::Parameter { name, problem }) => Some((name, problem)),
            Error::Unsupported { option: Some(o), what } => Some((o, what)),
            Error::Gpu(e) => gpu_option(e),
            Error::Run(chatty_algo::Error::Engine(inner)) => inner.downcast_ref::<GpuError>().and_then(gpu_option),
            _ => None,
        }
    }

    /// What went wrong, as a caller acts on it.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Parameter { .. } => ErrorKind::Parameter,
            Error::Unsupported { .. } => ErrorKind::Unsupported,
            Error::Graph(e) => graph_kind(e),
            Error::Run(e) => run_kind(e),
            Error::Gpu(e) => gpu_kind(e),
            Error::Ssd(e) => ssd_kind(e),
            #[cfg(feature = "mpi")]
            Error::Mpi(chatty_dist::DistError::Graph(e)) => graph_kind(e),
            #[cfg(feature = "mpi")]
            Error::Mpi(_) => ErrorKind::Device,
        }
    }
}

fn graph_kind(e: &chatty_graph::Error) -> ErrorKind {
    use chatty_graph::Error as E;
    match e {
        E::Io { .. } => ErrorKind::Io,
        E::TooLarge { .. } => ErrorKind::OutOfMemory,
        E::Usage(_) => ErrorKind::Parameter,
        _ => ErrorKind::Input,
    }
}

fn run_kind(e: &chatty_algo::Error) -> ErrorKind {
    use chatty_algo::Error as E;
    match e {
        E::NoVertices | E::NotAVertex { .. } | E::Parameter { .. } => ErrorKind::Parameter,
        E::NegativeWeight(_) | E::PathCountOverflow | E::Unsupported(_) => ErrorKind::Unsupported,
        E::Mismatch(_) => ErrorKind::Verification,
        // An engine's own error, boxed by the engine trait.
        E::Engine(inner) => {
            if let Some(e) = inner.downcast_ref::<chatty_graph::Error>() {
                graph_kind(e)
            } else if let Some(e) = inner.downcast_ref::<GpuError>() {
                gpu_kind(e)
            } else if let Some(e) = inner.downcast_ref::<SsdError>() {
                ssd_kind(e)
            } else {
                ErrorKind::Device
            }
        }
        _ => ErrorKind::Device,
    }
}

fn gpu_option(e: &GpuError) -> Option<(&'static str, &str)> {
    match e {
        GpuError::Unsupported { option: Some(o), what } => Some((o, what)),
        _ => None,
    }
}

fn gpu_kind(e: &GpuError) -> ErrorKind {
    match e {
        GpuError::OutOfMemory { .. } | GpuError::PartTooLarge { .. } => ErrorKind::OutOfMemory,
        GpuError::Unsupported { .. } | GpuError::TooManyVertices { .. } => ErrorKind::Unsupported,
        GpuError::NoSuchDevice { .. } => ErrorKind::Parameter,
        _ => ErrorKind::Device,
    }
}

fn ssd_kind(e: &SsdError) -> ErrorKind {
    match e {
        SsdError::Io { .. } => ErrorKind::Io,
        SsdError::Invalid(_) => ErrorKind::Input,
        SsdError::Config(_) => ErrorKind::Parameter,
        SsdError::Graph(e) => graph_kind(e),
        SsdError::Budget { .. } => ErrorKind::OutOfMemory,
    }
}
