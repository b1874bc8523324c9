//! Files in and out, as every format uses them: [`Input`], the bytes of a graph file
//! or stream (mapped, read, or gunzipped, within the memory available), and
//! [`AtomicFile`], an output that appears whole or not at all, with the registry of
//! [`Pending`] files an interruption removes, and the watch on mapped inputs that
//! another process rewrites in place ([`check_mapped_inputs`]).

use std::ffi::CString;
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::ops::Deref;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, Ordering::SeqCst};
use std::sync::{Arc, Mutex, Weak};

use crate::error::{Error, Result};
use crate::progress::Progress;

/// The bytes of an input: mapped if a plain file, inflated if gzip, read whole if a
/// stream.
pub enum Input {
    /// A memory map of a plain file, and what the file was when mapped.
    Mapped(memmap2::Mmap, Snapshot),
    /// The content of a stream, a small file, or a gzip file inflated.
    Owned(Vec<u8>),
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

impl Input {
    /// Opens `path`. A regular file is mapped (or inflated if it starts with the gzip
    /// magic); a pipe, FIFO or device is read once, sequentially, its first bytes
    /// deciding whether to inflate. Whatever is held in memory is admitted against
    /// [`crate::available_memory`] as it grows, so `/dev/zero` or a gzip bomb is
    /// refused at the limit rather than at the allocator.
    pub fn open(path: &Path, progress: &dyn Progress) -> Result<Input> {
        let mut file = File::open(path).map_err(|e| Error::io(path, "cannot open", e))?;
        let meta = file.metadata().map_err(|e| Error::io(path, "cannot stat", e))?;
        if meta.is_dir() {
            return Err(Error::format(path, "is a directory, not a graph file"));
        }
        if !meta.is_file() {
            progress.start("reading the input stream", 0);
            let bytes = read_capped(path, CountingReader { inner: file, progress }, "reading the input stream", 1 << 20, plain_error)?;
            refuse_other_compression(path, &bytes)?;
            return match bytes.starts_with(&GZIP_MAGIC) {
                true => inflate(path, &bytes[..], bytes.len() as u64, progress).map(Input::Owned),
                false => Ok(Input::Owned(bytes)),
            };
        }
        let len = meta.len();
        let mut magic = Vec::with_capacity(8);
        (&mut file).take(8).read_to_end(&mut magic).map_err(|e| Error::io(path, "cannot read", e))?;
        refuse_other_compression(path, &magic)?;
        if magic.starts_with(&GZIP_MAGIC) {
            file.seek(SeekFrom::Start(0)).map_err(|e| Error::io(path, "cannot read", e))?;
            return inflate(path, std::io::BufReader::with_capacity(1 << 20, file), len, progress).map(Input::Owned);
        }
        if len < 4096 {
            file.seek(SeekFrom::Start(0)).map_err(|e| Error::io(path, "cannot read", e))?;
            return read_capped(path, file, "reading the input", len as usize, plain_error).map(Input::Owned);
        }
        // SAFETY: the map is read-only; a file truncated by another process while we
        // read it faults (SIGBUS), which the front end reports as an error.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::io(path, "cannot map", e))?;
        Ok(Input::Mapped(map, Snapshot::of(path, &meta)))
    }
}

impl Deref for Input {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Input::Mapped(m, _) => m,
            Input::Owned(v) => v,
        }
    }
}

/// Compressed formats other than gzip, by their magic: named, whatever the file
/// name says, so the user is not left with a parse error about binary bytes.
fn refuse_other_compression(path: &Path, head: &[u8]) -> Result<()> {
    const OTHERS: [(&[u8], &str, &str); 6] = [
        (b"BZh", "bzip2", "bunzip2 -k"),
        (&[0xfd, b'7', b'z', b'X', b'Z', 0], "xz", "unxz -k"),
        (&[0x28, 0xb5, 0x2f, 0xfd], "zstd", "unzstd"),
        (b"PK\x03\x04", "zip", "unzip"),
        (&[b'7', b'z', 0xbc, 0xaf, 0x27, 0x1c], "7-Zip", "7z x"),
        (&[0x04, 0x22, 0x4d, 0x18], "lz4", "unlz4"),
    ];
    match OTHERS.iter().find(|(magic, _, _)| head.starts_with(magic)) {
        Some((_, name, tool)) => Err(Error::format(
            path,
            format!(
                "this is {name}-compressed data (whatever the name says); chatty reads plain text and gzip: decompress it first (`{tool}`)"
            ),
        )),
        None => Ok(()),
    }
}

/// Reads `r` to its end, growing the buffer only while the total stays within the
/// memory available; beyond it, a [`Error::TooLarge`] saying what was being read.
/// `read_error` words a failed read.
fn read_capped(path: &Path, mut r: impl Read, what: &str, hint: usize, read_error: fn(&Path, std::io::Error) -> Error) -> Result<Vec<u8>> {
    let limit = crate::error::available_memory()?;
    let too_large = |needed: u64| Error::TooLarge { what: format!("{what} {}", path.display()), needed, available: limit };
    let mut out: Vec<u8> = Vec::with_capacity(hint.min(limit as usize));
    let mut piece = vec![0u8; 1 << 20];
    loop {
        let k = match r.read(&mut piece) {
            Ok(0) => return Ok(out),
            Ok(k) => k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(read_error(path, e)),
        };
        let len = out.len() as u64 + k as u64;
        if len > limit {
            return Err(too_large(len));
        }
        if out.len() + k > out.capacity() {
            // Doubling, but never past the limit: the buffer is what is admitted.
            let grown = (out.capacity() as u64 * 2).max(len).min(limit) as usize;
            out.reserve_exact(grown - out.len());
        }
        out.extend_from_slice(&piece[..k]);
    }
}

struct CountingReader<'a, R> {
    inner: R,
    progress: &'a dyn Progress,
}

impl<R: Read> Read for CountingReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.progress.advance(n as u64);
        Ok(n)
    }
}

/// Inflates the gzip stream `compressed` (of `len` bytes) within the memory limit.
fn inflate(path: &Path, compressed: impl Read, len: u64, progress: &dyn Progress) -> Result<Vec<u8>> {
    progress.start("decompressing", len);
    let counted = CountingReader { inner: compressed, progress };
    let hint = (len as usize).saturating_mul(4).min(1 << 32);
    read_capped(path, flate2::read::MultiGzDecoder::new(counted), "decompressing", hint, gzip_error)
}

fn plain_error(path: &Path, e: std::io::Error) -> Error {
    Error::io(path, "cannot read", e)
}

fn gzip_error(path: &Path, e: std::io::Error) -> Error {
    let what = if e.kind() == std::io::ErrorKind::UnexpectedEof { "gzip stream is truncated" } else { "gzip stream is corrupt" };
    Error::io(path, what, e)
}

/// Files that must not outlive this process if it is interrupted: temporary outputs,
/// written parts of an output not yet committed, and temporary directories. The front
/// end's signal handler calls [`remove_pending`] (or, where only async-signal-safe
/// calls may run, [`unlink_pending_in_signal_handler`]); everything else goes through
/// [`Pending`].
static PENDING: Mutex<Registry> = Mutex::new(Registry { paths: Vec::new() });

/// The pending paths as C strings, published after every change for a signal handler.
static PUBLISHED: Published<CString> = Published::new();

/// A list a signal handler may read, which may neither lock nor allocate: each
/// change publishes a new copy; copies published before are never freed (a
/// handler may be reading one; a run publishes a few dozen at most).
struct Published<T> {
    current: AtomicPtr<Vec<T>>,
}

impl<T> Published<T> {
    const fn new() -> Published<T> {
        Published { current: AtomicPtr::new(std::ptr::null_mut()) }
    }

    fn publish(&self, list: Vec<T>) {
        // The old copy is leaked, not freed: see the type's note.
        self.current.swap(Box::into_raw(Box::new(list)), SeqCst);
    }

    /// The current copy; from a signal handler too.
    fn load(&self) -> &[T] {
        let list = self.current.load(SeqCst);
        // SAFETY: published copies are never freed.
        if list.is_null() {
            &[]
        } else {
            unsafe { &*list }
        }
    }
}

struct Registry {
    paths: Vec<PathBuf>,
}

impl Registry {
    /// Changes the paths and publishes them.
    fn change(&mut self, f: impl FnOnce(&mut Vec<PathBuf>)) {
        f(&mut self.paths);
        PUBLISHED.publish(self.paths.iter().filter_map(|p| CString::new(p.as_os_str().as_bytes()).ok()).collect());
    }
}

fn pending() -> std::sync::MutexGuard<'static, Registry> {
    PENDING.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Removes every pending file and returns with the registry locked, so that no
/// commit can happen after it: the caller (a signal handler's thread) exits next.
pub fn remove_pending() -> impl Drop {
    let mut registry = pending();
    registry.change(|paths| paths.drain(..).for_each(|f| remove(&f)));
    registry
}

/// Unlinks every pending file with async-signal-safe calls only, for a handler of a
/// signal that cannot wait for a lock (SIGBUS: a mapped input truncated under the
/// run); directories stay.
pub fn unlink_pending_in_signal_handler() {
    for path in PUBLISHED.load() {
        // SAFETY: unlink(2) is async-signal-safe.
        unsafe { libc::unlink(path.as_ptr()) };
    }
}

/// What a mapped file was when mapped: its identity, size and times. A file written
/// in place while mapped (same inode, new times) changes the memory the kernels read
/// under them; one replaced by a rename leaves the mapping as it was.
#[derive(Clone, Debug)]
pub struct Snapshot {
    path: CString,
    dev: u64,
    ino: u64,
    size: i64,
    times: [i64; 4],
}

impl Snapshot {
    pub(crate) fn of(path: &Path, meta: &std::fs::Metadata) -> Snapshot {
        Snapshot {
            path: CString::new(path.as_os_str().as_bytes()).unwrap_or_default(),
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size() as i64,
            times: [meta.mtime(), meta.mtime_nsec(), meta.ctime(), meta.ctime_nsec()],
        }
    }

    /// Whether the file at the path is this one, since changed in place.
    fn changed(&self) -> bool {
        let path = Path::new(std::ffi::OsStr::from_bytes(self.path.as_bytes()));
        std::fs::metadata(path).is_ok_and(|m| {
            let now = Snapshot::of(path, &m);
            (now.dev, now.ino) == (self.dev, self.ino) && (now.size, now.times) != (self.size, self.times)
        })
    }

    /// [`Snapshot::changed`] with async-signal-safe calls only.
    fn changed_in_signal_handler(&self) -> bool {
        // SAFETY: stat(2) is async-signal-safe; `st` is plain data it fills.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::stat(self.path.as_ptr(), &mut st) } != 0 {
            return false;
        }
        let times = [st.st_mtime, st.st_mtime_nsec, st.st_ctime, st.st_ctime_nsec];
        (st.st_dev, st.st_ino) == (self.dev, self.ino) && (st.st_size, times) != (self.size, self.times)
    }
}

/// The mapped inputs in use, each with the map that reads it (dead once dropped).
static WATCHED: Mutex<Vec<(Snapshot, Weak<memmap2::Mmap>)>> = Mutex::new(Vec::new());
/// Their snapshots, for a signal handler.
static WATCHED_PUBLISHED: Published<Snapshot> = Published::new();

/// Watches the file `snapshot` describes while `map` lives: [`check_mapped_inputs`]
/// reports it if it is written in place.
pub(crate) fn watch(snapshot: Snapshot, map: &Arc<memmap2::Mmap>) {
    let mut watched = WATCHED.lock().unwrap_or_else(|p| p.into_inner());
    watched.retain(|(_, m)| m.strong_count() > 0);
    watched.push((snapshot, Arc::downgrade(map)));
    WATCHED_PUBLISHED.publish(watched.iter().map(|(s, _)| s.clone()).collect());
}

/// Fails if a mapped input still in use has been written in place by another process
/// since it was mapped: answers computed from it cannot be trusted.
pub fn check_mapped_inputs() -> Result<()> {
    let watched = WATCHED.lock().unwrap_or_else(|p| p.into_inner());
    match watched.iter().find(|(s, map)| map.strong_count() > 0 && s.changed()) {
        Some((s, _)) => Err(Error::invalid(
            Path::new(std::ffi::OsStr::from_bytes(s.path.as_bytes())),
            "truncated or changed by another process while the run read it (mapped): its answers are discarded; \
             write a new file and rename it over the old one instead",
        )),
        None => Ok(()),
    }
}

/// Whether any watched input has changed in place, with async-signal-safe calls only
/// (a handler of SIGSEGV or SIGBUS, to say why the run crashed).
pub fn mapped_input_changed_in_signal_handler() -> bool {
    WATCHED_PUBLISHED.load().iter().any(Snapshot::changed_in_signal_handler)
}

/// Removes a file, or a directory with what it holds.
fn remove(path: &Path) {
    let _ = match path.is_dir() {
        true => std::fs::remove_dir_all(path),
        false => std::fs::remove_file(path),
    };
}

/// A file (or directory) this process wrote that is removed when the guard drops (or
/// the process is interrupted) unless [`Pending::keep`] is called: the parts of an
/// output whose commit point is elsewhere (an SSD layout's stripes, committed by its
/// index), or a temporary directory.
#[derive(Debug)]
pub struct Pending {
    path: PathBuf,
    kept: bool,
}

impl Pending {
    /// Registers `path`.
    pub fn new(path: &Path) -> Pending {
        pending().change(|paths| paths.push(path.to_path_buf()));
        Pending { path: path.to_path_buf(), kept: false }
    }

    /// Keeps the file: the output it belongs to is committed.
    pub fn keep(mut self) {
        pending().change(|paths| paths.retain(|f| f != &self.path));
        self.kept = true;
    }

    /// Runs `commit` (a rename into place) with the registry locked, so that an
    /// interruption sees the file either pending or committed, then keeps it.
    fn commit_with<T>(mut self, commit: impl FnOnce() -> T) -> T {
        let mut registry = pending();
        let done = commit();
        registry.change(|paths| paths.retain(|f| f != &self.path));
        self.kept = true;
        done
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.kept {
            pending().change(|paths| paths.retain(|f| f != &self.path));
            remove(&self.path);
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

/// An OS error without the temporary name that `tempfile` adds to it: the user named
/// the output, and the error says that name.
fn unnamed(e: std::io::Error) -> std::io::Error {
    e.raw_os_error().map_or(e, std::io::Error::from_raw_os_error)
}

// A temporary file is written as the plain file under it: `tempfile`'s own writes add
// the temporary name to their errors (a full disk read "... at path
// .chatty-rdzn7E.partial"), and the user named another.
impl Write for Target {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Target::Temp(f) => f.as_file_mut().write(buf),
            Target::Direct(f) => f.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Target::Temp(f) => f.as_file_mut().flush(),
            Target::Direct(f) => f.flush(),
        }
    }
}

impl Seek for Target {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        match self {
            Target::Temp(f) => f.as_file_mut().seek(pos),
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
            .map_err(|e| Error::io(path, "cannot create output", unnamed(e)))?;
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
