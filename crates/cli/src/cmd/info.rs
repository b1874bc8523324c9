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
    if a.partition == Some(0) {
        anyhow::bail!("--partition takes a part count of at least 1");
    }
    let s = stats(&g);
    drop(bar);
    let partition = a.partition.map(|k| -> Result<serde_json::Value> {
        // auto: the order the multi-GPU engine would cut this graph in.
        let order = match a.reorder.order() {
            chatty_gpu::Order::Auto => chatty_gpu::choose_order(&g).0,
            order => order,
        };
        let reordered = order.new_id(&g).map(|id| chatty_graph::transform::relabel(&g, &id)).transpose()?;
        let g = reordered.as_ref().unwrap_or(&g);
        let p = chatty_graph::partition::Partition::edge_balanced(g, k);
        let per_part: Vec<serde_json::Value> = p
            .summary(g)
            .iter()
            .map(|&(vertices, edges, boundary)| serde_json::json!({"vertices": vertices, "edges": edges, "boundary_vertices": boundary}))
            .collect();
        Ok(serde_json::json!({
            "parts": p.ranges.parts(),
            "reorder": order.name(),
            "boundary_vertices": p.boundary.iter().filter(|&&b| b).count(),
            "per_part": per_part,
        }))
    });
    let partition = partition.transpose()?;
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
        "renumbered": g.order().is_some(),
        "named": g.names().is_some(),
        "size_bytes": g.size_bytes(),
        "checked": a.check,
        "partition": partition,
    });
    if a.json {
        println!("{json}");
    } else {
        for (k, v) in json.as_object().unwrap().iter().filter(|(k, _)| *k != "partition") {
            println!("{k:>18}: {}", v.as_str().map_or_else(|| v.to_string(), str::to_string));
        }
        if let Some(p) = &partition {
            println!(
                "partition: {} edge-balanced contiguous ranges (reorder: {}), {} boundary vertices of {}",
                p["parts"],
                p["reorder"].as_str().unwrap_or_default(),
                p["boundary_vertices"],
                s.vertices
            );
            for (i, part) in p["per_part"].as_array().into_iter().flatten().enumerate() {
                println!("  part {i}: {} vertices, {} edges, {} boundary", part["vertices"], part["edges"], part["boundary_vertices"]);
            }
        }
        if a.check {
            println!("check: OK (checksums and structure verified)");
        }
    }
    Ok(0)
}
