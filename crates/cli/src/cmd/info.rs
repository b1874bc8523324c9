//! `chatty info`.

use anyhow::Result;
use chatty_graph::{cgr, stats};

use super::load_graph;
use crate::args::InfoArgs;
use crate::progress::Bar;

pub fn run(a: &InfoArgs, quiet: bool) -> Result<i32> {
    let bar = Bar::new(quiet);
    let g = if a.check {
        if !cgr::is_cgr(&a.graph)? {
            anyhow::bail!("{}: --check verifies .cgr files; convert this input first", a.graph.display());
        }
        cgr::check(&a.graph, &bar)?
    } else {
        load_graph(&a.graph, &a.load, &bar)?
    };
    let s = stats(&g);
    drop(bar);
    let json = serde_json::json!({
        "path": a.graph.display().to_string(),
        "vertices": s.vertices,
        "edges": s.edges,
        "directed": s.directed,
        "weighted": s.weight_type != chatty_graph::WeightType::None,
        "weight_type": s.weight_type.name(),
        "self_loops": s.self_loops,
        "parallel_edges": s.parallel_edges,
        "isolated_vertices": s.isolated_vertices,
        "max_out_degree": s.max_out_degree,
        "max_in_degree": s.max_in_degree,
        "has_transpose": s.has_transpose,
        "size_bytes": g.size_bytes(),
        "checked": a.check,
    });
    if a.json {
        println!("{json}");
    } else {
        for (k, v) in json.as_object().unwrap() {
            println!("{k:>18}: {}", v.as_str().map_or_else(|| v.to_string(), str::to_string));
        }
        if a.check {
            println!("check: OK (checksums and structure verified)");
        }
    }
    Ok(0)
}
