//! The IO engine: one thread per stripe file reads runs of pages into registered,
//! page-aligned buffers from a fixed pool (no allocation per IO), through io_uring
//! with `O_DIRECT` (so the page cache is out of the picture), or, where the kernel or
//! the file system refuses either, through buffered `pread`, which it says once.

use std::fs::File;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::layout::{page_offset, PAGE};
use crate::{Notes, SsdError};

/// How reads are issued.
#[derive(Clone, Debug)]
pub struct IoConfig {
    /// Reads in flight per file.
    pub queue_depth: usize,
    /// Longest run of contiguous pages merged into one read (also the buffer size).
    pub merge_pages: usize,
    /// Open with `O_DIRECT` (bypass the page cache).
    pub direct: bool,
    /// Use io_uring (else `pread`).
    pub uring: bool,
}

impl Default for IoConfig {
    fn default() -> Self {
        IoConfig { queue_depth: 32, merge_pages: 32, direct: true, uring: true }
    }
}

impl IoConfig {
    /// Bytes of buffers one file's pool holds.
    pub fn pool_bytes(&self) -> usize {
        self.queue_depth.max(1) * 2 * self.merge_pages.max(1) * PAGE
    }
}

/// The stripe files of one side, opened.
pub struct StripeFiles {
    pub files: Vec<(File, PathBuf)>,
    pub direct: bool,
}

impl StripeFiles {
    pub fn open(paths: &[PathBuf], cfg: &IoConfig, notes: &Notes) -> Result<StripeFiles, SsdError> {
        let mut direct = cfg.direct;
        let mut files = Vec::new();
        for p in paths {
            let f = match direct {
                true => match std::fs::OpenOptions::new().read(true).custom_flags(libc::O_DIRECT).open(p) {
                    Ok(f) => f,
                    Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                        notes.add(format!("{}: O_DIRECT refused by the file system; reading through the page cache", p.display()));
                        direct = false;
                        File::open(p).map_err(|e| SsdError::io(p, "cannot open", e))?
                    }
                    Err(e) => return Err(SsdError::io(p, "cannot open", e)),
                },
                false => File::open(p).map_err(|e| SsdError::io(p, "cannot open", e))?,
            };
            files.push((f, p.clone()));
        }
        Ok(StripeFiles { files, direct })
    }
}

/// Page-aligned memory for one file's buffers. Each buffer is owned by one party at
/// a time (the IO thread while a read is in flight, then one scatter thread, then back
/// through the free list), which is what makes the shared raw access below sound.
pub struct Pool {
    ptr: *mut u8,
    buf_bytes: usize,
    count: usize,
}

// SAFETY: the pool is plain memory; access to each buffer is serialised by the
// ownership protocol above (handed over through channels).
unsafe impl Send for Pool {}
unsafe impl Sync for Pool {}

impl Pool {
    pub fn new(count: usize, buf_bytes: usize) -> Pool {
        let layout = std::alloc::Layout::from_size_align(count * buf_bytes, PAGE).expect("pool layout");
        // SAFETY: non-zero size (count, buf_bytes >= 1 page).
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Pool { ptr, buf_bytes, count }
    }

    pub fn count(&self) -> usize {
        self.count
    }

    fn ptr(&self, i: usize) -> *mut u8 {
        assert!(i < self.count);
        // SAFETY: in bounds of the allocation.
        unsafe { self.ptr.add(i * self.buf_bytes) }
    }

    /// The first `len` bytes of buffer `i`; the caller must own it.
    pub fn slice(&self, i: usize, len: usize) -> &[u8] {
        assert!(len <= self.buf_bytes);
        // SAFETY: in bounds; the ownership protocol excludes concurrent writers.
        unsafe { std::slice::from_raw_parts(self.ptr(i), len) }
    }

    #[allow(clippy::mut_from_ref)]
    pub(crate) fn slice_mut(&self, i: usize, len: usize) -> &mut [u8] {
        assert!(len <= self.buf_bytes);
        // SAFETY: as `slice`; the IO thread owns buffer `i` while it reads into it.
        unsafe { std::slice::from_raw_parts_mut(self.ptr(i), len) }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        let layout = std::alloc::Layout::from_size_align(self.count * self.buf_bytes, PAGE).expect("pool layout");
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr, layout) };
    }
}

/// A finished read: `pages` pages of stripe file `file` from its local page `first`,
/// in buffer `buf` of that file's pool.
#[derive(Clone, Copy, Debug)]
pub struct Chunk {
    pub file: usize,
    pub first: u64,
    pub pages: usize,
    pub buf: usize,
}

/// One IO thread's round: the runs (local first page, page count) of one stripe
/// file, read into buffers taken from `free`, each finished read sent to `out`.
pub struct FileReader<'a> {
    pub file_index: usize,
    pub file: &'a File,
    pub path: &'a Path,
    pub runs: &'a [(u64, usize)],
    pub pool: &'a Pool,
    pub free: &'a crossbeam_channel::Receiver<usize>,
    pub out: crossbeam_channel::Sender<Result<Chunk, SsdError>>,
    /// Set by a consumer that failed: stop issuing reads.
    pub abort: &'a AtomicBool,
    /// Where the fallback to pread is said.
    pub notes: &'a Notes,
}

impl FileReader<'_> {
    /// Reads every run (io_uring, or pread where that is off or refused); an error is
    /// sent to `out`.
    pub fn run(&self, cfg: &IoConfig) {
        let result = if cfg.uring {
            match io_uring::IoUring::new(cfg.queue_depth.clamp(1, 4096).next_power_of_two() as u32) {
                Ok(ring) => self.read_uring(ring, cfg),
                Err(e) => {
                    self.notes.add(format!("io_uring unavailable ({e}); reading with pread"));
                    self.read_pread()
                }
            }
        } else {
            self.read_pread()
        };
        if let Err(e) = result {
            let _ = self.out.send(Err(e));
        }
    }

    fn chunk(&self, first: u64, pages: usize, buf: usize) -> Chunk {
        Chunk { file: self.file_index, first, pages, buf }
    }

    fn read_pread(&self) -> Result<(), SsdError> {
        for &(first, pages) in self.runs {
            if self.abort.load(Ordering::Relaxed) {
                return Ok(());
            }
            let Ok(buf) = self.free.recv() else { return Ok(()) };
            read_pages(self.file, self.path, first, self.pool.slice_mut(buf, pages * PAGE))?;
            if self.out.send(Ok(self.chunk(first, pages, buf))).is_err() {
                return Ok(());
            }
        }
        Ok(())
    }

    /// The chunk a completed read of `pages` pages from `first` into `buf` filled, or
    /// its error (`res`: the bytes read, or minus the errno).
    fn completed(&self, first: u64, pages: usize, buf: usize, res: i32) -> Result<Chunk, SsdError> {
        if res < 0 {
            Err(SsdError::io(self.path, "cannot read", std::io::Error::from_raw_os_error(-res)))
        } else if res as usize != pages * PAGE {
            Err(short_read(self.path, page_offset(first), pages * PAGE, res as usize))
        } else {
            Ok(self.chunk(first, pages, buf))
        }
    }

    fn read_uring(&self, mut ring: io_uring::IoUring, cfg: &IoConfig) -> Result<(), SsdError> {
        use io_uring::{opcode, types};
        let uring_err = |e: std::io::Error| SsdError::io(self.path, "io_uring", e);
        let iovecs: Vec<libc::iovec> =
            (0..self.pool.count()).map(|i| libc::iovec { iov_base: self.pool.ptr(i).cast(), iov_len: self.pool.buf_bytes }).collect();
        // Registering pins the pool's pages: worth it for a long round, not for the few
        // reads of a sparse one (a BFS level on a road graph).
        // SAFETY: the iovecs describe the pool's buffers, which outlive the ring (the ring
        // is dropped at the end of this function, the pool later).
        let registered = self.runs.len() > self.pool.count() && unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
        let fd = types::Fd(self.file.as_raw_fd());
        let depth = cfg.queue_depth.clamp(1, 4096);
        let mut pending: Vec<Option<(u64, usize)>> = vec![None; self.pool.count()];
        let mut next = 0;
        let mut inflight = 0;
        // After an error or a closed consumer: no new reads, but every read in flight is
        // reaped before the ring (and then the pool) goes away.
        let mut failed: Option<SsdError> = None;
        let mut stopped = false;
        loop {
            while inflight < depth && next < self.runs.len() && failed.is_none() && !stopped && !self.abort.load(Ordering::Relaxed) {
                let buf = if inflight == 0 {
                    match self.free.recv() {
                        Ok(b) => b,
                        Err(_) => return Ok(()),
                    }
                } else {
                    match self.free.try_recv() {
                        Ok(b) => b,
                        Err(_) => break,
                    }
                };
                let (first, pages) = self.runs[next];
                next += 1;
                let len = (pages * PAGE) as u32;
                let ptr = self.pool.ptr(buf);
                let entry = if registered {
                    opcode::ReadFixed::new(fd, ptr, len, buf as u16).offset(page_offset(first)).build()
                } else {
                    opcode::Read::new(fd, ptr, len).offset(page_offset(first)).build()
                };
                pending[buf] = Some((first, pages));
                // SAFETY: the buffer (owned by us until its completion) and the file stay
                // valid until the completion is reaped below.
                if unsafe { ring.submission().push(&entry.user_data(buf as u64)) }.is_err() {
                    pending[buf] = None;
                    failed = Some(uring_err(std::io::Error::other("submission queue full")));
                    break;
                }
                inflight += 1;
            }
            if inflight == 0 {
                return failed.map_or(Ok(()), Err);
            }
            if let Err(e) = ring.submit_and_wait(1) {
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(uring_err(e));
            }
            let done: Vec<(usize, i32)> = ring.completion().map(|c| (c.user_data() as usize, c.result())).collect();
            for (buf, res) in done {
                inflight -= 1;
                let (first, pages) = pending[buf].take().expect("a read in flight");
                match self.completed(first, pages, buf, res) {
                    Ok(chunk) if failed.is_none() && !stopped => stopped = self.out.send(Ok(chunk)).is_err(),
                    Ok(_) => {}
                    Err(e) => {
                        failed.get_or_insert(e);
                    }
                }
            }
        }
    }
}

fn short_read(path: &Path, offset: u64, want: usize, got: usize) -> SsdError {
    SsdError::Invalid(format!(
        "{}: short read at byte {offset}: {got} of {want} bytes (the file was truncated or changed during the run)",
        path.display()
    ))
}

/// Reads `dst.len()` bytes of pages from local page `first` with `pread`.
pub(crate) fn read_pages(file: &File, path: &Path, first: u64, dst: &mut [u8]) -> Result<(), SsdError> {
    let offset = page_offset(first);
    let mut got = 0;
    while got < dst.len() {
        match file.read_at(&mut dst[got..], offset + got as u64) {
            Ok(0) => return Err(short_read(path, offset, dst.len(), got)),
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(SsdError::io(path, "cannot read", e)),
        }
    }
    Ok(())
}
