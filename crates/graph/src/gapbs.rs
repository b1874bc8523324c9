//! GAPBS's serialized graphs, `.sg` and `.wsg` (int32 weights), as its `converter
//! -b` / `-wb` writes them (`src/writer.h`, `WriteSerializedGraph`), so that a GAPBS
//! user's graphs and ours are the same bytes.
//!
//! The layout, little-endian and packed: a one-byte bool `directed`, an int64 `m`
//! (stored directed edges: an undirected graph's each way), an int64 `n`, then `n + 1`
//! int64 offsets and `m` neighbours (int32 ids, or in `.wsg` int32 pairs `(id,
//! weight)`), and for a directed graph its in-edges the same way. Nothing is aligned
//! (the offsets start at byte 17), so the arrays are copied in parallel rather than
//! mapped. The format has no checksum; what can be checked is: the file is exactly the
//! size its header gives, offsets rise from 0 to `m`, every neighbour is a vertex,
//! each list is sorted (GAPBS's builder sorts them), the in-edges are the out-edges'
//! transpose and an undirected graph's edges are symmetric.

use std::path::Path;

use rayon::prelude::*;

use crate::csr::{Adjacency, Graph, WeightType};
use crate::error::{check_memory, Error, Result};

/// Bytes before the offsets: `directed`, `m`, `n`.
const HEADER: usize = 17;

/// The largest integer weight a 32-bit float holds exactly (negative weights are
/// stored as floats, as the text readers store them).
const EXACT_IN_F32: i32 = 1 << 24;

/// A graph from the bytes of a `.sg` (`weighted` false) or `.wsg` file.
pub(crate) fn from_bytes(path: &Path, bytes: &[u8], weighted: bool) -> Result<Graph> {
    let bad = |msg: String| Error::invalid(path, msg);
    if bytes.len() < HEADER {
        return Err(bad(format!("{} bytes is shorter than a GAPBS serialized graph's 17-byte header: truncated", bytes.len())));
    }
    let directed = match bytes[0] {
        0 => false,
        1 => true,
        b => return Err(bad(format!("its first byte (directed) is {b}, not 0 or 1: not a GAPBS serialized graph"))),
    };
    let word = |at: usize| i64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
    let (m, n) = (word(1), word(9));
    if !(0..=i32::MAX as i64 + 1).contains(&n) || m < 0 {
        return Err(bad(format!("its header says {n} vertices and {m} edges: GAPBS serialized graphs hold 0 to 2^31 vertices")));
    }
    let (n, m) = (n as u64, m as u64);
    let element = if weighted { 8 } else { 4 };
    let side_len = (n + 1).checked_mul(8).and_then(|o| m.checked_mul(element).and_then(|e| o.checked_add(e)));
    let expected = side_len.and_then(|s| s.checked_mul(if directed { 2 } else { 1 })).and_then(|s| s.checked_add(HEADER as u64));
    if expected != Some(bytes.len() as u64) {
        return Err(bad(format!(
            "{} bytes, where its header ({n} vertices, {m} edges, {}{}) makes {}: truncated, or not a GAPBS {} file",
            bytes.len(),
            if directed { "directed" } else { "undirected" },
            if weighted { ", weighted" } else { "" },
            expected.map_or("more than any file".into(), |e| e.to_string()),
            if weighted { ".wsg" } else { ".sg" },
        )));
    }
    // Each side's arrays in our types take about its bytes in the file.
    let side_bytes = side_len.expect("checked with the size") as usize;
    check_memory("the graph read from a GAPBS file", (bytes.len() - HEADER) as u64)?;
    let read_side = |at: usize| side(path, &bytes[at..at + side_bytes], n as usize, weighted);
    let out = read_side(HEADER)?;
    let g = match directed {
        true => Graph::from_adjacencies(out, read_side(HEADER + side_bytes)?),
        false => Graph::from_adjacency(out, false),
    };
    crate::cgr::check_consistency(&g).map_err(bad)?;
    Ok(g)
}

/// One side (out- or in-edges) of `n` vertices: offsets, then neighbours, read
/// straight into our types (a negative int64 or int32 read as unsigned is above any
/// valid value, and named as negative), so that a GAP-scale file is held once.
fn side(path: &Path, bytes: &[u8], n: usize, weighted: bool) -> Result<Adjacency> {
    let bad = |msg: String| Error::invalid(path, msg);
    let (offsets, neighbours) = bytes.split_at((n + 1) * 8);
    let offsets: Vec<u64> = offsets.par_chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect();
    if let Some(v) = offsets.par_iter().position_first(|&o| o > i64::MAX as u64) {
        return Err(bad(format!("the offset of vertex {v} is negative ({})", offsets[v] as i64)));
    }
    let word = |c: &[u8]| u32::from_le_bytes(c.try_into().expect("4 bytes"));
    let stride = if weighted { 8 } else { 4 };
    let targets: Vec<u32> = neighbours.par_chunks_exact(stride).map(|c| word(&c[..4])).collect();
    if let Some(e) = targets.par_iter().position_first(|&t| t > i32::MAX as u32) {
        return Err(bad(format!("edge {e} targets vertex {}, a negative id", targets[e] as i32)));
    }
    let mut weights: Option<Vec<u32>> = weighted.then(|| neighbours.par_chunks_exact(8).map(|c| word(&c[4..])).collect());
    let weight_type = match &mut weights {
        None => WeightType::None,
        Some(w) if w.par_iter().all(|&x| x <= i32::MAX as u32) => WeightType::Int,
        Some(w) => {
            if let Some(e) = w.par_iter().position_first(|&x| (x as i32).unsigned_abs() > EXACT_IN_F32 as u32) {
                let problem = "negative weights are stored as 32-bit floats, which hold integers up to 2^24 exactly";
                return Err(bad(format!("edge {e} weighs {}: {problem}", w[e] as i32)));
            }
            w.par_iter_mut().for_each(|x| *x = (*x as i32 as f32).to_bits());
            WeightType::Float
        }
    };
    Adjacency::from_parts(offsets, targets, weight_type, weights).map_err(bad)
}
