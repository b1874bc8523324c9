//! Writers: `.cgr`, text edge lists (`.el`, `.wel`) for peers such as GAPBS, and
//! Matrix Market (`.mtx`) for SuiteSparse-style tools (scipy, BLEST).
//! Every output goes through [`AtomicFile`], so a failure never leaves a partial file.

use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rayon::prelude::*;

use crate::build::edge_balanced_ranges;
use crate::csr::{Graph, WeightType};
use crate::error::{Error, Result};
use crate::progress::Progress;
use crate::read::{format_from_name, Format};

/// Files that must not outlive this process if it is interrupted: temporary outputs
/// and written parts of an output not yet committed. The front end's signal handler
/// calls [`remove_pending`]; everything else goes through [`Pending`].
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn pending() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    PENDING.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Removes every pending file and returns with the registry locked, so that no
/// commit can happen after it: the caller (a signal handler's thread) exits next.
pub fn remove_pending() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    let mut files = pending();
    for f in files.drain(..) {
        let _ = std::fs::remove_file(f);
    }
    files
}

/// A file this process wrote that is removed when the guard drops (or the process is
/// interrupted) unless [`Pending::keep`] is called: the parts of an output whose
/// commit point is elsewhere (an SSD layout's stripes, committed by its index).
#[derive(Debug)]
pub struct Pending {
    path: PathBuf,
    kept: bool,
}

impl Pending {
    /// Registers `path`.
    pub fn new(path: &Path) -> Pending {
        pending().push(path.to_path_buf());
        Pending { path: path.to_path_buf(), kept: false }
    }

    /// Keeps the file: the output it belongs to is committed.
    pub fn keep(mut self) {
        pending().retain(|f| f != &self.path);
        self.kept = true;
    }

    /// Runs `commit` (a rename into place) with the registry locked, so that an
    /// interruption sees the file either pending or committed, then keeps it.
    fn commit_with<T>(mut self, commit: impl FnOnce() -> T) -> T {
        let mut files = pending();
        let done = commit();
        files.retain(|f| f != &self.path);
        self.kept = true;
        done
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.kept {
            pending().retain(|f| f != &self.path);
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// A file written under a temporary name in the target directory and renamed into
/// place by [`AtomicFile::commit`]; dropped uncommitted (or interrupted), it is deleted.
/// An existing target that is not a regular file (`/dev/null`, a FIFO, a terminal) is
/// written into directly: renaming over it would replace the device node.
pub struct AtomicFile {
    path: PathBuf,
    out: BufWriter<Target>,
    temp: Option<Pending>,
}

enum Target {
    Temp(tempfile::NamedTempFile),
    Direct(std::fs::File),
}

impl Write for Target {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Target::Temp(f) => f.write(buf),
            Target::Direct(f) => f.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Target::Temp(f) => f.flush(),
            Target::Direct(f) => f.flush(),
        }
    }
}

impl Seek for Target {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        match self {
            Target::Temp(f) => f.seek(pos),
            Target::Direct(f) => f.seek(pos),
        }
    }
}

impl AtomicFile {
    /// Starts writing `path`. Fails early if its directory does not exist.
    pub fn create(path: &Path) -> Result<AtomicFile> {
        if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
            let f = std::fs::OpenOptions::new().write(true).open(path).map_err(|e| Error::io(path, "cannot open output", e))?;
            return Ok(AtomicFile { path: path.to_path_buf(), out: BufWriter::with_capacity(1 << 20, Target::Direct(f)), temp: None });
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        if !dir.is_dir() {
            return Err(Error::io(
                path,
                "cannot create output",
                std::io::Error::new(std::io::ErrorKind::NotFound, format!("directory {} does not exist", dir.display())),
            ));
        }
        // Created 0666 less the umask, like any output file (tempfile's default is 0600).
        let mode = <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o666);
        let tmp = tempfile::Builder::new()
            .prefix(".chatty-")
            .suffix(".partial")
            .permissions(mode)
            .tempfile_in(dir)
            // tempfile adds the temporary name to the OS error; the user named `path`.
            .map_err(|e| Error::io(path, "cannot create output", e.raw_os_error().map_or(e, std::io::Error::from_raw_os_error)))?;
        let temp = Some(Pending::new(tmp.path()));
        Ok(AtomicFile { path: path.to_path_buf(), out: BufWriter::with_capacity(8 << 20, Target::Temp(tmp)), temp })
    }

    /// Flushes, syncs nothing extra, and renames the file into place.
    pub fn commit(self) -> Result<()> {
        let path = self.path;
        let target = self.out.into_inner().map_err(|e| Error::io(&path, "cannot write", e.into_error()))?;
        if let (Target::Temp(tmp), Some(temp)) = (target, self.temp) {
            temp.commit_with(|| tmp.persist(&path)).map_err(|e| Error::io(&path, "cannot rename into place", e.error))?;
        }
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.out.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

impl Seek for AtomicFile {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.out.seek(pos)
    }
}

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
    let n = g.num_vertices();
    match text {
        Text::EdgeList { .. } => {
            writeln!(file, "# {} graph written by chatty", if g.is_directed() { "Directed" } else { "Undirected" }).map_err(io)?;
            writeln!(file, "# Nodes: {n} Edges: {listed}").map_err(io)?;
        }
        Text::MatrixMarket => {
            let field = match g.weight_type() {
                WeightType::None => "pattern",
                WeightType::Float => "real",
                _ => "integer",
            };
            writeln!(file, "%%MatrixMarket matrix coordinate {field} {}", if undirected { "symmetric" } else { "general" }).map_err(io)?;
            writeln!(file, "% written by chatty").map_err(io)?;
            writeln!(file, "{n} {n} {listed}").map_err(io)?;
        }
    }
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
