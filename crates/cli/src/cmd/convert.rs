//! `chatty convert`.

use std::time::Instant;

use anyhow::Result;
use chatty_graph::write_graph;

use super::{load_graph, mb_per_s};
use crate::args::ConvertArgs;
use crate::progress::Bar;

pub fn run(a: &ConvertArgs, quiet: bool) -> Result<i32> {
    let ssd = a.layout == crate::args::Layout::Ssd;
    if !ssd && (a.stripes != 1 || !a.stripe_dir.is_empty()) {
        anyhow::bail!("--stripes and --stripe-dir apply to --layout ssd");
    }
    if let Some(d) = a.stripe_dir.iter().find(|d| !d.is_dir()) {
        anyhow::bail!("--stripe-dir {}: not a directory", d.display());
    }
    if ssd && !(1..=1024).contains(&a.stripes) {
        anyhow::bail!("--stripes {}: expected 1 to 1024", a.stripes);
    }
    if !ssd {
        chatty_graph::write::check_output_path(&a.output)?;
    }
    let to_cgr = !ssd && chatty_graph::read::format_from_name(&a.output) == Some(chatty_graph::Format::Cgr);
    if a.reorder == crate::args::Reorder::Auto {
        anyhow::bail!("--reorder auto is the engines' choice when they run; convert stores bfs or degree order");
    }
    if a.reorder != crate::args::Reorder::None && !to_cgr {
        anyhow::bail!("--reorder stores the order in a .cgr output; text formats and SSD layouts keep the input's order");
    }
    let bar = Bar::new(quiet);
    let start = Instant::now();
    let mut g = load_graph(&a.input, &a.load, &bar)?;
    let loaded = start.elapsed().as_secs_f64();
    if a.transpose && !g.is_directed() {
        eprintln!("note: --transpose: the graph is undirected, its in-edges are its out-edges; nothing more to store");
    }
    if a.transpose {
        g.build_in_edges()?;
    }
    if let Some(new_id) = a.reorder.order().new_id(&g) {
        let renumbering = Instant::now();
        g = chatty_graph::transform::renumber(&g, new_id)?;
        eprintln!("renumbered in {} order in {:.2} s", a.reorder.name(), renumbering.elapsed().as_secs_f64());
    }
    if ssd {
        let layout = chatty_ssd::layout::write(&g, &a.output, a.stripes, &a.stripe_dir)?;
        eprintln!("ssd layout: {} stripe file(s) per side, {} bytes of pages", a.stripes, layout.data_bytes());
    } else {
        write_graph(&g, &a.output, &bar)?;
    }
    drop(bar);
    let bytes = std::fs::metadata(&a.input).map(|m| m.len()).unwrap_or(0);
    eprintln!(
        "read {} ({} vertices, {} edges) in {loaded:.2} s ({:.0} MB/s of input); wrote {} in {:.2} s",
        a.input.display(),
        g.num_vertices(),
        g.num_edges(),
        mb_per_s(bytes, loaded),
        a.output.display(),
        start.elapsed().as_secs_f64() - loaded
    );
    Ok(0)
}
