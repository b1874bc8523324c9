//! `chatty run`: picks and opens an engine, then hands it each kernel asked for in
//! turn through the one harness (`chatty_algo::harness`) and prints what it reports:
//! GAPBS-style `Trial Time:` / `Verification:` / `Average Time:` lines and the
//! answer's summary, or one JSON object per kernel whose keys are the same on every
//! engine.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use chatty_algo::{harness, Algorithm, BcSources, CpuEngine, Distances, Engine, Output, Params, PrParams};
use chatty_gpu::{Comm, Control, Gpu, GpuEngine, Mode, MultiOptions};
use chatty_graph::write::AtomicFile;
use chatty_ssd::{EngineConfig, IoConfig, SsdEngine};

use super::load_graph;
use crate::args::{EngineChoice, GpuArgs, Reorder, RunArgs, SsdArgs};
use crate::progress::Bar;

/// Validates flags before any file is opened.
fn params(a: &RunArgs) -> Result<Params> {
    let bc_sources = match a.sources.as_deref() {
        None => BcSources::One,
        Some("all") => BcSources::All,
        Some(list) if list.contains(',') => {
            let ids: Vec<u32> = (list.split(',').map(str::trim).filter(|v| !v.is_empty()))
                .map(str::parse)
                .collect::<Result<_, _>>()
                .with_context(|| format!("--sources `{list}`: expected vertex ids separated by commas"))?;
            if ids.is_empty() {
                bail!("--sources `{list}` lists no vertex");
            }
            BcSources::List(ids)
        }
        Some(k) => match k.parse::<usize>() {
            Ok(k) if k > 0 => BcSources::Random(k),
            _ => bail!("--sources takes a positive count, `all` or a list of vertex ids (`3,17,42`), not `{k}`"),
        },
    };
    if a.split_sources && (a.engine != EngineChoice::Mpi && !(a.engine == EngineChoice::Auto && under_mpirun())) {
        bail!("--split-sources applies to --engine mpi");
    }
    if let (EngineChoice::Cpu | EngineChoice::Ssd, Some(flag)) = (a.engine, a.gpu.given().first()) {
        let engine = if a.engine == EngineChoice::Cpu { "cpu" } else { "ssd" };
        bail!("{flag} applies to the GPU engine (--engine gpu, or auto on a machine with a GPU), not --engine {engine}");
    }
    if a.sources.is_some() && !a.algorithm.contains(&Algorithm::Bc) {
        bail!("--sources applies to bc only; use --source for {}", a.algorithm[0].name());
    }
    if a.trials == 0 {
        bail!("--trials must be at least 1");
    }
    if !(a.damping > 0.0 && a.damping < 1.0) {
        bail!("--damping takes a factor between 0 and 1 (exclusive), not {}", a.damping);
    }
    Ok(Params {
        source: a.source,
        seed: a.seed,
        delta: a.delta,
        pr: PrParams { tolerance: a.tolerance, max_iters: a.max_iters, damping: a.damping, method: a.pr_method },
        bc_sources,
        x: None,
        personalization: None,
        direction: a.direction,
    })
}

/// Reads a value per vertex for `flag`: `vertex value` lines, ids in the user's
/// numbering (from `base`), each vertex at most once, `#` comments. Vertices not
/// listed are an error, or weigh 0 with `unlisted_zero`. For `--x`, a file of one
/// value per line is also accepted and taken in vertex order.
fn read_vertex_values(path: &Path, flag: &str, n: usize, base: u32, unlisted_zero: bool) -> Result<Vec<f64>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {flag} {}", path.display()))?;
    let lines: Vec<(usize, &str)> = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#')).collect();
    let fields = |l: &str| l.split(|c: char| c.is_whitespace() || c == ',').filter(|f| !f.is_empty()).count();
    let number = |i: usize, l: &str, f: &str| -> Result<f64> {
        f.parse::<f64>().ok().with_context(|| format!("{}:{}: not a number: `{l}`", path.display(), i + 1))
    };
    if !unlisted_zero && lines.iter().all(|(_, l)| fields(l) == 1) {
        if lines.len() != n {
            bail!("{}: {} values for {n} vertices (one per line, in vertex order; or `vertex value` lines)", path.display(), lines.len());
        }
        return lines.iter().map(|&(i, l)| number(i, l, l.trim())).collect();
    }
    let mut values: Vec<Option<f64>> = vec![None; n];
    for &(i, line) in &lines {
        let bad = || anyhow::anyhow!("{}:{}: expected `vertex value`: `{line}`", path.display(), i + 1);
        let mut f = line.split(|c: char| c.is_whitespace() || c == ',').filter(|f| !f.is_empty());
        let (Some(v), Some(x), None) = (f.next(), f.next(), f.next()) else { return Err(bad()) };
        let v = v.parse::<u64>().map_err(|_| bad())?;
        let x = number(i, line, x)?;
        let index = v
            .checked_sub(base as u64)
            .filter(|&i| i < n as u64)
            .with_context(|| format!("{}:{}: vertex {v} is not in the graph", path.display(), i + 1))? as usize;
        if values[index].replace(x).is_some() {
            bail!("{}:{}: vertex {v} is listed twice", path.display(), i + 1);
        }
    }
    match values.iter().position(Option::is_none) {
        Some(v) if !unlisted_zero => {
            bail!("{}: vertex {} has no value ({flag} needs one for each of the {n} vertices)", path.display(), v as u64 + base as u64)
        }
        _ => Ok(values.into_iter().map(|x| x.unwrap_or(0.0)).collect()),
    }
}

pub fn run(a: &RunArgs, quiet: bool) -> Result<i32> {
    let mut p = params(a)?;
    let threads = a.threads.map(|t| capped_threads("--threads", t)).transpose()?;
    build_thread_pool(threads, a.engine)?;
    let outputs: Vec<Option<PathBuf>> =
        a.algorithm.iter().map(|&alg| a.output.as_deref().map(|o| output_path(o, alg, a.algorithm.len()))).collect();
    let inputs = [Some(&a.graph), a.verify_against.as_ref(), a.x.as_ref(), a.personalization.as_ref()];
    for out in outputs.iter().flatten() {
        if let Some(input) = inputs.into_iter().flatten().find(|i| same_file(out, i)) {
            bail!("--output {} is the run's input {}: choose another name", out.display(), input.display());
        }
        // Fail on a bad output path before the (possibly long) load and run.
        drop(AtomicFile::create(out)?);
    }
    let start = Instant::now();
    let (mut engine, speaks) = match a.engine {
        EngineChoice::Mpi => open_mpi(a)?,
        EngineChoice::Auto if under_mpirun() && cfg!(feature = "mpi") => open_mpi(a)?,
        EngineChoice::Gpu if under_mpirun() && cfg!(feature = "mpi") => open_gpu_job(a, quiet)?,
        _ => (open_engine(a, quiet, &p.bc_sources)?, true),
    };
    let quiet = quiet || !speaks;
    let load_seconds = start.elapsed().as_secs_f64();
    let graph = engine.graph_info();
    let base = if a.zero_based { 0 } else { graph.id_base };
    p.source = a.source.map(|s| user_source("--source", s, base, graph.n)).transpose()?;
    if let BcSources::List(list) = &mut p.bc_sources {
        for s in list.iter_mut() {
            *s = user_source("--sources", *s, base, graph.n)?;
        }
    }
    if let BcSources::Random(k) = p.bc_sources {
        if k >= graph.n {
            eprintln!("note: --sources {k}: the graph has {} vertices; bc runs from every one with out-edges", graph.n);
        }
    }
    if let Some(x) = &a.x {
        p.x = Some(read_vertex_values(x, "--x", graph.n, base, false)?);
    }
    if let Some(f) = &a.personalization {
        p.personalization = Some(read_vertex_values(f, "--personalization", graph.n, base, true)?);
    }
    let info = engine.info();
    if !a.json {
        println!(
            "Graph: {} ({} vertices{}, {} edges, {}, {}), loaded in {load_seconds:.3} s; engine {} ({})",
            a.graph.display(),
            graph.n,
            if base == 0 { String::new() } else { format!(" numbered from {base}") },
            graph.m,
            if graph.directed { "directed" } else { "undirected" },
            if graph.weighted { "weighted" } else { "unweighted" },
            info.name,
            info.devices.join(", "),
        );
    }
    let against = match &a.verify_against {
        Some(path) => {
            let bar = Bar::new(quiet);
            let g = load_graph(path, &a.load, &bar)?;
            Some((path.display().to_string(), std::sync::Arc::new(g)))
        }
        None => None,
    };
    let opts = harness::Options { trials: a.trials, verify: a.verify, against };
    let mut failed = false;
    for (&alg, out) in a.algorithm.iter().zip(&outputs) {
        if !a.json && a.algorithm.len() > 1 {
            println!("\n== {}", alg.name());
        }
        let json = a.json;
        // Sources (BC), iterations (PR) or vertices reached (BFS) of long kernels.
        let bar = Bar::new(quiet);
        let outcome = harness::run_with_progress(engine.as_mut(), alg, &p, &opts, &bar, |e| {
            if json {
                return;
            }
            bar.suspend(|| {
                for line in &e.lines {
                    println!("{line}");
                }
                println!("Trial Time:          {:.5}", e.trial.seconds);
                match e.verification {
                    Some(Ok(())) => println!("Verification:        PASS"),
                    Some(Err(err)) => println!("Verification:        FAIL ({err})"),
                    None => {}
                }
            })
        });
        drop(bar);
        for note in engine.take_notes() {
            eprintln!("note: {note}");
        }
        let report = outcome?;
        // Worth saying where it is a visible share of the wait (rmat24: 1.3 s a run).
        if report.in_edges_seconds >= 0.5 {
            eprintln!(
                "note: {:.2} s of the preparation built the in-edges {} reads; `chatty convert GRAPH -o OUT.cgr --transpose` stores them",
                report.in_edges_seconds,
                alg.name()
            );
        }
        if let (false, Some(against)) = (a.json, &report.verified_against) {
            println!("Verified against:    {against}");
        }
        if let (Some(out), true) = (out, speaks) {
            write_output(out, alg, &report.last.output, base)?;
        }
        if a.json {
            let ctx = harness::Context {
                path: &a.graph.display().to_string(),
                load_seconds,
                started: Some(crate::started()),
                commit: env!("CHATTY_COMMIT"),
                top: a.top,
                id_base: base,
            };
            println!("{}", report.json(&ctx));
        } else {
            println!("Average Time:        {:.5}", report.average_seconds());
            if let (Some(b), Some(k), Some(e)) = (report.breakdowns.last(), report.trial_seconds.last(), report.end_to_end_seconds.last()) {
                let exchange = if b.exchange_seconds > 0.0 { format!(" (exchanges {:.5})", b.exchange_seconds) } else { String::new() };
                let in_edges = if report.in_edges_seconds > 0.0 {
                    format!(" (in-edges built: {:.3} s)", report.in_edges_seconds)
                } else {
                    String::new()
                };
                println!(
                    "Wall Time:           {e:.5} (last trial: setup {:.5}, kernels {:.5}{exchange}, download {:.5}); prepared in {:.3} s{in_edges}",
                    b.setup_seconds, k, b.download_seconds, report.prepare_seconds
                );
            }
            println!("Iterations:          {}", report.last.iterations);
            println!("GTEPS:               {:.3} ({} edges examined)", report.gteps(), report.edges_traversed);
            print!("{}", report.last.output.summary(a.top).renumbered(base).report());
            if let Some(residual) = report.last.residual {
                println!(
                    "Residual:            {residual:.3e} (L1 change of the last iteration; stops below {:.3e})",
                    p.pr.tolerance * graph.n as f64
                );
            }
        }
        failed |= matches!(report.verification, Some(Err(_)));
    }
    Ok(i32::from(failed))
}

/// A source given with `flag` in the user's numbering (from `base`) as a 0-based
/// vertex, or an error that names the valid range.
fn user_source(flag: &str, s: u32, base: u32, n: usize) -> Result<u32> {
    if n == 0 {
        bail!("{flag} {s}: the graph has no vertices");
    }
    let last = n as u64 - 1 + base as u64;
    if s < base || s as u64 > last {
        let hint = if base == 1 { " (its input numbers vertices from 1; --zero-based numbers them from 0)" } else { "" };
        bail!("{flag} {s} is not a vertex: this graph's vertices are {base} to {last}{hint}");
    }
    Ok(s - base)
}

/// Where kernel `alg`'s answer goes: `out` itself, or with several kernels
/// `out` with the kernel's name before the extension.
fn output_path(out: &Path, alg: Algorithm, kernels: usize) -> PathBuf {
    if kernels == 1 {
        return out.to_path_buf();
    }
    let stem = out.file_stem().map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let name = match out.extension() {
        Some(ext) => format!("{stem}.{}.{}", alg.name(), ext.to_string_lossy()),
        None => format!("{stem}.{}", alg.name()),
    };
    out.with_file_name(name)
}

/// Whether this process is rank 0 of an MPI job (or not in one), from the launcher's
/// environment, before MPI starts.
#[cfg(feature = "mpi")]
fn under_rank_0() -> bool {
    ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"].iter().find_map(|k| std::env::var(k).ok()).is_none_or(|r| r == "0")
}

/// Whether this process was started by `mpirun`/`srun` (Open MPI's, PMI's or PMIx's
/// environment).
pub(crate) fn under_mpirun() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"].iter().any(|k| std::env::var_os(k).is_some())
}

/// The multi-process engine on this rank, and whether this rank speaks for the job
/// (rank 0: the others' standard output goes to /dev/null and they write no files).
#[cfg(feature = "mpi")]
fn open_mpi(a: &RunArgs) -> Result<(Box<dyn Engine>, bool)> {
    use crate::args::Distribute;
    if a.local_dir.is_some() && a.distribute != Distribute::Multicast {
        bail!("--local-dir applies to --distribute multicast");
    }
    if a.gpu.reorder == Reorder::Degree {
        bail!("--reorder degree applies to the GPU engines; --engine mpi renumbers in bfs order only");
    }
    // With --distribute mpi or multicast only rank 0 reads the file (its error reaches every rank).
    if (a.distribute == Distribute::Shared || under_rank_0()) && !chatty_graph::cgr::is_cgr(&a.graph)? {
        bail!(
            "{}: --engine mpi runs on a .cgr, of which every rank maps its own rows; make one with `chatty convert {} -o NAME.cgr`",
            a.graph.display(),
            a.graph.display()
        );
    }
    let flags = command_digest();
    let distribute = match a.distribute {
        Distribute::Shared => chatty_dist::Distribute::Shared,
        Distribute::Mpi => chatty_dist::Distribute::Mpi,
        Distribute::Multicast => chatty_dist::Distribute::Multicast,
    };
    let multicast = (a.distribute == Distribute::Multicast).then(|| multicast_options(a)).transpose()?;
    let engine = chatty_dist::DistEngine::open(
        &a.graph,
        flags,
        chatty_dist::Options { distribute, multicast, bfs_order: a.gpu.reorder == Reorder::Bfs, split_sources: a.split_sources },
    )?;
    let speaks = engine.rank() == 0;
    if !speaks {
        silence_stdout()?;
    }
    Ok((Box::new(engine), speaks))
}

/// A digest of the command line: every rank must run the same command, and compares
/// it at start-up.
#[cfg(feature = "mpi")]
pub(crate) fn command_digest() -> u64 {
    let line: Vec<String> = std::env::args().collect();
    xxhash_rust::xxh3::xxh3_64(line.join("\0").as_bytes())
}

/// This process's rank among the job's ranks on its host (the launcher's environment),
/// else its rank in the job.
#[cfg(feature = "mpi")]
pub(crate) fn local_rank(rank: usize) -> usize {
    ["OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"]
        .iter()
        .find_map(|k| std::env::var(k).ok()?.parse::<usize>().ok())
        .unwrap_or(rank)
}

/// `--engine gpu` under `mpirun`: the multi-GPU engine over the GPUs of every rank.
/// Each rank loads the graph, drives its own GPUs (`--devices`, else one: its local
/// rank's, modulo the GPUs it sees) and holds the parts that fall to them; values
/// travel between ranks through MPI. Rank 0 speaks for the job.
#[cfg(feature = "mpi")]
fn open_gpu_job(a: &RunArgs, quiet: bool) -> Result<(Box<dyn Engine>, bool)> {
    let comm = chatty_dist::start(command_digest())?;
    let rank = comm.rank();
    let speaks = rank == 0;
    if !speaks {
        silence_stdout()?;
    }
    check_multi_flags(&a.gpu, &a.algorithm)?;
    let count = Gpu::count();
    let devices = match &a.gpu.devices {
        Some(d) => d.clone(),
        None if count == 0 => bail!("rank {rank}: --engine gpu found no GPU on this host"),
        None => {
            let local = local_rank(rank);
            // `--gpus K`: K GPUs a rank, the next K after the lower local ranks' (modulo
            // the GPUs there are); `all`: every GPU of the host; else one.
            let per_rank = match gpus_flag(&a.gpu.gpus)? {
                None if a.gpu.gpus == "all" => count,
                None => 1,
                Some(k) => k,
            };
            (0..per_rank).map(|i| (local * per_rank + i) % count).collect()
        }
    };
    let bar = Bar::new(quiet || !speaks);
    let graph = load_graph(&a.graph, &a.load, &bar)?;
    drop(bar);
    let shape = format!("{} {} {}", graph.num_vertices(), graph.num_edges(), graph.is_directed());
    let shape = xxhash_rust::xxh3::xxh3_64(shape.as_bytes());
    let (lo, hi) = comm.min_max_u64(shape);
    if lo != hi {
        bail!("rank {rank}: the ranks loaded different graphs from {}", a.graph.display());
    }
    let o = MultiOptions {
        devices,
        control: a.gpu.control,
        comm: a.gpu.comm.unwrap_or(Comm::Auto),
        reorder: a.gpu.reorder.order(),
        watchdog: std::time::Duration::from_secs_f64(a.gpu.watchdog),
        mode: a.gpu.mode(),
        processes: Some(chatty_comm::Processes(std::sync::Arc::new(comm))),
    };
    Ok((Box::new(GpuEngine::several(graph, o)), speaks))
}

#[cfg(not(feature = "mpi"))]
fn open_gpu_job(_: &RunArgs, _: bool) -> Result<(Box<dyn Engine>, bool)> {
    unreachable!("without the mpi feature --engine gpu runs in this process")
}

/// `--distribute multicast`'s group, interface, key and local directory.
#[cfg(feature = "mpi")]
fn multicast_options(a: &RunArgs) -> Result<chatty_dist::Multicast> {
    let group = super::broadcast::group("--multicast-group", &a.multicast_group)?;
    let interface = std::env::var("CHATTY_MULTICAST_INTERFACE").unwrap_or_else(|_| a.multicast_interface.clone());
    let interface = interface.parse().with_context(|| format!("multicast interface `{interface}`: expected an IPv4 address"))?;
    let local_dir = a.local_dir.clone().unwrap_or_else(std::env::temp_dir);
    Ok(chatty_dist::Multicast {
        local_dir,
        group,
        interface,
        key: super::broadcast::key(None, under_rank_0())?,
        wait: std::time::Duration::from_secs(60),
    })
}

#[cfg(not(feature = "mpi"))]
fn open_mpi(_: &RunArgs) -> Result<(Box<dyn Engine>, bool)> {
    bail!("this chatty was built without MPI: build it with `cargo build --release --features mpi` (needs Open MPI or MPICH, and libclang)")
}

/// Sends this process's standard output to /dev/null.
#[cfg(feature = "mpi")]
fn silence_stdout() -> Result<()> {
    use std::os::fd::AsRawFd;
    let null = std::fs::OpenOptions::new().write(true).open("/dev/null").context("cannot open /dev/null")?;
    // SAFETY: dup2 on two open descriptors; stdout's buffer is flushed first.
    std::io::stdout().flush()?;
    if unsafe { libc::dup2(null.as_raw_fd(), 1) } < 0 {
        bail!("cannot redirect standard output: {}", std::io::Error::last_os_error());
    }
    Ok(())
}

/// The engine the flags ask for, holding the graph. A machine without the GPU asked
/// for fails before the (possibly long) load; `auto` says which engine it picked.
fn open_engine(a: &RunArgs, quiet: bool, bc_sources: &BcSources) -> Result<Box<dyn Engine>> {
    let layout = chatty_ssd::layout::is_layout(&a.graph);
    match a.engine {
        EngineChoice::Ssd if !layout => {
            std::fs::metadata(&a.graph).with_context(|| format!("{}: cannot open", a.graph.display()))?;
            bail!(
                "{}: --engine ssd runs on an SSD layout; make one with `chatty convert GRAPH -o NAME.ssd --layout ssd --stripes K`",
                a.graph.display()
            )
        }
        EngineChoice::Ssd | EngineChoice::Auto if layout => {
            note_unused_gpu_flags(&a.gpu, "SSD");
            return Ok(Box::new(open_ssd(&a.graph, &a.ssd)?));
        }
        EngineChoice::Mpi => unreachable!("run opens the multi-process engine"),
        _ if layout => bail!("{}: an SSD layout runs on --engine ssd (or auto)", a.graph.display()),
        _ => {}
    }
    let (multi, gpus_auto) = match a.engine {
        EngineChoice::Gpu => multi_options(&a.gpu, &a.algorithm)?,
        _ => (None, false),
    };
    let gpu = match a.engine {
        EngineChoice::Gpu if multi.is_none() || gpus_auto => Some(Gpu::open(0)?),
        EngineChoice::Auto => super::auto_gpu(!a.json),
        _ => None,
    };
    let bar = Bar::new(quiet);
    let graph = load_graph(&a.graph, &a.load, &bar)?;
    drop(bar);
    let (gpu, multi) = match (gpu, multi) {
        (Some(gpu), Some(mut o)) if gpus_auto => {
            let bc = a.algorithm.contains(&Algorithm::Bc).then(|| bc_sources.count(graph.num_vertices()) as u64);
            let choice = chatty_gpu::choose_gpus(&graph, &a.algorithm, bc, o.devices.len(), gpu.free_bytes()?);
            eprintln!("gpus: {} of {} (auto: {})", choice.gpus, o.devices.len(), choice.why);
            if choice.gpus == 1 {
                (Some(gpu), None)
            } else {
                o.devices.truncate(choice.gpus);
                (None, Some(o))
            }
        }
        other => other,
    };
    let gpu = match (gpu, a.engine == EngineChoice::Auto) {
        (Some(gpu), true) => match bc_prefers_cpu(a, &graph, bc_sources) {
            Some(why) => {
                eprintln!("engine: cpu (auto: {why})");
                None
            }
            None => Some(gpu),
        },
        (gpu, _) => gpu,
    };
    Ok(match (gpu, multi) {
        (Some(gpu), _) => {
            if a.engine == EngineChoice::Auto && !a.json {
                eprintln!("engine: gpu (auto: {})", gpu.name());
            }
            Box::new(GpuEngine::one(gpu, graph, a.gpu.reorder.order()))
        }
        (None, Some(o)) => Box::new(GpuEngine::several(graph, o)),
        (None, None) => {
            note_unused_gpu_flags(&a.gpu, "CPU");
            Box::new(CpuEngine::new(graph))
        }
    })
}

/// Says so when `--engine auto` picked an engine without a GPU for a run given GPU flags.
fn note_unused_gpu_flags(a: &GpuArgs, engine: &str) {
    if let Some(flag) = a.given().first() {
        eprintln!("note: {flag} applies to the GPU engine; the {engine} engine runs without it");
    }
}

/// Why `--engine auto` takes the CPU over a GPU for this run, if it does: BC from so
/// many sources on so deep a graph that the GPU's per-level round trips would cost
/// more than the CPU's whole run, as the two engines' models predict (the depth from
/// one BFS on the CPU).
fn bc_prefers_cpu(a: &RunArgs, g: &chatty_graph::Graph, bc_sources: &BcSources) -> Option<String> {
    let n = g.num_vertices();
    if !a.algorithm.contains(&Algorithm::Bc) || n == 0 {
        return None;
    }
    let sources = bc_sources.count(n);
    let root = (0..n as u32).find(|&v| g.out_edges().degree(v) > 0).unwrap_or(0);
    let (_, levels) = chatty_algo::bfs::bfs(g, root, chatty_algo::Direction::Auto, &chatty_graph::NoProgress).ok()?;
    let cpu = chatty_algo::bc::predicted_seconds(n, g.num_edges(), sources, levels);
    let gpu = chatty_gpu::bc_predicted_seconds(n, g.num_edges(), sources, levels);
    (cpu < gpu).then(|| {
        format!(
            "bc from {sources} source(s) about {levels} levels deep: predicted {cpu:.2} s on {} CPU threads against {gpu:.2} s on the GPU",
            rayon::current_num_threads()
        )
    })
}

/// Whether `a` and `b` name the same existing file (links and `./` spellings included).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => (x.dev(), x.ino()) == (y.dev(), y.ino()),
        _ => false,
    }
}

/// Builds the global thread pool of `threads` (or rayon's default: `RAYON_NUM_THREADS`,
/// else one per core) when `--threads` or the CPU engine asks for one. This thread is the
/// pool's worker 0 where that is safe, as an OpenMP program's main thread is: a kernel
/// then starts here rather than being handed to a worker, and ends without waking this
/// thread (ego-Twitter BFS on the 16-core host, median of 60 trials, 3.49 / 1.20 / 0.69
/// → 3.31 / 1.04 / 0.55 ms at 1 / 4 / 16 threads; cnr-2000's 0.1-0.2 ms BFS on the dev
/// VM 2.7-3.2x faster). Not in a pool of one under an engine with threads of its own (GPU,
/// SSD, MPI): this thread would be the only worker, and work those threads sent while it
/// waited on them would never run. Nor under `CHATTY_WAIT_POLICY=active`, whose workers
/// look for work from a broadcast that starts the kernel on a worker
/// ([`chatty_algo::pool::run_on_pool`]).
fn build_thread_pool(threads: Option<usize>, engine: EngineChoice) -> Result<()> {
    let cpu = engine == EngineChoice::Cpu;
    if threads.is_none() && !cpu {
        return Ok(());
    }
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(t) = threads {
        pool = pool.num_threads(t);
    }
    let active = matches!(chatty_algo::pool::wait_policy(), Ok(chatty_algo::pool::WaitPolicy::Active));
    if (cpu || threads.is_some_and(|t| t > 1)) && !active {
        pool = pool.use_current_thread();
    }
    pool.build_global().context("cannot size the thread pool")
}

/// A thread count from `flag`: at least 1, and at most 4 threads a core (more only
/// costs start-up time and memory; thousands take seconds to start), said when capped.
fn capped_threads(flag: &str, t: usize) -> Result<usize> {
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    match t {
        0 => bail!("{flag} must be at least 1"),
        t if t > 4 * cores => {
            eprintln!("note: {flag} {t} capped at {} (4 per core on this machine's {cores} cores)", 4 * cores);
            Ok(4 * cores)
        }
        t => Ok(t),
    }
}

/// The SSD engine under `--mem-budget` (default: the memory available).
fn open_ssd(index: &Path, s: &SsdArgs) -> Result<SsdEngine> {
    if !(1..=4096).contains(&s.io_depth) || !(1..=256).contains(&s.merge_pages) {
        bail!("--io-depth takes 1 to 4096 and --merge-pages 1 to 256");
    }
    let budget = match &s.mem_budget {
        Some(b) => chatty_graph::parse_size(b).with_context(|| format!("--mem-budget `{b}`: expected a size like 512M or 4G"))?,
        None => chatty_graph::available_memory()?,
    };
    let mut cfg = EngineConfig {
        io: IoConfig { queue_depth: s.io_depth, merge_pages: s.merge_pages, direct: !s.buffered, uring: !s.pread },
        binning: !s.no_binning,
        ..EngineConfig::default()
    };
    if let Some(t) = s.scatter_threads {
        cfg.scatter_threads = capped_threads("--scatter-threads", t)?;
    }
    if let Some(t) = s.gather_threads {
        cfg.gather_threads = capped_threads("--gather-threads", t)?;
    }
    Ok(SsdEngine::open(index, cfg, budget)?)
}

/// The multi-GPU engine's options from the flags, or `None` for one GPU, and whether
/// the GPU count is left to [`chatty_gpu::choose_gpus`] once the graph is loaded
/// (`--gpus auto` on a machine with several). Checked before the graph is loaded.
fn multi_options(a: &GpuArgs, algs: &[Algorithm]) -> Result<(Option<MultiOptions>, bool)> {
    check_multi_flags(a, algs)?;
    let mut auto = false;
    let devices = match &a.devices {
        Some(d) => d.clone(),
        None => {
            let count = Gpu::count();
            let wanted = match gpus_flag(&a.gpus)? {
                None if a.gpus == "all" => count,
                None => {
                    // A multi-GPU flag asks for the split: it stays on every GPU.
                    // Degree order is not one: it serves one GPU as well.
                    auto = a.comm.is_none() && a.mode == Mode::Auto && a.control == Control::Threads && a.reorder != Reorder::Bfs;
                    count
                }
                Some(k) => k,
            };
            if count > 0 && wanted > count {
                bail!("--gpus {wanted}: this machine has {count} GPU{}", if count == 1 { "" } else { "s" });
            }
            if wanted <= 1 {
                return Ok((None, false));
            }
            (0..wanted).collect()
        }
    };
    let watchdog = std::time::Duration::from_secs_f64(a.watchdog);
    let comm = a.comm.unwrap_or(Comm::Auto);
    Ok((
        Some(MultiOptions { devices, control: a.control, comm, reorder: a.reorder.order(), watchdog, mode: a.mode(), processes: None }),
        auto,
    ))
}

/// `--gpus`: a count, or `None` for `auto` and `all`.
fn gpus_flag(gpus: &str) -> Result<Option<usize>> {
    match gpus {
        "auto" | "all" => Ok(None),
        k => match k.parse::<usize>() {
            Ok(k) if k > 0 => Ok(Some(k)),
            _ => bail!("--gpus takes a positive count, `auto` or `all`, not `{k}`"),
        },
    }
}

/// The multi-GPU flags that make sense on their own and with the kernels asked for.
fn check_multi_flags(a: &GpuArgs, algs: &[Algorithm]) -> Result<()> {
    if !(a.watchdog > 0.0 && a.watchdog.is_finite()) {
        bail!("--watchdog takes a positive number of seconds");
    }
    if a.devices.as_ref().is_some_and(Vec::is_empty) {
        bail!("--devices needs at least one ordinal");
    }
    if let Some(alg) = algs.iter().find(|&&alg| !a.mode.supports(alg)) {
        bail!("--mode {} has bfs and sssp, not {}", a.mode.name(), alg.name());
    }
    if let (Some(c), Mode::Async | Mode::Gmpi) = (a.comm, a.mode) {
        bail!("--comm {} applies to --mode bsp; --mode {} moves levels its own way", c.name(), a.mode.name());
    }
    Ok(())
}

/// Writes one row per vertex through a temporary file: `.csv` and `.tsv` with a
/// header naming the value (`vertex,distance`), anything else `vertex value` lines;
/// vertex ids (and WCC labels) from `base`.
/// Unreachable is `-1` (BFS) and `inf` (SSSP).
pub(crate) fn write_output(path: &Path, alg: Algorithm, o: &Output, base: u32) -> Result<()> {
    let ext = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
    if ext.as_deref() == Some("parquet") {
        return write_parquet(path, o, base);
    }
    let sep = match ext.as_deref() {
        Some("csv") => Some(','),
        Some("tsv") => Some('\t'),
        _ => None,
    };
    let mut f = AtomicFile::create(path)?;
    let written = (|| -> std::io::Result<()> {
        if let Some(sep) = sep {
            writeln!(f, "vertex{sep}{}", value_name(alg))?;
        }
        let sep = sep.unwrap_or(' ');
        let base = base as usize;
        let mut line = |v: usize, value: std::fmt::Arguments| writeln!(f, "{}{sep}{value}", v + base);
        match o {
            Output::Depths(d) => d.iter().enumerate().try_for_each(|(v, &x)| {
                if x == chatty_algo::bfs::UNREACHED {
                    line(v, format_args!("-1"))
                } else {
                    line(v, format_args!("{x}"))
                }
            }),
            Output::Distances(Distances::Int(d)) => {
                d.iter()
                    .enumerate()
                    .try_for_each(|(v, &x)| if x == u64::MAX { line(v, format_args!("inf")) } else { line(v, format_args!("{x}")) })
            }
            Output::Distances(Distances::Float(d)) => {
                d.iter()
                    .enumerate()
                    .try_for_each(|(v, &x)| if x.is_infinite() { line(v, format_args!("inf")) } else { line(v, format_args!("{x}")) })
            }
            Output::Values(s) => s.iter().enumerate().try_for_each(|(v, &x)| line(v, format_args!("{x}"))),
            // Labels are vertex ids too.
            Output::Labels(l) => l.iter().enumerate().try_for_each(|(v, &x)| line(v, format_args!("{}", x as usize + base))),
        }
    })();
    written.with_context(|| format!("cannot write {}", path.display()))?;
    f.commit()?;
    Ok(())
}

/// Writes columns `vertex` (u32, from `base`) and `value` as Parquet (uncompressed),
/// through a temporary file: BFS depths as i64 (-1 unreachable), SSSP distances as
/// f64 (inf unreachable), WCC labels as u32 (from `base`), the rest as f64.
fn write_parquet(path: &Path, o: &Output, base: u32) -> Result<()> {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, UInt32Array};

    let n = match o {
        Output::Depths(d) => d.len(),
        Output::Distances(Distances::Int(d)) => d.len(),
        Output::Distances(Distances::Float(d)) => d.len(),
        Output::Values(v) => v.len(),
        Output::Labels(l) => l.len(),
    };
    let vertex: ArrayRef = Arc::new(UInt32Array::from_iter_values((0..n as u32).map(|v| v + base)));
    let value: ArrayRef = match o {
        Output::Depths(d) => {
            Arc::new(Int64Array::from_iter_values(d.iter().map(|&x| if x == chatty_algo::bfs::UNREACHED { -1 } else { x as i64 })))
        }
        Output::Distances(Distances::Int(d)) => {
            Arc::new(Float64Array::from_iter_values(d.iter().map(|&x| if x == u64::MAX { f64::INFINITY } else { x as f64 })))
        }
        Output::Distances(Distances::Float(d)) => Arc::new(Float64Array::from_iter_values(d.iter().copied())),
        Output::Values(v) => Arc::new(Float64Array::from_iter_values(v.iter().copied())),
        Output::Labels(l) => Arc::new(UInt32Array::from_iter_values(l.iter().map(|&x| x + base))),
    };
    let batch = RecordBatch::try_from_iter([("vertex", vertex), ("value", value)]).context("building the Parquet columns")?;
    let file = AtomicFile::create(path)?;
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).context("starting the Parquet file")?;
    writer.write(&batch).with_context(|| format!("cannot write {}", path.display()))?;
    writer.into_inner().with_context(|| format!("cannot write {}", path.display()))?.commit()?;
    Ok(())
}

/// The value column's name in `.csv` / `.tsv` outputs.
fn value_name(alg: Algorithm) -> &'static str {
    match alg {
        Algorithm::Bfs => "depth",
        Algorithm::Sssp => "distance",
        Algorithm::Pr => "pagerank",
        Algorithm::Wcc => "component",
        Algorithm::Bc => "betweenness",
        Algorithm::Spmv => "y",
    }
}
