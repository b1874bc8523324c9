//! The command line: one clap definition, the source of `--help`.

use std::path::PathBuf;

use chatty_algo::{Algorithm, DegreeKind, Direction, PrMethod};
use chatty_gpu::{Comm, Control, Mode};
use chatty_graph::Format;
use chatty_net::Recovery;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};

/// A parser for one of a library's closed set of values (`all`, named by `name`,
/// with `aliases` also accepted): `--help` lists the names, a typo is refused with
/// them, and the field gets the library's own type.
fn one_of<T: Copy + Send + Sync + 'static>(
    all: &'static [T],
    name: fn(T) -> &'static str,
    aliases: fn(T) -> &'static [&'static str],
) -> impl TypedValueParser<Value = T> {
    let values = all.iter().map(move |&t| PossibleValue::new(name(t)).aliases(aliases(t).iter().copied()));
    PossibleValuesParser::new(values).map(move |s| {
        all.iter().copied().find(|&t| name(t) == s || aliases(t).contains(&s.as_str())).expect("clap accepted a listed value")
    })
}

fn no_aliases<T>(_: T) -> &'static [&'static str] {
    &[]
}

fn algorithm() -> impl TypedValueParser<Value = Algorithm> {
    one_of(&Algorithm::ALL, Algorithm::name, |a| match a {
        Algorithm::Pr => &["pagerank"],
        Algorithm::Sssp => &["dijkstra"],
        Algorithm::Wcc => &["cc"],
        Algorithm::Bc => &["betweenness"],
        Algorithm::Tc => &["triangles"],
        Algorithm::Kcore => &["core-number", "cores"],
        Algorithm::Lpa => &["label-propagation"],
        Algorithm::Eigenvector => &["eigenvector-centrality"],
        Algorithm::Katz => &["katz-centrality"],
        Algorithm::Hits => &["hubs", "authorities"],
        Algorithm::Degree => &["degree-centrality"],
        Algorithm::Closeness => &["closeness-centrality"],
        Algorithm::Louvain => &["louvain-communities"],
        Algorithm::Leiden => &["leiden-communities"],
        _ => &[],
    })
}

fn direction() -> impl TypedValueParser<Value = Direction> {
    one_of(&Direction::ALL, Direction::name, no_aliases)
}

fn pr_method() -> impl TypedValueParser<Value = PrMethod> {
    one_of(&PrMethod::ALL, PrMethod::name, no_aliases)
}

fn degree_kind() -> impl TypedValueParser<Value = DegreeKind> {
    one_of(&DegreeKind::ALL, DegreeKind::name, no_aliases)
}

fn comm() -> impl TypedValueParser<Value = Comm> {
    one_of(&Comm::ALL, |c| c.name(), no_aliases)
}

fn control() -> impl TypedValueParser<Value = Control> {
    one_of(&Control::ALL, Control::name, no_aliases)
}

fn mode() -> impl TypedValueParser<Value = Mode> {
    const MODES: [Mode; 4] = [Mode::Auto, Mode::Bsp, Mode::Async, Mode::Gmpi];
    one_of(&MODES, Mode::name, no_aliases)
}

/// The ablation's modes: each as itself.
fn ablation_mode() -> impl TypedValueParser<Value = Mode> {
    one_of(&Mode::ALL, Mode::name, no_aliases)
}

fn recovery() -> impl TypedValueParser<Value = Recovery> {
    one_of(&Recovery::ALL, Recovery::name, no_aliases)
}

/// `--format`: a format, or `auto` (`None`: from the name and content).
#[derive(Clone, Copy, Debug)]
pub struct InputFormat(pub Option<Format>);

fn format() -> impl TypedValueParser<Value = InputFormat> {
    // `auto`, then every format the graph layer reads (its list, not a copy of it).
    static FORMATS: std::sync::LazyLock<Vec<InputFormat>> =
        std::sync::LazyLock::new(|| std::iter::once(None).chain(Format::ALL.map(Some)).map(InputFormat).collect());
    one_of(FORMATS.as_slice(), |f| f.0.map_or("auto", Format::name), |f| f.0.map_or(&[], Format::aliases))
}

/// Which engine runs a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EngineChoice {
    /// The best this machine has: an SSD layout runs on ssd, else a usable GPU, else the CPU.
    Auto,
    /// rayon threads over the graph in memory.
    Cpu,
    /// One GPU, or several (--gpus).
    Gpu,
    /// Edges streamed from an SSD layout (`convert --layout ssd`).
    Ssd,
    /// Processes of an MPI job, each holding its own rows of a `.cgr`
    /// (`mpirun -np P chatty run ...`; a build with the `mpi` feature). Under
    /// `mpirun`, `auto` picks it.
    Mpi,
}

/// How the ranks of `--engine mpi` get their rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Distribute {
    /// Every rank maps the same path.
    Shared,
    /// Rank 0 reads the file and sends each rank its rows.
    Mpi,
    /// Rank 0 multicasts the file to every other host's --local-dir.
    Multicast,
}

/// Vertex order on the GPUs and before a partition (one vocabulary for `info` and `run`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Reorder {
    /// The graph's own order.
    #[value(alias = "natural")]
    None,
    /// Breadth-first renumbering: far fewer boundary vertices on road networks and meshes.
    Bfs,
    /// Hubs first (decreasing degree): faster bottom-up BFS steps on power-law graphs.
    Degree,
    /// The engine's choice: bfs for a multi-GPU split of a road-like graph (mean degree
    /// below 8), else the graph's own order.
    Auto,
}

impl Reorder {
    /// The GPU engines' order.
    pub fn order(self) -> chatty_gpu::Order {
        match self {
            Reorder::None => chatty_gpu::Order::Natural,
            Reorder::Bfs => chatty_gpu::Order::Bfs,
            Reorder::Degree => chatty_gpu::Order::Degree,
            Reorder::Auto => chatty_gpu::Order::Auto,
        }
    }

    /// The name reports use.
    pub fn name(self) -> &'static str {
        self.order().name()
    }
}

/// `convert --layout`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Layout {
    /// One .cgr file.
    Cgr,
    /// An index OUTPUT plus 4 KiB pages dealt over --stripes files per side, for `run --engine ssd`.
    Ssd,
}

/// ChattyGraph: graph analytics on CPU cores, GPUs and SSDs.
#[derive(Parser, Debug)]
#[command(name = "chatty", version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("CHATTY_COMMIT"), ")"))]
pub struct Cli {
    /// Never draw progress bars (they are off anyway when stderr is not a terminal).
    #[arg(long, short, global = true)]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Generate two graphs, write and check them, run and verify every kernel on the best engine here: offline, no GPU needed.
    Demo {
        /// Where to keep the demo's files (default: a temporary directory).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Generate a synthetic graph (rmat, urand or grid).
    Generate(GenerateArgs),
    /// Convert any input format to .cgr (or to .el / .wel / .mtx text).
    Convert(ConvertArgs),
    /// Print a graph's size, degrees, self-loops; `--check` verifies a .cgr file.
    Info(InfoArgs),
    /// Run a kernel (bfs, sssp, pr, wcc, bc, spmv, tc, clustering, kcore, scc, lpa, eigenvector, katz, degree, closeness, louvain, leiden) on a graph.
    Run(Box<RunArgs>),
    /// One shortest path between two vertices (by weight, or hops with --hops);
    /// exit code 1 when there is none.
    Path(Box<PathArgs>),
    /// The GPUs of this machine and the link between each pair (NVLink, PCIe, peer access).
    Topo(TopoArgs),
    /// Send a file to every receiver of a multicast group, reliably (graph distribution).
    Broadcast(BroadcastArgs),
    /// Benchmarks that need more than one kernel run.
    #[command(subcommand)]
    Bench(BenchCommand),
}

/// `chatty topo`.
#[derive(Args, Debug)]
pub struct TopoArgs {
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Also measure latency and bandwidth of each transport, 4 B up to --max-bytes
    /// (cached per machine; reused unless --recalibrate). Under mpirun (a build with
    /// the mpi feature): the link between the processes instead, MPI and NCCL
    /// exchanges, each process on its local GPU (cached per job).
    #[arg(long)]
    pub calibrate: bool,
    /// Largest message of the calibration, e.g. 256M.
    #[arg(long, default_value = "256M")]
    pub max_bytes: String,
    /// Measure again even if this machine's calibration is cached.
    #[arg(long)]
    pub recalibrate: bool,
}

/// `chatty bench`.
#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Reliable multicast: NACK against RMA-pull recovery, latency and rate against loss
    /// and receiver count, one process per receiver on loopback multicast.
    Broadcast(BroadcastBenchArgs),
    /// A receiver process of `bench broadcast` (started by it).
    #[command(hide = true)]
    BroadcastReceiver {
        /// Its arguments as JSON.
        args: String,
    },
    /// The multi-GPU ablation: every kernel on one GPU, then on several under every
    /// transport and control mode, from one upload per graph and kernel; one JSON row
    /// per configuration on standard output.
    MultiGpu(MultiGpuBenchArgs),
    /// Tables (markdown) and SVG charts from `bench multi-gpu` rows.
    MultiGpuReport(MultiGpuReportArgs),
    /// Device-initiated messaging (the GMPI report's experiments): kernel- against
    /// host-initiated ping-pong GPU-GPU and GPU-host by size, the raw mapped-memory
    /// round trip, and the message rate with and without warp-aggregated posting.
    Messaging(MessagingBenchArgs),
}

/// `chatty bench messaging`.
#[derive(Args, Debug)]
pub struct MessagingBenchArgs {
    /// Largest message of the ping-pong (sizes go up by 4x from 4 B).
    #[arg(long, default_value = "64M")]
    pub max_bytes: String,
    /// Round trips per size (fewer for large messages: at most 1 GiB moved per size).
    #[arg(long, default_value_t = 2000)]
    pub rounds: u32,
    /// Threads per side of the message-rate experiment.
    #[arg(long, default_value_t = 2048)]
    pub threads: u32,
    /// Messages per thread in the message-rate experiment.
    #[arg(long, default_value_t = 64)]
    pub per_thread: u32,
    /// One JSON row per measurement instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Also write the JSON rows to this file (the tables still go to standard output).
    #[arg(long)]
    pub rows: Option<PathBuf>,
}

/// `chatty bench multi-gpu`.
#[derive(Args, Debug)]
pub struct MultiGpuBenchArgs {
    /// Graphs (.cgr or any input format).
    #[arg(required = true)]
    pub graphs: Vec<PathBuf>,
    /// Kernels.
    #[arg(long, value_delimiter = ',', default_value = "bfs,sssp,pr,wcc,spmv", value_parser = algorithm())]
    pub kernels: Vec<Algorithm>,
    /// GPUs of the multi-GPU rows: a count or `all` (the one-GPU baseline always runs).
    #[arg(long, default_value = "all")]
    pub gpus: String,
    /// Explicit CUDA ordinals of the multi-GPU rows, one part each, instead of --gpus:
    /// a repeated ordinal puts two parts on one GPU (a one-GPU machine exercising the
    /// multi-GPU paths; its rows name the devices, and are no scaling figures).
    #[arg(long, value_delimiter = ',')]
    pub devices: Option<Vec<usize>>,
    /// Transports.
    #[arg(long, value_delimiter = ',', default_value = "auto,p2p,peer,nccl,uva,staged", value_parser = comm())]
    pub comm: Vec<Comm>,
    /// Control modes.
    #[arg(long, value_delimiter = ',', default_value = "threads,single", value_parser = control())]
    pub control: Vec<Control>,
    /// Who sequences the steps: bsp (host), async (GPU-driven levels, peer stores),
    /// gmpi (GPU-driven levels, device-initiated messages); the last two run bfs and
    /// sssp only, and their rows show the mode as their transport.
    #[arg(long, value_delimiter = ',', default_value = "bsp", value_parser = ablation_mode())]
    pub mode: Vec<Mode>,
    /// Vertex orders before splitting.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "none", alias = "partition")]
    pub reorder: Vec<Reorder>,
    /// Timed trials per configuration (after one warm-up), fresh sources each.
    #[arg(long, short = 'n', default_value_t = 5)]
    pub trials: u32,
    /// PageRank iterations (tolerance 0, so every run does this many).
    #[arg(long, default_value_t = 20)]
    pub pr_iters: u32,
    /// Check one trial of each upload against the CPU reference.
    #[arg(long)]
    pub verify: bool,
    #[command(flatten)]
    pub load: LoadArgs,
}

/// `chatty bench multi-gpu-report`.
#[derive(Args, Debug)]
pub struct MultiGpuReportArgs {
    /// Files of JSON rows from `bench multi-gpu`.
    #[arg(required = true)]
    pub rows: Vec<PathBuf>,
    /// Write scaling.svg and modes.svg here.
    #[arg(long)]
    pub charts: Option<PathBuf>,
}

/// `chatty bench broadcast`.
#[derive(Args, Debug)]
pub struct BroadcastBenchArgs {
    /// A run of under a minute: loss 0 and 1%, 1 and 4 receivers, fewer messages.
    #[arg(long)]
    pub quick: bool,
    /// Print one JSON object with a list `runs`.
    #[arg(long)]
    pub json: bool,
    /// Recovery schemes to compare.
    #[arg(long, value_delimiter = ',', default_value = "nack,rma", value_parser = recovery())]
    pub schemes: Vec<Recovery>,
    /// Loss rates injected at each receiver (default 0,0.001,0.01,0.05; quick: 0,0.01).
    #[arg(long, value_delimiter = ',')]
    pub loss: Option<Vec<f64>>,
    /// Receiver counts, one process each (default 1,2,4,8,16; quick: 1,4).
    #[arg(long, value_delimiter = ',')]
    pub receivers: Option<Vec<u32>>,
    /// Mean length of a loss burst (1: independent losses).
    #[arg(long, default_value_t = 1.0)]
    pub burst: f64,
    /// Bytes per message.
    #[arg(long, default_value_t = 8192)]
    pub message_bytes: usize,
    /// Messages of the paced latency phase (default 2000; quick 400).
    #[arg(long)]
    pub latency_messages: Option<u64>,
    /// Microseconds between messages in the latency phase.
    #[arg(long, default_value_t = 500)]
    pub interval_us: u64,
    /// Messages of the unpaced rate phase (default 10000; quick 2000).
    #[arg(long)]
    pub rate_messages: Option<u64>,
    /// The sender's window limits in bytes (flow control); several values add a dimension.
    #[arg(long, value_delimiter = ',', default_value = "8388608")]
    pub window: Vec<usize>,
    /// Write broadcast-latency.svg, broadcast-rate.svg (and with several windows
    /// broadcast-window.svg) into this directory.
    #[arg(long)]
    pub charts: Option<PathBuf>,
}

/// `chatty broadcast`.
#[derive(Args, Debug)]
pub struct BroadcastArgs {
    #[command(subcommand)]
    pub role: BroadcastRole,
    /// Multicast group address and port.
    #[arg(long, default_value = "239.255.42.1:7400", global = true)]
    pub group: String,
    /// Interface address to multicast on (127.0.0.1: this host only).
    #[arg(long, default_value = "127.0.0.1", global = true)]
    pub interface: String,
    /// Shared secret of the group (default: $CHATTY_BROADCAST_KEY): packets without it are dropped.
    #[arg(long, global = true)]
    pub key: Option<String>,
    /// Recovery scheme: rma (receivers read lost packets) or nack.
    #[arg(long, default_value = "rma", global = true, value_parser = recovery())]
    pub scheme: Recovery,
}

/// Which side of a file broadcast.
#[derive(Subcommand, Debug)]
pub enum BroadcastRole {
    /// Send FILE once `--receivers` have joined, then exit when all hold it.
    Send {
        file: PathBuf,
        /// Receivers to wait for before sending.
        #[arg(long, default_value_t = 1)]
        receivers: usize,
        /// Seconds to wait for them.
        #[arg(long, default_value_t = 60)]
        wait: u64,
    },
    /// Receive one file and write it to OUTPUT (verified against the sender's checksum).
    Recv {
        #[arg(short, long)]
        output: PathBuf,
        /// Seconds to wait for the sender.
        #[arg(long, default_value_t = 60)]
        wait: u64,
        /// Injected loss rate on arriving multicast packets (testing).
        #[arg(long, default_value_t = 0.0)]
        loss: f64,
    },
}

/// `chatty run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// The kernel, or several separated by commas (`pr,bfs,wcc`: one load, one result
    /// each). Also accepted: pagerank, dijkstra, cc, betweenness.
    #[arg(value_parser = algorithm(), value_delimiter = ',', required = true)]
    pub algorithm: Vec<Algorithm>,
    /// The graph (.cgr or any input format, converted on the fly).
    pub graph: PathBuf,
    /// Engine.
    #[arg(long, value_enum, default_value = "auto")]
    pub engine: EngineChoice,
    /// Source vertex (bfs, sssp, bc); default: a random vertex with out-edges per trial.
    #[arg(long, short = 'r')]
    pub source: Option<String>,
    /// The flag messages name the source by (`chatty path` takes it as `--from`).
    #[arg(skip = "--source")]
    pub source_flag: &'static str,
    /// With --engine mpi: how the ranks get their rows. shared: every rank maps the same
    /// path (a shared or replicated file system); mpi: rank 0 reads and checks the
    /// file and sends each rank its rows; multicast: rank 0 sends the file by reliable
    /// multicast to --local-dir on every other host, whose ranks map that copy.
    #[arg(long, value_enum, default_value = "shared")]
    pub distribute: Distribute,
    /// With --distribute multicast: the directory on each host that receives the
    /// copy, in a directory of the job's own removed when it ends (`%r`: the rank, for
    /// a copy per rank); default $TMPDIR or /tmp.
    #[arg(long)]
    pub local_dir: Option<PathBuf>,
    /// With --distribute multicast: the multicast group, ADDRESS:PORT. The key is
    /// $CHATTY_BROADCAST_KEY (as for `chatty broadcast`).
    #[arg(long, default_value = "239.255.42.2:7402")]
    pub multicast_group: String,
    /// With --distribute multicast: the local address to multicast on (127.0.0.1: one
    /// host); a host may set its own in $CHATTY_MULTICAST_INTERFACE, which wins.
    #[arg(long, default_value = "127.0.0.1")]
    pub multicast_interface: String,
    /// Number of trials.
    #[arg(long, short = 'n', default_value_t = 1)]
    pub trials: u32,
    /// Check every trial against the sequential reference; exit 1 if one differs.
    #[arg(long, short = 'v')]
    pub verify: bool,
    /// With --verify: run the references on this graph (any input format) instead of
    /// the engine's own copy, e.g. the `.cgr` an SSD layout was made from.
    #[arg(long, value_name = "GRAPH", requires = "verify")]
    pub verify_against: Option<PathBuf>,
    /// Print one JSON object per kernel instead of text (one line each: JSON Lines).
    #[arg(long)]
    pub json: bool,
    /// Write the last trial's answer, one row per vertex: `.csv` / `.tsv` with a header
    /// (`vertex,distance`...), `.parquet` (columns `vertex`, `value`), anything else
    /// `vertex value` per line. With several
    /// kernels each gets its own file, the kernel's name before the extension
    /// (`out.pr.csv`).
    #[arg(long, short = 'o')]
    pub output: Option<PathBuf>,
    /// Show and read vertex ids from 0 even where the input numbers them from 1 (DIMACS,
    /// PACE and Matrix Market files, and .cgr files made from them).
    #[arg(long)]
    pub zero_based: bool,
    /// How many of the largest values (pr, bc, spmv) or components (wcc) the summary lists (at least 1).
    #[arg(long, default_value_t = 10, value_parser = at_least_one)]
    pub top: usize,
    /// Seed for picking random sources, and for Louvain's and Leiden's vertex orders.
    #[arg(long, default_value_t = 27491095)]
    pub seed: u64,
    /// SSSP bucket width (default: the mean edge weight).
    #[arg(long, short = 'd')]
    pub delta: Option<f64>,
    /// PageRank, eigenvector, katz, hits: stop when the L1 change between iterations is
    /// below N times this (networkx's `tol`: 1e-6 per vertex; hits: of its authorities
    /// scaled to a largest of 1).
    #[arg(long, default_value_t = 1e-6)]
    pub tolerance: f64,
    /// PageRank, eigenvector, katz, hits: at most this many iterations.
    #[arg(long, default_value_t = 100)]
    pub max_iters: u32,
    /// PageRank: teleport weights, `vertex weight` per line (ids as the input numbers
    /// them; vertices not listed weigh 0; normalised), networkx's personalization.
    #[arg(long, value_name = "FILE")]
    pub personalization: Option<PathBuf>,
    /// Read the edge weights as networkx's weight='weight' does. PageRank: hand each
    /// vertex's score out in proportion to its out-edges' weights (CPU and SSD
    /// engines). HITS: weigh the adjacency matrix (networkx's hits always does). BC:
    /// shortest paths by weight, Dijkstra's (positive weights; CPU engine).
    #[arg(long)]
    pub weighted: bool,
    /// PageRank: the damping factor (networkx's alpha).
    #[arg(long, alias = "alpha", default_value_t = 0.85)]
    pub damping: f64,
    /// Katz: the attenuation factor (networkx's alpha; converges below 1/λ_max).
    #[arg(long, default_value_t = 0.1, allow_negative_numbers = true)]
    pub katz_alpha: f64,
    /// Katz: the score each vertex has of its own (networkx's beta).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub katz_beta: f64,
    /// Katz: the scores as iterated, not scaled to unit L2 norm (networkx's
    /// normalized=False).
    #[arg(long)]
    pub katz_raw: bool,
    /// Degree centrality: in, out or total (a directed graph's; networkx's
    /// in_degree_centrality, out_degree_centrality, degree_centrality).
    #[arg(long, default_value = "total", value_parser = degree_kind())]
    pub degree: DegreeKind,
    /// Closeness: without Wasserman and Faust's scaling by the share of vertices that
    /// reach each one (networkx's wf_improved=False).
    #[arg(long)]
    pub no_wf_improved: bool,
    /// Louvain, Leiden: modularity's resolution (networkx's resolution: above 1
    /// favours smaller communities, below 1 larger ones).
    #[arg(long, default_value_t = 1.0)]
    pub resolution: f64,
    /// Louvain: stop once a level raises modularity by no more than this (networkx's
    /// threshold).
    #[arg(long, default_value_t = 1e-7)]
    pub threshold: f64,
    /// Louvain, Leiden: at most this many levels (networkx's max_level; default: until
    /// no gain).
    #[arg(long, value_parser = at_least_one)]
    pub max_level: Option<usize>,
    /// PageRank: jacobi (networkx's iteration: each reads the last one's scores) or
    /// gauss-seidel (scores updated in place: fewer iterations to the same tolerance,
    /// as GAPBS's pr; CPU engine; the SSD engine iterates it as jacobi).
    #[arg(long, default_value = "jacobi", value_parser = pr_method())]
    pub pr_method: PrMethod,
    /// BC sources: a count of random sources, `all`, or vertex ids separated by commas
    /// (`3,17,42`, or `3,` for one; numbered as --source; a repeated id counts each
    /// time) (default: one, as --source). Closeness: a count or list estimates it from
    /// those sources' searches (default: exact, from every vertex).
    #[arg(long)]
    pub sources: Option<String>,
    /// With --engine mpi, BC: split the sources across ranks, each holding the whole
    /// graph and running the CPU kernel on its share (scores summed), instead of every
    /// rank taking part in each source's sweeps. For many sources on a graph that fits
    /// in each rank's memory.
    #[arg(long)]
    pub split_sources: bool,
    /// SpMV input vector: `vertex value` lines (every vertex once, ids as the input
    /// numbers them), or one value per line in vertex order (default: all ones).
    #[arg(long)]
    pub x: Option<PathBuf>,
    /// BFS direction policy.
    #[arg(long, default_value = "auto", value_parser = direction())]
    pub direction: Direction,
    /// bfs, sssp: also find each vertex's parent on a shortest path from the source
    /// (the smallest-id one where several are), a `parent` column in --output: the
    /// source is its own parent, an unreached vertex has -1 (none in .parquet).
    #[arg(long)]
    pub parents: bool,
    #[command(flatten)]
    pub open: OpenArgs,
}

/// How `run` and `path` read the graph and open the engine: threads, the input's
/// reading, and each engine's own flags.
#[derive(Args, Debug, Clone)]
pub struct OpenArgs {
    /// CPU threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub load: LoadArgs,
    #[command(flatten)]
    pub gpu: GpuArgs,
    #[command(flatten)]
    pub ssd: SsdArgs,
}

/// `chatty path`: the flags of `run` that a path needs.
#[derive(Args, Debug)]
pub struct PathArgs {
    /// The graph (.cgr or any input format, converted on the fly).
    pub graph: PathBuf,
    /// Where the path starts (ids as the input names them).
    #[arg(long)]
    pub from: String,
    /// Where it ends.
    #[arg(long)]
    pub to: String,
    /// Fewest edges (BFS) even where edges have weights; by default the lightest path.
    #[arg(long)]
    pub hops: bool,
    /// Engine.
    #[arg(long, value_enum, default_value = "auto")]
    pub engine: EngineChoice,
    /// Check the distances and the path's tree against the sequential references.
    #[arg(long, short = 'v')]
    pub verify: bool,
    /// Print one JSON object: the path, its length, and the run's report.
    #[arg(long)]
    pub json: bool,
    /// Show and read vertex ids from 0 even where the input numbers them from 1.
    #[arg(long)]
    pub zero_based: bool,
    #[command(flatten)]
    pub open: OpenArgs,
}

/// The GPU engine's flags (`--engine gpu`).
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "GPU engine")]
pub struct GpuArgs {
    /// GPUs to run on: a count, `all`, or `auto` (one GPU unless the graph does not fit
    /// on one or the run is faster on all; says which). bfs, sssp, pr, wcc and spmv split
    /// the graph; bc keeps it whole on every GPU and splits its sources.
    /// Under mpirun (--engine gpu): GPUs per rank, after the lower local ranks' (auto: one).
    #[arg(long, default_value = "auto")]
    pub gpus: String,
    /// Explicit CUDA ordinals, one part each, e.g. 0,1 (0,0 splits over one GPU, for
    /// testing); under mpirun, this rank's.
    #[arg(long, value_delimiter = ',', hide = true)]
    pub devices: Option<Vec<usize>>,
    /// Multi-GPU control: `threads` (one host thread per GPU) or `single` (one for all).
    #[arg(long, default_value = "threads", value_parser = control())]
    pub control: Control,
    /// Multi-GPU transport for vertex values (--mode bsp): auto (the calibration's
    /// fastest per exchange), p2p (peer copies), peer (peer stores), uva (host-mapped
    /// zero-copy), staged (through host memory), nccl. Between processes (`mpirun ...
    /// --engine gpu`): mpi (through host memory; auto's choice) or nccl (one GPU per
    /// rank). Default: auto.
    #[arg(long, value_parser = comm())]
    pub comm: Option<Comm>,
    /// Who sequences a multi-GPU run: bsp (the host runs each step and exchange),
    /// async (one kernel per GPU runs every level, GPUs meet through flags in each
    /// other's memory) or gmpi (the same kernel, levels exchanged as device-initiated
    /// messages through host proxies); async and gmpi run bfs and sssp. auto: the
    /// engine's choice per kernel, which is bsp as measured so far (with --reorder
    /// auto's breadth-first order on road-like graphs), and always with --comm; the
    /// run says why.
    #[arg(long, default_value = "auto", value_parser = mode())]
    pub mode: Mode,
    /// Vertex order on the GPUs, applied before upload (and before splitting into GPUs
    /// or, with --engine mpi, ranks); answers keep the graph's ids. bfs keeps neighbours
    /// together on road graphs (fewer boundary vertices); degree puts hubs first, which
    /// speeds BFS on power-law graphs on one GPU (the JSON reports its cost); auto: bfs
    /// for a multi-GPU split of a road-like graph, else none.
    #[arg(long, value_enum, default_value = "auto", alias = "partition")]
    pub reorder: Reorder,
    /// Multi-GPU watchdog: a step with no progress for this many seconds stops every GPU.
    #[arg(long, default_value_t = 60.0)]
    pub watchdog: f64,
}

/// The SSD engine's flags (`--engine ssd` on a layout from `convert --layout ssd`).
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "SSD engine")]
pub struct SsdArgs {
    /// Memory the run may use (index, vertex data, IO buffers, bins), e.g. 512M, 4G;
    /// refused up front if it needs more. Default: what the machine has available.
    #[arg(long, value_name = "SIZE")]
    pub mem_budget: Option<String>,
    /// Reads in flight per stripe file.
    #[arg(long, default_value_t = 32)]
    pub io_depth: usize,
    /// Longest run of contiguous pages read at once (4 KiB each).
    #[arg(long, default_value_t = 32)]
    pub merge_pages: usize,
    /// Scatter threads (decode pages into bins); default: half the cores.
    #[arg(long)]
    pub scatter_threads: Option<usize>,
    /// Gather threads (apply bins); default: the other half.
    #[arg(long)]
    pub gather_threads: Option<usize>,
    /// Apply updates with atomics in the scatter threads instead of binning them.
    #[arg(long)]
    pub no_binning: bool,
    /// Read through the page cache (no O_DIRECT).
    #[arg(long)]
    pub buffered: bool,
    /// Read with pread instead of io_uring.
    #[arg(long)]
    pub pread: bool,
}

/// `chatty generate`.
#[derive(Args, Debug)]
pub struct GenerateArgs {
    #[command(subcommand)]
    pub kind: GeneratorKind,
    /// Output file: .cgr, .el, .wel, .csv or .mtx (Matrix Market).
    #[arg(short, long, global = true)]
    pub output: Option<PathBuf>,
    /// Seed of the generator; the same seed gives the same graph.
    #[arg(long, default_value_t = 1, global = true)]
    pub seed: u64,
    /// Attach integer weights uniform in 1..=MAX, MAX at least 1 (rmat and urand; the grid is always weighted).
    #[arg(long, value_name = "MAX", global = true, value_parser = clap::value_parser!(u32).range(1..))]
    pub weights: Option<u32>,
    /// Store every edge in both directions (rmat and urand; the grid is always undirected).
    #[arg(long, global = true)]
    pub undirected: bool,
}

/// Which generator.
#[derive(Subcommand, Debug)]
pub enum GeneratorKind {
    /// R-MAT / Kronecker, Graph500 parameters a=0.57, b=c=0.19.
    Rmat(RandomArgs),
    /// Uniform random endpoints.
    Urand(RandomArgs),
    /// Road-like weighted planar grid.
    Grid {
        /// Vertices per row.
        #[arg(long)]
        width: u64,
        /// Rows.
        #[arg(long)]
        height: u64,
    },
}

/// Size of a random graph.
#[derive(Args, Debug)]
pub struct RandomArgs {
    /// 2^scale vertices.
    #[arg(long, short = 's')]
    pub scale: u32,
    /// Generated edges per vertex.
    #[arg(long, short = 'e', default_value_t = 16)]
    pub edge_factor: u64,
}

/// `chatty convert`.
#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// Input graph (any supported format, optionally .gz).
    pub input: PathBuf,
    /// Output file: .cgr, .el, .wel, .csv or .mtx (Matrix Market).
    #[arg(short, long)]
    pub output: PathBuf,
    #[command(flatten)]
    pub load: LoadArgs,
    /// Also store the transpose (in-edges) of a directed graph in the .cgr (BC counts
    /// paths bottom-up on large levels only with in-edges at hand; the kernels that
    /// pull build them when they load the graph).
    #[arg(long)]
    pub transpose: bool,
    /// Store the graph renumbered (a .cgr output): degree puts hubs first (faster
    /// bottom-up BFS on GPUs for power-law graphs, as `run --reorder degree` without
    /// its cost per run), bfs keeps neighbours together (road networks). The input's
    /// ids are stored too: runs take sources and give answers in them.
    #[arg(long, value_enum, default_value = "none")]
    pub reorder: Reorder,
    /// Output layout.
    #[arg(long, value_enum, default_value = "cgr")]
    pub layout: Layout,
    /// Stripe files per side of an ssd layout (one per SSD).
    #[arg(long, default_value_t = 1)]
    pub stripes: usize,
    /// Directories for the stripe files, dealt round-robin (repeat; default: beside OUTPUT).
    #[arg(long)]
    pub stripe_dir: Vec<PathBuf>,
}

/// How to read an input graph.
#[derive(Args, Debug, Clone)]
pub struct LoadArgs {
    /// Input format (auto: from the name and content).
    #[arg(long, default_value = "auto", value_parser = format())]
    pub format: InputFormat,
    /// Store each edge in both directions; the result is undirected.
    #[arg(long)]
    pub symmetrize: bool,
    /// Drop edges from a vertex to itself.
    #[arg(long)]
    pub drop_self_loops: bool,
    /// Keep one edge of each group of parallel edges (the lightest).
    #[arg(long)]
    pub dedup: bool,
    /// An edge list's vertices are every id from 0 to the largest (ids in no edge
    /// become isolated vertices); by default they are the ids that appear, as
    /// networkx reads them (answers keep the file's ids either way).
    #[arg(long)]
    pub keep_id_range: bool,
    /// Whether an edge list's first line is a header (`source,target`); by default a
    /// CSV's is when its ids are not integers above a line whose are, or are the
    /// usual column names.
    #[arg(long, value_name = "yes|no", value_parser = clap::builder::BoolishValueParser::new())]
    pub header: Option<bool>,
}

impl LoadArgs {
    /// How the graph layer reads the input.
    pub fn read_options(&self) -> chatty_graph::ReadOptions {
        let build = chatty_graph::BuildOptions { symmetrize: self.symmetrize, dedup: self.dedup, drop_self_loops: self.drop_self_loops };
        let ids = chatty_graph::read::IdOptions { keep_id_range: self.keep_id_range, header: self.header };
        chatty_graph::ReadOptions { format: self.format.0, build, ids }
    }
}

/// `chatty info`.
#[derive(Args, Debug)]
pub struct InfoArgs {
    /// The graph (any supported format).
    pub graph: PathBuf,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Verify a .cgr file: checksums, offsets monotone, targets < n.
    #[arg(long)]
    pub check: bool,
    /// Show the multi-GPU engine's partition into K edge-balanced contiguous ranges:
    /// vertices, edges and boundary vertices per part.
    #[arg(long, value_name = "K")]
    pub partition: Option<usize>,
    /// Renumber vertices before partitioning.
    #[arg(long, value_enum, default_value = "none")]
    pub reorder: Reorder,
    #[command(flatten)]
    pub load: LoadArgs,
}

/// A count of at least one (`--top`).
fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(k) => Ok(k),
        Err(e) => Err(e.to_string()),
    }
}
