//! Reliable, ordered broadcast from one source to many receivers over an unreliable
//! datagram multicast (UDP multicast, or an in-process network for tests), with two
//! recovery schemes to compare:
//!
//! - **NACK** ([`Recovery::Nack`]): receivers report gaps with NORM-style (RFC 5740)
//!   randomised back-off and suppression; the sender's send loop multicasts repairs.
//! - **RMA-pull** ([`Recovery::Rma`]): the sender exposes its retained window through
//!   a read service running beside the send loop, never inside it; receivers read their
//!   own missing packets from it, one-sided (Chu et al., streaming broadcast).
//!
//! # Guarantees
//!
//! To the application of each receiver, every message sent after it joined is handed
//! over exactly once, whole, and in send order, under any loss of group datagrams, or
//! the stream says explicitly where it broke ([`Event::SenderRestarted`],
//! [`Event::StreamBroken`]). Flow control: the sender keeps every packet until each
//! member has it and waits while its window (`SenderConfig::window_bytes`) is full, so
//! a slow receiver slows the group and nothing anyone needs is discarded. A member
//! silent for `receiver_timeout` is evicted. Datagrams carry a 128-bit BLAKE3 keyed
//! tag: malformed or forged datagrams (no key) are dropped and counted.
//!
//! # Use
//!
//! ```no_run
//! use chatty_net::{Key, MemNet, Receiver, ReceiverConfig, Recovery, Sender, SenderConfig, Event};
//! use std::time::Duration;
//! let net = MemNet::new(); // or UdpNet::default() for real multicast
//! let group = "239.1.2.3:7000".parse().unwrap();
//! let key = Key::derive(b"shared secret");
//! let sender = Sender::start(&net, SenderConfig::new(group, Recovery::Rma, key.clone()))?;
//! let receiver = Receiver::start(&net, ReceiverConfig::new(group, Recovery::Rma, key))?;
//! sender.wait_for_receivers(1, Duration::from_secs(1))?;
//! sender.send(b"vertex updates")?;
//! if let Some(Event::Message(m)) = receiver.recv(Duration::from_secs(1))? {
//!     assert_eq!(m.data, b"vertex updates");
//! }
//! # Ok::<(), chatty_net::NetError>(())
//! ```
//!
//! Not here: congestion control (the sender's pace is the application's and flow
//! control's), encryption (the tag authenticates, it does not hide), several senders
//! per group (run one group per source).

#![deny(missing_docs)]

pub mod bench;
pub mod clock;
pub mod file;
pub mod model;
pub mod packet;
mod receiver;
mod sender;
pub mod transport;

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};

pub use packet::Key;
pub use receiver::{Event, Message, Receiver, ReceiverConfig, ReceiverStats};
pub use sender::{Sender, SenderConfig, SenderStats};
pub use transport::{LossModel, MemNet, Network, UdpNet};

/// How lost packets are recovered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Recovery {
    /// Receivers ask the group for what they miss (negative acknowledgements); the sender multicasts repairs.
    Nack,
    /// Receivers read what they miss from the sender's window (remote-memory-access style pulls).
    Rma,
}

impl Recovery {
    /// Both schemes.
    pub const ALL: [Recovery; 2] = [Recovery::Nack, Recovery::Rma];

    /// The name on the command line and in reports: `nack` or `rma`.
    pub fn name(self) -> &'static str {
        match self {
            Recovery::Nack => "nack",
            Recovery::Rma => "rma",
        }
    }

    /// The scheme named `name`, if any.
    pub fn from_name(name: &str) -> Option<Recovery> {
        match name {
            "nack" => Some(Recovery::Nack),
            "rma" => Some(Recovery::Rma),
            _ => None,
        }
    }
}

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    #[error("network I/O: {0}")]
    /// A socket call failed.
    Io(#[from] std::io::Error),
    #[error("a packet of {0} payload bytes does not fit a datagram")]
    /// A message needs more than one datagram can carry.
    TooLarge(usize),
    #[error("{0}")]
    /// A configuration that cannot work (the words say which).
    Config(String),
    #[error("timed out: {0}")]
    /// Nothing arrived in time (the words say what was awaited).
    Timeout(String),
    #[error("broadcast failed: {0}")]
    /// The broadcast failed (the words say why).
    Failed(String),
    #[error("the broadcast is closed")]
    /// The broadcast ended; nothing more will arrive.
    Closed,
}

/// An IPv4 socket address as 6 bytes (address, port), as heartbeats and join answers carry it.
pub(crate) fn encode_addr(a: SocketAddr) -> Vec<u8> {
    match a {
        SocketAddr::V4(a) => [&a.ip().octets()[..], &a.port().to_le_bytes()].concat(),
        SocketAddr::V6(_) => Vec::new(),
    }
}

pub(crate) fn decode_addr(b: &[u8]) -> Option<SocketAddr> {
    let b: [u8; 6] = b.try_into().ok()?;
    Some(SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(b[0], b[1], b[2], b[3]), u16::from_le_bytes([b[4], b[5]]))))
}
