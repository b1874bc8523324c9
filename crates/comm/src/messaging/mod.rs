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
//! Ranks may live in several processes ([`Hub::spanning`]): a send to a rank of
//! another process is read out of the sender's buffer at once and forwarded through
//! the job's [`ProcessLink`] with its envelope (eager, whatever its size: the send is
//! complete once its bytes are on the link), and matched on the receiving side by the
//! same rules; messages between two processes keep their order on the link, so
//! no overtaking holds across processes too. A receive there that fails (truncated,
//! unmatched) fails only at the receiver, as with an eager send.
//!
//! This module is the host side and the protocol; the device side is
//! `crates/gpu/src/kernels/gmpi.cuh`, whose structures mirror [`ring::Slot`].

pub mod ring;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::group::ProcessLink;

pub use ring::{HeapRegion, Kind, Layout, Record, Region, Request, Ring, INLINE_BYTES, NUMBERS, RECORD_BYTES};

/// A receive from any sender.
pub const ANY_SOURCE: u32 = u32::MAX;
/// A receive of any tag.
pub const ANY_TAG: u32 = u32::MAX;

/// A request's completion, as its record holds it (`GMPI_*` in gmpi.cuh).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Status {
    /// Not complete yet.
    Pending = 0,
    /// Complete.
    Done = 1,
    /// No match within the timeout, or the proxy stopped answering.
    TimedOut = 2,
    /// The message was larger than the receive buffer.
    Truncated = 3,
    /// The peer's proxy is gone.
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
#[derive(Clone, Debug)]
pub struct Posted {
    /// The rank that posted it.
    pub rank: u32,
    /// The request.
    pub request: Request,
    /// When the proxy took it from the ring.
    pub since: Instant,
    /// A send from another process: the message as it came off the link, its
    /// bytes after the envelope ([`ENVELOPE_BYTES`]).
    pub payload: Option<Vec<u8>>,
}

/// The two halves of a message.
#[derive(Clone, Debug)]
pub struct Matched {
    /// The send.
    pub send: Posted,
    /// The receive it matched.
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
    /// Copies `bytes` from `src_addr` on rank `src` to `dst_addr` on rank `dst`, waiting for the copy.
    fn copy(&self, src: u32, src_addr: u64, dst: u32, dst_addr: u64, bytes: u64) -> Result<(), String>;
    /// Writes a small message's bytes at `dst_addr` of rank `dst` from the host, if that
    /// memory is host-visible; false leaves it to the receiving GPU thread.
    fn write_host(&self, dst: u32, dst_addr: u64, data: &[u8]) -> bool;
    /// Reads `into.len()` bytes at `src_addr` of rank `src` into host memory (a send
    /// to another process).
    fn read(&self, src: u32, src_addr: u64, into: &mut [u8]) -> Result<(), String>;
    /// Writes `data` at `dst_addr` of rank `dst` (a message from another process).
    fn write(&self, dst: u32, dst_addr: u64, data: &[u8]) -> Result<(), String>;
}

/// Ranks whose memory is one byte array each, addressed by offset: host ranks with
/// no GPU behind them (the messaging tests' ranks, in one process or several).
pub struct HostMemory(pub Vec<Mutex<Vec<u8>>>);

impl Copier for HostMemory {
    fn copy(&self, src: u32, src_addr: u64, dst: u32, dst_addr: u64, bytes: u64) -> Result<(), String> {
        let mut data = vec![0; bytes as usize];
        self.read(src, src_addr, &mut data)?;
        self.write(dst, dst_addr, &data)
    }

    fn write_host(&self, dst: u32, dst_addr: u64, data: &[u8]) -> bool {
        self.write(dst, dst_addr, data).is_ok()
    }

    fn read(&self, src: u32, src_addr: u64, into: &mut [u8]) -> Result<(), String> {
        let memory = self.0.get(src as usize).ok_or_else(|| format!("no rank {src}"))?.lock().expect("a rank's memory");
        let from = memory.get(src_addr as usize..src_addr as usize + into.len()).ok_or("a read past the rank's memory")?;
        into.copy_from_slice(from);
        Ok(())
    }

    fn write(&self, dst: u32, dst_addr: u64, data: &[u8]) -> Result<(), String> {
        let mut memory = self.0.get(dst as usize).ok_or_else(|| format!("no rank {dst}"))?.lock().expect("a rank's memory");
        let to = memory.get_mut(dst_addr as usize..dst_addr as usize + data.len()).ok_or("a write past the rank's memory")?;
        to.copy_from_slice(data);
        Ok(())
    }
}

/// The ranks of a job that other processes serve: which process serves each rank,
/// and the link their messages travel through.
struct Remote {
    owner: Vec<usize>,
    link: Arc<dyn ProcessLink>,
    /// Held by the proxy taking messages off the link, so they are matched in the
    /// order they arrived.
    receiving: Mutex<()>,
}

/// A forwarded send's envelope: sender, receiver, tag, and the byte count (the bytes
/// follow, so a message is read into and delivered from one buffer, never copied).
pub const ENVELOPE_BYTES: usize = 24;

/// A message to forward `send` in: its envelope, then room for its bytes.
fn enveloped(send: &Posted) -> Vec<u8> {
    let mut m = vec![0u8; ENVELOPE_BYTES + send.request.bytes as usize];
    let r = &send.request;
    let words = [send.rank, r.peer, r.tag, 0].map(u32::to_le_bytes);
    m[..16].copy_from_slice(words.as_flattened());
    m[16..ENVELOPE_BYTES].copy_from_slice(&r.bytes.to_le_bytes());
    m
}

/// A forwarded send as the receiving side posts it; `None` for a malformed message.
fn opened(m: Vec<u8>) -> Option<Posted> {
    if m.len() < ENVELOPE_BYTES {
        return None;
    }
    let word = |i: usize| u32::from_le_bytes(m[4 * i..4 * i + 4].try_into().expect("4 bytes"));
    let (rank, peer, tag) = (word(0), word(1), word(2));
    let bytes = u64::from_le_bytes(m[16..24].try_into().expect("8 bytes"));
    if bytes != (m.len() - ENVELOPE_BYTES) as u64 {
        return None;
    }
    let request = Request { kind: Kind::Send, peer, tag, request: 0, bytes, addr: 0, inline: None };
    Some(Posted { rank, request, since: Instant::now(), payload: Some(m) })
}

/// What the proxies of this process's ranks share: the matcher, each rank's ring and
/// completion records (both in the rank's [`Region`]), which proxies are running, and
/// the link to the ranks of other processes when the job spans several.
pub struct Hub {
    matcher: Mutex<Matcher>,
    /// This process's ranks, `first..first + rings.len()`.
    rings: Vec<Arc<Ring>>,
    first: u32,
    layout: Layout,
    alive: Vec<AtomicBool>,
    timeout: Duration,
    remote: Option<Remote>,
}

/// What one proxy did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProxyStats {
    /// Requests taken from the ring.
    pub requests: u64,
    /// Messages delivered to a receive (from this process or another).
    pub messages: u64,
    /// Bytes delivered.
    pub bytes: u64,
    /// Sends forwarded to another process.
    pub forwarded: u64,
    /// Requests that ended in an error status.
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
            first: 0,
            layout,
            timeout,
            remote: None,
        }
    }

    /// This process's ranks of a job that spans processes: ranks `first..` (one per
    /// region) of the job whose rank r is served by process `owner[r]`, the others
    /// reached through `link`.
    pub fn spanning(
        layout: Layout,
        regions: Vec<Arc<dyn Region>>,
        timeout: Duration,
        first: u32,
        owner: Vec<usize>,
        link: Arc<dyn ProcessLink>,
    ) -> Result<Hub, String> {
        let mine = first as usize..first as usize + regions.len();
        if owner.len() < mine.end || owner.iter().enumerate().any(|(r, &p)| mine.contains(&r) != (p == link.rank())) {
            return Err(format!("ranks {mine:?} of {} are not the ones process {} serves", owner.len(), link.rank()));
        }
        let receiving = Mutex::new(());
        Ok(Hub { first, remote: Some(Remote { owner, link, receiving }), ..Hub::with_regions(layout, regions, timeout) })
    }

    /// How each rank's region is laid out.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Where rank `rank` is among this process's ranks.
    fn local(&self, rank: u32) -> Option<usize> {
        rank.checked_sub(self.first).map(|i| i as usize).filter(|&i| i < self.rings.len())
    }

    /// The process serving `rank`, when it is another one.
    fn remote_owner(&self, rank: u32) -> Option<usize> {
        match self.local(rank) {
            Some(_) => None,
            None => self.remote.as_ref()?.owner.get(rank as usize).copied(),
        }
    }

    /// Whether `rank` exists and, if this process serves it, its proxy runs.
    fn reachable(&self, rank: u32) -> bool {
        match self.local(rank) {
            Some(i) => self.alive[i].load(Ordering::Acquire),
            None => self.remote_owner(rank).is_some(),
        }
    }

    fn record(&self, rank: u32, number: u32) -> Option<&Record> {
        let ring = &self.rings[self.local(rank)?];
        // SAFETY: in the ring's region (Ring::in_region checked its size), 64-byte aligned.
        Some(unsafe { &*(ring.region().base().add(self.layout.records_offset() + 64 * self.layout.record(number)) as *const Record) })
    }

    /// The ring of `rank`, one of this process's.
    pub fn ring(&self, rank: u32) -> &Arc<Ring> {
        &self.rings[self.local(rank).expect("a rank of this process")]
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

    /// The proxy of `rank` (one of this process's): serves its ring until `stop`, then
    /// marks the rank gone and fails every operation waiting for it. Requests are taken
    /// in batches and matched under one lock; bytes move outside it. Proxies also take
    /// what other processes forwarded off the link, one at a time.
    pub fn serve(&self, rank: u32, copier: &dyn Copier, stop: &AtomicBool) -> ProxyStats {
        let mut stats = ProxyStats::default();
        let ring = self.ring(rank);
        let mut last_sweep = Instant::now();
        let mut idle = ring::Idle::default();
        let (mut batch, mut matched, mut gone, mut forward) = (Vec::with_capacity(BATCH), Vec::new(), Vec::new(), Vec::new());
        while !stop.load(Ordering::Relaxed) {
            while batch.len() < BATCH {
                match ring.poll() {
                    Some(r) => batch.push(r),
                    None => break,
                }
            }
            stats.failed += self.receive_forwarded(&mut matched);
            if batch.is_empty() && matched.is_empty() {
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
            if !batch.is_empty() {
                let mut matcher = self.matcher.lock().expect("matcher");
                for request in batch.drain(..) {
                    let posted = Posted { rank, request, since, payload: None };
                    let peer = request.peer;
                    if request.kind == Kind::Send && self.remote_owner(peer).is_some() {
                        forward.push(posted);
                    } else if peer != ANY_SOURCE && !self.reachable(peer) {
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
            for p in forward.drain(..) {
                let status = match self.forward(&p, copier) {
                    Ok(()) => {
                        stats.forwarded += 1;
                        stats.bytes += p.request.bytes;
                        Status::Done
                    }
                    Err(_) => {
                        stats.failed += 1;
                        Status::PeerGone
                    }
                };
                self.complete(&p, status as u32, &[]);
            }
            for m in matched.drain(..) {
                self.deliver(&m, copier, &mut stats);
            }
        }
        self.alive[self.local(rank).expect("a rank of this process")].store(false, Ordering::Release);
        let orphans = self.matcher.lock().expect("matcher").drain(|p| p.rank == rank || p.request.peer == rank);
        for p in &orphans {
            self.complete(p, Status::PeerGone as u32, &[]);
        }
        stats.failed += orphans.len() as u64;
        stats
    }

    /// Moves a matched message's bytes (or fails it as truncated or gone) and
    /// completes both sides.
    fn deliver(&self, m: &Matched, copier: &dyn Copier, stats: &mut ProxyStats) {
        let bytes = m.send.request.bytes;
        // A message's bytes at hand on the host: a small send's, or one from
        // another process.
        let at_hand = match &m.send.payload {
            Some(message) => Some(&message[ENVELOPE_BYTES..]),
            None => m.send.request.inline.as_ref().map(|d| &d[..bytes as usize]),
        };
        // A small message goes straight into host memory, or waits in the
        // receiver's completion record for its GPU thread to copy.
        let (status, staged) = if m.recv.request.bytes < bytes {
            (Status::Truncated as u32, &[][..])
        } else if let Some(data) = at_hand.filter(|d| d.len() <= INLINE_BYTES) {
            if copier.write_host(m.recv.rank, m.recv.request.addr, data) {
                (Status::Done as u32, &[][..])
            } else {
                (DONE_INLINE, data)
            }
        } else {
            let moved = match at_hand {
                Some(data) => copier.write(m.recv.rank, m.recv.request.addr, data),
                None => copier.copy(m.send.rank, m.send.request.addr, m.recv.rank, m.recv.request.addr, bytes),
            };
            match moved {
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

    /// Sends `send` (addressed to another process's rank) through the link.
    fn forward(&self, send: &Posted, copier: &dyn Copier) -> Result<(), String> {
        let remote = self.remote.as_ref().expect("forwarded with a link");
        let r = &send.request;
        let mut message = enveloped(send);
        match &r.inline {
            Some(d) => message[ENVELOPE_BYTES..].copy_from_slice(&d[..r.bytes as usize]),
            None => copier.read(send.rank, r.addr, &mut message[ENVELOPE_BYTES..])?,
        }
        remote.link.send(remote.owner[r.peer as usize], message).map_err(|e| e.0)
    }

    /// Posts what other processes forwarded (unless another proxy is taking it off the
    /// link), their matches into `matched`; returns how many were malformed or failed.
    fn receive_forwarded(&self, matched: &mut Vec<Matched>) -> u64 {
        let Some(remote) = &self.remote else { return 0 };
        let Ok(_receiving) = remote.receiving.try_lock() else { return 0 };
        let mut failed = 0;
        loop {
            let posted = match remote.link.poll() {
                Ok(Some((_, m))) => opened(m),
                Ok(None) => return failed,
                Err(_) => return failed + 1,
            };
            match posted.filter(|p| self.local(p.request.peer).is_some()) {
                Some(p) => matched.extend(self.matcher.lock().expect("matcher").post(p)),
                None => failed += 1,
            }
        }
    }

    /// Fails this rank's operations that waited longer than the timeout, and drops
    /// sends from other processes to it that did (they fail only at the receiver).
    fn sweep(&self, rank: u32) -> u64 {
        let timeout = self.timeout;
        let mine = |p: &Posted| p.rank == rank || (p.payload.is_some() && p.request.peer == rank);
        let expired = self.matcher.lock().expect("matcher").drain(|p| mine(p) && p.since.elapsed() > timeout);
        for p in &expired {
            self.complete(p, Status::TimedOut as u32, &[]);
        }
        expired.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(kind: Kind, peer: u32, tag: u32, request: u32, bytes: u64, addr: u64) -> Request {
        Request { kind, peer, tag, request, bytes, addr, inline: None }
    }

    fn posted(rank: u32, r: Request) -> Posted {
        Posted { rank, request: r, since: Instant::now(), payload: None }
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
        fn read(&self, _: u32, _: u64, _: &mut [u8]) -> Result<(), String> {
            Err("no reads".into())
        }
        fn write(&self, _: u32, _: u64, _: &[u8]) -> Result<(), String> {
            Err("no writes".into())
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

    /// Ranks 0 and 1 in one process, 2 and 3 in another (threads standing in for
    /// processes, their link the same contract as MPI's): messages cross with the
    /// same matching rules, small and large, in order, and failures stay at the
    /// receiver.
    #[test]
    fn messages_cross_processes_by_the_same_rules() {
        let timeout = Duration::from_millis(300);
        let job = crate::Threads::job(2);
        let memory: Vec<HostMemory> =
            (0..2).map(|_| HostMemory((0..4u8).map(|r| Mutex::new((0..=255u8).map(|i| i ^ (r * 64)).collect())).collect())).collect();
        let hubs: Vec<Hub> = job
            .iter()
            .enumerate()
            .map(|(p, member)| {
                let layout = Layout::new(4, 64);
                let regions = (0..2).map(|_| Arc::new(HeapRegion::new(layout.bytes())) as Arc<dyn Region>).collect();
                use crate::Group;
                Hub::spanning(layout, regions, timeout, 2 * p as u32, vec![0, 0, 1, 1], member.link().unwrap()).unwrap()
            })
            .collect();
        let stop = AtomicBool::new(false);
        let stats: Vec<ProxyStats> = std::thread::scope(|s| {
            let proxies: Vec<_> = (0..4u32)
                .map(|r| {
                    let (hub, memory, stop) = (&hubs[r as usize / 2], &memory[r as usize / 2], &stop);
                    s.spawn(move || hub.serve(r, memory, stop))
                })
                .collect();
            let hub = |r: u32| &hubs[r as usize / 2];
            let post = |r: u32, q: Request| assert!(hub(r).ring(r).push(q, &|| false));
            let inline = |r: u32, at: usize, bytes: usize| {
                let mut d = [0u8; INLINE_BYTES];
                d[..bytes].copy_from_slice(&memory[r as usize / 2].0[r as usize].lock().unwrap()[at..at + bytes]);
                Some(d)
            };
            // A large send from rank 0 to rank 3, received before and after it arrives.
            post(3, req(Kind::Recv, 0, 1, 0, 100, 0));
            post(0, req(Kind::Send, 3, 1, 0, 100, 0));
            post(0, req(Kind::Send, 3, 2, 1, 50, 100));
            assert_eq!(wait(hub(0), 0, 0), Status::Done);
            assert_eq!(wait(hub(0), 0, 1), Status::Done, "a forwarded send completes once forwarded");
            assert_eq!(wait(hub(3), 3, 0), Status::Done);
            post(3, req(Kind::Recv, ANY_SOURCE, ANY_TAG, 1, 64, 100));
            assert_eq!(wait(hub(3), 3, 1), Status::Done);
            // Small (eager) sends from rank 1 to rank 2, two of one tag: in order.
            post(1, Request { inline: inline(1, 10, 8), ..req(Kind::Send, 2, 5, 0, 8, 10) });
            post(1, Request { inline: inline(1, 20, 8), ..req(Kind::Send, 2, 5, 1, 8, 20) });
            post(2, req(Kind::Recv, 1, 5, 0, 8, 200));
            post(2, req(Kind::Recv, ANY_SOURCE, 5, 1, 8, 208));
            assert_eq!((wait(hub(2), 2, 0), wait(hub(2), 2, 1)), (Status::Done, Status::Done));
            // Too large for the receive: the receive fails, the (eager) send did not.
            post(2, req(Kind::Recv, 0, 9, 2, 16, 0));
            post(0, req(Kind::Send, 2, 9, 2, 64, 0));
            assert_eq!((wait(hub(0), 0, 2), wait(hub(2), 2, 2)), (Status::Done, Status::Truncated));
            // Unmatched across processes: the receive times out; the send sent to no
            // receive is dropped at the receiver, its rank (3) told nothing.
            post(2, req(Kind::Recv, 3, 4, 3, 8, 0));
            post(1, req(Kind::Send, 3, 7, 2, 40, 0));
            assert_eq!((wait(hub(2), 2, 3), wait(hub(1), 1, 2)), (Status::TimedOut, Status::Done));
            let start = Instant::now();
            while hub(3).matcher.lock().unwrap().waiting() > 0 {
                assert!(start.elapsed() < 10 * timeout, "the unmatched forwarded send was never dropped");
                std::thread::sleep(timeout / 4);
            }
            stop.store(true, Ordering::SeqCst);
            proxies.into_iter().map(|p| p.join().unwrap()).collect()
        });
        let at = |p: usize, r: usize, range: std::ops::Range<usize>| memory[p].0[r].lock().unwrap()[range].to_vec();
        assert_eq!(at(1, 3, 0..100), at(0, 0, 0..100));
        assert_eq!(at(1, 3, 100..150), at(0, 0, 100..150));
        assert_eq!(at(1, 2, 200..208), at(0, 1, 10..18));
        assert_eq!(at(1, 2, 208..216), at(0, 1, 20..28));
        let forwarded: u64 = stats.iter().map(|s| s.forwarded).sum();
        let delivered: u64 = stats[2..].iter().map(|s| s.messages).sum();
        assert_eq!((forwarded, delivered), (6, 4));
    }
}
