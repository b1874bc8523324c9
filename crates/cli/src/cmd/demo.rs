//! `chatty demo`: the README's main job. Offline, no GPU, a few seconds: generate two
//! graphs, write them as `.cgr`, map them back with a full check, and run every
//! kernel on them with verification against the sequential references (but closeness,
//! a search from every vertex: hours on these graphs).

use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use chatty::{harness, Algorithm, EngineSpec, GraphSource, KatzParams, Params, Workload};
use chatty_graph::file::Pending;
use chatty_graph::{cgr, generate, stats, write_graph, GenOptions, Graph};

use crate::progress::Bar;

pub fn run(dir: Option<&Path>, quiet: bool) -> Result<i32> {
    // The temporary directory is pending too, so that Ctrl-C (which ends the process
    // before `tmp` drops) removes it.
    let (tmp, _pending);
    let dir = match dir {
        Some(d) => {
            std::fs::create_dir_all(d)?;
            d
        }
        None => {
            tmp = tempfile::tempdir()?;
            _pending = Pending::new(tmp.path());
            tmp.path()
        }
    };
    println!("ChattyGraph demo: generate, write .cgr, map it back, run every kernel on the engine auto picks, and verify.\n");
    let bar = Bar::new(quiet);
    type Maker<'a> = Box<dyn Fn() -> chatty_graph::Result<Graph> + 'a>;
    let graphs: [(&str, Maker); 2] = [
        (
            "rmat-16 (power-law, undirected, weights 1..255)",
            Box::new(|| generate::rmat(16, 16, GenOptions { seed: 1, max_weight: Some(255), undirected: true }, &bar)),
        ),
        (
            "grid 512x512 (road-like, weighted)",
            Box::new(|| generate::grid(512, 512, GenOptions { seed: 1, max_weight: None, undirected: true }, &bar)),
        ),
    ];
    let mut failures = 0;
    for (i, (name, make)) in graphs.iter().enumerate() {
        let start = Instant::now();
        let path = dir.join(format!("demo-{i}.cgr"));
        write_graph(&make()?, &path, &bar)?;
        let g = cgr::check(&path, &bar)?;
        let s = stats(&g);
        println!(
            "{name}: {} vertices, {} stored edges, max degree {}; generated, written and checked in {:.2} s",
            s.vertices,
            s.edges,
            s.max_out_degree,
            start.elapsed().as_secs_f64()
        );
        // Katz converges below 1/λ_max: the power-law graph's hubs need a small alpha.
        let params = Params { source: Some(0), katz: KatzParams { alpha: 0.0005, ..KatzParams::default() }, ..Params::default() };
        let kernels: Vec<Algorithm> = Algorithm::ALL.into_iter().filter(|&a| a != Algorithm::Closeness).collect();
        let work = Workload::new(kernels.clone(), &params);
        let opened = chatty::open(&EngineSpec::auto(), GraphSource::Memory(g), &work, &chatty_graph::NoProgress)?;
        if let Some(choice) = &opened.choice {
            println!("  {choice}");
        }
        let mut engine = opened.engine;
        let opts = harness::Options { trials: 1, verify: true, against: None };
        for alg in kernels {
            let report = harness::run(engine.as_mut(), alg, &params, &opts, |_| {})?;
            let verdict = match &report.verification {
                Some(Ok(())) => "PASS".to_string(),
                Some(Err(e)) => {
                    failures += 1;
                    format!("FAIL ({e})")
                }
                None => unreachable!("verified"),
            };
            let line = report.last.output.summary(1).to_string();
            let (what, value) = line.split_once(':').unwrap_or(("", &line));
            println!("  {:11} {:>9.2} ms  {verdict}  {}: {}", alg.name(), report.trial_seconds[0] * 1e3, what.trim(), value.trim());
        }
        println!("  (closeness is left out: a BFS from every vertex, n × m work, hours on these graphs)");
        println!();
    }
    Ok(if failures == 0 { 0 } else { 1 })
}
