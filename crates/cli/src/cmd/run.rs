//! `chatty run`: picks and opens an engine, then hands it each kernel asked for in
//! turn through the one harness (`chatty_algo::harness`) and prints what it reports:
//! GAPBS-style `Trial Time:` / `Verification:` / `Average Time:` lines and the
//! answer's summary, or one JSON object per kernel whose keys are the same on every
//! engine.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use chatty::{
    harness, process, Algorithm, BcSources, CommunityParams, Distances, Engine, EngineKind, EngineSpec, GpuCount, GpuSpec, GraphSource,
    KatzParams, MpiSpec, Output, Params, PrParams, SsdSpec, Workload,
};
use chatty_graph::file::AtomicFile;
use chatty_graph::{Naming, VertexNames};

use super::load_graph;
use crate::args::{Distribute, EngineChoice, RunArgs};
use crate::progress::Bar;

/// Validates flags before any file is opened.
fn params(a: &RunArgs) -> Result<Params> {
    let bc_sources = match a.sources.as_deref() {
        None => BcSources::One,
        Some("all") => BcSources::All,
        Some(list) if list.contains(',') => {
            let count = listed_sources(list).count();
            if count == 0 {
                bail!("--sources `{list}` lists no vertex");
            }
            // Which vertices the names are is known once the graph is (vertex_inputs).
            BcSources::List(vec![0; count])
        }
        Some(k) => match k.parse::<usize>() {
            Ok(k) if k > 0 => BcSources::Random(k),
            _ => bail!("--sources takes a positive count, `all` or a list of vertex ids (`3,17,42`), not `{k}`"),
        },
    };
    if a.sources.is_some() && !a.algorithm.iter().any(|a| matches!(a, Algorithm::Bc | Algorithm::Closeness)) {
        bail!("--sources applies to bc and closeness only; use --source for {}", a.algorithm[0].name());
    }
    if a.weighted && !a.algorithm.iter().any(|a| matches!(a, Algorithm::Pr | Algorithm::Hits | Algorithm::Bc)) {
        bail!("--weighted applies to pr, hits and bc; {} reads the weights it needs by itself", a.algorithm[0].name());
    }
    if a.trials == 0 {
        bail!("--trials must be at least 1");
    }
    if let (true, Some(alg)) = (a.parents, a.algorithm.iter().find(|a| !matches!(a, Algorithm::Bfs | Algorithm::Sssp))) {
        bail!("--parents applies to bfs and sssp (paths of shortest lengths); {} has none", alg.name());
    }
    let p = Params {
        source: None, // the user names it: read once the graph is (vertex_inputs)
        seed: a.seed,
        delta: a.delta,
        pr: PrParams { tolerance: a.tolerance, max_iters: a.max_iters, damping: a.damping, method: a.pr_method },
        katz: KatzParams { alpha: a.katz_alpha, beta: a.katz_beta, normalized: !a.katz_raw },
        degree: a.degree,
        wf_improved: !a.no_wf_improved,
        community: CommunityParams {
            resolution: a.resolution,
            threshold: a.threshold,
            max_level: a.max_level.map(|l| l.min(u32::MAX as usize) as u32),
        },
        bc_sources,
        x: None,
        personalization: None,
        direction: a.direction,
        parents: a.parents,
        weighted: a.weighted,
    };
    // What can be checked before the graph is read; the rest once it is (the harness).
    chatty_algo::check_scalar_params(&p).map_err(chatty::Error::from)?;
    Ok(p)
}

/// The vertices a `--sources` list names, as the user wrote them.
fn listed_sources(list: &str) -> impl Iterator<Item = &str> {
    list.split(',').map(str::trim).filter(|v| !v.is_empty())
}

/// Reads a value per vertex for `flag`: `vertex value` lines, vertices as the user
/// names them (`naming`), each at most once, `#` comments. Vertices not listed are an
/// error, or weigh 0 with `unlisted_zero`. For `--x`, a file of one value per line is
/// also accepted and taken in vertex order.
fn read_vertex_values(path: &Path, flag: &str, n: usize, naming: &Naming, unlisted_zero: bool) -> Result<Vec<f64>> {
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
        let x = number(i, line, x)?;
        let index = naming.vertex(v, n).map_err(|e| anyhow::anyhow!("{}:{}: {e}", path.display(), i + 1))? as usize;
        if values[index].replace(x).is_some() {
            bail!("{}:{}: vertex {v} is listed twice", path.display(), i + 1);
        }
    }
    match values.iter().position(Option::is_none) {
        Some(v) if !unlisted_zero => {
            bail!("{}: vertex {} has no value ({flag} needs one for each of the {n} vertices)", path.display(), naming.name(v as u32))
        }
        _ => Ok(values.into_iter().map(|x| x.unwrap_or(0.0)).collect()),
    }
}

/// What `run` and `path` start from: the engine holding the graph, whether this
/// process speaks for the run, the parameters with the vertex inputs read, how the
/// user names vertices, and the seconds loading took.
pub(crate) struct Started {
    pub engine: Box<dyn Engine>,
    pub speaks: bool,
    pub p: Params,
    pub naming: Naming,
    pub load_seconds: f64,
}

/// Checks the flags, sets the process up (threads, pool), opens the engine on the
/// graph and reads the vertex inputs.
pub(crate) fn start(a: &RunArgs, quiet: bool) -> Result<Started> {
    if process::under_mpirun() && !cfg!(feature = "mpi") {
        bail!(
            "this chatty was built without MPI but runs under mpirun: every rank would run the whole job; \
             build it with `cargo build --release --features mpi` (Open MPI or MPICH, and libclang)"
        );
    }
    let mut p = params(a)?;
    let mut spec = engine_spec(a)?;
    if let Some(t) = spec.threads {
        let (t, note) = process::threads("threads", t)?;
        note.into_iter().for_each(|n| eprintln!("note: {}", super::spell(&n)));
        spec.threads = Some(t);
    }
    process::build_global_pool(spec.threads, spec.kind)?;
    let start = Instant::now();
    let (engine, speaks) = open_engine(a, &spec, &p, quiet)?;
    let load_seconds = start.elapsed().as_secs_f64();
    let graph = engine.graph_info();
    let naming = graph.naming(a.zero_based);
    vertex_inputs(a, &mut p, graph.n, &naming)?;
    Ok(Started { engine, speaks, p, naming, load_seconds })
}

pub fn run(a: &RunArgs, quiet: bool) -> Result<i32> {
    let outputs: Vec<Option<PathBuf>> =
        a.algorithm.iter().map(|&alg| a.output.as_deref().map(|o| output_path(o, alg, a.algorithm.len()))).collect();
    check_outputs(a, &outputs)?;
    let Started { mut engine, speaks, p, naming, load_seconds } = start(a, quiet)?;
    let quiet = quiet || !speaks;
    let graph = engine.graph_info();
    if !a.json {
        let info = engine.info();
        println!(
            "Graph: {} ({} vertices{}, {} edges, {}, {}), loaded in {load_seconds:.3} s; engine {} ({})",
            a.graph.display(),
            graph.n,
            match naming {
                Naming::From(0) => String::new(),
                Naming::From(base) => format!(" numbered from {base}"),
                Naming::Names(_) => " named by its input".into(),
            },
            graph.m,
            if graph.directed { "directed" } else { "undirected" },
            if graph.weighted { "weighted" } else { "unweighted" },
            info.name,
            info.devices.join(", "),
        );
    }
    let against = match &a.verify_against {
        Some(path) => Some((path.display().to_string(), std::sync::Arc::new(load_graph(path, &a.open.load, &Bar::new(quiet))?))),
        None => None,
    };
    let opts = harness::Options { trials: a.trials, verify: a.verify, against };
    let mut failed = false;
    // Every kernel's output appears, or none: each is committed once all have run.
    let mut written = Vec::new();
    for (&alg, out) in a.algorithm.iter().zip(&outputs) {
        if !a.json && a.algorithm.len() > 1 {
            println!("\n== {}", alg.name());
        }
        let report = run_kernel(a, engine.as_mut(), alg, &p, &opts, quiet)?;
        if let (Some(caveat), true) = (report.caveat(), speaks) {
            eprintln!("note: {caveat}");
        }
        if let (Some(out), true) = (out, speaks) {
            written.push(write_output(out, alg, &report.last.output, report.parents.as_deref(), &naming)?);
        }
        if a.json {
            println!("{}", report.json(&context(&a.graph.display().to_string(), load_seconds, a.top, &naming)));
        } else {
            print_report(&report, a.top, &naming, p.pr.stop(graph.n));
        }
        failed |= matches!(report.verification, Some(Err(_)));
    }
    written.into_iter().try_for_each(AtomicFile::commit)?;
    Ok(i32::from(failed))
}

/// What the report says of the run beyond the engine's: the graph's path as given,
/// the load time, this binary's commit and start, and how vertices are named.
pub(crate) fn context<'a>(path: &'a str, load_seconds: f64, top: usize, naming: &'a Naming) -> harness::Context<'a> {
    harness::Context { path, load_seconds, started: Some(crate::started()), commit: env!("CHATTY_COMMIT"), top, naming }
}

/// Refuses, before the (possibly long) load and run, an output that is one of the run's
/// inputs or cannot be created.
fn check_outputs(a: &RunArgs, outputs: &[Option<PathBuf>]) -> Result<()> {
    let inputs = [Some(&a.graph), a.verify_against.as_ref(), a.x.as_ref(), a.personalization.as_ref()];
    for out in outputs.iter().flatten() {
        if let Some(input) = inputs.into_iter().flatten().find(|i| same_file(out, i)) {
            bail!("--output {} is the run's input {}: choose another name", out.display(), input.display());
        }
        drop(AtomicFile::create(out)?);
    }
    Ok(())
}

/// The engine `spec` asks for on the run's graph, and whether this process speaks
/// for the run (rank 0 of an MPI job; the others print nothing). Prints the auto
/// policy's choice and the notes.
fn open_engine(a: &RunArgs, spec: &EngineSpec, p: &Params, quiet: bool) -> Result<(Box<dyn Engine>, bool)> {
    let work = Workload::new(a.algorithm.clone(), p);
    let read = a.open.load.read_options();
    let bar = Bar::new(quiet || (process::under_mpirun() && !process::under_rank_0()));
    let opened = chatty::open(spec, GraphSource::File { path: &a.graph, read }, &work, &bar)?;
    drop(bar);
    let speaks = opened.speaks;
    if !speaks {
        silence_stdout()?;
        return Ok((opened.engine, speaks));
    }
    if let Some(choice) = &opened.choice {
        eprintln!("{choice}");
    }
    for note in &opened.notes {
        eprintln!("note: {}", super::spell(note));
    }
    Ok((opened.engine, speaks))
}

/// The run's vertex inputs in 0-based ids of a graph of `n` vertices the user names
/// by `naming`: sources, and the `--x` and `--personalization` files.
fn vertex_inputs(a: &RunArgs, p: &mut Params, n: usize, naming: &Naming) -> Result<()> {
    let vertex = |flag: &str, s: &str| naming.vertex(s, n).map_err(|e| anyhow::anyhow!("{flag} {e}"));
    p.source = a.source.as_deref().map(|s| vertex(a.source_flag, s)).transpose()?;
    if let (BcSources::List(list), Some(names)) = (&mut p.bc_sources, a.sources.as_deref()) {
        *list = listed_sources(names).map(|s| vertex("--sources", s)).collect::<Result<_>>()?;
    }
    if let BcSources::Random(k) = p.bc_sources {
        if k >= n {
            eprintln!("note: --sources {k}: the graph has {n} vertices; the searches start from every one with out-edges");
        }
    }
    if let Some(x) = &a.x {
        p.x = Some(read_vertex_values(x, "--x", n, naming, false)?);
    }
    if let Some(f) = &a.personalization {
        p.personalization = Some(read_vertex_values(f, "--personalization", n, naming, true)?);
    }
    Ok(())
}

/// The trials of `alg`, each printed as GAPBS prints it unless the report is JSON, with
/// a progress bar for long kernels (BC's sources, PageRank's iterations).
fn run_kernel(
    a: &RunArgs,
    engine: &mut dyn Engine,
    alg: Algorithm,
    p: &Params,
    opts: &harness::Options,
    quiet: bool,
) -> Result<harness::Report> {
    let json = a.json;
    let bar = Bar::new(quiet);
    let outcome = harness::run_with_progress(engine, alg, p, opts, &bar, |e| {
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
    let report = outcome.map_err(chatty::Error::from)?;
    if let Some(note) = report.kernel_note() {
        eprintln!("note: {note}");
    }
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
    Ok(report)
}

/// The text report's closing lines: times, iterations, GTEPS, the answer's summary
/// (vertices named by `naming`) and PageRank's residual against its `stop` threshold.
fn print_report(report: &harness::Report, top: usize, naming: &Naming, stop: f64) {
    println!("Average Time:        {:.5}", report.average_seconds());
    if let (Some(b), Some(k), Some(e)) = (report.breakdowns.last(), report.trial_seconds.last(), report.end_to_end_seconds.last()) {
        let exchange = if b.exchange_seconds > 0.0 { format!(" (exchanges {:.5})", b.exchange_seconds) } else { String::new() };
        let in_edges =
            if report.in_edges_seconds > 0.0 { format!(" (in-edges built: {:.3} s)", report.in_edges_seconds) } else { String::new() };
        println!(
            "Wall Time:           {e:.5} (last trial: setup {:.5}, kernels {:.5}{exchange}, download {:.5}); prepared in {:.3} s{in_edges}",
            b.setup_seconds, k, b.download_seconds, report.prepare_seconds
        );
    }
    println!("Iterations:          {}", report.last.iterations);
    println!("GTEPS:               {:.3} ({} edges examined)", report.gteps(), report.edges_traversed);
    print!("{}", report.last.output.summary(top).named(naming).report());
    if report.parents.is_some() {
        println!("Parents:             a shortest-path tree over the reached vertices, found in {:.5} s", report.parents_seconds);
    }
    if let Some(residual) = report.last.residual {
        println!("Residual:            {residual:.3e} (L1 change of the last iteration; stops below {stop:.3e})");
    }
}

/// Where kernel `alg`'s answer goes: a device or FIFO as it is; a directory gets
/// `<kernel>.txt` inside; else `out` itself, or with several kernels `out` with the
/// kernel's name before the extension.
fn output_path(out: &Path, alg: Algorithm, kernels: usize) -> PathBuf {
    // A device or FIFO (`/dev/null`) takes every kernel's answer as it is.
    if std::fs::metadata(out).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        return out.to_path_buf();
    }
    // A directory (one that exists, or a name ending in `/`) gets a file per kernel.
    if out.is_dir() || out.as_os_str().to_string_lossy().ends_with('/') {
        return out.join(format!("{}.txt", alg.name()));
    }
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

/// The engine the flags ask for, as the front door takes it. Flags are checked here
/// where only the command line has them (sizes, counts, the multicast group); the
/// rest by [`chatty::open`].
fn engine_spec(a: &RunArgs) -> Result<EngineSpec> {
    let kind = match a.engine {
        EngineChoice::Auto => EngineKind::Auto,
        EngineChoice::Cpu => EngineKind::Cpu,
        EngineChoice::Gpu => EngineKind::Gpu,
        EngineChoice::Ssd => EngineKind::Ssd,
        EngineChoice::Mpi => EngineKind::Mpi,
    };
    let g = &a.open.gpu;
    let gpus = match g.gpus.as_str() {
        "auto" => GpuCount::Auto,
        "all" => GpuCount::All,
        k => match k.parse::<usize>() {
            Ok(k) if k > 0 => GpuCount::Count(k),
            _ => bail!("--gpus takes a positive count, `auto` or `all`, not `{k}`"),
        },
    };
    let watchdog = std::time::Duration::try_from_secs_f64(g.watchdog)
        .ok()
        .filter(|w| !w.is_zero())
        .context("--watchdog takes a positive number of seconds")?;
    let s = &a.open.ssd;
    let budget = match &s.mem_budget {
        Some(b) => Some(chatty_graph::parse_size(b).with_context(|| format!("--mem-budget `{b}`: expected a size like 512M or 4G"))?),
        None => None,
    };
    if a.local_dir.is_some() && a.distribute != Distribute::Multicast {
        bail!("--local-dir applies to --distribute multicast");
    }
    let distribute = match a.distribute {
        Distribute::Shared => chatty::Distribute::Shared,
        Distribute::Mpi => chatty::Distribute::Mpi,
        Distribute::Multicast => chatty::Distribute::Multicast(multicast(a)?),
    };
    Ok(EngineSpec {
        kind,
        threads: a.open.threads,
        reorder: g.reorder.order(),
        gpu: GpuSpec { gpus, devices: g.devices.clone(), control: g.control, comm: g.comm, mode: g.mode, watchdog },
        ssd: SsdSpec {
            budget,
            io_depth: s.io_depth,
            merge_pages: s.merge_pages,
            scatter_threads: s.scatter_threads,
            gather_threads: s.gather_threads,
            binning: !s.no_binning,
            direct: !s.buffered,
            uring: !s.pread,
        },
        mpi: MpiSpec { distribute, split_sources: a.split_sources, digest: super::command_digest() },
    })
}

/// `--distribute multicast`'s group, interface, key and local directory.
fn multicast(a: &RunArgs) -> Result<chatty::MulticastSpec> {
    let group = super::multicast_group("--multicast-group", &a.multicast_group)?;
    let interface = std::env::var("CHATTY_MULTICAST_INTERFACE").unwrap_or_else(|_| a.multicast_interface.clone());
    let interface = interface.parse().with_context(|| format!("multicast interface `{interface}`: expected an IPv4 address"))?;
    let local_dir = a.local_dir.clone().unwrap_or_else(std::env::temp_dir);
    Ok(chatty::MulticastSpec { local_dir, group, interface, key: super::group_key(None, process::under_rank_0())? })
}

/// Sends this process's standard output to /dev/null (the ranks of an MPI job other
/// than 0: rank 0 speaks for the job).
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

/// Whether `a` and `b` name the same existing file (links and `./` spellings included).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => (x.dev(), x.ino()) == (y.dev(), y.ino()),
        _ => false,
    }
}

/// Writes one row per vertex through a temporary file: `.csv` and `.tsv` with a
/// header naming the values (`vertex,distance`; HITS's `vertex,hub,authority`),
/// anything else `vertex value` lines;
/// vertices (and WCC labels) as `naming` names them. With `parents`, a third column
/// `parent` (`-1` for none). Unreachable is `-1` (BFS) and `inf` (SSSP).
pub(crate) fn write_output(path: &Path, alg: Algorithm, o: &Output, parents: Option<&[u32]>, naming: &Naming) -> Result<AtomicFile> {
    let ext = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
    if ext.as_deref() == Some("parquet") {
        return write_parquet(path, alg, o, parents, naming);
    }
    let sep = match ext.as_deref() {
        Some("csv") => Some(','),
        Some("tsv") => Some('\t'),
        _ => None,
    };
    let mut f = AtomicFile::create(path)?;
    let written = (|| -> std::io::Result<()> {
        if let Some(sep) = sep {
            let parent = if parents.is_some() { format!("{sep}parent") } else { String::new() };
            writeln!(f, "vertex{sep}{}{parent}", value_names(alg).join(&sep.to_string()))?;
        }
        let sep = sep.unwrap_or(' ');
        let mut line = |v: usize, value: std::fmt::Arguments| match parents.map(|p| p[v]) {
            None => writeln!(f, "{}{sep}{value}", naming.name(v as u32)),
            Some(chatty_algo::paths::NO_PARENT) => writeln!(f, "{}{sep}{value}{sep}-1", naming.name(v as u32)),
            Some(p) => writeln!(f, "{}{sep}{value}{sep}{}", naming.name(v as u32), naming.name(p)),
        };
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
            Output::Hits { hubs, authorities } => {
                hubs.iter().zip(authorities).enumerate().try_for_each(|(v, (&h, &a))| line(v, format_args!("{h}{sep}{a}")))
            }
            // Labels are vertex ids too.
            Output::Labels(l) | Output::Communities { labels: l, .. } => {
                l.iter().enumerate().try_for_each(|(v, &x)| line(v, format_args!("{}", naming.name(x))))
            }
            Output::Triangles(t) => t.iter().enumerate().try_for_each(|(v, &x)| line(v, format_args!("{x}"))),
            Output::Cores(c) => c.iter().enumerate().try_for_each(|(v, &x)| line(v, format_args!("{x}"))),
        }
    })();
    written.with_context(|| format!("cannot write {}", path.display()))?;
    Ok(f)
}

/// Writes columns `vertex` (as `naming` names them: u32 numbers, the input's u64 ids or
/// its labels as strings) and the kernel's value column (named as in `.csv` outputs)
/// as Parquet (uncompressed), into a temporary file the caller commits: BFS depths as
/// i64 (-1 unreachable), SSSP distances as f64 (inf unreachable), WCC, SCC and community
/// labels as vertices, triangles as u64, core numbers as u32, the rest (HITS's two
/// columns too) as f64. With `parents`,
/// a `parent` column of vertices (null for none).
fn write_parquet(path: &Path, alg: Algorithm, o: &Output, parents: Option<&[u32]>, naming: &Naming) -> Result<AtomicFile> {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray, UInt32Array, UInt64Array};

    let vertices = |ids: &mut dyn Iterator<Item = Option<u32>>| -> ArrayRef {
        match naming {
            Naming::From(base) => Arc::new(UInt32Array::from_iter(ids.map(|v| v.map(|v| v + base)))),
            Naming::Names(names) => match names.as_ref() {
                VertexNames::Numbers(numbers) => Arc::new(UInt64Array::from_iter(ids.map(|v| v.map(|v| numbers[v as usize])))),
                VertexNames::Labels { .. } => Arc::new(StringArray::from_iter(ids.map(|v| v.map(|v| naming.name(v).to_string())))),
            },
        }
    };

    let vertex = vertices(&mut (0..o.len() as u32).map(Some));
    let value: ArrayRef = match o {
        Output::Hits { hubs, .. } => Arc::new(Float64Array::from_iter_values(hubs.iter().copied())),
        Output::Depths(d) => {
            Arc::new(Int64Array::from_iter_values(d.iter().map(|&x| if x == chatty_algo::bfs::UNREACHED { -1 } else { x as i64 })))
        }
        Output::Distances(Distances::Int(d)) => {
            Arc::new(Float64Array::from_iter_values(d.iter().map(|&x| if x == u64::MAX { f64::INFINITY } else { x as f64 })))
        }
        Output::Distances(Distances::Float(d)) => Arc::new(Float64Array::from_iter_values(d.iter().copied())),
        Output::Values(v) => Arc::new(Float64Array::from_iter_values(v.iter().copied())),
        Output::Labels(l) | Output::Communities { labels: l, .. } => vertices(&mut l.iter().map(|&x| Some(x))),
        Output::Triangles(t) => Arc::new(UInt64Array::from_iter_values(t.iter().copied())),
        Output::Cores(c) => Arc::new(UInt32Array::from_iter_values(c.iter().copied())),
    };
    let mut columns = vec![("vertex", vertex), (value_names(alg)[0], value)];
    if let Output::Hits { authorities, .. } = o {
        columns.push((value_names(alg)[1], Arc::new(Float64Array::from_iter_values(authorities.iter().copied()))));
    }
    if let Some(p) = parents {
        columns.push(("parent", vertices(&mut p.iter().map(|&p| (p != chatty_algo::paths::NO_PARENT).then_some(p)))));
    }
    let batch = RecordBatch::try_from_iter(columns).context("building the Parquet columns")?;
    let file = AtomicFile::create(path)?;
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).context("starting the Parquet file")?;
    writer.write(&batch).with_context(|| format!("cannot write {}", path.display()))?;
    writer.into_inner().with_context(|| format!("cannot write {}", path.display()))
}

/// The value columns' names in `.csv`, `.tsv` and `.parquet` outputs: one, but HITS's two.
fn value_names(alg: Algorithm) -> &'static [&'static str] {
    match alg {
        Algorithm::Bfs => &["depth"],
        Algorithm::Sssp => &["distance"],
        Algorithm::Pr => &["pagerank"],
        Algorithm::Wcc => &["component"],
        Algorithm::Bc => &["betweenness"],
        Algorithm::Spmv => &["y"],
        Algorithm::Tc => &["triangles"],
        Algorithm::Clustering => &["clustering"],
        Algorithm::Kcore => &["core_number"],
        Algorithm::Scc => &["component"],
        Algorithm::Lpa | Algorithm::Louvain | Algorithm::Leiden => &["community"],
        Algorithm::Eigenvector => &["eigenvector"],
        Algorithm::Katz => &["katz"],
        Algorithm::Hits => &["hub", "authority"],
        Algorithm::Degree => &["degree_centrality"],
        Algorithm::Closeness => &["closeness"],
    }
}
