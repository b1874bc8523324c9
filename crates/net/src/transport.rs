//! Unreliable datagram transports: real UDP multicast ([`UdpNet`]) and an in-process
//! network ([`MemNet`]) for deterministic tests, both with loss injection on the
//! multicast group ([`LossModel`]).
//!
//! Loss is injected where a datagram *arrives from the group*: each member port draws
//! its own losses, so receivers lose different packets, as on a real network. Unicast
//! traffic (ACKs, joins, reads and their answers) is not subject to injected loss; the
//! protocol still survives its real loss through timeouts and retries.

use std::collections::HashMap;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use socket2::{Domain, Protocol, Socket, Type};

/// One endpoint: a unicast address, optionally also a member of one multicast group.
pub trait Port: Send {
    /// Sends one datagram (to a unicast address or to the group address). Like UDP,
    /// it may be lost; an error means the local socket failed.
    fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<()>;
    /// The next datagram from any source, or `None` after `timeout`.
    fn recv(&mut self, buf: &mut [u8], timeout: Duration) -> io::Result<Option<(usize, SocketAddr)>>;
    /// This port's unicast address, where answers come back.
    fn addr(&self) -> SocketAddr;
}

/// Makes ports.
pub trait Network: Send + Sync {
    /// A new port with its own unicast address; with `group`, also a member of that
    /// multicast group, whose arriving datagrams pass through `loss` first.
    fn open(&self, group: Option<SocketAddrV4>, loss: Option<LossModel>) -> io::Result<Box<dyn Port>>;
}

/// Gilbert–Elliott loss: a two-state chain whose bad state drops every datagram.
/// `rate` is the long-run fraction lost, `burst` the mean length of a loss burst
/// (1.0: independent losses).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossModel {
    /// Long-run fraction of datagrams lost.
    pub rate: f64,
    /// Mean length of a loss burst (1.0: independent losses).
    pub burst: f64,
    /// Seed of the loss draws.
    pub seed: u64,
}

impl LossModel {
    /// A model with `rate` clamped below 1 and `burst` at least 1.
    pub fn new(rate: f64, burst: f64, seed: u64) -> LossModel {
        LossModel { rate: rate.clamp(0.0, 0.999), burst: burst.max(1.0), seed }
    }
}

/// The running state of a [`LossModel`] at one port.
pub struct Loss {
    enter_bad: f64,
    leave_bad: f64,
    bad: bool,
    rng: Xoshiro256PlusPlus,
}

impl Loss {
    /// The model's chain, in its good state.
    pub fn new(m: LossModel) -> Loss {
        // Stationary P(bad) = enter / (enter + leave) = rate; mean bad run = burst.
        let leave_bad = 1.0 / m.burst;
        let enter_bad = if m.rate <= 0.0 { 0.0 } else { m.rate * leave_bad / (1.0 - m.rate) };
        Loss { enter_bad, leave_bad, bad: false, rng: Xoshiro256PlusPlus::seed_from_u64(m.seed) }
    }

    /// Whether the next datagram is lost.
    pub fn drops(&mut self) -> bool {
        if self.enter_bad == 0.0 {
            return false;
        }
        let u = (self.rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        self.bad = if self.bad { u >= self.leave_bad } else { u < self.enter_bad };
        self.bad
    }
}

/// Real UDP: multicast with loop-back on one interface (127.0.0.1 by default, so that
/// every process of one machine is a member; a LAN interface for several machines).
#[derive(Clone, Debug)]
pub struct UdpNet {
    /// The interface multicast leaves and joins on.
    pub interface: Ipv4Addr,
    /// Multicast hop limit: 0 keeps datagrams on this host.
    pub ttl: u32,
}

impl Default for UdpNet {
    fn default() -> Self {
        UdpNet::on(Ipv4Addr::LOCALHOST)
    }
}

impl UdpNet {
    /// Multicast on `interface`: kept on this host for the loopback address, else
    /// allowed a few router hops (a cluster's networks).
    pub fn on(interface: Ipv4Addr) -> UdpNet {
        UdpNet { interface, ttl: if interface == Ipv4Addr::LOCALHOST { 0 } else { 8 } }
    }
}

/// Socket buffer we ask for; the kernel caps it at net.core.rmem_max / wmem_max.
const SOCKET_BUFFER: usize = 4 << 20;

impl Network for UdpNet {
    fn open(&self, group: Option<SocketAddrV4>, loss: Option<LossModel>) -> io::Result<Box<dyn Port>> {
        let unicast = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))?;
        unicast.set_multicast_if_v4(&self.interface)?;
        unicast.set_multicast_loop_v4(true)?;
        unicast.set_multicast_ttl_v4(self.ttl)?;
        let _ = unicast.set_send_buffer_size(SOCKET_BUFFER);
        let _ = unicast.set_recv_buffer_size(SOCKET_BUFFER);
        unicast.bind(&SocketAddrV4::new(self.interface, 0).into())?;
        unicast.set_nonblocking(true)?;
        let unicast = mio::net::UdpSocket::from_std(unicast.into());
        let addr = unicast.local_addr()?;
        let poll = mio::Poll::new()?;
        let mut port = UdpPort { unicast, group: None, loss: loss.map(Loss::new), poll, events: mio::Events::with_capacity(4), addr };
        poll_register(&port.poll, &mut port.unicast, UNICAST)?;
        if let Some(g) = group {
            if !g.ip().is_multicast() {
                return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{g} is not a multicast address")));
            }
            let s = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))?;
            s.set_reuse_address(true)?;
            let _ = s.set_recv_buffer_size(SOCKET_BUFFER);
            s.bind(&SocketAddrV4::new(*g.ip(), g.port()).into())?;
            s.join_multicast_v4(g.ip(), &self.interface)?;
            s.set_nonblocking(true)?;
            let mut s = mio::net::UdpSocket::from_std(s.into());
            poll_register(&port.poll, &mut s, GROUP)?;
            port.group = Some(s);
        }
        Ok(Box::new(port))
    }
}

const UNICAST: mio::Token = mio::Token(0);
const GROUP: mio::Token = mio::Token(1);

fn poll_register(poll: &mio::Poll, s: &mut mio::net::UdpSocket, token: mio::Token) -> io::Result<()> {
    poll.registry().register(s, token, mio::Interest::READABLE)
}

struct UdpPort {
    unicast: mio::net::UdpSocket,
    group: Option<mio::net::UdpSocket>,
    loss: Option<Loss>,
    poll: mio::Poll,
    events: mio::Events,
    addr: SocketAddr,
}

/// How long a send may wait for room in a full socket buffer before it is an error.
const SEND_STALL_LIMIT: Duration = Duration::from_secs(5);

impl Port for UdpPort {
    fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<()> {
        let start = Instant::now();
        loop {
            match self.unicast.send_to(datagram, to) {
                Ok(_) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && start.elapsed() < SEND_STALL_LIMIT => std::thread::yield_now(),
                // A peer's closed port (ICMP unreachable) is loss, not our failure.
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => return Ok(()),
                Err(e) => return Err(e),
            }
        }
    }

    fn recv(&mut self, buf: &mut [u8], timeout: Duration) -> io::Result<Option<(usize, SocketAddr)>> {
        let deadline = Instant::now() + timeout;
        loop {
            // Drain both sockets before sleeping: mio readiness is edge-triggered.
            if let Some(got) = try_recv(&self.unicast, buf)? {
                return Ok(Some(got));
            }
            if let Some(g) = &self.group {
                if let Some(got) = try_recv(g, buf)? {
                    if self.loss.as_mut().is_some_and(Loss::drops) {
                        continue;
                    }
                    return Ok(Some(got));
                }
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            match self.poll.poll(&mut self.events, Some(deadline - now)) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                r => r?,
            }
        }
    }

    fn addr(&self) -> SocketAddr {
        self.addr
    }
}

fn try_recv(s: &mio::net::UdpSocket, buf: &mut [u8]) -> io::Result<Option<(usize, SocketAddr)>> {
    match s.recv_from(buf) {
        Ok(got) => Ok(Some(got)),
        Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::ConnectionRefused) => Ok(None),
        Err(e) => Err(e),
    }
}

/// An in-process network: ports are channels, the group is a member list. Datagrams
/// beyond a port's queue capacity are dropped, like a full socket buffer.
#[derive(Clone, Default)]
pub struct MemNet {
    hub: Arc<Hub>,
}

#[derive(Default)]
struct Hub {
    ports: Mutex<HashMap<SocketAddr, crossbeam_channel::Sender<Datagram>>>,
    groups: Mutex<HashMap<SocketAddrV4, Vec<SocketAddr>>>,
    next: AtomicU32,
}

struct Datagram {
    bytes: Vec<u8>,
    from: SocketAddr,
    via_group: bool,
}

const MEM_QUEUE: usize = 8192;

impl MemNet {
    /// An empty network.
    pub fn new() -> MemNet {
        MemNet::default()
    }
}

impl Network for MemNet {
    fn open(&self, group: Option<SocketAddrV4>, loss: Option<LossModel>) -> io::Result<Box<dyn Port>> {
        let n = self.hub.next.fetch_add(1, Ordering::Relaxed) + 1;
        let addr = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(10, 0, (n >> 8) as u8, n as u8), 5000));
        let (tx, rx) = crossbeam_channel::bounded(MEM_QUEUE);
        self.hub.ports.lock().expect("hub").insert(addr, tx);
        if let Some(g) = group {
            self.hub.groups.lock().expect("hub").entry(g).or_default().push(addr);
        }
        Ok(Box::new(MemPort { hub: self.hub.clone(), addr, rx, loss: loss.map(Loss::new) }))
    }
}

struct MemPort {
    hub: Arc<Hub>,
    addr: SocketAddr,
    rx: crossbeam_channel::Receiver<Datagram>,
    loss: Option<Loss>,
}

impl Port for MemPort {
    fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<()> {
        let members = match to {
            SocketAddr::V4(g) if g.ip().is_multicast() => self.hub.groups.lock().expect("hub").get(&g).cloned().unwrap_or_default(),
            _ => vec![to],
        };
        let via_group = members.len() != 1 || members[0] != to;
        let ports = self.hub.ports.lock().expect("hub");
        for m in members {
            if let Some(tx) = ports.get(&m) {
                let _ = tx.try_send(Datagram { bytes: datagram.to_vec(), from: self.addr, via_group });
            }
        }
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8], timeout: Duration) -> io::Result<Option<(usize, SocketAddr)>> {
        let deadline = Instant::now() + timeout;
        loop {
            let d = match self.rx.recv_deadline(deadline) {
                Ok(d) => d,
                Err(_) => return Ok(None),
            };
            if d.via_group && self.loss.as_mut().is_some_and(Loss::drops) {
                continue;
            }
            let n = d.bytes.len().min(buf.len());
            buf[..n].copy_from_slice(&d.bytes[..n]);
            return Ok(Some((n, d.from)));
        }
    }

    fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for MemPort {
    fn drop(&mut self) {
        self.hub.ports.lock().expect("hub").remove(&self.addr);
        for members in self.hub.groups.lock().expect("hub").values_mut() {
            members.retain(|m| *m != self.addr);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_rate_and_bursts() {
        for (rate, burst) in [(0.01, 1.0), (0.05, 1.0), (0.05, 8.0), (0.2, 4.0)] {
            let mut loss = Loss::new(LossModel::new(rate, burst, 1));
            let n = 400_000;
            let (mut lost, mut runs, mut prev) = (0, 0, false);
            for _ in 0..n {
                let d = loss.drops();
                lost += d as u32;
                runs += (d && !prev) as u32;
                prev = d;
            }
            let measured = lost as f64 / n as f64;
            assert!((measured - rate).abs() < rate * 0.1, "rate {rate}: measured {measured}");
            let mean_run = lost as f64 / runs as f64;
            assert!((mean_run - burst).abs() < burst * 0.15 + 0.05, "burst {burst}: measured {mean_run}");
        }
        assert!(!Loss::new(LossModel::new(0.0, 1.0, 1)).drops());
    }

    #[test]
    fn mem_group_and_unicast() {
        let net = MemNet::new();
        let g: SocketAddrV4 = "239.9.9.9:9000".parse().unwrap();
        let sender = net.open(None, None).unwrap();
        let mut a = net.open(Some(g), None).unwrap();
        let mut b = net.open(Some(g), Some(LossModel::new(0.5, 1.0, 3))).unwrap();
        for i in 0..100u8 {
            sender.send_to(&[i], SocketAddr::V4(g)).unwrap();
        }
        let mut buf = [0u8; 8];
        let mut got_a = 0;
        while a.recv(&mut buf, Duration::from_millis(10)).unwrap().is_some() {
            got_a += 1;
        }
        let mut got_b = 0;
        while b.recv(&mut buf, Duration::from_millis(10)).unwrap().is_some() {
            got_b += 1;
        }
        assert_eq!(got_a, 100);
        assert!((30..70).contains(&got_b), "{got_b}");
        a.send_to(b"hi", sender.addr()).unwrap();
        drop(a);
        sender.send_to(&[1], SocketAddr::V4(g)).unwrap();
        assert!(b.recv(&mut buf, Duration::from_millis(10)).is_ok());
    }

    #[test]
    fn udp_multicast_on_loopback() {
        let net = UdpNet::default();
        let g = SocketAddrV4::new(Ipv4Addr::new(239, 77, 1, 2), 40000 + (std::process::id() % 20000) as u16);
        let sender = net.open(None, None).unwrap();
        let mut a = net.open(Some(g), None).unwrap();
        let mut b = net.open(Some(g), None).unwrap();
        sender.send_to(b"hello", SocketAddr::V4(g)).unwrap();
        let mut buf = [0u8; 64];
        for port in [&mut a, &mut b] {
            let (n, from) = port.recv(&mut buf, Duration::from_secs(2)).unwrap().expect("multicast arrives");
            assert_eq!(&buf[..n], b"hello");
            assert_eq!(from, sender.addr());
        }
        a.send_to(b"back", sender.addr()).unwrap();
        let mut sender = sender;
        let (n, _) = sender.recv(&mut buf, Duration::from_secs(2)).unwrap().expect("unicast arrives");
        assert_eq!(&buf[..n], b"back");
    }
}
