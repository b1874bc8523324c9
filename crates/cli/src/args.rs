//! The command line: one clap definition, the source of `--help`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

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
    /// Convert any input format to .cgr (or to .el / .wel text).
    Convert(ConvertArgs),
    /// Print a graph's size, degrees, self-loops; `--check` verifies a .cgr file.
    Info(InfoArgs),
    /// Run a kernel (bfs, sssp, pr, wcc, bc, spmv) on a graph.
    Run(RunArgs),
}

/// `chatty run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// The kernel: bfs, sssp, pr, wcc, bc or spmv.
    pub algorithm: String,
    /// The graph (.cgr or any input format, converted on the fly).
    pub graph: PathBuf,
    /// Engine: auto (the best this machine has), cpu, gpu, ssd.
    #[arg(long, default_value = "auto")]
    pub engine: String,
    /// Source vertex (bfs, sssp, bc); default: a random vertex with out-edges per trial.
    #[arg(long, short = 'r')]
    pub source: Option<u32>,
    /// Number of trials.
    #[arg(long, short = 'n', default_value_t = 1)]
    pub trials: u32,
    /// Check every trial against the sequential reference; exit 1 if one differs.
    #[arg(long, short = 'v')]
    pub verify: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Write `vertex value` per line (the last trial's result).
    #[arg(long, short = 'o')]
    pub output: Option<PathBuf>,
    /// Seed for picking random sources.
    #[arg(long, default_value_t = 27491095)]
    pub seed: u64,
    /// SSSP bucket width (default: the mean edge weight).
    #[arg(long, short = 'd')]
    pub delta: Option<f64>,
    /// PageRank: stop when the L1 change is below this.
    #[arg(long, default_value_t = 1e-6)]
    pub tolerance: f64,
    /// PageRank: at most this many iterations.
    #[arg(long, default_value_t = 100)]
    pub max_iters: u32,
    /// BC sources: a count of random sources, or `all` (default: one, as --source).
    #[arg(long)]
    pub sources: Option<String>,
    /// SpMV input vector: one value per vertex, one per line (default: all ones).
    #[arg(long)]
    pub x: Option<PathBuf>,
    /// BFS direction policy: auto, push or pull.
    #[arg(long, default_value = "auto")]
    pub direction: String,
    /// CPU threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub load: LoadArgs,
}

/// `chatty generate`.
#[derive(Args, Debug)]
pub struct GenerateArgs {
    #[command(subcommand)]
    pub kind: GeneratorKind,
    /// Output file: .cgr, .el or .wel.
    #[arg(short, long, global = true)]
    pub output: Option<PathBuf>,
    /// Seed of the generator; the same seed gives the same graph.
    #[arg(long, default_value_t = 1, global = true)]
    pub seed: u64,
    /// Attach integer weights uniform in 1..=MAX (rmat and urand; the grid is always weighted).
    #[arg(long, value_name = "MAX", global = true)]
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
    /// Output file: .cgr, .el or .wel.
    #[arg(short, long)]
    pub output: PathBuf,
    #[command(flatten)]
    pub load: LoadArgs,
    /// Also store the transpose (in-edges) of a directed graph in the .cgr.
    #[arg(long)]
    pub transpose: bool,
}

/// How to read an input graph.
#[derive(Args, Debug, Clone)]
pub struct LoadArgs {
    /// Input format: auto (from the name and content), el, snap, wel, gr, pace, mtx, cgr.
    #[arg(long, default_value = "auto")]
    pub format: String,
    /// Store each edge in both directions; the result is undirected.
    #[arg(long)]
    pub symmetrize: bool,
    /// Drop edges from a vertex to itself.
    #[arg(long)]
    pub drop_self_loops: bool,
    /// Keep one edge of each group of parallel edges (the lightest).
    #[arg(long)]
    pub dedup: bool,
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
    #[command(flatten)]
    pub load: LoadArgs,
}
