//! What a caller asks for: which engine, and each engine's options. Plain data,
//! checked by [`crate::open`]; the CLI's flags and Python's keywords both become one.

use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::PathBuf;
use std::time::Duration;

use chatty_gpu::{Comm, Control, Mode, Order};

/// The engines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum EngineKind {
    /// The one auto policy ([`crate::policy`]) picks: an SSD layout runs on the SSD
    /// engine, under `mpirun` the MPI engine, else the CPU or the GPU.
    #[default]
    Auto,
    /// Rayon threads over the graph in memory.
    Cpu,
    /// One GPU, or several (a split graph).
    Gpu,
    /// Edges streamed from an SSD layout.
    Ssd,
    /// Ranks of an MPI job, each holding its rows.
    Mpi,
}

impl EngineKind {
    /// The name reports and flags use.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Auto => "auto",
            EngineKind::Cpu => "cpu",
            EngineKind::Gpu => "gpu",
            EngineKind::Ssd => "ssd",
            EngineKind::Mpi => "mpi",
        }
    }

    /// Parses [`EngineKind::name`].
    pub fn from_name(name: &str) -> Option<EngineKind> {
        [EngineKind::Auto, EngineKind::Cpu, EngineKind::Gpu, EngineKind::Ssd, EngineKind::Mpi].into_iter().find(|k| k.name() == name)
    }
}

/// How many GPUs the GPU engine runs on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GpuCount {
    /// One, unless the graph does not fit on one or the run is measured faster on all
    /// ([`chatty_gpu::choose_gpus`]).
    #[default]
    Auto,
    /// Every GPU of the machine.
    All,
    /// This many.
    Count(usize),
}

/// The GPU engine's options.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuSpec {
    /// How many GPUs.
    pub gpus: GpuCount,
    /// Explicit CUDA ordinals, one part each (`[0, 0]` splits over one GPU, for tests).
    pub devices: Option<Vec<usize>>,
    /// One host thread per GPU, or one for all.
    pub control: Control,
    /// The transport for vertex values (`None`: the calibration's fastest per exchange).
    pub comm: Option<Comm>,
    /// Who sequences a multi-GPU run.
    pub mode: Mode,
    /// A step that makes no progress for this long stops every GPU.
    pub watchdog: Duration,
}

impl Default for GpuSpec {
    fn default() -> Self {
        GpuSpec {
            gpus: GpuCount::Auto,
            devices: None,
            control: Control::Threads,
            comm: None,
            mode: Mode::Auto,
            watchdog: Duration::from_secs(60),
        }
    }
}

impl GpuSpec {
    /// `mode`, with auto settled to bsp when a transport was asked for (only bsp
    /// exchanges through one).
    pub fn settled_mode(&self) -> Mode {
        match (self.mode, self.comm) {
            (Mode::Auto, Some(_)) => Mode::Bsp,
            (mode, _) => mode,
        }
    }

    /// The options set to other values than their defaults, by name: an engine without
    /// a GPU refuses them rather than ignore them.
    pub fn given(&self) -> Vec<&'static str> {
        let d = GpuSpec::default();
        [
            (self.gpus != d.gpus, "gpus"),
            (self.devices != d.devices, "devices"),
            (self.control != d.control, "control"),
            (self.comm != d.comm, "comm"),
            (self.mode != d.mode, "mode"),
            (self.watchdog != d.watchdog, "watchdog"),
        ]
        .into_iter()
        .filter_map(|(set, name)| set.then_some(name))
        .collect()
    }
}

/// The SSD engine's options.
#[derive(Clone, Debug, PartialEq)]
pub struct SsdSpec {
    /// Memory the run may use (index, vertex data, IO buffers, bins); `None`: what the
    /// machine has available.
    pub budget: Option<u64>,
    /// Reads in flight per stripe file (1 to 4096).
    pub io_depth: usize,
    /// Longest run of contiguous 4 KiB pages read at once (1 to 256).
    pub merge_pages: usize,
    /// Threads decoding pages into bins (`None`: half the cores).
    pub scatter_threads: Option<usize>,
    /// Threads applying bins (`None`: the other half).
    pub gather_threads: Option<usize>,
    /// Bin updates for the gather threads (else atomics in the scatter threads).
    pub binning: bool,
    /// Bypass the page cache (`O_DIRECT`).
    pub direct: bool,
    /// Read through io_uring (else `pread`).
    pub uring: bool,
}

impl Default for SsdSpec {
    fn default() -> Self {
        let io = chatty_ssd::IoConfig::default();
        SsdSpec {
            budget: None,
            io_depth: io.queue_depth,
            merge_pages: io.merge_pages,
            scatter_threads: None,
            gather_threads: None,
            binning: true,
            direct: io.direct,
            uring: io.uring,
        }
    }
}

/// How the ranks of the MPI engine get their rows.
#[derive(Clone, Debug, Default)]
pub enum Distribute {
    /// Every rank maps the same path (a shared or replicated file system).
    #[default]
    Shared,
    /// Rank 0 reads and checks the file and sends each rank its rows.
    Mpi,
    /// Rank 0 multicasts the file to every other host, whose ranks map that copy.
    Multicast(MulticastSpec),
}

/// Where and how [`Distribute::Multicast`] sends the file.
#[derive(Clone)]
pub struct MulticastSpec {
    /// The directory on each host that receives the copy (`%r`: the rank).
    pub local_dir: PathBuf,
    /// The multicast group.
    pub group: SocketAddrV4,
    /// The local address to multicast on.
    pub interface: Ipv4Addr,
    /// The group's key.
    pub key: chatty_net::Key,
}

impl std::fmt::Debug for MulticastSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key is a secret: it stays out of logs.
        f.debug_struct("MulticastSpec")
            .field("local_dir", &self.local_dir)
            .field("group", &self.group)
            .field("interface", &self.interface)
            .finish()
    }
}

/// The MPI engine's options.
#[derive(Clone, Debug, Default)]
pub struct MpiSpec {
    /// How the ranks get their rows.
    pub distribute: Distribute,
    /// BC: each rank runs the CPU kernel on the whole graph for its share of the
    /// sources, scores summed.
    pub split_sources: bool,
    /// A digest of what every rank was asked to do (the command line): ranks compare
    /// it at start-up and refuse to run different commands.
    pub digest: u64,
}

/// Which engine to open, and the options of each (those of engines not opened are
/// refused where they were set, rather than ignored).
#[derive(Clone, Debug)]
pub struct EngineSpec {
    /// The engine.
    pub kind: EngineKind,
    /// CPU threads (`None`: every core); capped at [`crate::process::THREADS_PER_CORE`] a core.
    pub threads: Option<usize>,
    /// The vertex order the GPU and MPI engines renumber to before upload or split
    /// (answers keep the graph's ids).
    pub reorder: Order,
    /// The GPU engine's options.
    pub gpu: GpuSpec,
    /// The SSD engine's options.
    pub ssd: SsdSpec,
    /// The MPI engine's options.
    pub mpi: MpiSpec,
}

impl Default for EngineSpec {
    fn default() -> Self {
        EngineSpec::new(EngineKind::Auto)
    }
}

impl EngineSpec {
    /// The engine `kind` with every option at its default.
    pub fn new(kind: EngineKind) -> EngineSpec {
        EngineSpec { kind, threads: None, reorder: Order::Auto, gpu: GpuSpec::default(), ssd: SsdSpec::default(), mpi: MpiSpec::default() }
    }

    /// The auto policy's choice, defaults everywhere.
    pub fn auto() -> EngineSpec {
        EngineSpec::new(EngineKind::Auto)
    }

    /// The CPU engine on `threads` threads (`None`: every core).
    pub fn cpu(threads: Option<usize>) -> EngineSpec {
        EngineSpec { threads, ..EngineSpec::new(EngineKind::Cpu) }
    }

    /// The GPU engine, one GPU unless more pay.
    pub fn gpu() -> EngineSpec {
        EngineSpec::new(EngineKind::Gpu)
    }

    /// The GPU options set to other values than their defaults (`reorder` among them):
    /// what an engine without a GPU refuses.
    pub fn gpu_options_given(&self) -> Vec<&'static str> {
        let mut given = self.gpu.given();
        if !matches!(self.reorder, Order::Auto) {
            given.push("reorder");
        }
        given
    }
}
