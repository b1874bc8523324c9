//! Device-initiated messaging in the manner of GMPI (design.md §1.3): GPU threads post
//! `send`/`recv` requests into a ring in host-mapped memory (`ring`), a host proxy
//! thread per GPU takes them out, matches sends with receives as MPI point-to-point
//! does, moves the bytes, and reports completion through records the GPU polls.
//!
//! Matching semantics (MPI's): a send to rank d with tag t matches the earliest posted
//! receive on d whose source is the sender or [`ANY_SOURCE`] and whose tag is t or
//! [`ANY_TAG`]; a receive matches the earliest posted send likewise. Messages from one
//! sender that both match a receive are matched in the order they were posted (no
//! overtaking). A receive buffer smaller than the message fails both with
//! [`Status::Truncated`]; an operation unmatched for the timeout fails with
//! [`Status::TimedOut`]; one whose peer's proxy stopped fails with
//! [`Status::PeerGone`]. Nothing waits forever.
//!
//! Sends of at most [`INLINE_BYTES`] are eager: their bytes travel in the request
//! slot, so they are complete once posted and no completion is written for them
//! (their failures show only at the receiver, as with MPI's eager protocol).
//!
//! This module is the host side and the protocol; the device side is
//! `crates/gpu/src/kernels/gmpi.cuh`, whose structures mirror [`ring::Slot`].

pub mod ring;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use ring::{HeapRegion, Kind, Layout, Record, Region, Request, Ring, INLINE_BYTES, NUMBERS, RECORD_BYTES};

/// A receive from any sender.
pub const ANY_SOURCE: u32 = u32::MAX;
/// A receive of any tag.
pub const ANY_TAG: u32 = u32::MAX;

/// A request's completion, as its record holds it (`GMPI_*` in gmpi.cuh).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Status {
    Pending = 0,
    Done = 1,
    TimedOut = 2,
    Truncated = 3,
    PeerGone = 4,
}

/// A receive's status when its message (at most [`INLINE_BYTES`]) waits in its
/// completion record for the GPU thread to copy (`GMPI_DONE_INLINE`).
const DONE_INLINE: u32 = 5;

/// Requests a proxy takes from its ring before matching them under one lock.
const BATCH: usize = 64;

impl Status {
    /// A completion record's status (`GMPI_*` in gmpi.cuh).
    pub fn from_code(v: u32) -> Status {
        match v {
            1 | DONE_INLINE => Status::Done,
            2 => Status::TimedOut,
            3 => Status::Truncated,
            4 => Status::PeerGone,
            _ => Status::Pending,
        }
    }
}

/// A request waiting for its match.
#[derive(Clone, Copy, Debug)]
pub struct Posted {
    /// The rank that posted it.
    pub rank: u32,
    pub request: Request,
    pub since: Instant,
}

/// The two halves of a message.
#[derive(Clone, Copy, Debug)]
pub struct Matched {
    pub send: Posted,
    pub recv: Posted,
}

/// Posted sends and receives of every rank, in posting order.
#[derive(Default)]
pub struct Matcher {
    sends: VecDeque<Posted>,
    recvs: VecDeque<Posted>,
}

fn matches(send: &Posted, recv: &Posted) -> bool {
    send.request.peer == recv.rank
        && (recv.request.peer == ANY_SOURCE || recv.request.peer == send.rank)
        && (recv.request.tag == ANY_TAG || recv.request.tag == send.request.tag)
}

impl Matcher {
    /// Posts `p`; returns its match if one was waiting.
    pub fn post(&mut self, p: Posted) -> Option<Matched> {
        let (mine, theirs) = match p.request.kind {
            Kind::Send => (&mut self.sends, &mut self.recvs),
            Kind::Recv => (&mut self.recvs, &mut self.sends),
        };
        let found = theirs.iter().position(|q| if p.request.kind == Kind::Send { matches(&p, q) } else { matches(q, &p) });
        match found {
            Some(i) => {
                let q = theirs.remove(i).expect("found");
                Some(if p.request.kind == Kind::Send { Matched { send: p, recv: q } } else { Matched { send: q, recv: p } })
            }
            None => {
                mine.push_back(p);
                None
            }
        }
    }

    /// Removes and returns what `fail` selects.
    fn drain(&mut self, fail: impl Fn(&Posted) -> bool) -> Vec<Posted> {
        let mut out = Vec::new();
        for q in [&mut self.sends, &mut self.recvs] {
            let (gone, keep): (Vec<Posted>, Vec<Posted>) = q.drain(..).partition(&fail);
            *q = keep.into();
            out.extend(gone);
        }
        out
    }

    /// Operations still waiting.
    pub fn waiting(&self) -> usize {
        self.sends.len() + self.recvs.len()
    }
}

/// Moves a matched message's bytes: `bytes` from `src_addr` on rank `src` to
/// `dst_addr` on rank `dst` (peer copies between GPUs; plain copies in host memory).
pub trait Copier: Sync {
    fn copy(&self, src: u32, src_addr: u64, dst: u32, dst_addr: u64, bytes: u64) -> Result<(), String>;
    /// Writes a small message's bytes at `dst_addr` of rank `dst` from the host, if that
    /// memory is host-visible; false leaves it to the receiving GPU thread.
    fn write_host(&self, dst: u32, dst_addr: u64, data: &[u8]) -> bool;
}

/// What the proxies of all ranks share: the matcher, each rank's ring and completion
/// records (both in the rank's [`Region`]), and which proxies are running.
pub struct Hub {
    matcher: Mutex<Matcher>,
    rings: Vec<Arc<Ring>>,
    layout: Layout,
    alive: Vec<AtomicBool>,
    timeout: Duration,
}

/// What one proxy did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProxyStats {
    pub requests: u64,
    pub messages: u64,
    pub bytes: u64,
    pub failed: u64,
}

impl Hub {
    /// `ranks` ranks, each with a ring of `ring_slots` and `requests` completion records;
    /// an operation unmatched for `timeout` fails.
    pub fn new(ranks: usize, ring_slots: usize, requests: usize, timeout: Duration) -> Hub {
        let layout = Layout::new(ring_slots, requests);
        let regions = (0..ranks).map(|_| Arc::new(HeapRegion::new(layout.bytes())) as Arc<dyn Region>).collect();
        Hub::with_regions(layout, regions, timeout)
    }

    /// One rank per region (zeroed, at least `layout.bytes()`), laid out by `layout`.
    pub fn with_regions(layout: Layout, regions: Vec<Arc<dyn Region>>, timeout: Duration) -> Hub {
        Hub {
            matcher: Mutex::new(Matcher::default()),
            alive: regions.iter().map(|_| AtomicBool::new(true)).collect(),
            rings: regions.into_iter().map(|r| Arc::new(Ring::in_region(r, layout))).collect(),
            layout,
            timeout,
        }
    }

    /// How each rank's region is laid out.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    fn record(&self, rank: u32, number: u32) -> Option<&Record> {
        let ring = self.rings.get(rank as usize)?;
        // SAFETY: in the ring's region (Ring::in_region checked its size), 64-byte aligned.
        Some(unsafe { &*(ring.region().base().add(self.layout.records_offset() + 64 * self.layout.record(number)) as *const Record) })
    }

    pub fn ring(&self, rank: u32) -> &Arc<Ring> {
        &self.rings[rank as usize]
    }

    /// The completion of request `number` of `rank`.
    pub fn status(&self, rank: u32, number: u32) -> Status {
        let Some(r) = self.record(rank, number) else { return Status::Pending };
        let w = r.0[0].load(Ordering::Acquire);
        if (w >> 32) as u32 != self.layout.lap(number) {
            return Status::Pending;
        }
        Status::from_code(w as u32 & 0xffff)
    }

    /// Writes `p`'s completion record: a small message's bytes (`inline`), then the
    /// status word. Every word carries the request's lap (see [`Record`]).
    fn complete(&self, p: &Posted, status: u32, inline: &[u8]) {
        // An eager send completed when it was posted; its record may be in use again.
        if p.request.kind == Kind::Send && p.request.inline.is_some() {
            return;
        }
        let Some(r) = self.record(p.rank, p.request.request) else { return };
        let lap = (self.layout.lap(p.request.request) as u64) << 32;
        for (i, chunk) in inline.chunks(4).take(RECORD_BYTES / 4).enumerate() {
            let mut v = [0u8; 4];
            v[..chunk.len()].copy_from_slice(chunk);
            r.0[1 + i].store(lap | u32::from_le_bytes(v) as u64, Ordering::Relaxed);
        }
        r.0[0].store(lap | (inline.len() as u64) << 16 | status as u64, Ordering::Release);
    }

    /// The proxy of `rank`: serves its ring until `stop`, then marks the rank gone
    /// and fails every operation waiting for it. Requests are taken in batches and
    /// matched under one lock; bytes move outside it.
    pub fn serve(&self, rank: u32, copier: &dyn Copier, stop: &AtomicBool) -> ProxyStats {
        let mut stats = ProxyStats::default();
        let ring = &self.rings[rank as usize];
        let mut last_sweep = Instant::now();
        let mut idle = ring::Idle::default();
        let (mut batch, mut matched, mut gone) = (Vec::with_capacity(BATCH), Vec::new(), Vec::new());
        while !stop.load(Ordering::Relaxed) {
            while batch.len() < BATCH {
                match ring.poll() {
                    Some(r) => batch.push(r),
                    None => break,
                }
            }
            if batch.is_empty() {
                if last_sweep.elapsed() > self.timeout / 8 {
                    stats.failed += self.sweep(rank);
                    last_sweep = Instant::now();
                }
                idle.wait();
                continue;
            }
            idle = ring::Idle::default();
            stats.requests += batch.len() as u64;
            let since = Instant::now();
            {
                let mut matcher = self.matcher.lock().expect("matcher");
                for request in batch.drain(..) {
                    let posted = Posted { rank, request, since };
                    let peer = request.peer;
                    if peer != ANY_SOURCE && self.alive.get(peer as usize).is_none_or(|a| !a.load(Ordering::Acquire)) {
                        gone.push(posted);
                    } else if let Some(m) = matcher.post(posted) {
                        matched.push(m);
                    }
                }
            }
            for p in gone.drain(..) {
                self.complete(&p, Status::PeerGone as u32, &[]);
                stats.failed += 1;
            }
            for m in matched.drain(..) {
                let bytes = m.send.request.bytes;
                // A small message goes straight into host memory, or waits in the
                // receiver's completion record for its GPU thread to copy.
                let (status, staged) = if m.recv.request.bytes < bytes {
                    (Status::Truncated as u32, &[][..])
                } else if let Some(data) = &m.send.request.inline {
                    let data = &data[..bytes as usize];
                    if copier.write_host(m.recv.rank, m.recv.request.addr, data) {
                        (Status::Done as u32, &[][..])
                    } else {
                        (DONE_INLINE, data)
                    }
                } else {
                    match copier.copy(m.send.rank, m.send.request.addr, m.recv.rank, m.recv.request.addr, bytes) {
                        Ok(()) => (Status::Done as u32, &[][..]),
                        Err(_) => (Status::PeerGone as u32, &[][..]),
                    }
                };
                let send_status = if status == DONE_INLINE { Status::Done as u32 } else { status };
                if send_status == Status::Done as u32 {
                    stats.messages += 1;
                    stats.bytes += bytes;
                } else {
                    stats.failed += 2;
                }
                self.complete(&m.send, send_status, &[]);
                self.complete(&m.recv, status, staged);
            }
        }
        self.alive[rank as usize].store(false, Ordering::Release);
        let orphans = self.matcher.lock().expect("matcher").drain(|p| p.rank == rank || p.request.peer == rank);
        for p in &orphans {
            self.complete(p, Status::PeerGone as u32, &[]);
        }
        stats.failed += orphans.len() as u64;
        stats
    }

    /// Fails this rank's operations that waited longer than the timeout.
    fn sweep(&self, rank: u32) -> u64 {
        let timeout = self.timeout;
        let expired = self.matcher.lock().expect("matcher").drain(|p| p.rank == rank && p.since.elapsed() > timeout);
        for p in &expired {
            self.complete(p, Status::TimedOut as u32, &[]);
        }
        expired.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ranks' memory as plain byte arrays; addresses are offsets.
    struct HostMemory(Vec<Mutex<Vec<u8>>>);

    impl Copier for HostMemory {
        fn copy(&self, src: u32, src_addr: u64, dst: u32, dst_addr: u64, bytes: u64) -> Result<(), String> {
            let data = self.0[src as usize].lock().unwrap()[src_addr as usize..(src_addr + bytes) as usize].to_vec();
            self.0[dst as usize].lock().unwrap()[dst_addr as usize..(dst_addr + bytes) as usize].copy_from_slice(&data);
            Ok(())
        }

        fn write_host(&self, dst: u32, dst_addr: u64, data: &[u8]) -> bool {
            self.0[dst as usize].lock().unwrap()[dst_addr as usize..dst_addr as usize + data.len()].copy_from_slice(data);
            true
        }
    }

    fn req(kind: Kind, peer: u32, tag: u32, request: u32, bytes: u64, addr: u64) -> Request {
        Request { kind, peer, tag, request, bytes, addr, inline: None }
    }

    fn posted(rank: u32, r: Request) -> Posted {
        Posted { rank, request: r, since: Instant::now() }
    }

    #[test]
    fn matching_follows_tags_wildcards_and_posting_order() {
        let mut m = Matcher::default();
        // Rank 0 sends tags 7, 7, 9 to rank 1 before any receive is posted.
        for (i, tag) in [7, 7, 9].into_iter().enumerate() {
            assert!(m.post(posted(0, req(Kind::Send, 1, tag, i as u32, 4, 0))).is_none());
        }
        // A receive of tag 9 overtakes the 7s (different tag); the 7s match in order.
        assert_eq!(m.post(posted(1, req(Kind::Recv, 0, 9, 10, 4, 0))).unwrap().send.request.request, 2);
        assert_eq!(m.post(posted(1, req(Kind::Recv, ANY_SOURCE, 7, 11, 4, 0))).unwrap().send.request.request, 0);
        assert_eq!(m.post(posted(1, req(Kind::Recv, 0, ANY_TAG, 12, 4, 0))).unwrap().send.request.request, 1);
        // A receive from rank 2 does not take rank 0's message.
        assert!(m.post(posted(1, req(Kind::Recv, 2, 7, 13, 4, 0))).is_none());
        assert!(m.post(posted(0, req(Kind::Send, 1, 7, 3, 4, 0))).is_none());
        let hit = m.post(posted(2, req(Kind::Send, 1, 7, 0, 4, 0))).unwrap();
        assert_eq!((hit.recv.request.request, hit.send.rank), (13, 2));
        assert_eq!(m.waiting(), 1);
    }

    fn hub_with_proxies(ranks: usize, timeout: Duration, memory: &HostMemory, run: impl FnOnce(&Hub)) -> Vec<ProxyStats> {
        let hub = Hub::new(ranks, 4, 64, timeout);
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            let proxies: Vec<_> = (0..ranks as u32)
                .map(|r| {
                    s.spawn({
                        let (hub, stop) = (&hub, &stop);
                        move || hub.serve(r, memory, stop)
                    })
                })
                .collect();
            run(&hub);
            stop.store(true, Ordering::SeqCst);
            proxies.into_iter().map(|p| p.join().unwrap()).collect()
        })
    }

    fn wait(hub: &Hub, rank: u32, request: u32) -> Status {
        let start = Instant::now();
        loop {
            let s = hub.status(rank, request);
            if s != Status::Pending {
                return s;
            }
            assert!(start.elapsed() < Duration::from_secs(10), "request {request} of rank {rank} never completed");
            std::thread::yield_now();
        }
    }

    /// Many messages through rings of 4 slots: the bytes arrive, in order per tag.
    #[test]
    fn messages_arrive_through_small_rings() {
        let memory = HostMemory((0..2).map(|r| Mutex::new((0..4096u32).map(|i| (i as u8).wrapping_mul(r + 1)).collect())).collect());
        let stats = hub_with_proxies(2, Duration::from_secs(30), &memory, |hub| {
            // 160 request numbers through 64 completion records: three laps.
            for round in 0..160u32 {
                let at = 16 * (round % 40) as u64;
                // Rank 1 receives 16 bytes at 2048 + 16·(round % 40); rank 0 sends from 16·(round % 40).
                assert!(hub.ring(1).push(req(Kind::Recv, 0, round, round, 16, 2048 + at), &|| false));
                assert!(hub.ring(0).push(req(Kind::Send, 1, round, round, 16, at), &|| false));
                assert_eq!(wait(hub, 0, round), Status::Done);
                assert_eq!(wait(hub, 1, round), Status::Done);
                // The same record's next use is not complete: its lap differs.
                assert_eq!(hub.status(1, round + 64), Status::Pending);
            }
        });
        let sent = memory.0[0].lock().unwrap()[..640].to_vec();
        assert_eq!(&memory.0[1].lock().unwrap()[2048..2048 + 640], &sent[..]);
        assert_eq!(stats.iter().map(|s| s.messages).sum::<u64>(), 160);
        assert_eq!(stats.iter().map(|s| s.bytes).sum::<u64>(), 2560);
    }

    #[test]
    fn unmatched_short_and_orphaned_operations_fail_instead_of_hanging() {
        let memory = HostMemory((0..3).map(|_| Mutex::new(vec![0u8; 64])).collect());
        hub_with_proxies(3, Duration::from_millis(50), &memory, |hub| {
            // Never matched: times out.
            assert!(hub.ring(0).push(req(Kind::Recv, 1, 5, 0, 8, 0), &|| false));
            assert_eq!(wait(hub, 0, 0), Status::TimedOut);
            // A receive buffer smaller than the message.
            assert!(hub.ring(1).push(req(Kind::Recv, 0, 6, 1, 4, 0), &|| false));
            assert!(hub.ring(0).push(req(Kind::Send, 1, 6, 1, 8, 0), &|| false));
            assert_eq!((wait(hub, 0, 1), wait(hub, 1, 1)), (Status::Truncated, Status::Truncated));
            // To a rank that does not exist.
            assert!(hub.ring(2).push(req(Kind::Send, 9, 1, 2, 8, 0), &|| false));
            assert_eq!(wait(hub, 2, 2), Status::PeerGone);
        });
        // Proxies that stop fail what waits for them.
        let hub = Hub::new(2, 4, 8, Duration::from_secs(60));
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            let p0 = s.spawn(|| hub.serve(0, &memory, &stop));
            assert!(hub.ring(0).push(req(Kind::Recv, 1, 1, 3, 8, 0), &|| false));
            while hub.matcher.lock().unwrap().waiting() == 0 {
                std::thread::yield_now();
            }
            stop.store(true, Ordering::SeqCst);
            p0.join().unwrap();
        });
        assert_eq!(hub.status(0, 3), Status::PeerGone);
    }

    /// A device-memory destination: small messages wait in the completion record.
    struct NoHostAccess;

    impl Copier for NoHostAccess {
        fn copy(&self, _: u32, _: u64, _: u32, _: u64, _: u64) -> Result<(), String> {
            Err("small messages must not reach the copier".into())
        }
        fn write_host(&self, _: u32, _: u64, _: &[u8]) -> bool {
            false
        }
    }

    #[test]
    fn small_messages_travel_in_the_slot_and_wait_in_the_completion_data() {
        let hub = Hub::new(2, 4, 8, Duration::from_secs(30));
        let stop = AtomicBool::new(false);
        let mut payload = [0u8; INLINE_BYTES];
        payload[..5].copy_from_slice(b"hello");
        std::thread::scope(|s| {
            let proxy = s.spawn(|| hub.serve(0, &NoHostAccess, &stop));
            assert!(hub.ring(0).push(req(Kind::Recv, 0, 3, 6, 16, 0), &|| false));
            assert!(hub.ring(0).push(Request { inline: Some(payload), ..req(Kind::Send, 0, 3, 7, 5, 0) }, &|| false));
            assert_eq!(wait(&hub, 0, 6), Status::Done);
            // The eager send completed when posted: its record is never written.
            assert_eq!(hub.status(0, 7), Status::Pending);
            stop.store(true, Ordering::SeqCst);
            proxy.join().unwrap();
        });
        let record = hub.record(0, 6).unwrap();
        let words: Vec<u64> = record.0.iter().map(|w| w.load(Ordering::Acquire)).collect();
        let lap = hub.layout().lap(6) as u64;
        assert!(words[..3].iter().all(|w| w >> 32 == lap), "every word written carries the lap: {words:x?}");
        let (status, len) = (words[0] as u32 & 0xffff, words[0] as u32 >> 16 & 0xffff);
        let data: Vec<u8> = words[1..3].iter().flat_map(|w| (*w as u32).to_le_bytes()).take(5).collect();
        assert_eq!((&data[..], status, len), (&b"hello"[..], DONE_INLINE, 5));
    }
}
