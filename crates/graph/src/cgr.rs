//! The `.cgr` binary graph (design.md 3.3): versioned, little-endian, page-aligned,
//! loaded with `mmap` and no parsing.
//!
//! Layout: a 4096-byte header, then page-aligned sections.
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | magic `CHATTYGR` |
//! | 8..12 | version (u32): 1; 2 when the input-ids section is present; 3 when the names sections are |
//! | 12..16 | flags: bit 0 directed, bit 1 has transpose, bit 2 the source numbered vertices from 1, bits 8..16 weight type (0 none, 1 u32, 2 f32) |
//! | 16..24 | n (u64) |
//! | 24..32 | m (u64), stored directed edges |
//! | 32..36 | section count (u32), at most 10 |
//! | 40.. | section table: {kind u32, pad u32, offset u64, length u64, xxh3-64 checksum u64} × count |
//! | 4088..4096 | xxh3-64 of bytes 0..4088 |
//!
//! Section kinds: 1 out-offsets (u64 × (n+1)), 2 out-targets (u32 × m), 3 out-weights
//! (u32 words × m), 4..6 the same for the transpose, 7 input ids (u32 × n, for a
//! graph stored renumbered by `chatty convert --reorder`: the input's id of each
//! stored vertex, a permutation; version 2, so that a reader of version 1 refuses
//! the file rather than answer in the stored ids); the input's names of the vertices
//! where they are not `0..n` ([`VertexNames`], by input id; version 3): 8 integer ids
//! (u64 × n, ascending), or 9 label offsets (u64 × (n+1)) and 10 label text (UTF-8).
//! Loading checks the header, its
//! checksum, every section's size and bounds against the file length, the structure
//! (offsets monotone from 0 to m, targets < n, neighbour lists sorted) and that the
//! parts agree (the transpose is the transpose, an undirected graph is symmetric), so
//! a file whose checksums were fixed up after an edit is still refused; `check` also
//! verifies the section checksums.

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;
use xxhash_rust::xxh3::Xxh3;

use crate::buf::Buf;
use crate::csr::{check_structure, Adjacency, Graph, Rows, VertexOrder, WeightType};
use crate::error::{Error, Result};
use crate::file::{AtomicFile, Input, Snapshot};
use crate::names::VertexNames;
use crate::progress::Progress;

/// The first eight bytes of every `.cgr` file.
pub const MAGIC: &[u8; 8] = b"CHATTYGR";
/// The newest format version this build reads and writes (it reads every older one).
pub const VERSION: u32 = 3;
/// The version of files with input ids but no names.
const VERSION_WITH_IDS: u32 = 2;
/// The version of files without input ids, which every build since the first reads.
const VERSION_WITHOUT_IDS: u32 = 1;
/// The section of a renumbered graph's input ids.
const INPUT_IDS: u32 = 7;
/// The sections of the vertices' names: integer ids, or label offsets and text.
const NAME_IDS: u32 = 8;
const LABEL_OFFSETS: u32 = 9;
const LABEL_TEXT: u32 = 10;
const PAGE: u64 = 4096;
const MAX_SECTIONS: usize = 10;
const TABLE_AT: usize = 40;
const ENTRY_BYTES: usize = 32;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Kind {
    Offsets = 1,
    Targets = 2,
    Weights = 3,
}

#[derive(Copy, Clone, Debug)]
struct Section {
    kind: u32,
    offset: u64,
    len: u64,
    checksum: u64,
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
fn le_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// Writes `g` to `path` as `.cgr`, through a temporary file renamed on success.
pub fn write(g: &Graph, path: &Path, progress: &dyn Progress) -> Result<()> {
    let mut arrays: Vec<(u32, &[u8])> = Vec::new();
    for (base, adj) in [(0, Some(&g.out)), (3, g.inc.as_ref())] {
        let Some(adj) = adj else { continue };
        arrays.push((base + Kind::Offsets as u32, bytemuck::cast_slice(adj.offsets())));
        arrays.push((base + Kind::Targets as u32, bytemuck::cast_slice(adj.targets())));
        if let Some(w) = adj.raw_weights() {
            arrays.push((base + Kind::Weights as u32, bytemuck::cast_slice(w)));
        }
    }
    if let Some(order) = g.order() {
        arrays.push((INPUT_IDS, bytemuck::cast_slice(order.input_ids())));
    }
    match g.names().map(|x| x.as_ref()) {
        Some(VertexNames::Numbers(ids)) => arrays.push((NAME_IDS, bytemuck::cast_slice(ids))),
        Some(VertexNames::Labels { offsets, text, .. }) => {
            arrays.push((LABEL_OFFSETS, bytemuck::cast_slice(offsets)));
            arrays.push((LABEL_TEXT, text.as_bytes()));
        }
        None => {}
    }
    let total: u64 = arrays.iter().map(|a| a.1.len() as u64).sum();
    progress.start("writing .cgr", total);

    let mut file = AtomicFile::create(path)?;
    let io = |e| Error::io(path, "cannot write", e);
    let mut header = vec![0u8; PAGE as usize];
    header[..8].copy_from_slice(MAGIC);
    let version = match (g.names().is_some(), g.order().is_some()) {
        (true, _) => VERSION,
        (false, true) => VERSION_WITH_IDS,
        (false, false) => VERSION_WITHOUT_IDS,
    };
    header[8..12].copy_from_slice(&version.to_le_bytes());
    let weight_code = match g.weight_type() {
        WeightType::None => 0u32,
        WeightType::Int => 1,
        WeightType::Float => 2,
    };
    let flags = g.directed as u32 | (g.inc.is_some() as u32) << 1 | ((g.id_base == 1) as u32) << 2 | weight_code << 8;
    header[12..16].copy_from_slice(&flags.to_le_bytes());
    header[16..24].copy_from_slice(&(g.num_vertices() as u64).to_le_bytes());
    header[24..32].copy_from_slice(&g.num_edges().to_le_bytes());
    header[32..36].copy_from_slice(&(arrays.len() as u32).to_le_bytes());
    file.write_all(&header).map_err(io)?;

    let mut offset = PAGE;
    for (i, (kind, bytes)) in arrays.iter().enumerate() {
        let checksum = checksum(bytes);
        for piece in bytes.chunks(64 << 20) {
            file.write_all(piece).map_err(io)?;
            progress.advance(piece.len() as u64);
        }
        let padded = (bytes.len() as u64).div_ceil(PAGE) * PAGE;
        file.write_all(&vec![0u8; (padded - bytes.len() as u64) as usize]).map_err(io)?;
        let e = TABLE_AT + i * ENTRY_BYTES;
        header[e..e + 4].copy_from_slice(&kind.to_le_bytes());
        header[e + 8..e + 16].copy_from_slice(&offset.to_le_bytes());
        header[e + 16..e + 24].copy_from_slice(&(bytes.len() as u64).to_le_bytes());
        header[e + 24..e + 32].copy_from_slice(&checksum.to_le_bytes());
        offset += padded;
    }
    let header_sum = xxhash_rust::xxh3::xxh3_64(&header[..PAGE as usize - 8]);
    header[PAGE as usize - 8..].copy_from_slice(&header_sum.to_le_bytes());
    file.seek(SeekFrom::Start(0)).map_err(io)?;
    file.write_all(&header).map_err(io)?;
    file.commit()
}

/// Bytes per piece of a section checksum.
const PIECE: usize = 16 << 20;

/// xxh3-64 of `bytes`, hashed in parallel pieces and combined, so checking a
/// multi-gigabyte section uses every core (and, through [`CgrFile::piece_checksum`],
/// every process).
fn checksum(bytes: &[u8]) -> u64 {
    let sums: Vec<u64> = bytes.par_chunks(PIECE).map(xxhash_rust::xxh3::xxh3_64).collect();
    combine(bytes.len() as u64, &sums)
}

fn combine(len: u64, sums: &[u64]) -> u64 {
    let mut h = Xxh3::new();
    h.update(&len.to_le_bytes());
    for s in sums {
        h.update(&s.to_le_bytes());
    }
    h.digest()
}

/// A validated header and its map.
struct Mapped {
    map: Arc<memmap2::Mmap>,
    directed: bool,
    has_transpose: bool,
    id_base: u32,
    weight_type: WeightType,
    n: u64,
    m: u64,
    sections: Vec<Section>,
}

fn open(path: &Path) -> Result<Mapped> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, "cannot open", e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, "cannot stat", e))?;
    let len = meta.len();
    if len < PAGE {
        return Err(Error::invalid(path, format!("{len} bytes is shorter than a .cgr header ({PAGE} bytes): truncated")));
    }
    // SAFETY: read-only map; see `Input::open` for the shared-file caveat.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::io(path, "cannot map", e))?;
    validate(path, map, Some(Snapshot::of(path, &meta)))
}

/// A `.cgr` read by [`Input`]: its map, or a stream's bytes (moved
/// into an anonymous map so that both load the same way).
pub(crate) fn from_input(path: &Path, input: Input) -> Result<Graph> {
    let (map, snapshot) = match input {
        Input::Mapped(map, snapshot) => (map, Some(snapshot)),
        Input::Owned(bytes) if (bytes.len() as u64) < PAGE => {
            return Err(Error::invalid(path, format!("{} bytes is shorter than a .cgr header ({PAGE} bytes): truncated", bytes.len())))
        }
        Input::Owned(bytes) => {
            let mut anon = memmap2::MmapMut::map_anon(bytes.len()).map_err(|e| Error::io(path, "cannot allocate", e))?;
            anon.copy_from_slice(&bytes);
            (anon.make_read_only().map_err(|e| Error::io(path, "cannot allocate", e))?, None)
        }
    };
    graph_from(path, validate(path, map, snapshot)?)
}

/// Checks the header of `map`; the file (`snapshot`, where mapped from one) is
/// watched for changes in place while the map lives.
fn validate(path: &Path, map: memmap2::Mmap, snapshot: Option<Snapshot>) -> Result<Mapped> {
    let len = map.len() as u64;
    let bad = |msg: String| Err(Error::invalid(path, msg));
    if len < PAGE {
        return bad(format!("{len} bytes is shorter than a .cgr header ({PAGE} bytes): truncated"));
    }
    let h = &map[..PAGE as usize];
    if &h[..8] != MAGIC {
        return bad("not a .cgr file (wrong magic)".into());
    }
    let version = le_u32(h, 8);
    if !(VERSION_WITHOUT_IDS..=VERSION).contains(&version) {
        return bad(format!(
            ".cgr version {version} is not supported (this build reads versions 1 to {VERSION}): written by a newer chatty?"
        ));
    }
    if xxhash_rust::xxh3::xxh3_64(&h[..PAGE as usize - 8]) != le_u64(h, PAGE as usize - 8) {
        return bad("header checksum mismatch: the header is corrupt".into());
    }
    let flags = le_u32(h, 12);
    let weight_type = match (flags >> 8) & 0xff {
        0 => WeightType::None,
        1 => WeightType::Int,
        2 => WeightType::Float,
        w => return bad(format!("unknown weight type {w}")),
    };
    let (n, m, count) = (le_u64(h, 16), le_u64(h, 24), le_u32(h, 32) as usize);
    if n > u32::MAX as u64 {
        return bad(format!("{n} vertices: at most {} are supported", u32::MAX));
    }
    if count > MAX_SECTIONS {
        return bad(format!("{count} sections; at most {MAX_SECTIONS} are allowed"));
    }
    let sections: Vec<Section> = (0..count)
        .map(|i| {
            let e = TABLE_AT + i * ENTRY_BYTES;
            Section { kind: le_u32(h, e), offset: le_u64(h, e + 8), len: le_u64(h, e + 16), checksum: le_u64(h, e + 24) }
        })
        .collect();
    let has = |kind: u32| sections.iter().any(|s| s.kind == kind);
    let names = has(NAME_IDS) || has(LABEL_OFFSETS) || has(LABEL_TEXT);
    if version == VERSION_WITHOUT_IDS && has(INPUT_IDS) {
        return bad(format!("a version {version} file with an input-ids section: the header is inconsistent"));
    }
    // Version 2 is written only with input ids, version 3 only with names: without
    // them its answers would come out in stored ids, silently.
    if version == VERSION_WITH_IDS && !has(INPUT_IDS) {
        return bad(format!("a version {version} file without its input-ids section: the header is inconsistent"));
    }
    let whole_names = matches!((has(NAME_IDS), has(LABEL_OFFSETS), has(LABEL_TEXT)), (true, false, false) | (false, true, true));
    if (version == VERSION && !whole_names) || (version != VERSION && names) {
        return bad(format!("a version {version} file with names sections {:?}: the header is inconsistent", [8, 9, 10].map(has)));
    }
    let mut kinds: Vec<u32> = sections.iter().map(|s| s.kind).collect();
    kinds.sort_unstable();
    if let Some(twice) = kinds.windows(2).find(|k| k[0] == k[1]) {
        return bad(format!("section {} is listed twice", twice[0]));
    }
    for s in &sections {
        if s.offset % PAGE != 0 || s.offset < PAGE {
            return bad(format!("section {} starts at {}, not a page boundary after the header", s.kind, s.offset));
        }
        if s.offset.checked_add(s.len).is_none_or(|end| end > len) {
            return bad(format!(
                "section {} ({} bytes at {}) runs past the end of the {len}-byte file: truncated",
                s.kind, s.len, s.offset
            ));
        }
    }
    let id_base = (flags >> 2) & 1;
    let map = Arc::new(map);
    if let Some(snapshot) = snapshot {
        crate::file::watch(snapshot, &map);
    }
    Ok(Mapped { map, directed: flags & 1 != 0, has_transpose: flags & 2 != 0, id_base, weight_type, n, m, sections })
}

impl Mapped {
    /// Whether the file holds input ids (the graph is stored renumbered).
    fn renumbered(&self) -> bool {
        self.sections.iter().any(|s| s.kind == INPUT_IDS)
    }

    /// Whether the file holds the input's names of the vertices.
    fn named(&self) -> bool {
        self.sections.iter().any(|s| matches!(s.kind, NAME_IDS | LABEL_OFFSETS))
    }

    /// The vertices' names, checked (ascending ids; distinct UTF-8 labels).
    fn names(&self, path: &Path) -> Result<Option<VertexNames>> {
        let n = self.n;
        let bytes = |s: Section| &self.map[s.offset as usize..(s.offset + s.len) as usize];
        let names = if self.sections.iter().any(|s| s.kind == NAME_IDS) {
            crate::error::check_memory("the vertices' ids", 8 * n)?;
            let s = self.section(path, NAME_IDS, 8, n)?;
            VertexNames::numbers(Buf::<u64>::mapped(self.map.clone(), s.offset as usize, n as usize).to_vec())
        } else if self.named() {
            let o = self.section(path, LABEL_OFFSETS, 8, n + 1)?;
            let offsets = Buf::<u64>::mapped(self.map.clone(), o.offset as usize, n as usize + 1).to_vec();
            let t = self.section(path, LABEL_TEXT, 1, offsets[n as usize])?;
            crate::error::check_memory("the vertices' labels", 16 * n + t.len)?;
            let text = std::str::from_utf8(bytes(t)).map_err(|e| Error::invalid(path, format!("vertex labels: {e}")))?;
            VertexNames::labels(offsets, text.to_owned())
        } else {
            return Ok(None);
        };
        names.map(Some).map_err(|e| Error::invalid(path, format!("vertex names: {e}")))
    }

    fn section(&self, path: &Path, kind: u32, elem: u64, count: u64) -> Result<Section> {
        let s = self
            .sections
            .iter()
            .find(|s| s.kind == kind)
            .copied()
            .ok_or_else(|| Error::invalid(path, format!("missing section {kind}")))?;
        match elem.checked_mul(count) {
            Some(want) if want == s.len => {}
            Some(want) => return Err(Error::invalid(path, format!("section {kind} holds {} bytes, expected {want}", s.len))),
            None => return Err(Error::invalid(path, format!("section {kind}: {count} elements of {elem} bytes overflow"))),
        }
        Ok(s)
    }

    fn adjacency(&self, path: &Path, base: u32) -> Result<Adjacency> {
        let (n, m) = (self.n, self.m);
        let o = self.section(path, base + Kind::Offsets as u32, 8, n + 1)?;
        let t = self.section(path, base + Kind::Targets as u32, 4, m)?;
        let w = match self.weight_type {
            WeightType::None => None,
            _ => Some(self.section(path, base + Kind::Weights as u32, 4, m)?),
        };
        let offsets: Buf<u64> = Buf::mapped(self.map.clone(), o.offset as usize, n as usize + 1);
        if offsets[0] != 0 || offsets[n as usize] != m {
            return Err(Error::invalid(path, format!("offsets run from {} to {}, expected 0 to {m}", offsets[0], offsets[n as usize])));
        }
        Ok(Adjacency {
            offsets,
            targets: Buf::mapped(self.map.clone(), t.offset as usize, m as usize),
            weight_type: self.weight_type,
            weights: w.map(|w| Buf::mapped(self.map.clone(), w.offset as usize, m as usize)),
        })
    }
}

/// Maps a `.cgr` file, validating its header and section sizes against the file, the
/// structure of the CSR (offsets monotone, targets < n, sorted lists) and the
/// agreement of its parts (the transpose, undirected symmetry), so that no kernel can index out of
/// bounds or answer wrongly on a corrupt file. Checksums are left to [`check`].
pub fn load(path: &Path) -> Result<Graph> {
    graph_from(path, open(path)?)
}

fn graph_from(path: &Path, mapped: Mapped) -> Result<Graph> {
    let out = mapped.adjacency(path, 0)?;
    let inc = if mapped.has_transpose { Some(mapped.adjacency(path, 3)?) } else { None };
    for (name, adj) in [("out", Some(&out)), ("transpose", inc.as_ref())] {
        let Some(adj) = adj else { continue };
        check_structure(adj).map_err(|m| Error::invalid(path, format!("{name}-edges: {m}")))?;
    }
    let order = match mapped.renumbered() {
        false => None,
        true => {
            let s = mapped.section(path, INPUT_IDS, 4, mapped.n)?;
            crate::error::check_memory("the input ids of a renumbered graph and their inverse", 8 * mapped.n)?;
            let ids: Buf<u32> = Buf::mapped(mapped.map.clone(), s.offset as usize, mapped.n as usize);
            let order = VertexOrder::from_input_ids(ids.to_vec()).map_err(|e| Error::invalid(path, format!("input ids: {e}")))?;
            Some(Arc::new(order))
        }
    };
    let names = mapped.names(path)?.map(Arc::new);
    let g = Graph { directed: mapped.directed, out, inc, id_base: mapped.id_base, order, names };
    check_consistency(&g).map_err(|m| Error::invalid(path, m))?;
    Ok(g)
}

/// The parts of a graph that must agree, checked in one pass over the edges each: the
/// stored transpose holds exactly the reversed out-edges, and an undirected graph's
/// edges are symmetric. Compared as multisets by a sum of keyed hashes of the edges
/// (`(u, v, weight)`), the key random per process, so that a crafted file cannot aim
/// at a collision (a difference goes unseen with probability about 2^-64).
pub(crate) fn check_consistency(g: &Graph) -> std::result::Result<(), String> {
    use std::hash::BuildHasher;
    let key = std::collections::hash_map::RandomState::new().hash_one(0x6368_6174_7479u64);
    if g.directed && g.inc.is_none() {
        return Ok(()); // nothing to compare
    }
    // An undirected graph's two sums come from one pass over its edges.
    let [out, reversed] = match g.directed {
        true => adjacency_fingerprints::<true, false>(&g.out, key),
        false => adjacency_fingerprints::<true, true>(&g.out, key),
    };
    if let Some(inc) = &g.inc {
        let [_, transposed] = adjacency_fingerprints::<false, true>(inc, key);
        if inc.weight_type() != g.out.weight_type() || transposed != out {
            return Err("the stored transpose is not the transpose of the out-edges: the file is inconsistent".into());
        }
    }
    if !g.directed && reversed != out {
        return Err("marked undirected, but its edges are not symmetric (some u→v has no v→u): the file is inconsistent".into());
    }
    Ok(())
}

/// [`lists_fingerprints`] of a whole adjacency.
fn adjacency_fingerprints<const FORWARD: bool, const REVERSED: bool>(adj: &Adjacency, key: u64) -> [u64; 2] {
    lists_fingerprints::<FORWARD, REVERSED>(adj.offsets(), adj.targets(), adj.raw_weights(), 0, key)
}

/// [`check_consistency`]'s sums of some rows of an adjacency, for a graph whose rows
/// are spread over processes: the sums of all rows add up (wrapping) to the whole's.
/// `[edges, edges reversed]`.
pub fn rows_fingerprints(rows: &Rows, key: u64) -> [u64; 2] {
    lists_fingerprints::<true, true>(rows.offsets(), rows.targets(), rows.raw_weights(), rows.first() as usize, key)
}

/// The wrapping sums over the edges `u → v` of rows `first..` of a keyed hash of
/// `(u, v, weight)` (where `FORWARD`) and of `(v, u, weight)` (where `REVERSED`), 0
/// where not asked for.
fn lists_fingerprints<const FORWARD: bool, const REVERSED: bool>(
    o: &[u64],
    t: &[u32],
    w: Option<&[u32]>,
    first: usize,
    key: u64,
) -> [u64; 2] {
    fn mix(mut x: u64) -> u64 {
        // splitmix64's finaliser: every input bit moves every output bit.
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    }
    /// Row `u`'s sums; generic over the weights, so the unweighted loop has no load
    /// or test for them.
    fn row<const FORWARD: bool, const REVERSED: bool>(u: u64, targets: &[u32], weights: impl Iterator<Item = u64>, key: u64) -> [u64; 2] {
        let hash = |a: u64, b: u64, weight: u64| mix((key ^ (a << 32 | b)).wrapping_add(weight.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
        let mut sums = [0u64; 2];
        for (&v, weight) in targets.iter().zip(weights) {
            if FORWARD {
                sums[0] = sums[0].wrapping_add(hash(u, v as u64, weight));
            }
            if REVERSED {
                sums[1] = sums[1].wrapping_add(hash(v as u64, u, weight));
            }
        }
        sums
    }
    (0..o.len() - 1)
        .into_par_iter()
        .with_min_len(1024)
        .map(|i| {
            let (u, edges) = ((first + i) as u64, o[i] as usize..o[i + 1] as usize);
            match w {
                Some(w) => row::<FORWARD, REVERSED>(u, &t[edges.clone()], w[edges].iter().map(|&x| x as u64), key),
                None => row::<FORWARD, REVERSED>(u, &t[edges], std::iter::repeat(0), key),
            }
        })
        .reduce(|| [0, 0], |a, b| [a[0].wrapping_add(b[0]), a[1].wrapping_add(b[1])])
}

/// A `.cgr` file mapped and its header validated, read by rows: each process of the
/// multi-process engine opens the same file and touches only its own rows' pages.
/// The checks [`load`] makes on the whole graph are made here piece by piece, so that
/// processes can split them: [`CgrFile::rows`] checks the rows' structure,
/// [`rows_fingerprints`] sum to the whole's consistency fingerprints, and
/// [`CgrFile::piece_checksum`]s combine into the section checksums.
pub struct CgrFile {
    path: std::path::PathBuf,
    mapped: Mapped,
}

impl CgrFile {
    /// Maps `path` and validates its header and section table.
    pub fn open(path: &Path) -> Result<CgrFile> {
        Ok(CgrFile { path: path.to_path_buf(), mapped: open(path)? })
    }

    /// Vertices.
    pub fn num_vertices(&self) -> usize {
        self.mapped.n as usize
    }

    /// Stored directed edges.
    pub fn num_edges(&self) -> u64 {
        self.mapped.m
    }

    /// Whether edges are directed.
    pub fn is_directed(&self) -> bool {
        self.mapped.directed
    }

    /// Whether the transpose is stored.
    pub fn has_transpose(&self) -> bool {
        self.mapped.has_transpose
    }

    /// How edges are weighted.
    pub fn weight_type(&self) -> WeightType {
        self.mapped.weight_type
    }

    /// The source's first vertex id.
    pub fn id_base(&self) -> u32 {
        self.mapped.id_base
    }

    /// Whether the graph is stored renumbered, with the input's ids beside it.
    pub fn is_renumbered(&self) -> bool {
        self.mapped.renumbered()
    }

    /// Whether the file names its vertices ([`VertexNames`]).
    pub fn is_named(&self) -> bool {
        self.mapped.named()
    }

    /// Every vertex's offsets into the out-edges (or the transpose), mapped: only the
    /// pages read are loaded. Checked at both ends; rows check their own stretch.
    pub fn offsets(&self, transpose: bool) -> Result<Buf<u64>> {
        let o = self.mapped.section(&self.path, if transpose { 4 } else { 1 }, 8, self.mapped.n + 1)?;
        let offsets: Buf<u64> = Buf::mapped(self.mapped.map.clone(), o.offset as usize, self.mapped.n as usize + 1);
        let (n, m) = (self.mapped.n as usize, self.mapped.m);
        if offsets[0] != 0 || offsets[n] != m {
            return Err(Error::invalid(&self.path, format!("offsets run from {} to {}, expected 0 to {m}", offsets[0], offsets[n])));
        }
        Ok(offsets)
    }

    /// Rows `lo..hi` of the out-edges (or the transpose), their structure checked.
    pub fn rows(&self, transpose: bool, lo: u32, hi: u32) -> Result<Rows> {
        let base = if transpose { 3 } else { 0 };
        let (n, m) = (self.mapped.n, self.mapped.m);
        let o = self.mapped.section(&self.path, base + Kind::Offsets as u32, 8, n + 1)?;
        let t = self.mapped.section(&self.path, base + Kind::Targets as u32, 4, m)?;
        let w = match self.mapped.weight_type {
            WeightType::None => None,
            _ => Some(self.mapped.section(&self.path, base + Kind::Weights as u32, 4, m)?),
        };
        let map = &self.mapped.map;
        let offsets = Buf::mapped(map.clone(), o.offset as usize + lo as usize * 8, (hi - lo) as usize + 1);
        let targets = Buf::mapped(map.clone(), t.offset as usize, m as usize);
        let weights = w.map(|w| Buf::mapped(map.clone(), w.offset as usize, m as usize));
        Rows::from_parts(lo, offsets, targets, self.mapped.weight_type, weights, n as usize)
            .map_err(|e| Error::invalid(&self.path, format!("{}-edges: {e}", if transpose { "transpose" } else { "out" })))
    }

    /// A digest of the header (sizes, flags and every section checksum): equal on two
    /// files that hold the same graph.
    pub fn digest(&self) -> u64 {
        xxhash_rust::xxh3::xxh3_64(&self.mapped.map[..PAGE as usize])
    }

    /// Pieces the section checksums are made of, over every section in table order.
    pub fn pieces(&self) -> usize {
        self.mapped.sections.iter().map(|s| (s.len as usize).div_ceil(PIECE)).sum()
    }

    /// The xxh3-64 of piece `i` (of [`CgrFile::pieces`]).
    pub fn piece_checksum(&self, mut i: usize) -> u64 {
        for s in &self.mapped.sections {
            let count = (s.len as usize).div_ceil(PIECE);
            if i < count {
                let start = s.offset as usize + i * PIECE;
                let end = (start + PIECE).min((s.offset + s.len) as usize);
                return xxhash_rust::xxh3::xxh3_64(&self.mapped.map[start..end]);
            }
            i -= count;
        }
        panic!("piece {i} past the last section")
    }

    /// Checks every section checksum from the checksums of all its pieces, in order.
    pub fn check_pieces(&self, sums: &[u64]) -> Result<()> {
        let mut at = 0;
        for s in &self.mapped.sections {
            let count = (s.len as usize).div_ceil(PIECE);
            if sums.len() < at + count || combine(s.len, &sums[at..at + count]) != s.checksum {
                return Err(Error::invalid(&self.path, format!("section {} checksum mismatch: the file is corrupt", s.kind)));
            }
            at += count;
        }
        Ok(())
    }
}

/// Verifies every section checksum of a `.cgr` file, then loads it (which checks the
/// structure: offsets monotone from 0 to m, every target below n).
pub fn check(path: &Path, progress: &dyn Progress) -> Result<Graph> {
    let mapped = open(path)?;
    let total: u64 = mapped.sections.iter().map(|s| s.len).sum();
    progress.start("verifying checksums", total);
    for s in &mapped.sections {
        let bytes = &mapped.map[s.offset as usize..(s.offset + s.len) as usize];
        if checksum(bytes) != s.checksum {
            return Err(Error::invalid(path, format!("section {} checksum mismatch: the file is corrupt", s.kind)));
        }
        progress.advance(s.len);
    }
    graph_from(path, mapped)
}

/// Recomputes the section and header checksums of a `.cgr` image in memory, for the
/// tests and fuzz targets that craft files whose checksums are valid so that the
/// structure checks are what refuses them. Sections out of bounds are left alone.
pub fn seal(bytes: &mut [u8]) {
    if bytes.len() < PAGE as usize {
        return;
    }
    let count = (le_u32(bytes, 32) as usize).min(MAX_SECTIONS);
    for i in 0..count {
        let e = TABLE_AT + i * ENTRY_BYTES;
        let (offset, len) = (le_u64(bytes, e + 8), le_u64(bytes, e + 16));
        if let Some(end) = offset.checked_add(len).filter(|&end| end <= bytes.len() as u64) {
            let sum = checksum(&bytes[offset as usize..end as usize]);
            bytes[e + 24..e + 32].copy_from_slice(&sum.to_le_bytes());
        }
    }
    let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..PAGE as usize - 8]);
    bytes[PAGE as usize - 8..PAGE as usize].copy_from_slice(&sum.to_le_bytes());
}

/// Whether `path` starts with the `.cgr` magic.
pub fn is_cgr(path: &Path) -> Result<bool> {
    use std::io::Read;
    let mut magic = [0u8; 8];
    if !std::fs::metadata(path).map_err(|e| Error::io(path, "cannot open", e))?.is_file() {
        return Ok(false); // a pipe's bytes are left for the one reader
    }
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, "cannot open", e))?;
    let got = file.read(&mut magic).map_err(|e| Error::io(path, "cannot read", e))?;
    Ok(got == 8 && &magic == MAGIC)
}
