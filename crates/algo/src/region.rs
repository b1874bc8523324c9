//! What the kernels that run a whole traversal in one parallel region share (GAPBS's
//! `#pragma omp parallel` around the level loop): every pool thread enters once
//! (`rayon::broadcast`) and the threads meet at a barrier (spinning, then sleeping)
//! between levels or rounds, so nothing is forked per level. High-diameter graphs
//! (roads: thousands of levels of a few hundred vertices) make the per-level cost the
//! whole cost.
//!
//! A region needs every thread of the pool at each barrier, so two regions sharing
//! threads would wait on each other for ever (two test threads, or a kernel called
//! from inside a parallel job): one region runs at a time in the process, and a
//! kernel that finds one running runs its region on the calling thread alone.

use std::cell::UnsafeCell;
use std::ops::Range;
use std::sync::atomic::{
    AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering::AcqRel, Ordering::Acquire, Ordering::Relaxed, Ordering::Release,
    Ordering::SeqCst,
};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

/// Vertex lists, one per thread of a region, that every thread reads, each labelled
/// with what it holds (delta-stepping's published buckets, labelled by bucket). A
/// thread rewrites only its own list; the others read a list only while its label says
/// it holds what the round consumes, and its owner leaves such a list alone until the
/// next barrier. Locks would add a contended atomic per list, thread and round to
/// rounds of a few microseconds.
pub(crate) struct Shares(Vec<Line<Share>>);

struct Share {
    label: AtomicUsize,
    list: UnsafeCell<Vec<u32>>,
}

// SAFETY: the lists are only reached through `mine` and `list`, whose callers keep
// readers and the owner apart (see their contracts).
unsafe impl Sync for Shares {}

impl Shares {
    /// One list per pool thread, the first holding `first` under `label`, the others
    /// empty under [`Shares::NONE`].
    pub(crate) fn new(first: Vec<u32>, label: usize) -> Shares {
        let share = |list, label| Line(Share { label: AtomicUsize::new(label), list: UnsafeCell::new(list) });
        let mut shares: Vec<_> = (0..rayon::current_num_threads().max(1)).map(|_| share(Vec::new(), Shares::NONE)).collect();
        shares[0] = share(first, label);
        Shares(shares)
    }

    /// The label of a list that holds nothing anyone reads.
    pub(crate) const NONE: usize = usize::MAX;

    /// Number of lists.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// List `t`'s label, as its owner last set it before a barrier.
    pub(crate) fn label(&self, t: usize) -> usize {
        self.0[t].label.load(Relaxed)
    }

    /// Labels the calling member's list.
    pub(crate) fn set_label(&self, member: &Member, label: usize) {
        self.0[member.index()].label.store(label, Relaxed);
    }

    /// The calling member's list, to rewrite.
    ///
    /// # Safety
    /// No other thread reads this list until the next barrier, and only `member` asks for its own.
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn mine(&self, member: &Member) -> &mut Vec<u32> {
        // SAFETY: the caller's contract makes this the only reference to the list.
        unsafe { &mut *self.0[member.index()].list.get() }
    }

    /// List `t`, to read.
    ///
    /// # Safety
    /// Its owner does not rewrite it until the next barrier, and the reference is dropped before it.
    pub(crate) unsafe fn list(&self, t: usize) -> &[u32] {
        // SAFETY: the caller's contract rules out a concurrent `mine`.
        unsafe { &*self.0[t].list.get() }
    }
}

/// Queue positions a thread claims from a level's window at a time.
pub(crate) const CLAIM: usize = 64;
/// Vertices a thread gathers before appending them to the queue.
pub(crate) const FLUSH: usize = 1024;

/// One level's shared counters in a level-synchronous sweep over a queue (BFS's
/// top-down levels, BC's sweeps), on a cache line of its own.
#[derive(Default)]
#[repr(align(128))]
pub(crate) struct LevelSlot {
    /// Next unclaimed offset into the level's window.
    cursor: AtomicUsize,
    /// Vertices the level reached.
    pub(crate) reached: AtomicUsize,
    /// Out-edges plus vertices of the vertices it reached.
    pub(crate) work: AtomicU64,
}

impl LevelSlot {
    /// Zeroes the counters.
    pub(crate) fn clear(&self) {
        self.cursor.store(0, Relaxed);
        self.reached.store(0, Relaxed);
        self.work.store(0, Relaxed);
    }

    /// Adds to the work counted into the next level; zero touches nothing (a shared line).
    #[inline]
    pub(crate) fn add_work(&self, work: u64) {
        if work > 0 {
            self.work.fetch_add(work, Relaxed);
        }
    }

    /// The next run of at most [`CLAIM`] positions of the window `begin..end` not yet
    /// claimed from this slot's cursor, for the calling thread; `None` once none is left.
    #[inline]
    pub(crate) fn claim(&self, begin: usize, end: usize) -> Option<Range<usize>> {
        self.claim_runs(begin, end, CLAIM)
    }

    /// [`LevelSlot::claim`] in runs of `run` positions.
    #[inline]
    pub(crate) fn claim_runs(&self, begin: usize, end: usize, run: usize) -> Option<Range<usize>> {
        let first = begin + self.cursor.fetch_add(run, Relaxed);
        (first < end).then(|| first..(first + run).min(end))
    }
}

/// The three [`LevelSlot`]s a sweep rotates through, so that each is reset a round
/// before it is used again and no thread waits for a reset.
#[derive(Default)]
pub(crate) struct LevelSlots([LevelSlot; 3]);

impl LevelSlots {
    /// Round `round`'s slots, every member calling it between the same two barriers:
    /// it claims from the first and counts the next level into the second. Thread 0
    /// clears the slot two rounds ahead, which every thread finished with before the
    /// last barrier.
    pub(crate) fn round(&self, round: usize, member: &Member) -> (&LevelSlot, &LevelSlot) {
        if member.index() == 0 {
            self.0[(round + 2) % 3].clear();
        }
        (&self.0[round % 3], &self.0[(round + 1) % 3])
    }
}

/// Appends `found` at `queue`'s `tail`, counts it into `slot` (the level it belongs
/// to), and empties it. Nothing to append touches neither counter: on a deep graph
/// most threads find nothing in most levels, and the counters are shared lines.
#[inline(always)]
pub(crate) fn append(queue: &[AtomicU32], tail: &AtomicUsize, found: &mut Vec<u32>, slot: &LevelSlot) {
    if found.is_empty() {
        return;
    }
    let at = tail.fetch_add(found.len(), Relaxed);
    for (q, &v) in queue[at..at + found.len()].iter().zip(found.iter()) {
        q.store(v, Relaxed);
    }
    slot.reached.fetch_add(found.len(), Relaxed);
    found.clear();
}

/// Moves `cell` from `old`, which the caller has just read there, to `new`, and says
/// whether this call did: a compare-and-swap, or a plain store where the caller is the
/// only thread writing (`ALONE`; the CAS cost one-thread BFS 10% on roads).
#[inline(always)]
pub(crate) fn exchange<const ALONE: bool>(cell: &AtomicU32, old: u32, new: u32) -> bool {
    match ALONE {
        true => {
            cell.store(new, Relaxed);
            true
        }
        false => cell.compare_exchange(old, new, Relaxed, Relaxed).is_ok(),
    }
}

/// Moves `cell` from `unseen` to `value` and says whether this call did, so that the
/// first thread to reach a vertex claims it ([`exchange`]).
#[inline(always)]
pub(crate) fn claim_first<const ALONE: bool>(cell: &AtomicU32, unseen: u32, value: u32) -> bool {
    cell.load(Relaxed) == unseen && exchange::<ALONE>(cell, unseen, value)
}

/// Set while a region holds the pool's threads.
static RUNNING: AtomicBool = AtomicBool::new(false);

/// One thread's view of a region.
pub(crate) struct Member<'a> {
    index: usize,
    barrier: &'a Barrier,
}

impl Member<'_> {
    /// This thread's index, 0 for one of them.
    pub(crate) fn index(&self) -> usize {
        self.index
    }

    /// Number of threads in the region.
    pub(crate) fn threads(&self) -> usize {
        self.barrier.threads
    }

    /// This thread's equal share of the positions `begin..end`, for work that costs
    /// the same per position and is not worth a shared cursor.
    pub(crate) fn share(&self, begin: usize, end: usize) -> Range<usize> {
        let (len, threads) = (end - begin, self.barrier.threads);
        begin + len * self.index / threads..begin + len * (self.index + 1) / threads
    }

    /// Returns once every thread of the region has called it.
    pub(crate) fn wait(&self) {
        self.barrier.wait();
    }
}

/// Runs `op` on every thread of the current pool at once, or on the calling thread
/// alone while another region runs; returns what each thread returned, thread 0's first.
pub(crate) fn run<R: Send>(op: impl Fn(&Member) -> R + Sync) -> Vec<R> {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            RUNNING.store(false, Release);
        }
    }
    if RUNNING.compare_exchange(false, true, Acquire, Relaxed).is_err() {
        return vec![op(&Member { index: 0, barrier: &Barrier::new(1) })];
    }
    let _leave = Leave;
    let barrier = Barrier::new(rayon::current_num_threads());
    rayon::broadcast(|ctx| op(&Member { index: ctx.index(), barrier: &barrier }))
}

/// A value alone on its cache line (and the adjacent-line prefetcher's pair): the
/// waiters spin on `generation` without the arrivals' writes invalidating it.
#[repr(align(128))]
struct Line<T>(T);

impl<T> std::ops::Deref for Line<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// A barrier for the threads of one parallel region that spins, then sleeps. A round
/// of delta-stepping on a road graph is a few microseconds and waking a thread costs
/// as much, so a waiter first spins (a 16-thread barrier: 1.2 µs spinning on the
/// 16-core host, 3-4 µs yielding after 2^12 spins). How long it spins adapts, as an
/// OpenMP runtime's spin-then-block waits do: a wait that outlasts the [`PATIENCE`]
/// halves it, one that ends within it doubles it. On a busy machine, where another
/// process holds the core that a late arrival needs, spinning only burns the waiter's
/// share of its own core and keeps it from being woken first (a road BFS on the busy
/// 2-core VM took 3.2 s spinning against 0.1 s idle). With more threads than cores, or
/// under `CHATTY_WAIT_POLICY=passive`, nothing spins ([`crate::pool::may_spin`]).
struct Barrier {
    threads: usize,
    spins: bool,
    arrived: Line<AtomicUsize>,
    generation: Line<AtomicUsize>,
    /// Waiters asleep on `woken`, or about to be.
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    woken: Condvar,
}

/// How long a waiter at a [`Barrier`] spins before it sleeps, in nanoseconds, for the
/// whole process: how busy the machine is holds for every region.
static PATIENCE: Line<AtomicU64> = Line(AtomicU64::new(MOST_PATIENCE));
const MOST_PATIENCE: u64 = 1_000_000;
const LEAST_PATIENCE: u64 = 1_000;

impl Barrier {
    fn new(threads: usize) -> Barrier {
        Barrier {
            threads,
            spins: crate::pool::may_spin(threads),
            arrived: Line(AtomicUsize::new(0)),
            generation: Line(AtomicUsize::new(0)),
            sleepers: AtomicUsize::new(0),
            lock: Mutex::new(()),
            woken: Condvar::new(),
        }
    }

    fn wait(&self) {
        let generation = self.generation.load(Acquire);
        if self.arrived.fetch_add(1, AcqRel) + 1 == self.threads {
            self.arrived.store(0, Relaxed);
            // SeqCst with the sleepers' count: a waiter that counted itself after
            // this load sees the new generation before it sleeps.
            self.generation.fetch_add(1, SeqCst);
            if self.sleepers.load(SeqCst) > 0 {
                let _held = self.lock.lock().unwrap_or_else(|e| e.into_inner());
                self.woken.notify_all();
            }
            return;
        }
        if self.spins && self.spin(generation) {
            return;
        }
        self.sleepers.fetch_add(1, SeqCst);
        let mut held = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        while self.generation.load(SeqCst) == generation {
            held = self.woken.wait(held).unwrap_or_else(|e| e.into_inner());
        }
        drop(held);
        self.sleepers.fetch_sub(1, SeqCst);
    }

    /// Spins until the generation moves on from `generation` (true) or the patience
    /// runs out (false), and adapts the patience to which came first.
    fn spin(&self, generation: usize) -> bool {
        let patience = PATIENCE.load(Relaxed);
        let start = Instant::now();
        loop {
            for _ in 0..64 {
                if self.generation.load(Acquire) != generation {
                    // Stored only on a change: at rest every wait ends within the
                    // most patience, and the threads share this line.
                    if patience < MOST_PATIENCE {
                        PATIENCE.store((patience * 2).min(MOST_PATIENCE), Relaxed);
                    }
                    return true;
                }
                std::hint::spin_loop();
            }
            if start.elapsed().as_nanos() as u64 > patience {
                PATIENCE.store((patience / 2).max(LEAST_PATIENCE), Relaxed);
                return false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use rayon::prelude::*;

    #[test]
    fn regions_started_together_on_one_pool_all_finish() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        let members: Vec<usize> = pool.install(|| {
            (0..16)
                .into_par_iter()
                .map(|_| {
                    let indices = super::run(|member| {
                        (0..100).for_each(|_| member.wait());
                        member.index()
                    });
                    assert_eq!(indices[0], 0);
                    indices.len()
                })
                .collect()
        });
        // Each region had every thread or the caller alone.
        assert!(members.iter().all(|&m| m == 4 || m == 1), "{members:?}");
    }

    #[test]
    fn waiters_that_outlast_their_patience_sleep_and_none_passes_early() {
        let mut barrier = super::Barrier::new(3);
        barrier.spins = true;
        let arrivals = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            for t in 0..3 {
                let (barrier, arrivals) = (&barrier, &arrivals);
                s.spawn(move || {
                    for round in 0..20 {
                        // One late arrival in two rounds, longer than the most patience.
                        if t == round % 3 && round % 2 == 0 {
                            std::thread::sleep(std::time::Duration::from_millis(3));
                        }
                        arrivals.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        barrier.wait();
                        assert!(arrivals.load(std::sync::atomic::Ordering::SeqCst) >= 3 * (round + 1), "passed round {round} early");
                    }
                });
            }
        });
        assert_eq!(arrivals.into_inner(), 60);
    }
}
