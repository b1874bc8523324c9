//! The on-disk layout of the semi-external engine (Blaze's): an index kept in memory
//! and the edge data as 4 KiB pages dealt round-robin over K stripe files.
//!
//! The edge data of one side (out-edges, or in-edges for kernels that pull) is one
//! logical byte stream of records, `u32` target, then the `u32` weight word when the
//! graph is weighted, in CSR order. Logical page `p` of the stream is stored in stripe
//! file `p % K` as its local page `p / K`, after the file's header page; each file is
//! padded to whole pages. A record never straddles two pages (4096 is a multiple of 4
//! and 8).
//!
//! Integrity (a corrupt, misplaced or foreign page is an error, never data):
//! - every layout has a random id, written into the index and into the header page of
//!   each stripe file (with the file's side and position), checked at open, so swapped,
//!   stale or foreign stripes are refused before a run;
//! - the index keeps a checksum of every page, seeded by the id, the side and the
//!   page's logical number, verified as each page is read;
//! - the index ends with a checksum of itself;
//! - stripe files are named after the id, so a re-conversion writes new files and
//!   commits by renaming the index into place (the old layout stays whole until then,
//!   and its stripes are removed after).
//!
//! The index file (`NAME.ssd`): the magic `CHATTYSD`, a little-endian `u32` length
//! and a JSON header ([`Header`]: sizes, weight type, id, stripe file names relative to
//! the index's directory), padding to 8 bytes, the out-offsets (`n + 1` × `u64`) and,
//! for a directed graph, the in-offsets, then the page checksums (`u32` per logical
//! page, out-edges then in-edges), padding to 8 bytes, and the xxh3-64 of all of it.
//! An undirected graph's in-edges are its out-edges and share their files.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

use chatty_graph::file::{AtomicFile, Pending};
use chatty_graph::{Adjacency, Graph, WeightType};
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed};

use crate::SsdError;

/// Bytes of a page: the unit of IO and of checksums.
pub const PAGE: usize = 4096;
const MAGIC: &[u8; 8] = b"CHATTYSD";
const STRIPE_MAGIC: &[u8; 8] = b"CHATTYSS";
const VERSION: u32 = 2;

/// The JSON header of an index file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Header {
    /// The layout's format version.
    pub version: u32,
    /// The layout's random identity (16 hex digits), in every stripe's header page.
    #[serde(default)]
    pub id: String,
    /// Vertices.
    pub vertices: u64,
    /// Stored directed edges.
    pub edges: u64,
    /// Whether the graph is directed.
    pub directed: bool,
    /// The weights' type, by its name (`none`, `int`, `float`).
    pub weight_type: String,
    /// Bytes per edge record: 4, or 8 with weights.
    pub record_bytes: u64,
    /// Stripe files of the out-edges, then of the in-edges (empty when undirected).
    pub out_files: Vec<String>,
    /// Stripe files of the in-edges.
    pub in_files: Vec<String>,
    /// The first vertex id of the source's numbering (1 for DIMACS, PACE, Matrix
    /// Market); absent in layouts written before it was recorded.
    #[serde(default)]
    pub id_base: u32,
}

/// Which side of the edge data: out-edges, or the in-edges of a directed graph.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SideKind {
    /// The out-edges.
    Out = 0,
    /// The in-edges of a directed graph.
    In = 1,
}

/// One side of the edge data: offsets and page checksums in memory, pages on disk.
#[derive(Debug)]
pub struct Side {
    /// Which side it is.
    pub kind: SideKind,
    /// Each vertex's first record, and the records in all last (n + 1 entries).
    pub offsets: Vec<u64>,
    /// Checksum of each logical page ([`page_sum`]).
    pub sums: Vec<u32>,
    /// Its stripe files, in dealing order.
    pub files: Vec<PathBuf>,
}

impl Side {
    /// Logical pages of this side's stream.
    pub fn pages(&self, record_bytes: u64) -> u64 {
        pages_of(self.offsets.last().copied().unwrap_or(0), record_bytes)
    }
}

fn pages_of(edges: u64, record_bytes: u64) -> u64 {
    (edges * record_bytes).div_ceil(PAGE as u64)
}

/// Byte offset of local page `local` in a stripe file (the header page comes first).
pub fn page_offset(local: u64) -> u64 {
    (local + 1) * PAGE as u64
}

/// The checksum of logical page `logical` of `side` in layout `id`: a page read from
/// the wrong file, the wrong place or another layout does not match.
pub fn page_sum(id: u64, side: SideKind, logical: u64, page: &[u8]) -> u32 {
    let seed = id ^ (side as u64) << 63 ^ logical.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    xxh3_64_with_seed(page, seed) as u32
}

/// Pages of stripe file `j` of `k` for a side of `pages` logical pages.
fn file_pages(pages: u64, k: u64, j: u64) -> u64 {
    pages / k + u64::from(j < pages % k)
}

/// A loaded index: everything but the edge data.
#[derive(Debug)]
pub struct Layout {
    /// The index file.
    pub path: PathBuf,
    /// The index's header.
    pub header: Header,
    /// The id as a number.
    pub id: u64,
    /// The weights' type.
    pub weight_type: WeightType,
    /// The out-edges.
    pub out: Side,
    /// `None` for an undirected graph (use `out`).
    pub inc: Option<Side>,
}

impl Layout {
    /// Vertices.
    pub fn num_vertices(&self) -> usize {
        self.header.vertices as usize
    }

    /// The side the pull kernels read: the in-edges, or the out-edges of an undirected graph.
    pub fn in_side(&self) -> &Side {
        self.inc.as_ref().unwrap_or(&self.out)
    }

    /// Bytes of edge data on disk (both sides).
    pub fn data_bytes(&self) -> u64 {
        let side = |s: &Side| s.pages(self.header.record_bytes) * PAGE as u64;
        side(&self.out) + self.inc.as_ref().map_or(0, side)
    }

    /// Bytes the index takes in memory (offsets and page checksums).
    pub fn index_bytes(&self) -> u64 {
        let side = |s: &Side| (s.offsets.len() * 8 + s.sums.len() * 4) as u64;
        side(&self.out) + self.inc.as_ref().map_or(0, side)
    }
}

/// Whether `path` is an index file (a regular file starting with the magic: a pipe
/// is never opened here, so its bytes are left for the reader).
pub fn is_layout(path: &Path) -> bool {
    let mut magic = [0u8; 8];
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
        && File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok()
        && &magic == MAGIC
}

/// The header page of a stripe file: magic, version, side, position, layout id and
/// page count, then the xxh3-64 of those 40 bytes.
fn stripe_header(id: u64, side: SideKind, j: u32, k: u32, pages: u64) -> Vec<u8> {
    let mut h = vec![0u8; PAGE];
    h[..8].copy_from_slice(STRIPE_MAGIC);
    h[8..12].copy_from_slice(&VERSION.to_le_bytes());
    h[12..16].copy_from_slice(&(side as u32).to_le_bytes());
    h[16..20].copy_from_slice(&j.to_le_bytes());
    h[20..24].copy_from_slice(&k.to_le_bytes());
    h[24..32].copy_from_slice(&id.to_le_bytes());
    h[32..40].copy_from_slice(&pages.to_le_bytes());
    let sum = xxh3_64(&h[..40]);
    h[40..48].copy_from_slice(&sum.to_le_bytes());
    h
}

/// A fresh layout id: unique per conversion (time, process, path), not a secret.
fn new_id(index: &Path) -> u64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
    xxh3_64(format!("{now} {} {}", std::process::id(), index.display()).as_bytes())
}

/// Writes `g` as an index at `index` and `stripes` files per side, dealt over `dirs`
/// (round-robin; none: beside the index). A directed graph gets its transpose too.
///
/// The stripes are written first, the index is renamed into place last (the commit);
/// a failure or an interruption before it removes the new stripes and leaves any
/// layout already at `index` as it was. After it, the old layout's stripes are removed.
pub fn write(g: &Graph, index: &Path, stripes: usize, dirs: &[PathBuf]) -> Result<Layout, SsdError> {
    if stripes == 0 || stripes > 1024 {
        return Err(SsdError::Config(format!("--stripes {stripes}: expected 1 to 1024 files per side")));
    }
    if g.order().is_some() {
        return Err(SsdError::Config(
            "the graph is stored renumbered (chatty convert --reorder); an SSD layout is written in the input's order: convert the input without --reorder".into(),
        ));
    }
    if g.names().is_some() {
        return Err(SsdError::Config(
            "the graph's vertices are named by its input (ids with gaps, or labels); an SSD layout numbers them 0 to n-1: \
             convert the input with --keep-id-range, or to .cgr for the other engines"
                .into(),
        ));
    }
    let base = index.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf();
    let stem = index.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "graph.ssd".into());
    let id = new_id(index);
    let record_bytes = if g.weight_type() == WeightType::None { 4 } else { 8 };
    let name = |side: &str, k: usize| -> PathBuf {
        let dir = if dirs.is_empty() { base.clone() } else { dirs[k % dirs.len()].clone() };
        dir.join(format!("{stem}.{:08x}.{side}.{k}", id >> 32))
    };
    let transposed =
        (g.is_directed() && g.transpose_if_built().is_none()).then(|| chatty_graph::transform::transpose(g.out_edges())).transpose()?;
    let inc: Option<&Adjacency> = g.is_directed().then(|| g.transpose_if_built().or(transposed.as_ref()).expect("built above"));
    let out_files: Vec<PathBuf> = (0..stripes).map(|k| name("out", k)).collect();
    let mut written = Vec::new();
    let mut sums = write_side(g.out_edges(), id, SideKind::Out, record_bytes, &out_files, &mut written)?;
    let in_files: Vec<PathBuf> = match inc {
        Some(inc) => {
            let files: Vec<PathBuf> = (0..stripes).map(|k| name("in", k)).collect();
            sums.extend(write_side(inc, id, SideKind::In, record_bytes, &files, &mut written)?);
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
        version: VERSION,
        id: format!("{id:016x}"),
        vertices: g.num_vertices() as u64,
        edges: g.num_edges(),
        directed: g.is_directed(),
        weight_type: g.weight_type().name().into(),
        record_bytes,
        out_files: out_files.iter().map(rel).collect(),
        in_files: in_files.iter().map(rel).collect(),
        id_base: g.id_base(),
    };
    let mut f = AtomicFile::create(index)?;
    f.write_all(&index_bytes(&header, g.out_edges(), inc, &sums)).map_err(|e| SsdError::io(index, "cannot write", e))?;
    // The layout replaced is read, replaced and its stripes removed under a lock on
    // the directory: of two conversions to one name, the second removes the first's
    // stripes (read without it, each would remove only the layout before both).
    let directory = std::fs::File::open(&base).map_err(|e| SsdError::io(&base, "cannot open", e))?;
    directory.lock().map_err(|e| SsdError::io(&base, "cannot lock", e))?;
    let old = old_stripes(index);
    f.commit()?;
    written.into_iter().for_each(Pending::keep);
    let layout = load(index)?;
    let ours: Vec<&PathBuf> = layout.out.files.iter().chain(layout.inc.iter().flat_map(|s| &s.files)).collect();
    for f in old.iter().filter(|f| !ours.contains(f)) {
        let _ = std::fs::remove_file(f);
    }
    Ok(layout)
}

/// The index file: magic, the header as JSON, the offsets of each side, the pages'
/// checksums, and the whole's checksum.
fn index_bytes(header: &Header, out: &Adjacency, inc: Option<&Adjacency>, sums: &[u32]) -> Vec<u8> {
    let json = serde_json::to_vec(header).expect("header serialises");
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&(json.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&json);
    bytes.resize(bytes.len().next_multiple_of(8), 0);
    bytes.extend_from_slice(bytemuck::cast_slice(out.offsets()));
    if let Some(inc) = inc {
        bytes.extend_from_slice(bytemuck::cast_slice(inc.offsets()));
    }
    bytes.extend_from_slice(bytemuck::cast_slice(sums));
    bytes.resize(bytes.len().next_multiple_of(8), 0);
    bytes.extend_from_slice(&xxh3_64(&bytes).to_le_bytes());
    bytes
}

/// The stripe files of the layout at `index`, if there is one, that are provably
/// its own (their header page names its id): removed once a new layout replaces it.
fn old_stripes(index: &Path) -> Vec<PathBuf> {
    let Ok(old) = load(index) else { return Vec::new() };
    old.out.files.iter().chain(old.inc.iter().flat_map(|s| &s.files)).cloned().collect()
}

/// Writes one side's records as pages dealt over `files` (each after its header
/// page), renamed into place but pending until the index commits; returns each
/// logical page's checksum.
fn write_side(
    adj: &Adjacency,
    id: u64,
    side: SideKind,
    record_bytes: u64,
    files: &[PathBuf],
    written: &mut Vec<Pending>,
) -> Result<Vec<u32>, SsdError> {
    let k = files.len();
    let pages = pages_of(adj.num_edges(), record_bytes);
    let mut outs: Vec<AtomicFile> = files.iter().map(|p| AtomicFile::create(p)).collect::<Result<_, _>>()?;
    for (j, out) in outs.iter_mut().enumerate() {
        let header = stripe_header(id, side, j as u32, k as u32, file_pages(pages, k as u64, j as u64));
        out.write_all(&header).map_err(|e| SsdError::io(&files[j], "cannot write", e))?;
    }
    let targets = adj.targets();
    let weights = adj.raw_weights();
    let per_page = PAGE / record_bytes as usize;
    let mut page = vec![0u8; PAGE];
    let mut sums = Vec::with_capacity(pages as usize);
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
        sums.push(page_sum(id, side, p as u64, &page));
        outs[p % k].write_all(&page).map_err(|e| SsdError::io(&files[p % k], "cannot write", e))?;
    }
    for (f, path) in outs.into_iter().zip(files) {
        f.commit()?;
        written.push(Pending::new(path));
    }
    Ok(sums)
}

/// A stripe file name from an index: beside the index (a plain name) or absolute
/// (stripes on other drives); never climbing out with `..`.
fn stripe_path(base: &Path, name: &str) -> Option<PathBuf> {
    let p = Path::new(name);
    let plain = p.components().count() == 1 && matches!(p.components().next(), Some(Component::Normal(_)));
    let absolute = p.is_absolute() && p.components().all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
    (plain || absolute).then(|| base.join(p))
}

/// Reads an index, verifies its checksum, and checks every stripe file's size and
/// header page against it.
pub fn load(index: &Path) -> Result<Layout, SsdError> {
    let bad = |m: String| SsdError::Invalid(format!("{}: {m}", index.display()));
    let size = std::fs::metadata(index).map_err(|e| SsdError::io(index, "cannot read", e))?.len();
    chatty_graph::check_memory(&format!("the index {}", index.display()), size)?;
    let bytes = std::fs::read(index).map_err(|e| SsdError::io(index, "cannot read", e))?;
    if bytes.len() < 12 || &bytes[..8] != MAGIC {
        return Err(bad("not a chatty SSD layout index (no CHATTYSD magic)".into()));
    }
    let len = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes")) as usize;
    let json = bytes.get(12..12 + len).ok_or_else(|| bad("truncated header".into()))?;
    let header: Header = serde_json::from_slice(json).map_err(|e| bad(format!("bad header: {e}")))?;
    if header.version != VERSION {
        return Err(bad(format!(
            "layout version {} (this chatty reads {VERSION}, with page checksums): convert the graph again with `chatty convert GRAPH -o {} --layout ssd`",
            header.version,
            index.display()
        )));
    }
    let id = u64::from_str_radix(&header.id, 16).map_err(|_| bad(format!("bad layout id `{}`", header.id)))?;
    let weight_type = match header.weight_type.as_str() {
        "none" => WeightType::None,
        "int" => WeightType::Int,
        "float" => WeightType::Float,
        other => return Err(bad(format!("unknown weight type `{other}`"))),
    };
    let want_record = if weight_type == WeightType::None { 4 } else { 8 };
    let (n, m) = (header.vertices, header.edges);
    if header.record_bytes != want_record || header.out_files.is_empty() || header.out_files.len() > 1024 || n >= u32::MAX as u64 {
        return Err(bad("inconsistent header".into()));
    }
    if header.directed == header.in_files.is_empty() || (header.directed && header.in_files.len() != header.out_files.len()) {
        return Err(bad("a directed layout has in-edge files, as many as out-edge files".into()));
    }
    let sides: u64 = if header.directed { 2 } else { 1 };
    let pages = m.checked_mul(want_record).map(|b| b.div_ceil(PAGE as u64)).ok_or_else(|| bad(format!("{m} edges overflow")))?;
    let start = (12 + len).next_multiple_of(8) as u64;
    let need = (n + 1)
        .checked_mul(8 * sides)
        .and_then(|o| o.checked_add(pages.checked_mul(4 * sides)?))
        .and_then(|x| x.checked_add(start))
        .map(|x| x.next_multiple_of(8) + 8)
        .ok_or_else(|| bad("sizes overflow".into()))?;
    if bytes.len() as u64 != need {
        return Err(bad(format!("{} bytes, expected {need} for {n} vertices and {m} edges: truncated or corrupt", bytes.len())));
    }
    let body = bytes.len() - 8;
    if xxh3_64(&bytes[..body]) != u64::from_le_bytes(bytes[body..].try_into().expect("8 bytes")) {
        return Err(bad("index checksum mismatch: the index is corrupt".into()));
    }
    let base = index.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let side = |kind: SideKind, names: &[String]| -> Result<Side, SsdError> {
        let i = kind as usize;
        let at = start as usize + i * (n as usize + 1) * 8;
        let offsets: Vec<u64> =
            bytes[at..at + (n as usize + 1) * 8].chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect();
        if offsets[0] != 0 || offsets[n as usize] != m || offsets.windows(2).any(|w| w[0] > w[1]) {
            return Err(bad("offsets are not monotone from 0 to the edge count".into()));
        }
        let at = start as usize + sides as usize * (n as usize + 1) * 8 + i * pages as usize * 4;
        let sums: Vec<u32> =
            bytes[at..at + pages as usize * 4].chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes"))).collect();
        let files = names
            .iter()
            .map(|f| {
                stripe_path(base, f).ok_or_else(|| bad(format!("stripe file name `{f}` is neither a plain name nor an absolute path")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        check_stripes(&files, pages, id, kind)?;
        Ok(Side { kind, offsets, sums, files })
    };
    let out = side(SideKind::Out, &header.out_files)?;
    let inc = if header.directed { Some(side(SideKind::In, &header.in_files)?) } else { None };
    Ok(Layout { path: index.to_path_buf(), header, id, weight_type, out, inc })
}

/// Checks that `files` are the stripes of `pages` pages of side `kind` of layout `id`:
/// each of its size, its header page naming it.
fn check_stripes(files: &[PathBuf], pages: u64, id: u64, kind: SideKind) -> Result<(), SsdError> {
    let k = files.len() as u64;
    for (j, f) in files.iter().enumerate() {
        let want_pages = file_pages(pages, k, j as u64);
        let got = std::fs::metadata(f).map_err(|e| SsdError::io(f, "cannot open stripe file", e))?.len();
        let want = page_offset(want_pages);
        if got != want {
            return Err(SsdError::Invalid(format!("{}: {got} bytes, expected {want} (truncated or from another layout)", f.display())));
        }
        let mut head = vec![0u8; PAGE];
        File::open(f).and_then(|mut h| h.read_exact(&mut head)).map_err(|e| SsdError::io(f, "cannot read", e))?;
        if head != stripe_header(id, kind, j as u32, k as u32, want_pages) {
            return Err(SsdError::Invalid(format!(
                "{}: not stripe {j} of the {} edges of layout {id:016x} (swapped, stale or from another layout): convert the graph again",
                f.display(),
                if kind == SideKind::Out { "out" } else { "in" },
            )));
        }
    }
    Ok(())
}

/// The error for a page whose checksum does not match.
pub fn corrupt_page(path: &Path, logical: u64, side: SideKind) -> SsdError {
    SsdError::Invalid(format!(
        "{}: corrupt page: logical page {logical} of the {} edges fails its checksum (damaged, misplaced or from another layout)",
        path.display(),
        if side == SideKind::Out { "out" } else { "in" }
    ))
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
            .map(|p| {
                let mut f = File::open(p).map_err(|e| SsdError::io(p, "cannot open", e))?;
                std::io::copy(&mut (&mut f).take(PAGE as u64), &mut std::io::sink()).map_err(|e| SsdError::io(p, "cannot read", e))?;
                Ok((f, p))
            })
            .collect::<Result<_, SsdError>>()?;
        let mut targets = Vec::with_capacity(m);
        let mut weights = (rec == 8).then(|| Vec::with_capacity(m));
        let mut page = vec![0u8; PAGE];
        for p in 0..s.pages(rec as u64) as usize {
            let (f, path) = &mut files[p % s.files.len()];
            f.read_exact(&mut page).map_err(|e| SsdError::io(path, "cannot read", e))?;
            if page_sum(layout.id, s.kind, p as u64, &page) != s.sums[p] {
                return Err(corrupt_page(path, p as u64, s.kind));
            }
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
