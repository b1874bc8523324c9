//! ChattyGraph from Rust in ten lines: open the engine the auto policy picks on a
//! generated graph, run PageRank, verify it and print the top vertex.
//! `cargo run --release -p chatty --example quickstart`

use chatty::graph::{generate, GenOptions, NoProgress};
use chatty::{harness, open, Algorithm, EngineSpec, GraphSource, Params, Workload};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let graph = generate::rmat(16, 16, GenOptions { seed: 1, max_weight: None, undirected: true }, &NoProgress)?;
    let mut opened = open(&EngineSpec::auto(), GraphSource::Memory(graph), &Workload::one(Algorithm::Pr), &NoProgress)?;
    let opts = harness::Options { trials: 1, verify: true, against: None };
    let report = harness::run(opened.engine.as_mut(), Algorithm::Pr, &Params::default(), &opts, |_| {})?;
    report.verification.clone().unwrap_or(Ok(()))?; // the sequential reference agrees
    println!("{}", opened.choice.map_or("engine as asked".into(), |c| c.to_string()));
    print!("{}", report.last.output.summary(1).report());
    Ok(())
}
