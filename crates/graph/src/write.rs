//! Writers: `.cgr`, text edge lists (`.el`, `.wel`) for peers such as GAPBS, and
//! Matrix Market (`.mtx`) for SuiteSparse-style tools (scipy, BLEST).
//! Every output goes through [`AtomicFile`](crate::file::AtomicFile), so a failure never leaves a partial file.

use std::io::Write;
use std::path::Path;

use rayon::prelude::*;

use crate::build::edge_balanced_ranges;
use crate::csr::{Graph, WeightType};
use crate::error::{Error, Result};
use crate::file::AtomicFile;
use crate::progress::Progress;
use crate::read::{format_from_name, Format};

/// Checks, before any long work, that `path` names a writable format in an existing
/// directory.
pub fn check_output_path(path: &Path) -> Result<()> {
    if !matches!(format_from_name(path), Some(Format::Cgr | Format::EdgeList | Format::WeightedEdgeList | Format::MatrixMarket)) {
        return Err(Error::format(path, "can write .cgr, .el, .wel and .mtx outputs; choose one of those names"));
    }
    drop(AtomicFile::create(path)?);
    Ok(())
}

/// Writes `g` in the format its name says: `.cgr`, `.el`, `.wel` or `.mtx`.
pub fn write_graph(g: &Graph, path: &Path, progress: &dyn Progress) -> Result<()> {
    match format_from_name(path) {
        Some(Format::Cgr) => crate::cgr::write(g, path, progress),
        Some(Format::EdgeList) => write_edge_list(g, path, Text::EdgeList { weighted: false }, progress),
        Some(Format::WeightedEdgeList) => write_edge_list(g, path, Text::EdgeList { weighted: true }, progress),
        Some(Format::MatrixMarket) => write_edge_list(g, path, Text::MatrixMarket, progress),
        _ => check_output_path(path),
    }
}

/// The text formats: an edge list (`u v [w]`, ids from 0) or Matrix Market (entry
/// (u + 1, v + 1) for edge u -> v, as GAPBS reads it; the weight as the value if any).
#[derive(Clone, Copy, PartialEq)]
enum Text {
    EdgeList { weighted: bool },
    MatrixMarket,
}

/// The header of a text output: comments and counts (`listed` edge lines).
fn write_text_header(file: &mut impl Write, g: &Graph, text: Text, listed: u64) -> std::io::Result<()> {
    let n = g.num_vertices();
    match text {
        Text::EdgeList { .. } => {
            writeln!(file, "# {} graph written by chatty", if g.is_directed() { "Directed" } else { "Undirected" })?;
            writeln!(file, "# Nodes: {n} Edges: {listed}")
        }
        Text::MatrixMarket => {
            let field = match g.weight_type() {
                WeightType::None => "pattern",
                WeightType::Float => "real",
                _ => "integer",
            };
            writeln!(file, "%%MatrixMarket matrix coordinate {field} {}", if g.is_directed() { "general" } else { "symmetric" })?;
            writeln!(file, "% written by chatty")?;
            writeln!(file, "{n} {n} {listed}")
        }
    }
}

/// Writes a SNAP-style edge list or a Matrix Market coordinate file; an undirected
/// graph lists each edge once (u ≤ v; a symmetric matrix's lower triangle) so that
/// reading it back gives the same graph.
fn write_edge_list(g: &Graph, path: &Path, text: Text, progress: &dyn Progress) -> Result<()> {
    let weighted = match text {
        Text::EdgeList { weighted } => weighted,
        Text::MatrixMarket => g.weight_type() != WeightType::None,
    };
    if weighted && g.weight_type() == WeightType::None {
        return Err(Error::Usage(format!("{}: a .wel output needs a weighted graph", path.display())));
    }
    let adj = g.out_edges();
    let mut file = AtomicFile::create(path)?;
    let io = |e| Error::io(path, "cannot write", e);
    // Text carries the input's ids: a renumbered graph's order is for kernels.
    let input_id = |v: u32| g.order().map_or(v, |o| o.input_ids()[v as usize]);
    // The lines below: an undirected graph lists each edge once (a self-loop is stored once).
    let undirected = !g.is_directed();
    let listed = if undirected {
        (0..g.num_vertices() as u32)
            .into_par_iter()
            .map(|u| adj.neighbors(u).iter().filter(|&&v| input_id(v) >= input_id(u)).count() as u64)
            .sum()
    } else {
        g.num_edges()
    };
    write_text_header(&mut file, g, text, listed).map_err(io)?;
    // Matrix Market counts from 1, and a symmetric matrix keeps its lower triangle.
    let mtx = text == Text::MatrixMarket;
    let ranges = edge_balanced_ranges(adj.offsets(), 1 << 20);
    progress.start("writing edge list", adj.num_edges());
    for batch in ranges.chunks(32) {
        let texts: Vec<Vec<u8>> = batch
            .par_iter()
            .map(|r| {
                let mut out = Vec::with_capacity(((adj.offsets()[r.end] - adj.offsets()[r.start]) * 16) as usize);
                let mut num = itoa::Buffer::new();
                for stored_u in r.clone() {
                    let u = input_id(stored_u as u32);
                    for e in adj.range(stored_u as u32) {
                        let v = input_id(adj.targets()[e]);
                        if undirected && v < u {
                            continue;
                        }
                        let (first, second) = match (mtx, undirected) {
                            (false, _) => (u, v),
                            (true, false) => (u + 1, v + 1),
                            (true, true) => (v + 1, u + 1),
                        };
                        out.extend_from_slice(num.format(first).as_bytes());
                        out.push(b' ');
                        out.extend_from_slice(num.format(second).as_bytes());
                        if weighted {
                            out.push(b' ');
                            match g.weight_type() {
                                WeightType::Float => out.extend_from_slice(format!("{}", adj.weight_f64(e) as f32).as_bytes()),
                                _ => out.extend_from_slice(num.format(adj.raw_weights().unwrap()[e]).as_bytes()),
                            }
                        }
                        out.push(b'\n');
                    }
                }
                progress.advance(adj.offsets()[r.end] - adj.offsets()[r.start]);
                out
            })
            .collect();
        for t in texts {
            file.write_all(&t).map_err(io)?;
        }
    }
    file.commit()
}
