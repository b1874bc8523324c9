//! The receiving side: one protocol thread that joins the group on the first
//! heartbeat, reassembles messages in order, finds gaps (a later packet, or a heartbeat
//! announcing more than arrived) and recovers them, by the group's scheme:
//!
//! - NACK (RFC 5740's receiver): wait a random back-off drawn from a truncated
//!   exponential over `[0, K·GRTT]`, suppress if another receiver's NACK for the same
//!   packets is heard meanwhile, otherwise multicast the NACK (and unicast it to the
//!   sender); the sender multicasts the repair. Ask again after `3·GRTT` plus a new
//!   back-off if the repair did not come.
//! - RMA-pull: read the missing packets from the sender's read service at once; the
//!   answer comes back by unicast. Read again after `max(3·GRTT, 1 ms)`.
//!
//! Messages go to the application through a bounded queue. While the application lags,
//! the receiver acknowledges only what it has handed over, so the sender's flow control
//! holds the window: nothing is dropped for a slow reader.

use std::collections::{BTreeMap, VecDeque};
use std::net::{SocketAddr, SocketAddrV4};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::packet::{self, Header, Key, Kind, Refused};
use crate::sender::READ_LIMIT;
use crate::transport::{LossModel, Network, Port};
use crate::{clock, decode_addr, NetError, Recovery};

/// How a receiver behaves; `ReceiverConfig::new(group, recovery, key)` gives the defaults.
#[derive(Clone, Debug)]
pub struct ReceiverConfig {
    /// The multicast group.
    pub group: SocketAddrV4,
    /// How lost packets are recovered.
    pub recovery: Recovery,
    /// The group's key.
    pub key: Key,
    /// Injected loss on arriving group datagrams (tests and benchmarks).
    pub loss: Option<LossModel>,
    /// This receiver's id in the group (random by default).
    pub id: u64,
    /// NACK back-off factor K (NORM's default for multicast is 4).
    pub backoff_factor: f64,
    /// Acknowledge at least every this many packets (fewer if the sender's window asks).
    pub ack_every: u64,
    /// Messages the application may leave unread before the receiver holds back ACKs.
    pub queue: usize,
    /// Seed of the NACK back-off draws.
    pub seed: u64,
}

impl ReceiverConfig {
    /// The defaults for `group`, `recovery` and `key`, with a random id.
    pub fn new(group: SocketAddrV4, recovery: Recovery, key: Key) -> ReceiverConfig {
        let id = clock::now_ns() ^ (std::process::id() as u64) << 40 ^ next_local_id();
        ReceiverConfig { group, recovery, key, loss: None, id, backoff_factor: 4.0, ack_every: 64, queue: 4096, seed: id }
    }
}

fn next_local_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// What a receiver hands the application, in order.
#[derive(Debug, PartialEq)]
pub enum Event {
    /// The next message.
    Message(Message),
    /// A new incarnation of the sender appeared; messages of the old one that had not
    /// arrived are not delivered. The receiver has joined the new one.
    SenderRestarted {
        /// The old incarnation's session.
        old: u64,
        /// The new incarnation's session.
        new: u64,
    },
    /// The sender no longer holds packets this receiver missed (it was evicted as
    /// silent); the receiver rejoined at the next message.
    StreamBroken {
        /// The first packet the receiver holds again.
        from_seq: u64,
    },
}

/// One application message.
#[derive(Debug, PartialEq)]
pub struct Message {
    /// Its bytes.
    pub data: Vec<u8>,
    /// Number of its first packet.
    pub seq: u64,
    /// When the sender accepted it ([`clock::now_ns`] on the sender's host).
    pub stamp_ns: u64,
}

/// Counters of a receiver.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReceiverStats {
    /// Datagrams accepted.
    pub packets: u64,
    /// Messages delivered.
    pub messages: u64,
    /// Duplicate packets dropped.
    pub duplicates: u64,
    /// Malformed datagrams dropped.
    pub malformed: u64,
    /// Datagrams whose tag did not verify, dropped.
    pub forged: u64,
    /// Packets of an older incarnation or already delivered, dropped.
    pub stale: u64,
    /// NACKs sent.
    pub nacks_sent: u64,
    /// NACKs held back because another receiver's covered them.
    pub nacks_suppressed: u64,
    /// Reads sent to the read service.
    pub reads_sent: u64,
    /// Missing packets that arrived later (by repair or read).
    pub recovered: u64,
    /// Nanoseconds from detecting each recovered packet missing to holding it, summed.
    pub recovery_ns_total: u64,
    /// The longest such recovery, nanoseconds.
    pub recovery_ns_max: u64,
    /// Sender restarts seen.
    pub restarts: u64,
    /// Streams broken by eviction.
    pub breaks: u64,
}

/// One member of a broadcast group. Dropping it leaves the group.
pub struct Receiver {
    events: crossbeam_channel::Receiver<Event>,
    stats: Arc<Mutex<ReceiverStats>>,
    stop: Arc<AtomicBool>,
    /// Set by [`Receiver::leave`]: the application holds everything it wanted, and
    /// the leave message says so (the sender counts who finished).
    finished: Arc<AtomicBool>,
    failure: Arc<Mutex<Option<String>>>,
    thread: Option<JoinHandle<()>>,
}

impl Receiver {
    /// Opens a port in the group and starts the protocol thread.
    pub fn start(net: &dyn Network, cfg: ReceiverConfig) -> Result<Receiver, NetError> {
        let port = net.open(Some(cfg.group), cfg.loss)?;
        let (tx, events) = crossbeam_channel::bounded(cfg.queue.max(1));
        let stats = Arc::new(Mutex::new(ReceiverStats::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let finished = Arc::new(AtomicBool::new(false));
        let failure = Arc::new(Mutex::new(None));
        let mut p = Protocol {
            rng: Xoshiro256PlusPlus::seed_from_u64(cfg.seed),
            cfg,
            port,
            out: tx,
            stats: ReceiverStats::default(),
            shared_stats: stats.clone(),
            stop: stop.clone(),
            finished: finished.clone(),
            session: None,
            joining: None,
            pending: VecDeque::new(),
            scratch: Vec::new(),
        };
        let f = failure.clone();
        let thread = std::thread::Builder::new()
            .name("bcast-recv".into())
            .spawn(move || {
                if let Err(e) = p.run() {
                    f.lock().expect("failure").get_or_insert(e.to_string());
                }
                p.leave();
                p.publish_stats();
            })
            .map_err(NetError::Io)?;
        Ok(Receiver { events, stats, stop, finished, failure, thread: Some(thread) })
    }

    /// The next event, or `None` after `timeout`.
    pub fn recv(&self, timeout: Duration) -> Result<Option<Event>, NetError> {
        match self.events.recv_timeout(timeout) {
            Ok(e) => Ok(Some(e)),
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => Ok(None),
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                Err(self.failure.lock().expect("failure").clone().map_or(NetError::Closed, NetError::Failed))
            }
        }
    }

    /// The counters so far.
    pub fn stats(&self) -> ReceiverStats {
        self.stats.lock().expect("stats").clone()
    }

    /// Leaves the group having received what it wanted (the sender stops waiting for
    /// us and counts us as finished) and returns the final counters. Dropped instead,
    /// the receiver leaves unfinished.
    pub fn leave(mut self) -> ReceiverStats {
        self.finished.store(true, Ordering::SeqCst);
        self.shutdown();
        self.stats()
    }

    fn shutdown(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// A fragment waiting for its turn.
struct Fragment {
    payload: Vec<u8>,
    index: u32,
    count: u32,
    stamp: u64,
}

/// A packet known to exist that has not arrived.
struct Missing {
    since: Instant,
    /// When to NACK or read (again).
    due: Instant,
}

/// State of membership in one sender incarnation.
struct Session {
    id: u64,
    control: SocketAddr,
    read_service: Option<SocketAddr>,
    /// Next packet to reassemble; all before it are held or delivered.
    next: u64,
    /// Packets below this are known to have been sent.
    high: u64,
    /// The first packet of this membership (earlier ones belong to others).
    start: u64,
    buffer: BTreeMap<u64, Fragment>,
    missing: BTreeMap<u64, Missing>,
    assembly: Vec<u8>,
    assembly_first: u64,
    expect_index: u32,
    grtt: Duration,
    heartbeat_echo: Option<(u64, Instant)>,
    acked: u64,
    /// Acknowledge after this many packets (the sender's hint, capped by the config).
    ack_every: u64,
    last_ack: Instant,
}

/// A heartbeat seen before joining: whom to join.
struct Joining {
    session: u64,
    control: SocketAddr,
    next_try: Instant,
}

/// Furthest ahead of the reassembly point a packet may be (bounds the buffer).
const MAX_AHEAD: u64 = 1 << 20;
const JOIN_RETRY: Duration = Duration::from_millis(20);
const ACK_INTERVAL: Duration = Duration::from_millis(5);

struct Protocol {
    cfg: ReceiverConfig,
    port: Box<dyn Port>,
    out: crossbeam_channel::Sender<Event>,
    stats: ReceiverStats,
    shared_stats: Arc<Mutex<ReceiverStats>>,
    stop: Arc<AtomicBool>,
    finished: Arc<AtomicBool>,
    session: Option<Session>,
    joining: Option<Joining>,
    /// Events the application's queue had no room for yet.
    pending: VecDeque<(Event, u64)>,
    rng: Xoshiro256PlusPlus,
    scratch: Vec<u8>,
}

impl Protocol {
    fn run(&mut self) -> Result<(), NetError> {
        let mut buf = vec![0u8; packet::MAX_DATAGRAM];
        let mut published = Instant::now();
        while !self.stop.load(Ordering::SeqCst) {
            let busy = self.session.as_ref().is_some_and(|s| !s.missing.is_empty()) || !self.pending.is_empty();
            let tick = if busy { Duration::from_micros(100) } else { Duration::from_millis(1) };
            if let Some((n, _)) = self.port.recv(&mut buf, tick)? {
                self.stats.packets += 1;
                match packet::decode(&self.cfg.key, &buf[..n]) {
                    Ok((h, payload)) => self.handle(&h, payload)?,
                    Err(Refused::Malformed) => self.stats.malformed += 1,
                    Err(Refused::Forged) => self.stats.forged += 1,
                }
            }
            self.timers()?;
            if published.elapsed() > Duration::from_millis(1) {
                self.publish_stats();
                published = Instant::now();
            }
        }
        Ok(())
    }

    fn publish_stats(&self) {
        *self.shared_stats.lock().expect("stats") = self.stats.clone();
    }

    fn handle(&mut self, h: &Header, payload: &[u8]) -> Result<(), NetError> {
        let current = self.session.as_ref().map(|s| s.id);
        if current.is_some_and(|id| h.session < id) {
            self.stats.stale += 1;
            return Ok(());
        }
        match h.kind {
            Kind::Heartbeat => self.on_heartbeat(h, payload),
            Kind::JoinAck if h.a == self.cfg.id => self.on_join_ack(h, payload),
            Kind::Data if current == Some(h.session) => self.on_data(h, payload),
            Kind::Nack if current == Some(h.session) && h.a != self.cfg.id => {
                self.on_peer_nack(payload);
                Ok(())
            }
            Kind::Gone if current == Some(h.session) && h.a == self.cfg.id => self.on_gone(h.seq),
            _ => Ok(()),
        }
    }

    fn on_heartbeat(&mut self, h: &Header, payload: &[u8]) -> Result<(), NetError> {
        let (Some(control), Some(ack_every)) = (payload.get(..6).and_then(decode_addr), payload.get(6..10)) else {
            self.stats.malformed += 1;
            return Ok(());
        };
        let ack_every = u32::from_le_bytes(ack_every.try_into().expect("4 bytes")).max(1) as u64;
        match &mut self.session {
            Some(s) if s.id == h.session => {
                s.ack_every = ack_every.min(self.cfg.ack_every);
                s.grtt = Duration::from_nanos(h.a.clamp(10_000, 1_000_000_000));
                s.heartbeat_echo = Some((h.b, Instant::now()));
                let now = Instant::now();
                if h.seq > s.high {
                    for seq in s.high..h.seq {
                        s.missing.entry(seq).or_insert(Missing { since: now, due: now });
                    }
                    s.high = h.seq;
                    self.schedule_new_missing(now);
                }
                self.send_ack()
            }
            Some(s) => {
                // A newer incarnation: report it, forget the old stream, join the new one.
                let old = s.id;
                self.session = None;
                self.stats.restarts += 1;
                self.deliver(Event::SenderRestarted { old, new: h.session }, u64::MAX);
                self.joining = Some(Joining { session: h.session, control, next_try: Instant::now() });
                Ok(())
            }
            None => {
                if self.joining.as_ref().is_none_or(|j| j.session < h.session) {
                    self.joining = Some(Joining { session: h.session, control, next_try: Instant::now() });
                }
                Ok(())
            }
        }
    }

    fn on_join_ack(&mut self, h: &Header, payload: &[u8]) -> Result<(), NetError> {
        let Some(j) = self.joining.take_if(|j| j.session == h.session) else {
            return Ok(());
        };
        let read_service = match self.cfg.recovery {
            Recovery::Rma => match decode_addr(payload) {
                Some(a) => Some(a),
                None => {
                    self.stats.malformed += 1;
                    self.joining = Some(j);
                    return Ok(());
                }
            },
            Recovery::Nack => None,
        };
        let now = Instant::now();
        self.session = Some(Session {
            id: h.session,
            control: j.control,
            read_service,
            next: h.seq,
            high: h.seq,
            start: h.seq,
            buffer: BTreeMap::new(),
            missing: BTreeMap::new(),
            assembly: Vec::new(),
            assembly_first: h.seq,
            expect_index: 0,
            grtt: Duration::from_micros(100),
            heartbeat_echo: None,
            acked: h.seq,
            ack_every: self.cfg.ack_every,
            last_ack: now,
        });
        Ok(())
    }

    fn on_data(&mut self, h: &Header, payload: &[u8]) -> Result<(), NetError> {
        let s = self.session.as_mut().expect("data only in a session");
        let (index, count) = ((h.a >> 32) as u32, h.a as u32);
        if count == 0 || index >= count || h.seq >= s.next.saturating_add(MAX_AHEAD) {
            self.stats.malformed += 1;
            return Ok(());
        }
        if h.seq < s.start {
            return Ok(()); // before we joined
        }
        if h.seq < s.next || s.buffer.contains_key(&h.seq) {
            self.stats.duplicates += 1;
            return Ok(());
        }
        let now = Instant::now();
        if let Some(m) = s.missing.remove(&h.seq) {
            let ns = now.duration_since(m.since).as_nanos() as u64;
            self.stats.recovered += 1;
            self.stats.recovery_ns_total += ns;
            self.stats.recovery_ns_max = self.stats.recovery_ns_max.max(ns);
        }
        let mut new_gap = false;
        if h.seq >= s.high {
            for seq in s.high..h.seq {
                s.missing.insert(seq, Missing { since: now, due: now });
                new_gap = true;
            }
            s.high = h.seq + 1;
        }
        s.buffer.insert(h.seq, Fragment { payload: payload.to_vec(), index, count, stamp: h.b });
        if new_gap {
            self.schedule_new_missing(now);
        }
        self.reassemble();
        let s = self.session.as_ref().expect("session");
        if s.next >= s.acked + s.ack_every {
            self.send_ack()?;
        }
        Ok(())
    }

    /// Gives missing packets first seen now their first due time: a NACK back-off, or
    /// none for a read (sent by `timers` right after).
    fn schedule_new_missing(&mut self, now: Instant) {
        let s = self.session.as_mut().expect("session");
        if self.cfg.recovery == Recovery::Rma {
            return;
        }
        let max = s.grtt.mul_f64(self.cfg.backoff_factor);
        for m in s.missing.values_mut().filter(|m| m.since == now) {
            m.due = now + backoff(&mut self.rng, max);
        }
    }

    /// Moves in-order fragments into messages.
    fn reassemble(&mut self) {
        let s = self.session.as_mut().expect("session");
        let mut done = Vec::new();
        while let Some(f) = s.buffer.remove(&s.next) {
            if f.index != s.expect_index {
                // Cannot happen with an honest sender (joins start at a message).
                self.stats.malformed += 1;
                s.assembly.clear();
                s.expect_index = 0;
                s.next += 1;
                continue;
            }
            if f.index == 0 {
                s.assembly_first = s.next;
                s.assembly.clear();
            }
            s.assembly.extend_from_slice(&f.payload);
            s.next += 1;
            s.expect_index += 1;
            if s.expect_index == f.count {
                let data = std::mem::take(&mut s.assembly);
                done.push(Message { data, seq: s.assembly_first, stamp_ns: f.stamp });
                s.expect_index = 0;
            }
        }
        for m in done {
            self.stats.messages += 1;
            let first = m.seq;
            self.deliver(Event::Message(m), first);
        }
    }

    /// Queues an event; `first` is its first packet (u64::MAX for a notice): until
    /// the application takes it, ACKs stop there.
    fn deliver(&mut self, e: Event, first: u64) {
        self.publish_stats();
        self.pending.push_back((e, first));
        self.flush_pending();
    }

    fn flush_pending(&mut self) {
        while let Some((e, end)) = self.pending.pop_front() {
            match self.out.try_send(e) {
                Ok(()) => {}
                Err(crossbeam_channel::TrySendError::Full(e)) => {
                    self.pending.push_front((e, end));
                    return;
                }
                Err(crossbeam_channel::TrySendError::Disconnected(_)) => {
                    self.pending.clear();
                    return;
                }
            }
        }
    }

    fn on_peer_nack(&mut self, payload: &[u8]) {
        if self.cfg.recovery != Recovery::Nack {
            return;
        }
        let Some(ranges) = packet::decode_ranges(payload, u32::MAX as u64) else {
            self.stats.malformed += 1;
            return;
        };
        let s = self.session.as_mut().expect("session");
        let now = Instant::now();
        let wait = s.grtt * 3;
        for (start, count) in ranges {
            for (_, m) in s.missing.range_mut(start..start.saturating_add(count as u64)) {
                // Someone asked for it: the repair will reach us too (NORM suppression).
                if m.due > now {
                    m.due = now + wait;
                    self.stats.nacks_suppressed += 1;
                }
            }
        }
    }

    fn on_gone(&mut self, seq: u64) -> Result<(), NetError> {
        // A read answered after the packet arrived by multicast is no break.
        if !self.session.as_ref().is_some_and(|s| s.missing.contains_key(&seq)) {
            return Ok(());
        }
        let s = self.session.take().expect("session");
        self.stats.breaks += 1;
        self.deliver(Event::StreamBroken { from_seq: seq }, u64::MAX);
        self.joining = Some(Joining { session: s.id, control: s.control, next_try: Instant::now() });
        Ok(())
    }

    fn timers(&mut self) -> Result<(), NetError> {
        self.flush_pending();
        let now = Instant::now();
        if let Some(j) = &mut self.joining {
            if now >= j.next_try {
                j.next_try = now + JOIN_RETRY;
                let (session, control) = (j.session, j.control);
                self.send(Header { kind: Kind::Join, session, seq: 0, a: self.cfg.id, b: 0 }, &[], control)?;
            }
        }
        let Some(s) = &mut self.session else {
            return Ok(());
        };
        let due: Vec<u64> = s.missing.iter().filter(|(_, m)| m.due <= now).map(|(&seq, _)| seq).collect();
        if !due.is_empty() {
            match self.cfg.recovery {
                Recovery::Nack => {
                    let max = s.grtt.mul_f64(self.cfg.backoff_factor);
                    let wait = s.grtt * 3;
                    for seq in &due {
                        let m = s.missing.get_mut(seq).expect("due is missing");
                        m.due = now + wait + backoff(&mut self.rng, max);
                    }
                    let (session, control) = (s.id, s.control);
                    for chunk in due.chunks(READ_LIMIT as usize) {
                        let payload = packet::encode_ranges(&packet::to_ranges(chunk.iter().copied()));
                        let h = Header { kind: Kind::Nack, session, seq: 0, a: self.cfg.id, b: 0 };
                        self.send(h, &payload, SocketAddr::V4(self.cfg.group))?;
                        self.send(h, &payload, control)?;
                        self.stats.nacks_sent += 1;
                    }
                }
                Recovery::Rma => {
                    let wait = (s.grtt * 3).max(Duration::from_millis(1));
                    for seq in &due {
                        s.missing.get_mut(seq).expect("due is missing").due = now + wait;
                    }
                    let (session, service) = (s.id, s.read_service.expect("rma session has a read service"));
                    for chunk in due.chunks(READ_LIMIT as usize) {
                        let payload = packet::encode_ranges(&packet::to_ranges(chunk.iter().copied()));
                        let h = Header { kind: Kind::Read, session, seq: 0, a: self.cfg.id, b: 0 };
                        self.send(h, &payload, service)?;
                        self.stats.reads_sent += 1;
                    }
                }
            }
        }
        let s = self.session.as_ref().expect("session");
        if now.duration_since(s.last_ack) >= ACK_INTERVAL {
            self.send_ack()?;
        }
        Ok(())
    }

    /// Acknowledges what is held and handed over (see the module docs on slow readers).
    fn send_ack(&mut self) -> Result<(), NetError> {
        let held = self.pending.iter().map(|(_, first)| *first).min().unwrap_or(u64::MAX);
        let Some(s) = &mut self.session else {
            return Ok(());
        };
        let acked = s.next.min(held).max(s.acked);
        let echo = s.heartbeat_echo.take().map_or(0, |(stamp, at)| stamp + at.elapsed().as_nanos() as u64);
        s.acked = acked;
        s.last_ack = Instant::now();
        let (session, control) = (s.id, s.control);
        self.send(Header { kind: Kind::Ack, session, seq: acked, a: self.cfg.id, b: echo }, &[], control)
    }

    fn send(&mut self, h: Header, payload: &[u8], to: SocketAddr) -> Result<(), NetError> {
        packet::encode(&self.cfg.key, &h, payload, &mut self.scratch)?;
        self.port.send_to(&self.scratch, to)?;
        Ok(())
    }

    /// Tells the sender we are gone (three times: unicast can be lost too).
    fn leave(&mut self) {
        if let Some(s) = &self.session {
            let (session, control) = (s.id, s.control);
            for _ in 0..3 {
                let finished = u64::from(self.finished.load(Ordering::SeqCst));
                let _ = self.send(Header { kind: Kind::Leave, session, seq: 0, a: self.cfg.id, b: finished }, &[], control);
            }
        }
    }
}

/// NORM's NACK back-off: a truncated exponential over `[0, max]`, which makes a few
/// receivers answer early and lets the rest hear them and stay quiet.
fn backoff(rng: &mut Xoshiro256PlusPlus, max: Duration) -> Duration {
    let u = (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
    let lambda = 10.0f64.ln() + 1.0; // RFC 5740's λ for a group-size estimate of 10
    let x = (u * (lambda.exp() - 1.0) + 1.0).ln() / lambda;
    max.mul_f64(x.clamp(0.0, 1.0))
}
