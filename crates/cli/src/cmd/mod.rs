//! One function per subcommand.

mod bench;
mod broadcast;
mod convert;
mod demo;
mod generate;
mod info;
mod messaging_bench;
mod multi_bench;
mod path;
mod run;
mod topo;

use std::path::Path;

use std::net::SocketAddrV4;

use anyhow::{bail, Context, Result};
use chatty_graph::{Graph, Progress};

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
        Command::Path(a) => path::run(&a, quiet),
        Command::Topo(a) => topo::run(&a),
        Command::Broadcast(a) => broadcast::run(&a),
        Command::Bench(c) => bench::run(&c),
    }
}

/// Reads a graph as `--format` and the transform flags say.
pub fn load_graph(path: &Path, load: &LoadArgs, progress: &dyn Progress) -> Result<Graph> {
    Ok(chatty_graph::read_graph(path, load.read_options(), progress)?)
}

/// A parameter or option of the libraries as its flag: `io_depth` is `--io-depth`
/// (an environment variable, in capitals, stays as it is).
pub fn flag(option: &str) -> String {
    if option.chars().any(|c| c.is_ascii_uppercase()) {
        return option.to_string();
    }
    format!("--{}", option.replace('_', "-"))
}

/// A note from the front door, its option spelt as a flag.
pub fn spell(note: &chatty::Note) -> String {
    match note.option {
        Some(o) => format!("{} {}", flag(o), note.text),
        None => note.text.clone(),
    }
}

/// A digest of the command line: every rank of an MPI job must run the same
/// command, and compares it at start-up.
pub fn command_digest() -> u64 {
    let line: Vec<String> = std::env::args().collect();
    xxhash_rust::xxh3::xxh3_64(line.join("\0").as_bytes())
}

/// A multicast group from `flag`'s `text` (ADDRESS:PORT, a multicast address, a port).
pub fn multicast_group(flag: &str, text: &str) -> Result<SocketAddrV4> {
    let group: SocketAddrV4 = text.parse().with_context(|| format!("{flag} `{text}`: expected an IPv4 multicast ADDRESS:PORT"))?;
    if !group.ip().is_multicast() {
        bail!("{flag} {group}: not a multicast address (224.0.0.0/4)");
    }
    if group.port() == 0 {
        bail!("{flag} {group}: port 0 is not a port a group can meet on; choose one, e.g. {}:7400", group.ip());
    }
    Ok(group)
}

/// A multicast group's key: `flag`, else $CHATTY_BROADCAST_KEY, else the default key
/// (said when `speak`).
pub fn group_key(flag: Option<String>, speak: bool) -> Result<chatty_net::Key> {
    let secret = match flag.or_else(|| std::env::var("CHATTY_BROADCAST_KEY").ok()) {
        Some(k) if k.is_empty() => bail!("--key (or CHATTY_BROADCAST_KEY) is empty: a group's secret needs at least one character"),
        Some(k) => k,
        None => {
            if speak {
                eprintln!("note: no --key or CHATTY_BROADCAST_KEY: using the default key, which any chatty on this network can use");
            }
            "chatty".to_string()
        }
    };
    Ok(chatty_net::Key::derive(secret.as_bytes()))
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
