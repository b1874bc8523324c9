//! `edge_map` streamed from disk with online binning (Blaze: Kim et al., "Blaze:
//! Fast Graph Processing on Fast SSDs", SC 2022).
//!
//! One round: the vertex frontier becomes a page frontier (a sorted list when sparse,
//! a bitmap walk when dense); one IO thread per stripe file reads merged runs of its
//! pages; scatter threads decode each page's records, keep those whose source is in
//! the frontier, and append `(dst, message)` to per-thread staging for the bin that
//! owns `dst` (bins cover contiguous vertex ranges), the message being what the source
//! sends ([`EdgeOp::message`], computed while the source's state is at hand); full
//! staging goes to the shared bin, full bins to a queue; gather threads take whole bins
//! and apply [`EdgeOp::apply`] without atomics, one thread per bin at a time. Without
//! binning (`binning: false`) scatter threads apply [`EdgeOp::update_atomic`] themselves.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use chatty_algo::edge_map::{EdgeMapGraph, EdgeMapOptions, EdgeOp, Edges, SumOptions};
use chatty_algo::frontier::{Bitmap, Frontier};
use chatty_graph::{Graph, WeightType};
use serde::Serialize;

use crate::io::{self, Chunk, IoConfig, Pool, StripeFiles};
use crate::layout::{self, Layout, Side, PAGE};
use crate::{Notes, SsdError};

/// The engine's knobs.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// The IO threads' settings.
    pub io: IoConfig,
    /// Threads decoding pages.
    pub scatter_threads: usize,
    /// Threads applying binned records.
    pub gather_threads: usize,
    /// Whether records go through bins (else scatter threads apply them atomically).
    pub binning: bool,
    /// Records per bin buffer handed to a gather thread.
    pub bin_records: usize,
    /// Records a scatter thread stages per bin before taking the bin's lock.
    pub staging_records: usize,
}

impl Default for EngineConfig {
    fn default() -> Self {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        // Decoding a page costs about what applying its records does.
        let scatter = threads.div_ceil(2);
        EngineConfig {
            io: IoConfig::default(),
            scatter_threads: scatter,
            gather_threads: (threads - scatter).max(1),
            binning: true,
            bin_records: 1 << 14,
            staging_records: 128,
        }
    }
}

/// IO figures of one round, or of a whole run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct IoStats {
    /// Rounds of streaming.
    pub rounds: u64,
    /// Bytes read from disk.
    pub bytes_read: u64,
    /// Bytes of the records the frontier needed (read bytes / this = amplification).
    pub bytes_needed: u64,
    /// Seconds the rounds took.
    pub seconds: f64,
    /// Bytes read from each stripe file (skew = max / mean).
    pub per_file: Vec<u64>,
}

impl IoStats {
    /// Bytes read per second, in GB/s.
    pub fn gb_per_s(&self) -> f64 {
        self.bytes_read as f64 / 1e9 / self.seconds.max(1e-9)
    }

    /// Bytes read per byte needed (1: nothing read in vain).
    pub fn amplification(&self) -> f64 {
        self.bytes_read as f64 / self.bytes_needed.max(1) as f64
    }

    /// The busiest stripe file's bytes over the mean (1: even).
    pub fn skew(&self) -> f64 {
        let max = self.per_file.iter().copied().max().unwrap_or(0) as f64;
        let mean = self.per_file.iter().sum::<u64>() as f64 / self.per_file.len().max(1) as f64;
        if mean == 0.0 {
            1.0
        } else {
            max / mean
        }
    }

    fn add(&mut self, r: &IoStats) {
        self.rounds += r.rounds;
        self.bytes_read += r.bytes_read;
        self.bytes_needed += r.bytes_needed;
        self.seconds += r.seconds;
        if self.per_file.len() < r.per_file.len() {
            self.per_file.resize(r.per_file.len(), 0);
        }
        for (a, b) in self.per_file.iter_mut().zip(&r.per_file) {
            *a += b;
        }
    }
}

/// A graph on disk, ready to stream.
pub struct SsdGraph {
    /// The layout's index.
    pub layout: Layout,
    out: StripeFiles,
    inc: Option<StripeFiles>,
    /// The engine's knobs.
    pub cfg: EngineConfig,
    totals: Mutex<IoStats>,
    rounds: Mutex<Vec<IoStats>>,
    /// One buffer pool per stripe file, allocated by the first round (after the engine
    /// admitted [`SsdGraph::engine_bytes`]); the lock makes a round the pools' only user.
    pools: Mutex<Vec<Pool>>,
    /// Emptied bin buffers kept between rounds (a fresh 200 KB buffer per bin hand-over
    /// would be an mmap and its page faults each time).
    spare_bins: Mutex<Vec<Vec<Record>>>,
    /// Fallbacks taken (no `O_DIRECT`, no io_uring), for the front end to print.
    pub(crate) notes: Notes,
}

/// Rounds of at most this many pages run on the calling thread ([`SsdGraph::inline`]).
const INLINE_PAGES: usize = 16;

/// A bin record: a destination and the message its source sent (as two words, so
/// that a record takes 12 bytes, not 16).
#[derive(Clone, Copy)]
struct Record {
    dst: u32,
    lo: u32,
    hi: u32,
}

/// An edge as a page holds it.
#[derive(Clone, Copy)]
struct Edge {
    src: u32,
    dst: u32,
    weight: u32,
}

impl SsdGraph {
    /// Loads the index (in memory) and opens the stripe files.
    pub fn open(index: &std::path::Path, cfg: EngineConfig) -> Result<SsdGraph, SsdError> {
        let layout = layout::load(index)?;
        let notes = Notes::default();
        let out = StripeFiles::open(&layout.out.files, &cfg.io, &notes)?;
        let inc = match &layout.inc {
            Some(side) => Some(StripeFiles::open(&side.files, &cfg.io, &notes)?),
            None => None,
        };
        let totals = Mutex::new(IoStats { per_file: vec![0; out.files.len()], ..IoStats::default() });
        let pools = Vec::new();
        Ok(SsdGraph {
            layout,
            out,
            inc,
            cfg,
            totals,
            rounds: Mutex::new(Vec::new()),
            pools: Mutex::new(pools),
            spare_bins: Mutex::new(Vec::new()),
            notes,
        })
    }

    /// Vertices.
    pub fn num_vertices(&self) -> usize {
        self.layout.num_vertices()
    }

    /// Whether pages are read with `O_DIRECT`.
    pub fn direct(&self) -> bool {
        self.out.direct
    }

    /// IO figures so far (and per round), then reset.
    pub fn take_stats(&self) -> (IoStats, Vec<IoStats>) {
        let k = self.out.files.len();
        let totals = std::mem::replace(&mut *self.totals.lock().expect("stats"), IoStats { per_file: vec![0; k], ..IoStats::default() });
        (totals, std::mem::take(&mut *self.rounds.lock().expect("stats")))
    }

    /// Memory the engine itself needs beyond the index: IO pools and bins.
    pub fn engine_bytes(&self) -> u64 {
        let (pools, bins) = self.engine_parts();
        pools + bins
    }

    /// [`Self::engine_bytes`] in its two parts: the IO buffers (every stripe's reads in
    /// flight) and the bins (with each scatter thread's staging).
    pub fn engine_parts(&self) -> (u64, u64) {
        let k = self.out.files.len() as u64;
        let pools = k * self.cfg.io.pool_bytes() as u64;
        let nbins = self.bins(self.num_vertices()).1 as u64;
        let bins = (nbins + self.cfg.gather_threads as u64 * 4) * self.cfg.bin_records as u64 * 12;
        let staging = self.cfg.scatter_threads as u64 * nbins * self.cfg.staging_records as u64 * 12;
        (pools, bins + staging)
    }

    /// Bin width as a power of two (log2) and bin count. A bin's slice of an f64
    /// vertex array stays within 128 KiB, so a gather thread applies it from L2; at least
    /// 16 bins per gather thread keep them all busy.
    fn bins(&self, n: usize) -> (u32, usize) {
        let per_thread = n.div_ceil(self.cfg.gather_threads.max(1) * 16).max(1);
        let shift = per_thread.next_power_of_two().trailing_zeros().clamp(6, 14);
        (shift, n.div_ceil(1 << shift).max(1))
    }

    /// The buffer pools, allocated on first use.
    fn pools(&self) -> std::sync::MutexGuard<'_, Vec<Pool>> {
        let mut pools = self.pools.lock().expect("pools");
        if pools.is_empty() {
            let buffers = self.cfg.io.queue_depth.max(1) * 2;
            pools.extend((0..self.out.files.len()).map(|_| Pool::new(buffers, self.cfg.io.merge_pages.max(1) * PAGE)));
        }
        pools
    }

    /// Applies `op` along every edge (of the chosen side) leaving a vertex of
    /// `frontier`; sets in `next` the vertices it changed.
    pub fn edge_map_pages<O: EdgeOp>(&self, edges: Edges, frontier: &Bitmap, op: &O, next: &Bitmap) -> Result<(), SsdError> {
        let (side, files) = match edges {
            Edges::Out => (&self.layout.out, &self.out),
            Edges::In => (self.layout.inc.as_ref().unwrap_or(&self.layout.out), self.inc.as_ref().unwrap_or(&self.out)),
        };
        let start = Instant::now();
        let rec = self.layout.header.record_bytes;
        let k = files.files.len();
        let (runs, needed) = page_runs(side, frontier, rec, k, self.cfg.io.merge_pages.max(1));
        let mut stats = IoStats { rounds: 1, bytes_needed: needed, per_file: vec![0; k], ..IoStats::default() };
        for (j, r) in runs.iter().enumerate() {
            stats.per_file[j] = r.iter().map(|&(_, p)| (p * PAGE) as u64).sum();
        }
        stats.bytes_read = stats.per_file.iter().sum();
        let pages: usize = runs.iter().flatten().map(|&(_, p)| p).sum();
        let decoder = Decoder { side, id: self.layout.id, record_bytes: rec as usize, files: k as u64 };
        if pages > 0 && pages <= INLINE_PAGES {
            self.inline(files, &runs, frontier, &decoder, op, next)?;
        } else if pages > 0 {
            self.stream(files, &runs, frontier, &decoder, op, next)?;
        }
        stats.seconds = start.elapsed().as_secs_f64();
        self.totals.lock().expect("stats").add(&stats);
        self.rounds.lock().expect("stats").push(stats);
        Ok(())
    }

    /// A round of a few pages on the calling thread: synchronous reads, updates applied
    /// in place. On high-diameter graphs (thousands of BFS levels of a few pages each)
    /// starting threads and rings would cost more than the round's work.
    fn inline<O: EdgeOp>(
        &self,
        files: &StripeFiles,
        runs: &[Vec<(u64, usize)>],
        frontier: &Bitmap,
        decoder: &Decoder<'_>,
        op: &O,
        next: &Bitmap,
    ) -> Result<(), SsdError> {
        let pools = self.pools();
        for (j, file_runs) in runs.iter().enumerate() {
            let (file, path) = &files.files[j];
            for &(first, pages) in file_runs {
                io::read_pages(file, path, first, pools[j].slice_mut(0, pages * PAGE))?;
                let chunk = Chunk { file: j, first, pages, buf: 0 };
                decoder
                    .for_each(chunk, pools[j].slice(0, pages * PAGE), frontier, |e| {
                        if op.update(e.src, e.dst, e.weight) {
                            next.set(e.dst as usize);
                        }
                    })
                    .map_err(|c| c.error(path, decoder))?;
            }
        }
        Ok(())
    }

    fn stream<O: EdgeOp>(
        &self,
        files: &StripeFiles,
        runs: &[Vec<(u64, usize)>],
        frontier: &Bitmap,
        decoder: &Decoder<'_>,
        op: &O,
        next: &Bitmap,
    ) -> Result<(), SsdError> {
        let cfg = &self.cfg;
        let k = files.files.len();
        let buffers = cfg.io.queue_depth.max(1) * 2;
        let pools = self.pools();
        let free: Vec<_> = (0..k).map(|_| free_buffers(buffers)).collect();
        let (chunk_tx, chunk_rx) = crossbeam_channel::bounded::<Result<Chunk, SsdError>>(k * buffers);
        let abort = AtomicBool::new(false);
        let failure: Mutex<Option<SsdError>> = Mutex::new(None);
        let (bin_shift, nbins) = self.bins(self.num_vertices());
        let (spare_tx, spare_rx) = crossbeam_channel::unbounded::<Vec<Record>>();
        std::mem::take(&mut *self.spare_bins.lock().expect("spares")).into_iter().for_each(|b| spare_tx.send(b).expect("unbounded"));
        let bins: Vec<Mutex<Vec<Record>>> = (0..nbins).map(|_| Mutex::new(fresh_bin(&spare_rx, cfg.bin_records))).collect();
        let scatter_left = AtomicUsize::new(cfg.scatter_threads.max(1));
        let pipeline = Pipeline {
            cfg,
            pools: &pools,
            free: &free,
            abort: &abort,
            failure: &failure,
            spare: &spare_rx,
            bins: &bins,
            scatter_left: &scatter_left,
            bin_shift,
            files,
            frontier,
            decoder,
            op,
            next,
        };
        let applying: Vec<Mutex<()>> = (0..nbins).map(|_| Mutex::new(())).collect();
        let (full_tx, full_rx) = crossbeam_channel::bounded::<(usize, Vec<Record>)>(cfg.gather_threads.max(1) * 4);
        std::thread::scope(|scope| {
            for (j, ((file, path), r)) in files.files.iter().zip(runs).enumerate() {
                let reader = io::FileReader {
                    file_index: j,
                    file,
                    path,
                    runs: r,
                    pool: &pools[j],
                    free: &free[j].1,
                    out: chunk_tx.clone(),
                    abort: &abort,
                    notes: &self.notes,
                };
                let io_cfg = &cfg.io;
                scope.spawn(move || reader.run(io_cfg));
            }
            drop(chunk_tx);
            for _ in 0..cfg.scatter_threads.max(1) {
                let (full_tx, chunk_rx, pipeline) = (full_tx.clone(), &chunk_rx, &pipeline);
                scope.spawn(move || pipeline.scatter(chunk_rx, full_tx));
            }
            drop(full_tx);
            for _ in 0..cfg.gather_threads.max(1) {
                let (full_rx, applying, spare_tx, pipeline) = (&full_rx, &applying, &spare_tx, &pipeline);
                scope.spawn(move || pipeline.gather(full_rx, applying, spare_tx));
            }
        });
        let mut spares: Vec<Vec<Record>> = spare_rx.try_iter().collect();
        spares.extend(bins.into_iter().map(|b| b.into_inner().expect("bin")).filter(|b| b.capacity() > 0));
        spares.iter_mut().for_each(Vec::clear);
        *self.spare_bins.lock().expect("spares") = spares;
        match failure.into_inner().expect("failure") {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// A bin to fill: a spare, else a new one with room for `records`.
fn fresh_bin(spare: &crossbeam_channel::Receiver<Vec<Record>>, records: usize) -> Vec<Record> {
    spare.try_recv().unwrap_or_else(|_| Vec::with_capacity(records))
}

/// A channel of free buffer indices, holding `0..buffers`.
fn free_buffers(buffers: usize) -> (crossbeam_channel::Sender<usize>, crossbeam_channel::Receiver<usize>) {
    let (tx, rx) = crossbeam_channel::bounded(buffers);
    (0..buffers).for_each(|b| tx.send(b).expect("room for every buffer"));
    (tx, rx)
}

/// What the scatter and gather threads of one [`SsdGraph::stream`] share.
struct Pipeline<'a, O> {
    cfg: &'a EngineConfig,
    files: &'a StripeFiles,
    pools: &'a [Pool],
    /// Each file's free buffers.
    free: &'a [(crossbeam_channel::Sender<usize>, crossbeam_channel::Receiver<usize>)],
    /// Set on the first error: readers stop and scatter threads skip what is left.
    abort: &'a AtomicBool,
    failure: &'a Mutex<Option<SsdError>>,
    /// Emptied bins to reuse.
    spare: &'a crossbeam_channel::Receiver<Vec<Record>>,
    /// Records by destination range (`dst >> bin_shift`), filling.
    bins: &'a [Mutex<Vec<Record>>],
    /// Scatter threads still running: the last one hands over every partial bin.
    scatter_left: &'a AtomicUsize,
    bin_shift: u32,
    frontier: &'a Bitmap,
    decoder: &'a Decoder<'a>,
    op: &'a O,
    next: &'a Bitmap,
}

impl<O: EdgeOp> Pipeline<'_, O> {
    /// A bin to fill.
    fn fresh(&self) -> Vec<Record> {
        fresh_bin(self.spare, self.cfg.bin_records)
    }

    /// A scatter thread: decodes the chunks the readers fill and, binning, files each
    /// edge's message by destination (through its own staging lists), handing full
    /// bins to the gather threads; without binning, applies it at once.
    fn scatter(
        &self,
        chunks: &crossbeam_channel::Receiver<Result<Chunk, SsdError>>,
        full_tx: crossbeam_channel::Sender<(usize, Vec<Record>)>,
    ) {
        let mut staging: Vec<Vec<Record>> = if self.cfg.binning { (0..self.bins.len()).map(|_| Vec::new()).collect() } else { Vec::new() };
        let hand_over = |b: usize, items: &mut Vec<Record>| {
            let mut bin = self.bins[b].lock().expect("bin");
            bin.append(items);
            if bin.len() >= self.cfg.bin_records {
                let full = std::mem::replace(&mut *bin, self.fresh());
                drop(bin);
                let _ = full_tx.send((b, full));
            }
        };
        for got in chunks.iter() {
            let chunk = match got {
                Ok(c) => c,
                Err(e) => {
                    self.abort.store(true, Ordering::Relaxed);
                    self.failure.lock().expect("failure").get_or_insert(e);
                    continue;
                }
            };
            if !self.abort.load(Ordering::Relaxed) {
                let bytes = self.pools[chunk.file].slice(chunk.buf, chunk.pages * PAGE);
                let decoded = self.decoder.for_each(chunk, bytes, self.frontier, |r| {
                    if self.cfg.binning {
                        let b = (r.dst >> self.bin_shift) as usize;
                        let m = self.op.message(r.src, r.weight);
                        staging[b].push(Record { dst: r.dst, lo: m as u32, hi: (m >> 32) as u32 });
                        if staging[b].len() >= self.cfg.staging_records {
                            hand_over(b, &mut staging[b]);
                        }
                    } else if self.op.update_atomic(r.src, r.dst, r.weight) {
                        self.next.set(r.dst as usize);
                    }
                });
                if let Err(c) = decoded {
                    self.abort.store(true, Ordering::Relaxed);
                    let e = c.error(&self.files.files[chunk.file].1, self.decoder);
                    self.failure.lock().expect("failure").get_or_insert(e);
                }
            }
            let _ = self.free[chunk.file].0.send(chunk.buf);
        }
        for (b, items) in staging.iter_mut().enumerate().filter(|(_, s)| !s.is_empty()) {
            hand_over(b, items);
        }
        // The last scatter thread out hands over every partial bin.
        if self.scatter_left.fetch_sub(1, Ordering::AcqRel) == 1 {
            for (b, bin) in self.bins.iter().enumerate() {
                let rest = std::mem::take(&mut *bin.lock().expect("bin"));
                if !rest.is_empty() {
                    let _ = full_tx.send((b, rest));
                }
            }
        }
    }

    /// A gather thread: applies full bins, one thread per bin at a time (updates need
    /// no atomics), and returns them emptied for reuse.
    fn gather(
        &self,
        full_rx: &crossbeam_channel::Receiver<(usize, Vec<Record>)>,
        applying: &[Mutex<()>],
        spare_tx: &crossbeam_channel::Sender<Vec<Record>>,
    ) {
        for (b, mut records) in full_rx.iter() {
            // One gather thread per bin at a time: updates need no atomics.
            let _owner = applying[b].lock().expect("bin");
            for r in &records {
                if self.op.apply(r.dst, (r.hi as u64) << 32 | r.lo as u64) {
                    self.next.set(r.dst as usize);
                }
            }
            records.clear();
            let _ = spare_tx.send(records);
        }
    }
}

/// The kernels' view of the graph on disk: every edge map streams (push form, pages
/// of the frontier's sources), and the all-vertex sum is one binned round.
impl EdgeMapGraph for SsdGraph {
    fn num_vertices(&self) -> usize {
        self.layout.num_vertices()
    }
    fn num_edges(&self) -> u64 {
        self.layout.header.edges
    }
    fn is_directed(&self) -> bool {
        self.layout.header.directed
    }
    fn weight_type(&self) -> WeightType {
        self.layout.weight_type
    }
    fn out_offsets(&self) -> &[u64] {
        &self.layout.out.offsets
    }
    fn csr(&self) -> Option<&Graph> {
        None
    }
    fn edge_map<O: EdgeOp>(&self, edges: Edges, frontier: Frontier, op: &O, _: EdgeMapOptions) -> Result<Frontier, chatty_algo::Error> {
        let Frontier::Dense { bits, .. } = frontier.into_dense() else { unreachable!("into_dense") };
        let next = Bitmap::new(bits.len());
        self.edge_map_pages(edges, &bits, op, &next).map_err(chatty_algo::Error::engine)?;
        let count = next.count();
        Ok(Frontier::Dense { bits: next, count })
    }
    fn sum_in<S, T, R, F, A>(&self, out: &mut [T], _: SumOptions, source: &[S], value: F, finish: A) -> Result<R, chatty_algo::Error>
    where
        S: Sync,
        T: Send,
        R: Send + std::iter::Sum<R>,
        F: Fn(&S, u32) -> f64 + Sync + Copy,
        A: Fn(u32, f64, &mut T) -> R + Sync + Copy,
    {
        let n = self.layout.num_vertices();
        assert!(source.len() == n && out.len() == n, "sum_in: {} sources and {} outputs for {n} vertices", source.len(), out.len());
        let value = |u: u32, w: u32| value(&source[u as usize], w);
        let sums: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0f64.to_bits())).collect();
        let everyone = Bitmap::new(n);
        everyone.fill();
        self.edge_map_pages(Edges::Out, &everyone, &Accumulate { sums: &sums, value }, &Bitmap::new(n))
            .map_err(chatty_algo::Error::engine)?;
        Ok(out.iter_mut().zip(&sums).enumerate().map(|(v, (o, s))| finish(v as u32, f64::from_bits(s.load(Ordering::Relaxed)), o)).sum())
    }
}

/// `sums[dst] += value(src, weight)`: the sender computes the term, the gather
/// thread that owns `dst` adds it (or a CAS loop without binning).
struct Accumulate<'a, F> {
    sums: &'a [AtomicU64],
    value: F,
}

impl<F: Fn(u32, u32) -> f64 + Sync> EdgeOp for Accumulate<'_, F> {
    fn update(&self, src: u32, dst: u32, w: u32) -> bool {
        self.apply(dst, self.message(src, w))
    }
    fn message(&self, src: u32, w: u32) -> u64 {
        (self.value)(src, w).to_bits()
    }
    fn apply(&self, dst: u32, x: u64) -> bool {
        let cell = &self.sums[dst as usize];
        cell.store((f64::from_bits(cell.load(Ordering::Relaxed)) + f64::from_bits(x)).to_bits(), Ordering::Relaxed);
        false
    }
    fn update_atomic(&self, src: u32, dst: u32, w: u32) -> bool {
        let x = (self.value)(src, w);
        let _ = self.sums[dst as usize].fetch_update(Ordering::Relaxed, Ordering::Relaxed, |old| Some((f64::from_bits(old) + x).to_bits()));
        false
    }
}

/// Turns the vertex frontier into each file's runs of local pages (merged up to
/// `merge` pages), and counts the record bytes the frontier needs.
fn page_runs(side: &Side, frontier: &Bitmap, rec: u64, k: usize, merge: usize) -> (Vec<Vec<(u64, usize)>>, u64) {
    let o = &side.offsets;
    let active = frontier.count();
    let total_pages = side.pages(rec);
    let mut runs: Vec<Vec<(u64, usize)>> = vec![Vec::new(); k];
    let mut push = |p: u64| {
        let (file, local) = ((p % k as u64) as usize, p / k as u64);
        match runs[file].last_mut() {
            Some((first, count)) if *first + *count as u64 == local && *count < merge => *count += 1,
            _ => runs[file].push((local, 1)),
        }
    };
    let page_span = |v: usize| (o[v] * rec / PAGE as u64, (o[v + 1] * rec).div_ceil(PAGE as u64));
    let mut needed = 0;
    if active as u64 * 8 < total_pages {
        // Sparse: a sorted list of the pages of the few active vertices.
        let mut pages: Vec<u64> = Vec::new();
        for v in frontier.to_ids() {
            let (a, b) = page_span(v as usize);
            pages.extend(a..b);
            needed += (o[v as usize + 1] - o[v as usize]) * rec;
        }
        pages.sort_unstable();
        pages.dedup();
        pages.into_iter().for_each(&mut push);
    } else {
        // Dense: a page bitmap (walking the frontier in place: listing a dense
        // frontier's ids would cost 4 bytes a vertex).
        let marked = Bitmap::new(total_pages as usize);
        for v in (0..frontier.len()).filter(|&v| frontier.get(v)) {
            let (a, b) = page_span(v);
            (a..b).for_each(|p| marked.set(p as usize));
            needed += (o[v + 1] - o[v]) * rec;
        }
        marked.to_ids().into_iter().for_each(|p| push(p as u64));
    }
    (runs, needed)
}

/// Decodes pages into the records of active sources, verifying each page first.
struct Decoder<'a> {
    side: &'a Side,
    id: u64,
    record_bytes: usize,
    files: u64,
}

/// What a page read from disk got wrong.
enum Corrupt {
    /// The logical page fails its checksum.
    Page(u64),
    /// A record names a vertex that does not exist (a checksum collision or a bug).
    Target(u32),
}

impl Corrupt {
    fn error(self, path: &std::path::Path, decoder: &Decoder<'_>) -> SsdError {
        match self {
            Corrupt::Page(logical) => layout::corrupt_page(path, logical, decoder.side.kind),
            Corrupt::Target(dst) => SsdError::Invalid(format!(
                "{}: corrupt page: an edge to vertex {dst} of {}",
                path.display(),
                decoder.side.offsets.len() - 1
            )),
        }
    }
}

impl Decoder<'_> {
    /// Calls `f` for each record of an active source, after checking each page's
    /// checksum.
    fn for_each(&self, chunk: Chunk, bytes: &[u8], frontier: &Bitmap, mut f: impl FnMut(Edge)) -> Result<(), Corrupt> {
        let offsets = &self.side.offsets;
        let per_page = (PAGE / self.record_bytes) as u64;
        let m = *offsets.last().expect("n + 1 offsets");
        let n = offsets.len() - 1;
        for i in 0..chunk.pages {
            let logical = (chunk.first + i as u64) * self.files + chunk.file as u64;
            let page = &bytes[i * PAGE..(i + 1) * PAGE];
            if self.side.sums.get(logical as usize) != Some(&layout::page_sum(self.id, self.side.kind, logical, page)) {
                return Err(Corrupt::Page(logical));
            }
            let first = logical * per_page;
            let end = (first + per_page).min(m);
            // The vertex whose edges include record `first`.
            let mut v = offsets.partition_point(|&o| o <= first).saturating_sub(1);
            while v < n && offsets[v] < end {
                if frontier.get(v) {
                    for e in offsets[v].max(first)..offsets[v + 1].min(end) {
                        let at = (e - first) as usize * self.record_bytes;
                        let dst = u32::from_le_bytes(page[at..at + 4].try_into().expect("4 bytes"));
                        if dst as usize >= n {
                            return Err(Corrupt::Target(dst));
                        }
                        let weight =
                            if self.record_bytes == 8 { u32::from_le_bytes(page[at + 4..at + 8].try_into().expect("4 bytes")) } else { 1 };
                        f(Edge { src: v as u32, dst, weight });
                    }
                }
                v += 1;
            }
        }
        Ok(())
    }
}
