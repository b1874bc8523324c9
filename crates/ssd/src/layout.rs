//! The on-disk layout of the semi-external engine (Blaze's): an index kept in memory
//! and the edge data as 4 KiB pages dealt round-robin over K stripe files.
//!
//! The edge data of one side (out-edges, or in-edges for kernels that pull) is one
//! logical byte stream of records, `u32` target, then the `u32` weight word when the
//! graph is weighted, in CSR order. Logical page `p` of the stream is stored in stripe
//! file `p % K` at byte `(p / K) · 4096`; each file is padded to whole pages. A record
//! never straddles two pages (4096 is a multiple of 4 and 8).
//!
//! The index file (`NAME.ssd`): the magic `CHATTYSD`, a little-endian `u32` length
//! and a JSON header ([`Header`]: sizes, weight type, stripe file names relative to
//! the index's directory), padding to 8 bytes, then the out-offsets (`n + 1` × `u64`)
//! and, for a directed graph, the in-offsets. An undirected graph's in-edges are its
//! out-edges and share their files.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use chatty_graph::write::AtomicFile;
use chatty_graph::{Adjacency, Graph, WeightType};
use serde::{Deserialize, Serialize};

use crate::SsdError;

pub const PAGE: usize = 4096;
const MAGIC: &[u8; 8] = b"CHATTYSD";

/// The JSON header of an index file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Header {
    pub version: u32,
    pub vertices: u64,
    pub edges: u64,
    pub directed: bool,
    pub weight_type: String,
    /// Bytes per edge record: 4, or 8 with weights.
    pub record_bytes: u64,
    /// Stripe files of the out-edges, then of the in-edges (empty when undirected).
    pub out_files: Vec<String>,
    pub in_files: Vec<String>,
    /// The first vertex id of the source's numbering (1 for DIMACS, PACE, Matrix
    /// Market); absent in layouts written before it was recorded.
    #[serde(default)]
    pub id_base: u32,
}

/// One side of the edge data: offsets in memory, pages on disk.
#[derive(Debug)]
pub struct Side {
    pub offsets: Vec<u64>,
    pub files: Vec<PathBuf>,
}

impl Side {
    /// Logical pages of this side's stream.
    pub fn pages(&self, record_bytes: u64) -> u64 {
        (self.offsets.last().copied().unwrap_or(0) * record_bytes).div_ceil(PAGE as u64)
    }
}

/// A loaded index: everything but the edge data.
#[derive(Debug)]
pub struct Layout {
    pub path: PathBuf,
    pub header: Header,
    pub weight_type: WeightType,
    pub out: Side,
    /// `None` for an undirected graph (use `out`).
    pub inc: Option<Side>,
}

impl Layout {
    pub fn num_vertices(&self) -> usize {
        self.header.vertices as usize
    }

    pub fn in_side(&self) -> &Side {
        self.inc.as_ref().unwrap_or(&self.out)
    }

    /// Bytes of edge data on disk (both sides).
    pub fn data_bytes(&self) -> u64 {
        let side = |s: &Side| s.pages(self.header.record_bytes) * PAGE as u64;
        side(&self.out) + self.inc.as_ref().map_or(0, side)
    }
}

/// Whether `path` is an index file.
pub fn is_layout(path: &Path) -> bool {
    let mut magic = [0u8; 8];
    File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok() && &magic == MAGIC
}

/// Writes `g` as an index at `index` and `stripes` files per side, dealt over `dirs`
/// (round-robin; none: beside the index). A directed graph gets its transpose too.
pub fn write(g: &Graph, index: &Path, stripes: usize, dirs: &[PathBuf]) -> Result<Layout, SsdError> {
    if stripes == 0 || stripes > 1024 {
        return Err(SsdError::Config(format!("--stripes {stripes}: expected 1 to 1024 files per side")));
    }
    let base = index.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf();
    let stem = index.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "graph.ssd".into());
    let record_bytes = if g.weight_type() == WeightType::None { 4 } else { 8 };
    let name = |side: &str, k: usize| -> PathBuf {
        let dir = if dirs.is_empty() { base.clone() } else { dirs[k % dirs.len()].clone() };
        dir.join(format!("{stem}.{side}.{k}"))
    };
    let transposed =
        (g.is_directed() && g.transpose_if_built().is_none()).then(|| chatty_graph::transform::transpose(g.out_edges())).transpose()?;
    let inc: Option<&Adjacency> = g.is_directed().then(|| g.transpose_if_built().or(transposed.as_ref()).expect("built above"));
    let out_files: Vec<PathBuf> = (0..stripes).map(|k| name("out", k)).collect();
    write_side(g.out_edges(), record_bytes, &out_files)?;
    let in_files: Vec<PathBuf> = match inc {
        Some(inc) => {
            let files: Vec<PathBuf> = (0..stripes).map(|k| name("in", k)).collect();
            write_side(inc, record_bytes, &files)?;
            files
        }
        None => Vec::new(),
    };
    let rel = |p: &PathBuf| -> String {
        match p.strip_prefix(&base) {
            Ok(r) if dirs.is_empty() => r.to_string_lossy().into_owned(),
            _ => std::path::absolute(p).unwrap_or_else(|_| p.clone()).to_string_lossy().into_owned(),
        }
    };
    let header = Header {
        version: 1,
        vertices: g.num_vertices() as u64,
        edges: g.num_edges(),
        directed: g.is_directed(),
        weight_type: g.weight_type().name().into(),
        record_bytes,
        out_files: out_files.iter().map(rel).collect(),
        in_files: in_files.iter().map(rel).collect(),
        id_base: g.id_base(),
    };
    let json = serde_json::to_vec(&header).expect("header serialises");
    let mut f = AtomicFile::create(index)?;
    let mut head = MAGIC.to_vec();
    head.extend_from_slice(&(json.len() as u32).to_le_bytes());
    head.extend_from_slice(&json);
    head.resize(head.len().next_multiple_of(8), 0);
    let io = |e| SsdError::io(index, "cannot write", e);
    f.write_all(&head).map_err(io)?;
    f.write_all(bytemuck::cast_slice(g.out_edges().offsets())).map_err(io)?;
    if let Some(inc) = inc {
        f.write_all(bytemuck::cast_slice(inc.offsets())).map_err(io)?;
    }
    f.commit()?;
    load(index)
}

/// Writes one side's records as pages dealt over `files`.
fn write_side(adj: &Adjacency, record_bytes: u64, files: &[PathBuf]) -> Result<(), SsdError> {
    let mut outs: Vec<AtomicFile> = files.iter().map(|p| AtomicFile::create(p)).collect::<Result<_, _>>()?;
    let targets = adj.targets();
    let weights = adj.raw_weights();
    let per_page = PAGE / record_bytes as usize;
    let mut page = vec![0u8; PAGE];
    for (p, first) in (0..targets.len()).step_by(per_page).enumerate() {
        page.fill(0);
        let last = (first + per_page).min(targets.len());
        for (i, e) in (first..last).enumerate() {
            let at = i * record_bytes as usize;
            page[at..at + 4].copy_from_slice(&targets[e].to_le_bytes());
            if let Some(w) = weights {
                page[at + 4..at + 8].copy_from_slice(&w[e].to_le_bytes());
            }
        }
        let k = p % files.len();
        outs[k].write_all(&page).map_err(|e| SsdError::io(&files[k], "cannot write", e))?;
    }
    for f in outs {
        f.commit()?;
    }
    Ok(())
}

/// Reads an index and checks it against its stripe files' sizes.
pub fn load(index: &Path) -> Result<Layout, SsdError> {
    let bad = |m: String| SsdError::Invalid(format!("{}: {m}", index.display()));
    let bytes = std::fs::read(index).map_err(|e| SsdError::io(index, "cannot read", e))?;
    if bytes.len() < 12 || &bytes[..8] != MAGIC {
        return Err(bad("not a chatty SSD layout index (no CHATTYSD magic)".into()));
    }
    let len = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes")) as usize;
    let json = bytes.get(12..12 + len).ok_or_else(|| bad("truncated header".into()))?;
    let header: Header = serde_json::from_slice(json).map_err(|e| bad(format!("bad header: {e}")))?;
    if header.version != 1 {
        return Err(bad(format!("layout version {} (this chatty reads 1)", header.version)));
    }
    let weight_type = match header.weight_type.as_str() {
        "none" => WeightType::None,
        "int" => WeightType::Int,
        "float" => WeightType::Float,
        other => return Err(bad(format!("unknown weight type `{other}`"))),
    };
    let want_record = if weight_type == WeightType::None { 4 } else { 8 };
    let n = header.vertices;
    if header.record_bytes != want_record || header.out_files.is_empty() || n >= u32::MAX as u64 {
        return Err(bad("inconsistent header".into()));
    }
    if header.directed == header.in_files.is_empty() || (header.directed && header.in_files.len() != header.out_files.len()) {
        return Err(bad("a directed layout has in-edge files, as many as out-edge files".into()));
    }
    let sides = if header.directed { 2 } else { 1 };
    let start = (12 + len).next_multiple_of(8);
    let need = start as u64 + sides * (n + 1) * 8;
    if bytes.len() as u64 != need {
        return Err(bad(format!("{} bytes, expected {need} for {n} vertices", bytes.len())));
    }
    let base = index.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let side = |i: u64, names: &[String]| -> Result<Side, SsdError> {
        let at = start + (i * (n + 1) * 8) as usize;
        let offsets: Vec<u64> =
            bytes[at..at + (n as usize + 1) * 8].chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect();
        if offsets[0] != 0 || offsets[n as usize] != header.edges || offsets.windows(2).any(|w| w[0] > w[1]) {
            return Err(bad("offsets are not monotone from 0 to the edge count".into()));
        }
        let files: Vec<PathBuf> = names.iter().map(|f| base.join(f)).collect();
        let s = Side { offsets, files };
        let pages = s.pages(header.record_bytes);
        let k = s.files.len() as u64;
        for (j, f) in s.files.iter().enumerate() {
            let want = (pages / k + u64::from((j as u64) < pages % k)) * PAGE as u64;
            let got = std::fs::metadata(f).map_err(|e| SsdError::io(f, "cannot open stripe file", e))?.len();
            if got != want {
                return Err(SsdError::Invalid(format!("{}: {got} bytes, expected {want} (truncated or from another layout)", f.display())));
            }
        }
        Ok(s)
    };
    let out = side(0, &header.out_files)?;
    let inc = if header.directed { Some(side(1, &header.in_files)?) } else { None };
    Ok(Layout { path: index.to_path_buf(), header, weight_type, out, inc })
}

/// Reads the whole graph back into memory (for checking a run against the CPU
/// references; the engine itself never does this).
pub fn read_graph(layout: &Layout) -> Result<Graph, SsdError> {
    let rec = layout.header.record_bytes as usize;
    let side = |s: &Side| -> Result<Adjacency, SsdError> {
        let m = *s.offsets.last().unwrap_or(&0) as usize;
        let mut files: Vec<(File, &PathBuf)> = s
            .files
            .iter()
            .map(|p| File::open(p).map(|f| (f, p)).map_err(|e| SsdError::io(p, "cannot open", e)))
            .collect::<Result<_, _>>()?;
        let mut targets = Vec::with_capacity(m);
        let mut weights = (rec == 8).then(|| Vec::with_capacity(m));
        let mut page = vec![0u8; PAGE];
        for p in 0..s.pages(rec as u64) as usize {
            let (f, path) = &mut files[p % s.files.len()];
            f.read_exact(&mut page).map_err(|e| SsdError::io(path, "cannot read", e))?;
            for r in page.chunks_exact(rec).take(m - targets.len()) {
                targets.push(u32::from_le_bytes(r[..4].try_into().expect("4 bytes")));
                if let Some(w) = &mut weights {
                    w.push(u32::from_le_bytes(r[4..8].try_into().expect("4 bytes")));
                }
            }
        }
        Adjacency::from_parts(s.offsets.clone(), targets, layout.weight_type, weights)
            .map_err(|e| SsdError::Invalid(format!("{}: {e}", layout.path.display())))
    };
    let out = side(&layout.out)?;
    Ok(match &layout.inc {
        Some(inc) => Graph::from_adjacencies(out, side(inc)?),
        None => Graph::from_adjacency(out, false),
    })
}
