//! Writers: `.cgr`, text edge lists (`.el`, `.wel`, `.csv`) for peers such as GAPBS, and
//! Matrix Market (`.mtx`) for SuiteSparse-style tools (scipy, BLEST).
//! Every output goes through [`AtomicFile`](crate::file::AtomicFile), so a failure never leaves a partial file.

use std::io::Write;
use std::path::Path;

use rayon::prelude::*;

use crate::build::edge_balanced_ranges;
use crate::csr::{Graph, WeightType};
use crate::error::{Error, Result};
use crate::file::AtomicFile;
use crate::names::{Naming, VertexNames};
use crate::progress::Progress;
use crate::read::{format_from_name, Format};

/// Checks, before any long work, that `path` names a writable format in an existing
/// directory.
pub fn check_output_path(path: &Path) -> Result<()> {
    if !matches!(
        format_from_name(path),
        Some(Format::Cgr | Format::EdgeList | Format::WeightedEdgeList | Format::Csv | Format::MatrixMarket)
    ) {
        return Err(Error::format(path, "can write .cgr, .el, .wel, .csv and .mtx outputs; choose one of those names"));
    }
    drop(AtomicFile::create(path)?);
    Ok(())
}

/// Writes `g` in the format its name says: `.cgr`, `.el`, `.wel`, `.csv` (weighted
/// where the graph is) or `.mtx`.
pub fn write_graph(g: &Graph, path: &Path, progress: &dyn Progress) -> Result<()> {
    let weighted = g.weight_type() != WeightType::None;
    match format_from_name(path) {
        Some(Format::Cgr) => crate::cgr::write(g, path, progress),
        Some(Format::EdgeList) => write_edge_list(g, path, Text::EdgeList { weighted: false, csv: false }, progress),
        Some(Format::WeightedEdgeList) => write_edge_list(g, path, Text::EdgeList { weighted: true, csv: false }, progress),
        Some(Format::Csv) => write_edge_list(g, path, Text::EdgeList { weighted, csv: true }, progress),
        Some(Format::MatrixMarket) => write_edge_list(g, path, Text::MatrixMarket, progress),
        _ => check_output_path(path),
    }
}

/// The text formats: an edge list (`u v [w]`, or `u,v[,w]` under a header line in a
/// CSV; ids from 0, or the input's names) or Matrix Market (entry (u + 1, v + 1) for
/// edge u -> v, as GAPBS reads it; the weight as the value if any).
#[derive(Clone, Copy, PartialEq)]
enum Text {
    EdgeList { weighted: bool, csv: bool },
    MatrixMarket,
}

/// Appends vertex `v`: its name, or its number.
fn push_vertex(out: &mut Vec<u8>, num: &mut itoa::Buffer, names: Option<&Naming>, v: u32) {
    match names {
        Some(naming) => _ = write!(out, "{}", naming.name(v)),
        None => out.extend_from_slice(num.format(v).as_bytes()),
    }
}

/// Refuses names that `text` could not carry: none in Matrix Market (numbers from 1),
/// no separator inside a label, nothing a reader takes for a comment.
fn check_names(g: &Graph, path: &Path, text: Text) -> Result<()> {
    if text == Text::MatrixMarket && g.names().is_some() {
        return Err(Error::Usage(format!(
            "{}: Matrix Market numbers vertices 1 to n, and this graph's vertices are named by its input: write .cgr, .el or .csv",
            path.display()
        )));
    }
    let Some(VertexNames::Labels { offsets, text: labels, .. }) = g.names().map(|x| x.as_ref()) else { return Ok(()) };
    let csv = matches!(text, Text::EdgeList { csv: true, .. });
    let bad = (0..offsets.len() - 1).into_par_iter().find_any(|&v| {
        let label = &labels[offsets[v] as usize..offsets[v + 1] as usize];
        let separator = |c: char| if csv { c == ',' || c == '"' || c == '\n' } else { c.is_whitespace() };
        label.contains(separator) || label.starts_with(['#', '%']) || label.trim() != label
    });
    match bad {
        Some(v) => Err(Error::Usage(format!(
            "{}: vertex label {:?} cannot be written in this format (a separator, a comment mark or blanks at its ends): write .cgr{}",
            path.display(),
            &labels[offsets[v] as usize..offsets[v + 1] as usize],
            if csv { "" } else { " or .csv" }
        ))),
        None => Ok(()),
    }
}

/// The header of a text output: comments and counts (`listed` edge lines).
fn write_text_header(file: &mut impl Write, g: &Graph, text: Text, listed: u64) -> std::io::Result<()> {
    let n = g.num_vertices();
    match text {
        Text::EdgeList { csv: false, .. } => {
            writeln!(file, "# {} graph written by chatty", if g.is_directed() { "Directed" } else { "Undirected" })?;
            writeln!(file, "# Nodes: {n} Edges: {listed}")
        }
        Text::EdgeList { csv: true, weighted } => {
            writeln!(file, "# {} graph written by chatty", if g.is_directed() { "Directed" } else { "Undirected" })?;
            writeln!(file, "# Nodes: {n} Edges: {listed}")?;
            writeln!(file, "source,target{}", if weighted { ",weight" } else { "" })
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
        Text::EdgeList { weighted, .. } => weighted,
        Text::MatrixMarket => g.weight_type() != WeightType::None,
    };
    if weighted && g.weight_type() == WeightType::None {
        return Err(Error::Usage(format!("{}: a .wel output needs a weighted graph", path.display())));
    }
    check_names(g, path, text)?;
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
    let separator = if matches!(text, Text::EdgeList { csv: true, .. }) { b',' } else { b' ' };
    let naming = g.naming();
    let names = g.names().map(|_| &naming);
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
                        push_vertex(&mut out, &mut num, names, first);
                        out.push(separator);
                        push_vertex(&mut out, &mut num, names, second);
                        if weighted {
                            out.push(separator);
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
