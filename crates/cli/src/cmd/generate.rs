//! `chatty generate`.

use std::time::Instant;

use anyhow::{Context, Result};
use chatty_graph::{generate, write_graph, GenOptions};

use crate::args::{GenerateArgs, GeneratorKind};
use crate::progress::Bar;

pub fn run(a: &GenerateArgs, quiet: bool) -> Result<i32> {
    let output = a.output.as_ref().context("--output (-o) is required: where to write the graph (.cgr, .el or .wel)")?;
    let opts = GenOptions { seed: a.seed, max_weight: a.weights, undirected: a.undirected };
    chatty_graph::write::check_output_path(output)?;
    let bar = Bar::new(quiet);
    let start = Instant::now();
    let g = match &a.kind {
        GeneratorKind::Rmat(r) => generate::rmat(r.scale, r.edge_factor, opts, &bar)?,
        GeneratorKind::Urand(r) => generate::urand(r.scale, r.edge_factor, opts, &bar)?,
        GeneratorKind::Grid { width, height } => generate::grid(*width, *height, opts, &bar)?,
    };
    let generated = start.elapsed().as_secs_f64();
    write_graph(&g, output, &bar)?;
    drop(bar);
    eprintln!(
        "generated {} vertices, {} edges in {generated:.2} s; written to {} in {:.2} s",
        g.num_vertices(),
        g.num_edges(),
        output.display(),
        start.elapsed().as_secs_f64() - generated
    );
    Ok(0)
}
