//! `chatty demo`: the README's main job. Offline, no GPU, a few seconds.

use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use chatty_graph::{cgr, generate, stats, write_graph, GenOptions, Graph};

use crate::progress::Bar;

pub fn run(dir: Option<&Path>, quiet: bool) -> Result<i32> {
    let tmp;
    let dir = match dir {
        Some(d) => {
            std::fs::create_dir_all(d)?;
            d
        }
        None => {
            tmp = tempfile::tempdir()?;
            tmp.path()
        }
    };
    println!("ChattyGraph demo: generate, write .cgr, map it back, analyse.\n");
    let bar = Bar::new(quiet);
    let graphs: [(&str, Box<dyn Fn() -> chatty_graph::Result<Graph>>); 2] = [
        ("rmat-16 (power-law, 65,536 vertices)", Box::new(|| generate::rmat(16, 16, GenOptions { seed: 1, max_weight: Some(255), undirected: true }, &bar))),
        ("grid 512x512 (road-like, weighted)", Box::new(|| generate::grid(512, 512, GenOptions { seed: 1, max_weight: None, undirected: true }, &bar))),
    ];
    for (i, (name, make)) in graphs.iter().enumerate() {
        let start = Instant::now();
        let g = make()?;
        let path = dir.join(format!("demo-{i}.cgr"));
        write_graph(&g, &path, &bar)?;
        let loaded = cgr::check(&path, &bar)?;
        let s = stats(&loaded);
        println!(
            "{name}\n  {} vertices, {} stored edges, max degree {}, {} weights; generated, written and verified in {:.2} s",
            s.vertices,
            s.edges,
            s.max_out_degree,
            s.weight_type.name(),
            start.elapsed().as_secs_f64()
        );
    }
    Ok(0)
}
