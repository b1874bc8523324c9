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
    /// Generate a small graph, convert, load and analyse it: offline, no GPU needed.
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
