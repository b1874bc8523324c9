//! The sending side: a send loop that fragments messages into packets, multicasts them
//! and keeps each in the window until every member has it; a control thread for
//! joins, leaves, ACKs and NACKs; and, for RMA-pull recovery, a read service thread that
//! answers receivers' reads from the window without ever touching the send loop.
//!
//! Flow control: a packet leaves the window only when every member has acknowledged
//! it, and the send loop waits while the window is full, so a slow receiver slows the
//! sender rather than losing data. A member silent for `receiver_timeout` is evicted
//! (it would otherwise hold the group forever); its own receiver reports the break.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::net::{SocketAddr, SocketAddrV4};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::packet::{self, Header, Key, Kind, Refused};
use crate::transport::{Network, Port};
use crate::{clock, encode_addr, NetError, Recovery};

/// How a sender behaves; `SenderConfig::new(group, recovery, key)` gives the defaults.
#[derive(Clone, Debug)]
pub struct SenderConfig {
    /// The multicast group.
    pub group: SocketAddrV4,
    /// How lost packets are recovered.
    pub recovery: Recovery,
    /// The group's key.
    pub key: Key,
    /// Message bytes per packet; 1400 keeps a datagram within an Ethernet MTU.
    pub payload: usize,
    /// Flow-control limit on the bytes held for recovery.
    pub window_bytes: usize,
    /// Heartbeat period: tail-loss detection, round-trip sampling, join announcements.
    pub heartbeat: Duration,
    /// A member silent this long is evicted.
    pub receiver_timeout: Duration,
    /// Floor of the group round-trip estimate that paces NACK back-off.
    pub min_grtt: Duration,
    /// Messages that `send` may queue ahead of the send loop.
    pub queue: usize,
}

impl SenderConfig {
    /// The defaults for `group`, `recovery` and `key`.
    pub fn new(group: SocketAddrV4, recovery: Recovery, key: Key) -> SenderConfig {
        SenderConfig {
            group,
            recovery,
            key,
            payload: 1400,
            window_bytes: 8 << 20,
            heartbeat: Duration::from_millis(1),
            receiver_timeout: Duration::from_secs(2),
            min_grtt: Duration::from_micros(100),
            queue: 256,
        }
    }
}

/// Counters of a sender, read with [`Sender::stats`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SenderStats {
    /// Messages accepted.
    pub messages: u64,
    /// Data packets multicast (first sends).
    pub packets: u64,
    /// Payload bytes multicast.
    pub bytes: u64,
    /// Packets multicast again for NACKs.
    pub repairs: u64,
    /// NACKs received.
    pub nacks: u64,
    /// Packets the read service returned.
    pub reads_served: u64,
    /// Members now.
    pub members: usize,
    /// Members that joined.
    pub joined: u64,
    /// Members that left.
    pub left: u64,
    /// Members that left saying they had received everything they wanted.
    pub finished: u64,
    /// Members evicted as silent.
    pub evicted: u64,
    /// Bytes held for recovery now.
    pub window_bytes: u64,
    /// The most bytes held for recovery at once.
    pub peak_window_bytes: u64,
    /// The group round-trip estimate, microseconds.
    pub grtt_us: f64,
    /// Malformed datagrams dropped.
    pub malformed: u64,
    /// Datagrams whose tag did not verify, dropped.
    pub forged: u64,
}

/// One broadcast source. Dropping it stops its threads.
pub struct Sender {
    shared: Arc<Shared>,
    submit: Option<crossbeam_channel::Sender<Vec<u8>>>,
    threads: Vec<JoinHandle<()>>,
    control_addr: SocketAddr,
}

struct Shared {
    cfg: SenderConfig,
    session: u64,
    window: Mutex<Window>,
    /// Signalled when the window shrinks or membership changes.
    changed: Condvar,
    members: Mutex<HashMap<u64, Member>>,
    repairs: Mutex<Repairs>,
    repairs_pending: AtomicBool,
    grtt_ns: AtomicU64,
    queued: AtomicU64,
    closed: AtomicBool,
    failure: Mutex<Option<String>>,
    counters: Counters,
}

#[derive(Default)]
struct Counters {
    messages: AtomicU64,
    packets: AtomicU64,
    bytes: AtomicU64,
    repairs: AtomicU64,
    nacks: AtomicU64,
    reads_served: AtomicU64,
    joined: AtomicU64,
    left: AtomicU64,
    finished: AtomicU64,
    evicted: AtomicU64,
    malformed: AtomicU64,
    forged: AtomicU64,
}

/// The retained packets `[base, next)`.
struct Window {
    base: u64,
    next: u64,
    /// Where the next message starts: a joining receiver begins there, never mid-message.
    next_message: u64,
    packets: VecDeque<Arc<Vec<u8>>>,
    bytes: usize,
    peak_bytes: usize,
}

impl Window {
    fn get(&self, seq: u64) -> Option<Arc<Vec<u8>>> {
        let i = seq.checked_sub(self.base)?;
        self.packets.get(usize::try_from(i).ok()?).cloned()
    }
}

struct Member {
    /// Every packet before this one is held by the member.
    acked: u64,
    last_heard: Instant,
    srtt_ns: Option<f64>,
}

#[derive(Default)]
struct Repairs {
    pending: BTreeSet<u64>,
    last_sent: HashMap<u64, Instant>,
}

impl Sender {
    /// Opens the ports and starts the threads; receivers may join from now on.
    pub fn start(net: &dyn Network, cfg: SenderConfig) -> Result<Sender, NetError> {
        if cfg.payload == 0 || packet::HEADER + cfg.payload + packet::TAG > packet::MAX_DATAGRAM {
            return Err(NetError::Config(format!("payload of {} bytes per packet is out of range", cfg.payload)));
        }
        let data_port = net.open(None, None)?;
        let control_port = net.open(None, None)?;
        let read_port = match cfg.recovery {
            Recovery::Rma => Some(net.open(None, None)?),
            Recovery::Nack => None,
        };
        let control_addr = control_port.addr();
        let read_addr = read_port.as_ref().map(|p| p.addr());
        let shared = Arc::new(Shared {
            grtt_ns: AtomicU64::new(cfg.min_grtt.as_nanos() as u64),
            cfg,
            // Wall-clock nanoseconds: a restarted sender always has a larger session.
            session: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64),
            window: Mutex::new(Window { base: 0, next: 0, next_message: 0, packets: VecDeque::new(), bytes: 0, peak_bytes: 0 }),
            changed: Condvar::new(),
            members: Mutex::new(HashMap::new()),
            repairs: Mutex::new(Repairs::default()),
            repairs_pending: AtomicBool::new(false),
            queued: AtomicU64::new(0),
            closed: AtomicBool::new(false),
            failure: Mutex::new(None),
            counters: Counters::default(),
        });
        let (submit, queue) = crossbeam_channel::bounded(shared.cfg.queue.max(1));
        let mut threads = Vec::new();
        let s = shared.clone();
        threads.push(spawn("bcast-send", move || send_loop(&s, data_port, queue, control_addr))?);
        let s = shared.clone();
        threads.push(spawn("bcast-control", move || control_loop(&s, control_port, read_addr))?);
        if let Some(port) = read_port {
            let s = shared.clone();
            threads.push(spawn("bcast-read", move || read_service(&s, port))?);
        }
        Ok(Sender { shared, submit: Some(submit), threads, control_addr })
    }

    /// Queues one message for every member; blocks while the queue and window are full.
    pub fn send(&self, message: &[u8]) -> Result<(), NetError> {
        self.shared.check()?;
        self.shared.queued.fetch_add(1, Ordering::SeqCst);
        let submit = self.submit.as_ref().expect("open until drop");
        if submit.send(message.to_vec()).is_err() {
            self.shared.queued.fetch_sub(1, Ordering::SeqCst);
            self.shared.check()?;
            return Err(NetError::Closed);
        }
        Ok(())
    }

    /// Waits until at least `n` receivers have joined.
    pub fn wait_for_receivers(&self, n: usize, timeout: Duration) -> Result<(), NetError> {
        self.wait_until(timeout, |s| s.members.lock().expect("members").len() >= n)
            .map_err(|_| NetError::Timeout(format!("{} of {n} receivers joined", self.stats().members)))
    }

    /// Waits until every queued message is sent and held by every member.
    pub fn flush(&self, timeout: Duration) -> Result<(), NetError> {
        self.wait_until(timeout, |s| {
            let w = s.window.lock().expect("window");
            s.queued.load(Ordering::SeqCst) == 0 && w.base == w.next
        })
        .map_err(|_| NetError::Timeout(format!("flush: {} bytes still unacknowledged", self.stats().window_bytes)))
    }

    fn wait_until(&self, timeout: Duration, done: impl Fn(&Shared) -> bool) -> Result<(), ()> {
        let deadline = Instant::now() + timeout;
        loop {
            if self.shared.check().is_err() {
                return Err(());
            }
            if done(&self.shared) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(());
            }
            let w = self.shared.window.lock().expect("window");
            let _ = self.shared.changed.wait_timeout(w, Duration::from_millis(1)).expect("window");
        }
    }

    /// Where receivers send joins, ACKs and NACKs (also announced in every heartbeat).
    pub fn control_addr(&self) -> SocketAddr {
        self.control_addr
    }

    /// This incarnation's session id.
    pub fn session(&self) -> u64 {
        self.shared.session
    }

    /// Forgets the window's high-water mark (to measure one phase of a run).
    pub fn reset_peak_window(&self) {
        let mut w = self.shared.window.lock().expect("window");
        w.peak_bytes = w.bytes;
    }

    /// The counters so far.
    pub fn stats(&self) -> SenderStats {
        let s = &self.shared;
        let c = &s.counters;
        let (window_bytes, peak) = {
            let w = s.window.lock().expect("window");
            (w.bytes as u64, w.peak_bytes as u64)
        };
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        SenderStats {
            messages: get(&c.messages),
            packets: get(&c.packets),
            bytes: get(&c.bytes),
            repairs: get(&c.repairs),
            nacks: get(&c.nacks),
            reads_served: get(&c.reads_served),
            members: s.members.lock().expect("members").len(),
            joined: get(&c.joined),
            left: get(&c.left),
            finished: get(&c.finished),
            evicted: get(&c.evicted),
            window_bytes,
            peak_window_bytes: peak,
            grtt_us: get(&s.grtt_ns) as f64 / 1e3,
            malformed: get(&c.malformed),
            forged: get(&c.forged),
        }
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::SeqCst);
        self.submit = None;
        self.shared.changed.notify_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> Result<JoinHandle<()>, NetError> {
    std::thread::Builder::new().name(name.into()).spawn(f).map_err(NetError::Io)
}

impl Shared {
    fn check(&self) -> Result<(), NetError> {
        if let Some(f) = self.failure.lock().expect("failure").as_ref() {
            return Err(NetError::Failed(f.clone()));
        }
        Ok(())
    }

    fn fail(&self, what: &str, e: impl std::fmt::Display) {
        self.failure.lock().expect("failure").get_or_insert_with(|| format!("{what}: {e}"));
        self.closed.store(true, Ordering::SeqCst);
        self.changed.notify_all();
    }

    fn header(&self, kind: Kind, seq: u64, a: u64, b: u64) -> Header {
        Header { kind, session: self.session, seq, a, b }
    }

    fn grtt(&self) -> Duration {
        Duration::from_nanos(self.grtt_ns.load(Ordering::Relaxed))
    }

    /// Drops packets every member holds (all of them when there is no member: a
    /// receiver that joins later starts at the next message).
    fn trim(&self, members: &HashMap<u64, Member>) {
        let mut w = self.window.lock().expect("window");
        let upto = members.values().map(|m| m.acked).min().unwrap_or(w.next).min(w.next);
        let mut freed = false;
        while w.base < upto {
            let p = w.packets.pop_front().expect("window holds base..next");
            w.bytes -= p.len();
            w.base += 1;
            freed = true;
        }
        drop(w);
        if freed {
            self.changed.notify_all();
        }
    }

    /// Evicts members silent for longer than the timeout.
    fn evict_silent(&self) {
        let mut members = self.members.lock().expect("members");
        let before = members.len();
        let limit = self.cfg.receiver_timeout;
        members.retain(|_, m| m.last_heard.elapsed() < limit);
        let evicted = before - members.len();
        if evicted > 0 {
            self.counters.evicted.fetch_add(evicted as u64, Ordering::Relaxed);
            self.trim(&members);
        }
    }
}

/// The send loop: repairs first (NORM's priority), then heartbeats, then new data.
fn send_loop(s: &Shared, port: Box<dyn Port>, queue: crossbeam_channel::Receiver<Vec<u8>>, control: SocketAddr) {
    let mut tx = Transmitter { s, port, group: SocketAddr::V4(s.cfg.group), control, buf: Vec::new(), next_heartbeat: Instant::now() };
    if let Err(e) = tx.run(&queue) {
        s.fail("send loop", e);
    }
}

struct Transmitter<'a> {
    s: &'a Shared,
    port: Box<dyn Port>,
    group: SocketAddr,
    control: SocketAddr,
    buf: Vec<u8>,
    next_heartbeat: Instant,
}

impl Transmitter<'_> {
    fn run(&mut self, queue: &crossbeam_channel::Receiver<Vec<u8>>) -> Result<(), NetError> {
        while !self.s.closed.load(Ordering::SeqCst) {
            self.housekeeping()?;
            let wait = self.next_heartbeat.saturating_duration_since(Instant::now()).min(Duration::from_micros(200));
            match queue.recv_timeout(wait) {
                Ok(message) => {
                    self.send_message(&message)?;
                    self.s.queued.fetch_sub(1, Ordering::SeqCst);
                    self.s.changed.notify_all();
                }
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
            }
        }
        Ok(())
    }

    fn housekeeping(&mut self) -> Result<(), NetError> {
        if self.s.repairs_pending.load(Ordering::Acquire) {
            self.send_repairs()?;
        }
        if Instant::now() >= self.next_heartbeat {
            self.heartbeat()?;
        }
        Ok(())
    }

    fn send_message(&mut self, message: &[u8]) -> Result<(), NetError> {
        let s = self.s;
        let stamp = clock::now_ns();
        let count = message.len().div_ceil(s.cfg.payload).max(1);
        let first = {
            let mut w = s.window.lock().expect("window");
            let first = w.next;
            w.next_message = first + count as u64;
            first
        };
        for (index, chunk) in
            (0..count).map(|i| (i, &message[(i * s.cfg.payload).min(message.len())..((i + 1) * s.cfg.payload).min(message.len())]))
        {
            let h = s.header(Kind::Data, first + index as u64, (index as u64) << 32 | count as u64, stamp);
            let mut datagram = Vec::with_capacity(packet::HEADER + chunk.len() + packet::TAG);
            packet::encode(&s.cfg.key, &h, chunk, &mut datagram)?;
            self.wait_for_space(datagram.len())?;
            let datagram = Arc::new(datagram);
            {
                let mut w = s.window.lock().expect("window");
                w.bytes += datagram.len();
                w.peak_bytes = w.peak_bytes.max(w.bytes);
                w.packets.push_back(datagram.clone());
                w.next += 1;
            }
            self.port.send_to(&datagram, self.group)?;
            s.counters.packets.fetch_add(1, Ordering::Relaxed);
            s.counters.bytes.fetch_add(datagram.len() as u64, Ordering::Relaxed);
            self.housekeeping()?;
        }
        s.counters.messages.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Flow control: waits (serving repairs and heartbeats) until the window has room.
    fn wait_for_space(&mut self, bytes: usize) -> Result<(), NetError> {
        loop {
            {
                let w = self.s.window.lock().expect("window");
                if w.bytes == 0 || w.bytes + bytes <= self.s.cfg.window_bytes {
                    return Ok(());
                }
                if self.s.closed.load(Ordering::SeqCst) {
                    return Err(NetError::Closed);
                }
                let _ = self.s.changed.wait_timeout(w, Duration::from_micros(100)).expect("window");
            }
            self.housekeeping()?;
            self.s.evict_silent();
            self.s.trim(&self.s.members.lock().expect("members"));
        }
    }

    fn heartbeat(&mut self) -> Result<(), NetError> {
        let s = self.s;
        s.trim(&s.members.lock().expect("members"));
        let next = s.window.lock().expect("window").next;
        let h = s.header(Kind::Heartbeat, next, s.grtt_ns.load(Ordering::Relaxed), clock::now_ns());
        // Ask for ACKs often enough that a quarter of the window is never waiting on one.
        let datagram = s.cfg.payload + packet::HEADER + packet::TAG;
        let ack_every = (s.cfg.window_bytes / datagram / 4).clamp(1, 64) as u32;
        let payload = [&encode_addr(self.control)[..], &ack_every.to_le_bytes()].concat();
        packet::encode(&s.cfg.key, &h, &payload, &mut self.buf)?;
        self.port.send_to(&self.buf, self.group)?;
        self.next_heartbeat = Instant::now() + s.cfg.heartbeat;
        Ok(())
    }

    fn send_repairs(&mut self) -> Result<(), NetError> {
        let s = self.s;
        let seqs = {
            let mut r = s.repairs.lock().expect("repairs");
            s.repairs_pending.store(false, Ordering::Release);
            std::mem::take(&mut r.pending)
        };
        for seq in seqs {
            let Some(p) = s.window.lock().expect("window").get(seq) else {
                continue;
            };
            self.port.send_to(&p, self.group)?;
            s.counters.repairs.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }
}

/// Joins, leaves, ACKs and NACKs.
fn control_loop(s: &Shared, mut port: Box<dyn Port>, read_addr: Option<SocketAddr>) {
    let mut buf = vec![0u8; packet::MAX_DATAGRAM];
    let mut out = Vec::new();
    let mut next_check = Instant::now();
    while !s.closed.load(Ordering::SeqCst) {
        let got = match port.recv(&mut buf, Duration::from_millis(5)) {
            Ok(got) => got,
            Err(e) => return s.fail("control port", e),
        };
        if let Some((n, from)) = got {
            match packet::decode(&s.cfg.key, &buf[..n]) {
                Ok((h, payload)) if h.session == s.session => {
                    if let Err(e) = handle_control(s, &*port, &h, payload, from, read_addr, &mut out) {
                        return s.fail("control port", e);
                    }
                }
                Ok(_) => {} // another incarnation's receivers: they rejoin on our heartbeat
                Err(Refused::Malformed) => drop(s.counters.malformed.fetch_add(1, Ordering::Relaxed)),
                Err(Refused::Forged) => drop(s.counters.forged.fetch_add(1, Ordering::Relaxed)),
            }
        }
        if Instant::now() >= next_check {
            s.evict_silent();
            next_check = Instant::now() + Duration::from_millis(20);
        }
    }
}

fn handle_control(
    s: &Shared,
    port: &dyn Port,
    h: &Header,
    payload: &[u8],
    from: SocketAddr,
    read_addr: Option<SocketAddr>,
    out: &mut Vec<u8>,
) -> Result<(), NetError> {
    let id = h.a;
    match h.kind {
        Kind::Join => {
            let start = {
                let mut members = s.members.lock().expect("members");
                let start = s.window.lock().expect("window").next_message;
                let member = members.entry(id).or_insert_with(|| {
                    s.counters.joined.fetch_add(1, Ordering::Relaxed);
                    Member { acked: start, last_heard: Instant::now(), srtt_ns: None }
                });
                member.last_heard = Instant::now();
                s.changed.notify_all();
                member.acked
            };
            let reply = s.header(Kind::JoinAck, start, id, 0);
            packet::encode(&s.cfg.key, &reply, &read_addr.map(encode_addr).unwrap_or_default(), out)?;
            port.send_to(out, from)?;
        }
        Kind::Leave => {
            let mut members = s.members.lock().expect("members");
            if members.remove(&id).is_some() {
                s.counters.left.fetch_add(1, Ordering::Relaxed);
                if h.b == 1 {
                    s.counters.finished.fetch_add(1, Ordering::Relaxed);
                }
                s.trim(&members);
            }
        }
        Kind::Ack => on_ack(s, h),
        Kind::Nack if s.cfg.recovery == Recovery::Nack => on_nack(s, payload),
        _ => {}
    }
    Ok(())
}

/// A receiver's acknowledgement: it is heard from, its progress may free the window,
/// and its round-trip sample updates the group's.
fn on_ack(s: &Shared, h: &Header) {
    let id = h.a;
    let mut members = s.members.lock().expect("members");
    let Some(m) = members.get_mut(&id) else {
        return;
    };
    m.last_heard = Instant::now();
    let advanced = h.seq > m.acked;
    m.acked = m.acked.max(h.seq);
    if h.b != 0 {
        let sample = clock::now_ns().saturating_sub(h.b) as f64;
        m.srtt_ns = Some(m.srtt_ns.map_or(sample, |r| r + (sample - r) / 8.0));
        let max = members.values().filter_map(|m| m.srtt_ns).fold(0.0f64, f64::max);
        let grtt = (max as u64).clamp(s.cfg.min_grtt.as_nanos() as u64, 1_000_000_000);
        s.grtt_ns.store(grtt, Ordering::Relaxed);
    }
    if advanced {
        s.trim(&members);
    }
}

/// A receiver's negative acknowledgement: the packets it lacks are queued for repair,
/// once per packet per group round trip however many receivers ask.
fn on_nack(s: &Shared, payload: &[u8]) {
    s.counters.nacks.fetch_add(1, Ordering::Relaxed);
    let Some(ranges) = packet::decode_ranges(payload, u32::MAX as u64) else {
        s.counters.malformed.fetch_add(1, Ordering::Relaxed);
        return;
    };
    let holdoff = s.grtt();
    let now = Instant::now();
    let w = s.window.lock().expect("window");
    let (base, next) = (w.base, w.next);
    drop(w);
    let mut r = s.repairs.lock().expect("repairs");
    r.last_sent.retain(|&seq, _| seq >= base);
    for (start, count) in ranges {
        for seq in start.max(base)..(start + count as u64).min(next) {
            let recent = r.last_sent.get(&seq).is_some_and(|t| now.duration_since(*t) < holdoff);
            if !recent {
                r.last_sent.insert(seq, now);
                r.pending.insert(seq);
            }
        }
    }
    if !r.pending.is_empty() {
        s.repairs_pending.store(true, Ordering::Release);
    }
}

/// Most packets one READ may ask for: keeps one request from monopolising the service.
pub(crate) const READ_LIMIT: u64 = 1024;

/// RMA-pull: serves reads of the window, one-sided from the send loop's point of view.
fn read_service(s: &Shared, port: Box<dyn Port>) {
    if let Err(e) = serve_reads(s, port) {
        s.fail("read service", e);
    }
}

fn serve_reads(s: &Shared, mut port: Box<dyn Port>) -> Result<(), NetError> {
    let mut buf = vec![0u8; packet::MAX_DATAGRAM];
    let mut out = Vec::new();
    while !s.closed.load(Ordering::SeqCst) {
        let Some((n, from)) = port.recv(&mut buf, Duration::from_millis(5))? else {
            continue;
        };
        let (h, payload) = match packet::decode(&s.cfg.key, &buf[..n]) {
            Ok((h, p)) if h.session == s.session && h.kind == Kind::Read => (h, p),
            Ok(_) => continue,
            Err(Refused::Malformed) => {
                s.counters.malformed.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            Err(Refused::Forged) => {
                s.counters.forged.fetch_add(1, Ordering::Relaxed);
                continue;
            }
        };
        let Some(ranges) = packet::decode_ranges(payload, READ_LIMIT) else {
            s.counters.malformed.fetch_add(1, Ordering::Relaxed);
            continue;
        };
        for (start, count) in ranges {
            for seq in start..start + count as u64 {
                let (p, base) = {
                    let w = s.window.lock().expect("window");
                    (w.get(seq), w.base)
                };
                match p {
                    Some(p) => {
                        port.send_to(&p, from)?;
                        s.counters.reads_served.fetch_add(1, Ordering::Relaxed);
                    }
                    None if seq < base => {
                        packet::encode(&s.cfg.key, &s.header(Kind::Gone, seq, h.a, 0), &[], &mut out)?;
                        port.send_to(&out, from)?;
                    }
                    None => {} // not sent yet: the receiver asks again later
                }
            }
        }
    }
    Ok(())
}
