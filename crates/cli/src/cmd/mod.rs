//! One function per subcommand.

mod bench;
mod broadcast;
mod convert;
mod demo;
mod generate;
mod info;
mod messaging_bench;
mod multi_bench;
mod run;
mod topo;

use std::path::Path;

use anyhow::Result;
use chatty_graph::{BuildOptions, Graph, Progress, ReadOptions};

use crate::args::{Cli, Command, LoadArgs};

/// Runs the parsed command; the value is the process exit code.
pub fn run(cli: Cli) -> Result<i32> {
    let quiet = cli.quiet;
    match cli.command {
        Command::Demo { dir } => demo::run(dir.as_deref(), quiet),
        Command::Generate(a) => generate::run(&a, quiet),
        Command::Convert(a) => convert::run(&a, quiet),
        Command::Info(a) => info::run(&a, quiet),
        Command::Run(a) => run::run(&a, quiet),
        Command::Topo(a) => topo::run(&a),
        Command::Broadcast(a) => broadcast::run(&a),
        Command::Bench(c) => bench::run(&c),
    }
}

/// Reads a graph as `--format` and the transform flags say.
pub fn load_graph(path: &Path, load: &LoadArgs, progress: &dyn Progress) -> Result<Graph> {
    let format = load.format.0;
    let build = BuildOptions { symmetrize: load.symmetrize, dedup: load.dedup, drop_self_loops: load.drop_self_loops };
    Ok(chatty_graph::read_graph(path, ReadOptions { format, build }, progress)?)
}

/// The GPU `--engine auto` takes: the first one, if it opens. Says why not when it
/// falls back to the CPU (always for a GPU that fails to open; with `announce`, also
/// when there is none).
pub fn auto_gpu(announce: bool) -> Option<chatty_gpu::Gpu> {
    if chatty_gpu::Gpu::count() == 0 {
        if announce {
            eprintln!("engine: cpu (auto: no GPU on this machine)");
        }
        return None;
    }
    chatty_gpu::Gpu::open(0).map_err(|e| eprintln!("engine: cpu (auto: the GPU could not be used: {e})")).ok()
}

/// Bytes as MB/s over `seconds`.
pub fn mb_per_s(bytes: u64, seconds: f64) -> f64 {
    bytes as f64 / 1e6 / seconds.max(1e-9)
}

/// The middle value (the upper one of an even count); `None` for no values.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}
