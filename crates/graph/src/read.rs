//! Readers for the text inputs of design.md 3.2, plain or gzip-compressed, parsed in
//! parallel, plus format detection.
//!
//! A file is read whole (memory-mapped when plain, inflated into memory when gzip),
//! its header is parsed sequentially, and the body is cut at line boundaries into
//! chunks that rayon parses in parallel into (src, dst, weight) arrays. The chunks are
//! then an [`EdgeSource`] for the CSR builder. Errors carry the file, the line number
//! (counted only when an error occurs) and the offending text.

use std::path::Path;

use rayon::prelude::*;

use crate::build::{build, BuildOptions, EdgeSource};
use crate::csr::{Graph, WeightType};
use crate::error::{check_memory, Error, Result};
use crate::file::Input;
use crate::names::{compact_ids, Namer, VertexNames};
use crate::progress::Progress;

/// An input format.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Format {
    /// SNAP / plain edge list: `u v` per line, 0-based, `#` or `%` comments.
    EdgeList,
    /// Weighted edge list (`.wel`): `u v w` per line, 0-based.
    WeightedEdgeList,
    /// CSV edge list: `u,v` or `u,v,w` per line (a third column is the weight), after
    /// an optional header line.
    Csv,
    /// DIMACS-9 shortest path: `p sp N M`, `a u v w`, 1-based.
    Dimacs,
    /// PACE 2016 treewidth: `p tw N M`, `u v`, undirected, 1-based.
    Pace,
    /// Matrix Market coordinate: entry (i, j) is the edge i→j, 1-based.
    MatrixMarket,
    /// ChattyGraph's binary `.cgr`.
    Cgr,
    /// GAPBS's serialized graph (`converter -b`).
    Sg,
    /// GAPBS's serialized weighted graph (`converter -wb`): int32 weights.
    Wsg,
}

impl Format {
    /// The names accepted by `--format`.
    pub const NAMES: &'static str = "el, snap, wel, csv, gr, pace, mtx, cgr, sg, wsg";

    /// Parses a `--format` name.
    pub fn from_name(name: &str) -> Option<Format> {
        Some(match name {
            "el" | "snap" | "txt" => Format::EdgeList,
            "wel" => Format::WeightedEdgeList,
            "csv" => Format::Csv,
            "gr" | "dimacs" => Format::Dimacs,
            "pace" => Format::Pace,
            "mtx" | "mm" => Format::MatrixMarket,
            "cgr" => Format::Cgr,
            "sg" => Format::Sg,
            "wsg" => Format::Wsg,
            _ => return None,
        })
    }

    /// Every format, as `--format` lists them.
    pub const ALL: [Format; 9] = [
        Format::EdgeList,
        Format::WeightedEdgeList,
        Format::Csv,
        Format::Dimacs,
        Format::Pace,
        Format::MatrixMarket,
        Format::Cgr,
        Format::Sg,
        Format::Wsg,
    ];

    /// Other names [`Format::from_name`] accepts.
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            Format::EdgeList => &["snap", "txt"],
            Format::Dimacs => &["dimacs"],
            Format::MatrixMarket => &["mm"],
            _ => &[],
        }
    }

    /// The canonical short name.
    pub fn name(self) -> &'static str {
        match self {
            Format::EdgeList => "el",
            Format::WeightedEdgeList => "wel",
            Format::Csv => "csv",
            Format::Dimacs => "gr",
            Format::Pace => "pace",
            Format::MatrixMarket => "mtx",
            Format::Cgr => "cgr",
            Format::Sg => "sg",
            Format::Wsg => "wsg",
        }
    }
}

/// Options for [`read_graph`].
#[derive(Copy, Clone, Debug, Default)]
pub struct ReadOptions {
    /// The format, or `None` to detect it from the name and content.
    pub format: Option<Format>,
    /// Transforms applied while building.
    pub build: BuildOptions,
    /// How an edge list's ids are read.
    pub ids: IdOptions,
}

/// How an edge list's vertex ids are read.
#[derive(Copy, Clone, Debug, Default)]
pub struct IdOptions {
    /// Keep every id from 0 to the largest as a vertex (ids that appear in no edge
    /// become isolated vertices), rather than the vertices that appear.
    pub keep_id_range: bool,
    /// Whether the first line is a header (`source,target`): `None` decides for a CSV
    /// (a first line whose ids are not integers above a line whose ids are, or one of
    /// the usual column names) and says no for other edge lists.
    pub header: Option<bool>,
}

/// Reads any supported input (text, gzip text or `.cgr`; a file, a pipe or a FIFO)
/// into a graph.
pub fn read_graph(path: &Path, opts: ReadOptions, progress: &dyn Progress) -> Result<Graph> {
    let bytes = Input::open(path, progress)?;
    let format = resolve_format(path, opts.format, &bytes)?;
    let transformed = |g: Graph| {
        let b = opts.build;
        if b.symmetrize || b.dedup || b.drop_self_loops {
            crate::transform::rebuild(&g, b)
        } else {
            Ok(g)
        }
    };
    match format {
        Format::Cgr => return transformed(crate::cgr::from_input(path, bytes)?),
        Format::Sg | Format::Wsg => return transformed(crate::gapbs::from_bytes(path, &bytes, format == Format::Wsg)?),
        _ => {}
    }
    let parsed = parse_text(path, format, &bytes, opts.ids, progress)?;
    drop(bytes);
    build_parsed(parsed, opts.build, progress)
}

fn build_parsed(parsed: ParsedEdges, opts: BuildOptions, progress: &dyn Progress) -> Result<Graph> {
    let mut opts = opts;
    opts.symmetrize |= !parsed.directed;
    let g = build(&parsed, parsed.directed, opts, progress)?.with_id_base(parsed.id_base);
    Ok(g.with_names(parsed.names.map(std::sync::Arc::new)))
}

/// Parses text already in memory as `format` (never `Cgr`); `path` only names the
/// input in error messages. The fuzz targets enter here.
pub fn parse_bytes(path: &Path, format: Format, bytes: &[u8], opts: BuildOptions) -> Result<Graph> {
    if matches!(format, Format::Cgr | Format::Sg | Format::Wsg) {
        return Err(Error::format(path, "parse_bytes reads text formats; binary graphs are read by read_graph"));
    }
    let parsed = parse_text(path, format, bytes, IdOptions::default(), &crate::progress::NoProgress)?;
    build_parsed(parsed, opts, &crate::progress::NoProgress)
}

/// Picks the format from `--format`, the file name and the content, and checks that
/// they agree.
pub fn resolve_format(path: &Path, forced: Option<Format>, bytes: &[u8]) -> Result<Format> {
    let is_cgr = bytes.starts_with(crate::cgr::MAGIC);
    let by_name = format_from_name(path);
    let format = match (forced, by_name) {
        (Some(f), _) => f,
        (None, Some(f)) => f,
        (None, None) if is_cgr => Format::Cgr,
        (None, None) => {
            return Err(Error::format(
                path,
                format!(
                    "cannot tell the format from the file name; name it .el/.wel/.gr/.mtx/.cgr (optionally .gz) or pass --format ({})",
                    Format::NAMES
                ),
            ))
        }
    };
    let mismatch = |what: &str| Err(Error::format(path, format!("named or forced as {} but {what}", format.name())));
    match format {
        Format::Cgr if !is_cgr => mismatch("it does not start with the .cgr magic"),
        _ if is_cgr && format != Format::Cgr => mismatch("it is a .cgr binary graph"),
        Format::Dimacs | Format::Pace => match problem_line(bytes) {
            Some(p) if p.starts_with(b"p sp") && format == Format::Dimacs => Ok(format),
            Some(p) if p.starts_with(b"p tw") && format == Format::Dimacs && forced.is_none() => Ok(Format::Pace),
            Some(p) if p.starts_with(b"p tw") && format == Format::Pace => Ok(format),
            Some(p) if p.starts_with(b"p sp") && format == Format::Pace && forced.is_none() => Ok(Format::Dimacs),
            Some(p) => mismatch(&format!("its problem line is `{}`", String::from_utf8_lossy(&p[..p.len().min(40)]))),
            None => mismatch("it has no `p sp N M` or `p tw N M` problem line before its first edge"),
        },
        Format::MatrixMarket if !bytes.starts_with(b"%%MatrixMarket") => mismatch("it does not start with `%%MatrixMarket`"),
        _ => Ok(format),
    }
}

/// The format a file name implies, ignoring a `.gz` suffix; `.gr` means DIMACS or PACE
/// (the content decides).
pub fn format_from_name(path: &Path) -> Option<Format> {
    let name = path.file_name()?.to_str()?.to_ascii_lowercase();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    Format::from_name(name.rsplit_once('.')?.1).or_else(|| {
        let ext = name.rsplit_once('.')?.1;
        matches!(ext, "edges" | "tsv").then_some(Format::EdgeList)
    })
}

/// The first `p ...` line of a DIMACS/PACE file, skipping `c` comments and blank lines.
fn problem_line(bytes: &[u8]) -> Option<&[u8]> {
    bytes.split(|&b| b == b'\n').map(trim).find(|l| !l.is_empty() && l[0] != b'c').filter(|l| l.starts_with(b"p "))
}

fn trim(line: &[u8]) -> &[u8] {
    let end = line.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(0, |p| p + 1);
    let start = line[..end].iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(end);
    &line[start..end]
}

/// How the body lines of a text format look.
#[derive(Copy, Clone, Debug)]
enum Syntax {
    /// `csv`: fields split at commas (else at blanks).
    EdgeList {
        weighted: bool,
        csv: bool,
    },
    Dimacs,
    Pace,
    Mtx {
        field: MtxField,
    },
}

#[derive(Copy, Clone, Debug, PartialEq)]
enum MtxField {
    Pattern,
    Integer,
    Real,
}

/// What the header said.
struct Header {
    syntax: Syntax,
    body_start: usize,
    body_first_line: u64,
    declared_n: Option<u64>,
    declared_m: Option<u64>,
    /// Rows and columns, where the format has them (Matrix Market): the bounds on
    /// sources and on targets.
    declared_rows: Option<u64>,
    declared_cols: Option<u64>,
    /// An edge list's `# Nodes: N` comment.
    comment_n: Option<u64>,
    directed: bool,
}

impl Header {
    fn one_based(&self) -> bool {
        !matches!(self.syntax, Syntax::EdgeList { .. })
    }
    /// The fields of a body line.
    fn fields<'a>(&self, line: &'a [u8]) -> Fields<'a> {
        Fields { rest: Some(line), csv: matches!(self.syntax, Syntax::EdgeList { csv: true, .. }) }
    }
    /// Shortest possible body line, for refusing headers that declare more lines than fit.
    fn min_line_bytes(&self) -> u64 {
        match self.syntax {
            Syntax::Dimacs => 8,
            Syntax::Mtx { field: MtxField::Pattern } | Syntax::Pace | Syntax::EdgeList { weighted: false, .. } => 4,
            _ => 6,
        }
    }
}

/// The fields of a line: split at commas, each trimmed and unquoted (a CSV), or
/// split at runs of blanks.
struct Fields<'a> {
    rest: Option<&'a [u8]>,
    csv: bool,
}

impl<'a> Iterator for Fields<'a> {
    type Item = &'a [u8];
    fn next(&mut self) -> Option<&'a [u8]> {
        if self.csv {
            let rest = self.rest?;
            let (field, after) = match memchr::memchr(b',', rest) {
                Some(i) => (&rest[..i], Some(&rest[i + 1..])),
                None => (rest, None),
            };
            self.rest = after;
            let field = trim(field);
            return Some(field.strip_prefix(b"\"").and_then(|f| f.strip_suffix(b"\"")).unwrap_or(field));
        }
        let rest = self.rest?;
        let start = rest.iter().position(|&b| !matches!(b, b' ' | b'\t' | b'\r'))?;
        let end = rest[start..].iter().position(|&b| matches!(b, b' ' | b'\t' | b'\r')).map_or(rest.len(), |i| start + i);
        self.rest = Some(&rest[end..]);
        Some(&rest[start..end])
    }
}

/// Lines before the body: iterator over (line, byte offset after it).
fn lines_with_end(bytes: &[u8]) -> impl Iterator<Item = (&[u8], usize)> {
    let mut pos = 0;
    std::iter::from_fn(move || {
        if pos >= bytes.len() {
            return None;
        }
        let end = memchr::memchr(b'\n', &bytes[pos..]).map_or(bytes.len(), |i| pos + i + 1);
        let line = &bytes[pos..end];
        pos = end;
        Some((line, end))
    })
}

/// A Matrix Market banner's field, and whether the matrix is general (directed)
/// rather than symmetric.
fn mtx_banner(path: &Path, banner: &[u8]) -> Result<(MtxField, bool)> {
    let words: Vec<String> = String::from_utf8_lossy(trim(banner)).split_whitespace().map(|w| w.to_ascii_lowercase()).collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    match words.as_slice() {
        ["%%matrixmarket", "matrix", "coordinate", field, sym] => {
            let field = match *field {
                "pattern" => MtxField::Pattern,
                "integer" => MtxField::Integer,
                "real" | "double" => MtxField::Real,
                other => {
                    return Err(Error::parse(
                        path,
                        1,
                        format!("Matrix Market field `{other}` is not supported (pattern, integer, real are)"),
                        banner,
                    ))
                }
            };
            let directed = match *sym {
                "general" => true,
                "symmetric" => false,
                other => {
                    return Err(Error::parse(
                        path,
                        1,
                        format!("Matrix Market symmetry `{other}` is not supported (general, symmetric are)"),
                        banner,
                    ))
                }
            };
            Ok((field, directed))
        }
        ["%%matrixmarket", "matrix", "array", ..] => {
            Err(Error::parse(path, 1, "dense (array) Matrix Market files are not graphs; use coordinate format", banner))
        }
        _ => Err(Error::parse(path, 1, "expected `%%MatrixMarket matrix coordinate FIELD SYMMETRY`", banner)),
    }
}

fn parse_header(path: &Path, format: Format, ids: IdOptions, bytes: &[u8]) -> Result<Header> {
    let mut h = Header {
        syntax: Syntax::Pace,
        body_start: 0,
        body_first_line: 1,
        declared_n: None,
        declared_m: None,
        declared_rows: None,
        declared_cols: None,
        comment_n: None,
        directed: true,
    };
    let line_no = match format {
        Format::EdgeList | Format::WeightedEdgeList | Format::Csv => edge_list_header(&mut h, format, ids.header, bytes),
        Format::Dimacs | Format::Pace => problem_line_header(path, &mut h, format, bytes)?,
        Format::MatrixMarket => mtx_size_line(path, &mut h, bytes)?,
        Format::Cgr | Format::Sg | Format::Wsg => unreachable!("binary graphs are loaded, not parsed"),
    };
    if h.one_based() && h.declared_m.is_none() {
        return Err(Error::invalid(path, "the file ends before its size header"));
    }
    h.body_first_line = line_no + 1;
    if let Some(n) = h.declared_n {
        if n > u32::MAX as u64 {
            return Err(Error::invalid(path, format!("header declares {n} vertices; at most {} are supported", u32::MAX)));
        }
    }
    if let Some(m) = h.declared_m {
        let body = (bytes.len() - h.body_start) as u64;
        if m.saturating_mul(h.min_line_bytes()) > body + 1 {
            return Err(Error::invalid(
                path,
                format!("header declares {m} edges but the rest of the file ({body} bytes) cannot hold that many"),
            ));
        }
    }
    Ok(h)
}

/// An edge list's leading comment lines (one saying "undirected" makes it so, one
/// saying `Nodes: N` declares the vertices) and header line; returns their count.
fn edge_list_header(h: &mut Header, format: Format, header: Option<bool>, bytes: &[u8]) -> u64 {
    let mut line_no = 0;
    let csv = format == Format::Csv;
    h.syntax = Syntax::EdgeList { weighted: format == Format::WeightedEdgeList, csv };
    let mut lines = lines_with_end(bytes).map(|(line, end)| (trim(line), end)).peekable();
    while let Some(&(t, end)) = lines.peek() {
        if !(t.is_empty() || t[0] == b'#' || t[0] == b'%') {
            break;
        }
        let lower = t.to_ascii_lowercase();
        if lower.windows(10).any(|w| w == b"undirected") {
            h.directed = false;
        }
        if let Some(at) = memchr::memmem::find(&lower, b"nodes:") {
            h.comment_n = lower[at + 6..].split(|b| b.is_ascii_whitespace()).find(|f| !f.is_empty()).and_then(parse_u64);
        }
        line_no += 1;
        h.body_start = end;
        lines.next();
    }
    let data = lines.filter(|(t, _)| !t.is_empty() && t[0] != b'#' && t[0] != b'%');
    let mut data = data.map(|(t, end)| (h.fields(t).collect::<Vec<_>>(), end));
    let Some((first, end)) = data.next() else { return line_no };
    let integers = |f: &[&[u8]]| f.len() >= 2 && f[..2].iter().all(|x| parse_u64(x).is_some());
    let named_columns = || {
        const COLUMNS: [&str; 14] =
            ["source", "target", "src", "dst", "from", "to", "u", "v", "node1", "node2", "id1", "id2", "weight", "w"];
        first.iter().take(3).all(|f| COLUMNS.contains(&String::from_utf8_lossy(f).to_ascii_lowercase().as_str()))
    };
    let is_header =
        header.unwrap_or_else(|| csv && !integers(&first) && (named_columns() || data.next().is_some_and(|(f, _)| integers(&f))));
    if csv {
        h.syntax = Syntax::EdgeList { weighted: first.len() >= 3, csv };
    }
    if is_header {
        h.body_start = end;
        line_no += 1;
    }
    line_no
}

/// DIMACS's or PACE's problem line `p sp|tw N M`, after comments; returns its line.
fn problem_line_header(path: &Path, h: &mut Header, format: Format, bytes: &[u8]) -> Result<u64> {
    let mut line_no = 0;
    let (tag, syntax) = if format == Format::Dimacs { ("sp", Syntax::Dimacs) } else { ("tw", Syntax::Pace) };
    h.syntax = syntax;
    h.directed = format == Format::Dimacs;
    for (line, end) in lines_with_end(bytes) {
        line_no += 1;
        let t = trim(line);
        if t.is_empty() || t[0] == b'c' {
            continue;
        }
        let f: Vec<&[u8]> = t.split(|b| b.is_ascii_whitespace()).filter(|f| !f.is_empty()).collect();
        let (n, m) = match f.as_slice() {
            [b"p", kind, n, m] if *kind == tag.as_bytes() => (parse_u64(n), parse_u64(m)),
            _ => return Err(Error::parse(path, line_no, format!("expected the problem line `p {tag} N M`"), t)),
        };
        let (Some(n), Some(m)) = (n, m) else {
            return Err(Error::parse(path, line_no, "the problem line's sizes are not integers", t));
        };
        (h.declared_n, h.declared_m, h.body_start) = (Some(n), Some(m), end);
        break;
    }
    Ok(line_no)
}

/// Matrix Market's banner and size line `ROWS COLS ENTRIES`; returns its line.
fn mtx_size_line(path: &Path, h: &mut Header, bytes: &[u8]) -> Result<u64> {
    let mut line_no = 0;
    let mut lines = lines_with_end(bytes);
    let (banner, _) = lines.next().unwrap_or((b"", 0));
    line_no += 1;
    let (field, directed) = mtx_banner(path, banner)?;
    h.directed = directed;
    h.syntax = Syntax::Mtx { field };
    for (line, end) in lines {
        line_no += 1;
        let t = trim(line);
        if t.is_empty() || t[0] == b'%' {
            continue;
        }
        let f: Vec<Option<u64>> = t.split(|b| b.is_ascii_whitespace()).filter(|f| !f.is_empty()).map(parse_u64).collect();
        let [Some(rows), Some(cols), Some(nnz)] = f.as_slice() else {
            return Err(Error::parse(path, line_no, "expected the size line `ROWS COLS ENTRIES`", t));
        };
        (h.declared_n, h.declared_rows, h.declared_cols, h.declared_m, h.body_start) =
            (Some(*rows.max(cols)), Some(*rows), Some(*cols), Some(*nnz), end);
        if !h.directed && rows != cols {
            return Err(Error::parse(path, line_no, "a symmetric matrix must be square", t));
        }
        break;
    }
    Ok(line_no)
}

#[inline]
fn parse_u64(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 19 {
        return None;
    }
    let mut v = 0u64;
    for &b in s {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + d as u64;
    }
    Some(v)
}

/// A weight as parsed: an unsigned integer or a float.
enum Weight {
    Int(u32),
    Float(f32),
}

/// Parses a weight token. `allow_float`/`allow_negative` reflect the format; in an
/// `integer` field (`integer_field`) a negative integer is kept as a float, as any
/// negative weight is, but nothing else is rounded.
fn parse_weight(tok: &[u8], allow_float: bool, allow_negative: bool, integer_field: bool) -> Result<Weight, &'static str> {
    if let Some(v) = parse_u64(tok) {
        return if v <= u32::MAX as u64 {
            Ok(Weight::Int(v as u32))
        } else if allow_float {
            Ok(Weight::Float(v as f32))
        } else {
            Err("weight is too large (integer weights are at most 4294967295)")
        };
    }
    if integer_field {
        return match std::str::from_utf8(tok).ok().and_then(|s| s.parse::<i64>().ok()) {
            Some(v) if v < 0 && v > -(1 << 24) => Ok(Weight::Float(v as f32)),
            Some(_) => Err("weight does not fit a 32-bit float exactly (integer weights below 0 are at least -16777215)"),
            None => Err("weight is not an integer, which the `integer` field declares"),
        };
    }
    let v: f64 = std::str::from_utf8(tok).ok().and_then(|s| s.parse().ok()).ok_or("weight is not a number")?;
    if !v.is_finite() {
        return Err("weight is not a finite number");
    }
    if v < 0.0 && !allow_negative {
        return Err("negative weight");
    }
    if !allow_float {
        return Err("weight must be a non-negative integer");
    }
    // Checked in the type weights are stored in: 1e39 is a finite f64 but an f32 infinity.
    let stored = v as f32;
    if !stored.is_finite() {
        return Err("weight overflows a 32-bit float (largest 3.4e38)");
    }
    if stored == 0.0 && v != 0.0 {
        return Err("weight underflows a 32-bit float (smallest 1.4e-45)");
    }
    Ok(Weight::Float(stored))
}

/// The parsed edges of one chunk of the body.
#[derive(Default)]
struct Chunk {
    src: Vec<u32>,
    dst: Vec<u32>,
    /// Raw weight words: integers, or f32 bits once `float` is set.
    weights: Vec<u32>,
    float: bool,
    max_id: Option<u32>,
    /// Where ids are names: each edge's two tokens, (offset in the chunk, length).
    tokens: Vec<(u32, u32)>,
}

impl Chunk {
    fn push_weight(&mut self, w: Weight) {
        match w {
            Weight::Int(i) if !self.float => self.weights.push(i),
            Weight::Int(i) => self.weights.push((i as f32).to_bits()),
            Weight::Float(f) => {
                self.make_float();
                self.weights.push(f.to_bits());
            }
        }
    }

    fn make_float(&mut self) {
        if !self.float {
            self.float = true;
            self.weights.iter_mut().for_each(|w| *w = (*w as f32).to_bits());
        }
    }
}

/// A text file's edges after parsing: an [`EdgeSource`].
struct ParsedEdges {
    chunks: Vec<Chunk>,
    n: usize,
    weight_type: WeightType,
    directed: bool,
    /// 1 where the format numbers vertices from 1.
    id_base: u32,
    /// The input's names of the vertices, where they are not `0..n`.
    names: Option<VertexNames>,
}

impl EdgeSource for ParsedEdges {
    fn num_vertices(&self) -> usize {
        self.n
    }
    fn num_blocks(&self) -> usize {
        self.chunks.len()
    }
    fn weight_type(&self) -> WeightType {
        self.weight_type
    }
    fn for_each_edge<F: FnMut(u32, u32, u32)>(&self, block: usize, mut f: F) {
        let c = &self.chunks[block];
        for i in 0..c.src.len() {
            f(c.src[i], c.dst[i], c.weights.get(i).copied().unwrap_or(0));
        }
    }
}

const CHUNK_BYTES: usize = 4 << 20;

/// Parses the text `bytes` of `format` (never `Cgr`).
fn parse_text(path: &Path, format: Format, bytes: &[u8], ids: IdOptions, progress: &dyn Progress) -> Result<ParsedEdges> {
    let h = parse_header(path, format, ids, bytes)?;
    let body = &bytes[h.body_start..];
    let mut bounds = vec![0];
    while *bounds.last().unwrap() < body.len() {
        let from = (bounds.last().unwrap() + CHUNK_BYTES).min(body.len());
        let end = memchr::memchr(b'\n', &body[from..]).map_or(body.len(), |i| from + i + 1);
        bounds.push(end);
    }
    progress.start("parsing", body.len() as u64);
    // Numbers first; an edge list whose ids are not all u32 numbers is read again
    // for its names.
    let (mut chunks, named) = match parse_chunks(path, &h, body, &bounds, false, progress) {
        Ok(chunks) => (chunks, false),
        Err(Failure::Names) => {
            progress.start("parsing vertex names", body.len() as u64);
            (parse_chunks(path, &h, body, &bounds, true, progress).map_err(Failure::into_error)?, true)
        }
        Err(failure) => return Err(failure.into_error()),
    };
    let edges: u64 = chunks.iter().map(|c| c.src.len().max(c.tokens.len() / 2) as u64).sum();
    if let Some(m) = h.declared_m {
        if m != edges {
            return Err(Error::invalid(path, format!("header declares {m} edges but the file has {edges} (truncated or wrong header?)")));
        }
    }
    check_memory(&format!("{edges} parsed edges"), edges * 12)?;
    let (n, names) = vertices(path, &h, ids, body, &bounds, &mut chunks, named)?;
    let weight_type = match h.syntax {
        Syntax::EdgeList { weighted: false, .. } | Syntax::Pace | Syntax::Mtx { field: MtxField::Pattern } => WeightType::None,
        _ if chunks.iter().any(|c| c.float) => WeightType::Float,
        Syntax::Mtx { field: MtxField::Real } => WeightType::Float,
        _ => WeightType::Int,
    };
    if weight_type == WeightType::Float {
        chunks.par_iter_mut().for_each(Chunk::make_float);
    }
    Ok(ParsedEdges { chunks, n, weight_type, directed: h.directed, id_base: h.one_based() as u32, names })
}

/// Why a chunk was not parsed.
enum Failure {
    Error(Error),
    /// An edge list's ids are not all u32 numbers: it must be read for its names.
    Names,
}

impl Failure {
    fn into_error(self) -> Error {
        match self {
            Failure::Error(e) => e,
            Failure::Names => unreachable!("a chunk read for its names asks for nothing further"),
        }
    }
}

/// Every chunk of `body` (cut at `bounds`), ids parsed as numbers or, when `named`,
/// recorded as tokens.
fn parse_chunks(
    path: &Path,
    h: &Header,
    body: &[u8],
    bounds: &[usize],
    named: bool,
    progress: &dyn Progress,
) -> std::result::Result<Vec<Chunk>, Failure> {
    bounds
        .par_windows(2)
        .map(|w| {
            let chunk = parse_chunk(h, &body[w[0]..w[1]], named, w[0] == 0).map_err(|bad| match bad {
                Bad::Names => Failure::Names,
                Bad::At(at, msg) => {
                    let at = w[0] + at;
                    let line = h.body_first_line + memchr::memchr_iter(b'\n', &body[..at]).count() as u64;
                    let end = memchr::memchr(b'\n', &body[at..]).map_or(body.len(), |i| at + i);
                    Failure::Error(Error::parse(path, line, msg, &body[at..end]))
                }
            });
            progress.advance((w[1] - w[0]) as u64);
            chunk
        })
        .collect()
}

/// The graph's vertex count, and the input's names where they are not `0..n`: the
/// tokens of a `named` edge list, numbered here; or, for an edge list whose ids have
/// gaps (and no `# Nodes:` comment or `keep_id_range` that keeps them), the ids that
/// appear, renumbered `0..n` in the chunks.
fn vertices(
    path: &Path,
    h: &Header,
    ids: IdOptions,
    body: &[u8],
    bounds: &[usize],
    chunks: &mut [Chunk],
    named: bool,
) -> Result<(usize, Option<VertexNames>)> {
    if named {
        let mut namer = Namer::default();
        for (c, start) in chunks.iter_mut().zip(bounds) {
            let text = &body[*start..];
            let token =
                |&(at, len): &(u32, u32)| std::str::from_utf8(&text[at as usize..(at + len) as usize]).expect("checked while parsing");
            let ids: Vec<u32> =
                c.tokens.iter().map(|t| namer.id(token(t))).collect::<std::result::Result<_, _>>().map_err(|e| Error::invalid(path, e))?;
            (c.src, c.dst) = ids.chunks_exact(2).map(|p| (p[0], p[1])).unzip();
            c.tokens = Vec::new();
        }
        let names = namer.finish(&mut chunks.iter_mut().flat_map(|c| [&mut c.src[..], &mut c.dst[..]]).collect::<Vec<_>>());
        return Ok((names.len(), Some(names)));
    }
    let max_id = chunks.iter().filter_map(|c| c.max_id).max();
    let range = max_id.map_or(0, |m| m as usize + 1);
    match (h.declared_n, h.syntax) {
        (Some(n), _) => Ok((n as usize, None)),
        (None, Syntax::EdgeList { .. }) if h.comment_n.is_some_and(|n| n >= range as u64) => Ok((h.comment_n.unwrap() as usize, None)),
        (None, Syntax::EdgeList { .. }) if !ids.keep_id_range => {
            let lists: Vec<&mut [u32]> = chunks.iter_mut().flat_map(|c| [&mut c.src[..], &mut c.dst[..]]).collect();
            match compact_ids(lists, range) {
                Some(names) => Ok((names.len(), Some(names))),
                None => Ok((range, None)),
            }
        }
        (None, _) => Ok((range, None)),
    }
}

/// An edge's two ids as 0-based numbers, or why not: an edge list whose ids are not
/// u32 numbers is read for its names if this is its `first_edge`.
fn numbered_edge(h: &Header, u_tok: Option<&[u8]>, v_tok: Option<&[u8]>, first_edge: bool) -> std::result::Result<(u32, u32), Bad> {
    let err = |msg: &str| Bad::At(0, msg.to_string());
    let edge_list = matches!(h.syntax, Syntax::EdgeList { .. });
    let base = h.one_based() as u64;
    let bound_src = h.declared_rows.or(h.declared_n).unwrap_or(u32::MAX as u64 - 1 + base);
    let bound_dst = h.declared_cols.unwrap_or(bound_src);
    let (Some(u), Some(v)) = (u_tok.and_then(parse_u64), v_tok.and_then(parse_u64)) else {
        return Err(match (edge_list, u_tok.zip(v_tok)) {
            (true, Some(_)) if first_edge => Bad::Names,
            (true, Some(_)) => {
                err("expected two non-negative integer vertex ids, as the file's first edge has (its ids are numbers, not labels)")
            }
            (true, None) => err("expected two vertex ids"),
            (false, _) => err("expected two non-negative integer vertex ids"),
        });
    };
    if u < base || v < base {
        return Err(err("vertex id 0 in a 1-based format"));
    }
    if u > bound_src || v > bound_dst {
        if edge_list {
            return Err(Bad::Names);
        }
        let limit = if u > bound_src { bound_src } else { bound_dst };
        return Err(err(&if h.declared_n.is_some() {
            format!("vertex id {} is beyond the {limit} vertices the header declares", u.max(v))
        } else {
            format!("vertex id {} is too large (ids are u32)", u.max(v))
        }));
    }
    Ok(((u - base) as u32, (v - base) as u32))
}

/// An edge's weight from its token, as the format allows weights.
fn edge_weight(h: &Header, tok: Option<&[u8]>) -> std::result::Result<Weight, &'static str> {
    let tok = match (h.syntax, tok) {
        (_, Some(t)) => t,
        (Syntax::EdgeList { .. }, None) => return Err("expected a weight in the third column (`u v w`)"),
        (_, None) => return Err("expected a weight after the two vertex ids"),
    };
    let (allow_float, allow_negative) = match h.syntax {
        Syntax::Dimacs => (false, false),
        Syntax::Mtx { .. } => (true, true),
        _ => (true, false),
    };
    let integer_field = matches!(h.syntax, Syntax::Mtx { field: MtxField::Integer });
    parse_weight(tok, allow_float && !integer_field, allow_negative, integer_field)
}

/// Why a chunk's line was refused: (byte offset of the line, message), or an edge
/// list's id that is not a u32 number.
enum Bad {
    At(usize, String),
    Names,
}

/// Parses the lines of one chunk (`first_chunk`: the body's first); with `named`, an edge list's
/// ids are recorded as tokens (UTF-8) rather than parsed. An edge list's first edge
/// decides whether its ids are numbers or labels: after a numbered edge, a line
/// without two numbers is an error, not a label.
fn parse_chunk(h: &Header, text: &[u8], named: bool, first_chunk: bool) -> std::result::Result<Chunk, Bad> {
    let mut c = Chunk::default();
    let guess = text.len() / 12;
    if named {
        c.tokens.reserve(2 * guess);
    } else {
        c.src.reserve(guess);
        c.dst.reserve(guess);
    }
    let weighted = !matches!(h.syntax, Syntax::EdgeList { weighted: false, .. } | Syntax::Pace | Syntax::Mtx { field: MtxField::Pattern });
    if weighted {
        c.weights.reserve(guess);
    }
    let mut max_id = None::<u32>;
    let mut pos = 0;
    while pos < text.len() {
        let end = memchr::memchr(b'\n', &text[pos..]).map_or(text.len(), |i| pos + i);
        let line = &text[pos..end];
        let start = pos;
        pos = end + 1;
        if trim(line).is_empty() {
            continue;
        }
        let mut fields = h.fields(line);
        let Some(first) = fields.next() else { continue };
        let err = |msg: &str| Bad::At(start, msg.to_string());
        match (h.syntax, first.first().copied().unwrap_or(0)) {
            (Syntax::EdgeList { .. }, b'#' | b'%') | (Syntax::Dimacs | Syntax::Pace, b'c') | (Syntax::Mtx { .. }, b'%') => continue,
            (Syntax::Dimacs, b'a') if first == b"a" => {}
            (Syntax::Dimacs, b'p') | (Syntax::Pace, b'p') => return Err(err("a second problem line")),
            (Syntax::Dimacs, _) => return Err(err("expected an arc line `a U V W`")),
            _ => {}
        }
        let u_tok = if matches!(h.syntax, Syntax::Dimacs) { fields.next() } else { Some(first) };
        let v_tok = fields.next();
        if named {
            let (Some(u), Some(v)) = (u_tok, v_tok) else { return Err(err("expected two vertex ids")) };
            for t in [u, v] {
                if t.is_empty() || std::str::from_utf8(t).is_err() {
                    return Err(err("a vertex id is empty or not UTF-8 text"));
                }
                c.tokens.push(((t.as_ptr() as usize - text.as_ptr() as usize) as u32, t.len() as u32));
            }
        } else {
            let (u, v) = numbered_edge(h, u_tok, v_tok, first_chunk && c.src.is_empty()).map_err(|bad| match bad {
                Bad::At(_, msg) => Bad::At(start, msg),
                names => names,
            })?;
            max_id = max_id.max(Some(u.max(v)));
            c.src.push(u);
            c.dst.push(v);
        }
        if weighted {
            c.push_weight(edge_weight(h, fields.next()).map_err(&err)?);
        }
        if fields.next().is_some() {
            return Err(err(match h.syntax {
                Syntax::EdgeList { weighted: false, csv: false } => {
                    "extra column: a weighted edge list needs the .wel name or --format wel"
                }
                _ => "extra fields after the edge",
            }));
        }
    }
    c.max_id = max_id;
    Ok(c)
}
