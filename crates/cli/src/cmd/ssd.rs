//! `chatty run --engine ssd`: a kernel on a layout from `convert --layout ssd`, with
//! vertex data in memory (under `--mem-budget`) and edges streamed from the stripes.
//! Reports Blaze-style IO figures per round and in total.

use std::time::Instant;

use anyhow::{bail, Context, Result};
use chatty_algo::{Algorithm, Params, RunResult};
use chatty_ssd::{EngineConfig, IoConfig, IoStats, SsdGraph};

use super::run::{peak_rss, print_averages, read_x, summary, write_output, Verification};
use crate::args::RunArgs;

/// Vertex data bytes per vertex each kernel keeps in memory (frontier bitmaps included;
/// BC also keeps one bitmap per BFS level, counted as 16 levels).
fn vertex_bytes(alg: Algorithm) -> u64 {
    match alg {
        Algorithm::Bfs => 5,
        Algorithm::Sssp => 9,
        Algorithm::Pr => 29,
        Algorithm::Wcc => 5,
        Algorithm::Spmv => 17,
        Algorithm::Bc => 22,
    }
}

fn engine_config(a: &RunArgs) -> Result<EngineConfig> {
    let s = &a.ssd;
    if !(1..=4096).contains(&s.io_depth) || !(1..=256).contains(&s.merge_pages) {
        bail!("--io-depth takes 1 to 4096 and --merge-pages 1 to 256");
    }
    let mut cfg = EngineConfig {
        io: IoConfig { queue_depth: s.io_depth, merge_pages: s.merge_pages, direct: !s.buffered, uring: !s.pread },
        binning: !s.no_binning,
        ..EngineConfig::default()
    };
    if let Some(t) = s.scatter_threads {
        cfg.scatter_threads = t.max(1);
    }
    if let Some(t) = s.gather_threads {
        cfg.gather_threads = t.max(1);
    }
    Ok(cfg)
}

pub fn run(a: &RunArgs, alg: Algorithm, mut p: Params) -> Result<i32> {
    if !chatty_ssd::layout::is_layout(&a.graph) {
        bail!("{}: --engine ssd runs on an SSD layout; make one with `chatty convert GRAPH -o NAME.ssd --layout ssd --stripes K`", a.graph.display());
    }
    let budget = match &a.ssd.mem_budget {
        Some(b) => chatty_graph::parse_size(b).with_context(|| format!("--mem-budget `{b}`: expected a size like 512M or 4G"))?,
        None => chatty_graph::available_memory(),
    };
    let start = Instant::now();
    let g = SsdGraph::open(&a.graph, engine_config(a)?)?;
    let n = g.num_vertices() as u64;
    let sides = if g.layout.inc.is_some() { 2 } else { 1 };
    let index_bytes = sides * (n + 1) * 8;
    // The process itself (code, stacks, allocator slack) counts too.
    const PROCESS: u64 = 32 << 20;
    let need = PROCESS + index_bytes + n * vertex_bytes(alg) + g.engine_bytes();
    let data = g.layout.data_bytes();
    if need > budget {
        bail!(
            "the ssd engine needs {need} bytes for {} (index {index_bytes}, vertex data {}, IO buffers and bins {}) but --mem-budget is {budget}",
            alg.name(),
            n * vertex_bytes(alg),
            g.engine_bytes()
        );
    }
    let load_seconds = start.elapsed().as_secs_f64();
    if let Some(x) = &a.x {
        p.x = Some(read_x(x, n as usize)?);
    }
    if !a.json {
        println!(
            "Graph: {} ({n} vertices, {} edges, {}), ssd layout: {} stripe file(s), {data} bytes of pages ({:.1}x the {budget}-byte budget), {}, {}",
            a.graph.display(),
            g.layout.header.edges,
            if g.layout.header.directed { "directed" } else { "undirected" },
            g.layout.out.files.len(),
            data as f64 / budget as f64,
            if g.direct() { "O_DIRECT" } else { "page cache" },
            if a.ssd.pread { "pread" } else { "io_uring" },
        );
    }
    let reference = if a.verify { Some(chatty_ssd::layout::read_graph(&g.layout)?) } else { None };
    let has_edges = g.layout.header.edges > 0;
    let mut trial_seconds = Vec::new();
    let mut verification = Verification::default();
    let mut last: Option<(RunResult, IoStats, Vec<IoStats>)> = None;
    for trial in 0..a.trials as u64 {
        let sources = if alg.has_source() {
            chatty_algo::pick_sources_by(n as usize, |v| g.out_degree(v), has_edges, &p, trial).map_err(anyhow::Error::msg)?
        } else {
            Vec::new()
        };
        let t0 = Instant::now();
        let r = chatty_ssd::kernels::run(&g, alg, &p, sources)?;
        let t = t0.elapsed().as_secs_f64();
        let (io, rounds) = g.take_stats();
        trial_seconds.push(t);
        if !a.json {
            print_rounds(&rounds);
            println!("Trial Time:          {t:.5}");
            println!("{}", io_line("IO", &io));
        }
        if let Some(reference) = &reference {
            verification.record(chatty_algo::verify(alg, reference, &p, &r), !a.json);
        }
        last = Some((r, io, rounds));
    }
    let (r, io, rounds) = last.expect("at least one trial");
    let average = trial_seconds.iter().sum::<f64>() / trial_seconds.len() as f64;
    if let Some(out) = &a.output {
        write_output(out, &r.output)?;
    }
    let edges = chatty_algo::edges_traversed_by(alg, g.layout.header.edges, |v| g.out_degree(v as u32), &r);
    let gteps = edges as f64 / average / 1e9;
    if a.json {
        let json = serde_json::json!({
            "algorithm": alg.name(),
            "engine": "ssd",
            "devices": [format!("{} stripe file(s)", g.layout.out.files.len())],
            "graph": { "path": a.graph.display().to_string(), "n": n, "m": g.layout.header.edges, "directed": g.layout.header.directed,
                       "weighted": g.layout.weight_type != chatty_graph::WeightType::None },
            "sources": r.sources.iter().take(64).collect::<Vec<_>>(),
            "load_seconds": load_seconds,
            "trial_seconds": trial_seconds,
            "average_seconds": average,
            "iterations": r.iterations,
            "edges_traversed": edges,
            "gteps": gteps,
            "verification": verification.json(),
            "ssd": {
                "binning": !a.ssd.no_binning,
                "direct": g.direct(),
                "io": if a.ssd.pread { "pread" } else { "io_uring" },
                "queue_depth": a.ssd.io_depth,
                "merge_pages": a.ssd.merge_pages,
                "scatter_threads": g.cfg.scatter_threads,
                "gather_threads": g.cfg.gather_threads,
                "data_bytes": data,
                "mem_budget_bytes": budget,
                "memory_needed_bytes": need,
                "bytes_read": io.bytes_read,
                "io_seconds": io.seconds,
                "gb_per_s": io.gb_per_s(),
                "amplification": io.amplification(),
                "skew": io.skew(),
                "per_file_bytes": io.per_file,
                "rounds": rounds.iter().map(|r| serde_json::json!({"bytes": r.bytes_read, "seconds": r.seconds, "gb_per_s": r.gb_per_s(),
                    "amplification": r.amplification(), "skew": r.skew()})).collect::<Vec<_>>(),
            },
            "peak_memory_bytes": peak_rss(),
            "version": env!("CARGO_PKG_VERSION"),
            "commit": env!("CHATTY_COMMIT"),
        });
        println!("{json}");
    } else {
        print_averages(average, r.iterations, gteps, edges);
        println!("Peak memory:         {} bytes (budget {budget})", peak_rss());
        println!("{}", summary(&r.output));
    }
    Ok(verification.exit_code())
}

fn io_line(what: &str, s: &IoStats) -> String {
    format!(
        "{what:<20} {:.1} MB in {:.3} s = {:.3} GB/s, amplification {:.2}, skew {:.2} over {} file(s)",
        s.bytes_read as f64 / 1e6,
        s.seconds,
        s.gb_per_s(),
        s.amplification(),
        s.skew(),
        s.per_file.len()
    )
}

/// Per-round lines like Blaze's, unless there are too many to read (roads: thousands
/// of BFS levels); the JSON always has them.
fn print_rounds(rounds: &[IoStats]) {
    if rounds.len() > 40 {
        println!("({} rounds; per-round IO figures in --json)", rounds.len());
        return;
    }
    for (i, r) in rounds.iter().enumerate() {
        println!("{}", io_line(&format!("round {i}:"), r));
    }
}
