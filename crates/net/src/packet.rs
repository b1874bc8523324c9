//! The wire format: one datagram is a 40-byte header, a payload, and a 16-byte tag
//! (BLAKE3 keyed hash of header and payload under the group's key).
//!
//! ```text
//!  0 magic "CGB1"   4 kind u8   5 reserved u8   6 payload length u16
//!  8 session u64    16 seq u64   24 a u64        32 b u64
//! 40 payload ...    then 16 bytes of tag
//! ```
//! All integers little-endian. The meaning of `seq`, `a` and `b` depends on the kind
//! (see [`Kind`]). A datagram that is too short, has the wrong magic, an unknown kind
//! or a length that disagrees with its size is *malformed*; one whose tag does not
//! verify is *forged* (or corrupted); both are dropped and counted, never trusted.

use crate::NetError;

/// Bytes of a header.
pub const HEADER: usize = 40;
/// Bytes of the tag after the payload.
pub const TAG: usize = 16;
const MAGIC: [u8; 4] = *b"CGB1";

/// Largest datagram we send or accept (a UDP payload that fits any MTU path we use
/// after IP fragmentation is ruled out by the default payload size).
pub const MAX_DATAGRAM: usize = 65_000;

/// What a datagram is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// Sender → group. `seq` packet number; `a` = fragment index << 32 | fragment count;
    /// `b` the message's submit time (ns, [`crate::clock::now_ns`]).
    Data = 1,
    /// Sender → group, periodic. `seq` highest packet sent (u64::MAX: none yet);
    /// `a` the group round-trip time estimate (ns); `b` send time (ns, echoed in ACKs);
    /// payload: the control address (6 bytes) and how many packets receivers may take
    /// between ACKs (u32).
    Heartbeat = 2,
    /// Receiver → sender. `seq` next packet the receiver needs (all before it are held);
    /// `a` receiver id; `b` the last heartbeat's time plus how long the receiver held it.
    Ack = 3,
    /// Receiver → group and sender. `a` receiver id; payload: ranges of missing packets.
    Nack = 4,
    /// Receiver → sender. `a` receiver id.
    Join = 5,
    /// Sender → receiver. `seq` first packet the receiver will get; `a` receiver id;
    /// payload: the read service's IPv4 address and port (6 bytes).
    JoinAck = 6,
    /// Receiver → sender. `a` receiver id.
    Leave = 7,
    /// Receiver → read service. `a` receiver id; payload: ranges of packets to read.
    Read = 8,
    /// Read service → receiver: `seq` the first requested packet that has left the window.
    Gone = 9,
}

impl Kind {
    fn from_u8(v: u8) -> Option<Kind> {
        Some(match v {
            1 => Kind::Data,
            2 => Kind::Heartbeat,
            3 => Kind::Ack,
            4 => Kind::Nack,
            5 => Kind::Join,
            6 => Kind::JoinAck,
            7 => Kind::Leave,
            8 => Kind::Read,
            9 => Kind::Gone,
            _ => return None,
        })
    }
}

/// The shared secret of a broadcast group: only holders can make packets receivers accept.
#[derive(Clone)]
pub struct Key([u8; 32]);

impl Key {
    /// Derives the group key from any secret (a passphrase, random bytes...).
    pub fn derive(secret: &[u8]) -> Key {
        Key(blake3::derive_key("chatty-net broadcast v1 group key", secret))
    }

    fn tag(&self, bytes: &[u8]) -> [u8; TAG] {
        let full = blake3::keyed_hash(&self.0, bytes);
        full.as_bytes()[..TAG].try_into().expect("16 of 32 bytes")
    }
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(..)")
    }
}

/// A decoded header; the payload stays in the caller's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// What the datagram is.
    pub kind: Kind,
    /// The sender incarnation it belongs to.
    pub session: u64,
    /// A packet number (see [`Kind`]).
    pub seq: u64,
    /// The first kind-dependent word (see [`Kind`]).
    pub a: u64,
    /// The second kind-dependent word (see [`Kind`]).
    pub b: u64,
}

/// Why a datagram was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// Too short, wrong magic, unknown kind, or a length that disagrees with its size.
    Malformed,
    /// The tag does not verify under the group's key.
    Forged,
}

/// Writes a datagram into `out` (cleared first).
pub fn encode(key: &Key, h: &Header, payload: &[u8], out: &mut Vec<u8>) -> Result<(), NetError> {
    if HEADER + payload.len() + TAG > MAX_DATAGRAM {
        return Err(NetError::TooLarge(payload.len()));
    }
    out.clear();
    out.extend_from_slice(&MAGIC);
    out.push(h.kind as u8);
    out.push(0);
    out.extend_from_slice(&(payload.len() as u16).to_le_bytes());
    for v in [h.session, h.seq, h.a, h.b] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(payload);
    let tag = key.tag(out);
    out.extend_from_slice(&tag);
    Ok(())
}

/// Checks and decodes a datagram; on success the payload is `&bytes[HEADER..HEADER + len]`.
pub fn decode<'a>(key: &Key, bytes: &'a [u8]) -> Result<(Header, &'a [u8]), Refused> {
    if bytes.len() < HEADER + TAG || bytes[..4] != MAGIC {
        return Err(Refused::Malformed);
    }
    let kind = Kind::from_u8(bytes[4]).ok_or(Refused::Malformed)?;
    let len = u16::from_le_bytes([bytes[6], bytes[7]]) as usize;
    if bytes.len() != HEADER + len + TAG {
        return Err(Refused::Malformed);
    }
    let (body, tag) = bytes.split_at(HEADER + len);
    if key.tag(body) != tag {
        return Err(Refused::Forged);
    }
    let word = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
    let h = Header { kind, session: word(8), seq: word(16), a: word(24), b: word(32) };
    Ok((h, &body[HEADER..]))
}

/// Packet ranges `[start, start + count)` as carried by NACK and READ payloads.
pub fn encode_ranges(ranges: &[(u64, u32)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(ranges.len() * 12);
    for &(start, count) in ranges {
        out.extend_from_slice(&start.to_le_bytes());
        out.extend_from_slice(&count.to_le_bytes());
    }
    out
}

/// The inverse of [`encode_ranges`]; `None` for a payload that is not a whole number
/// of ranges or names more than `limit` packets in all.
pub fn decode_ranges(payload: &[u8], limit: u64) -> Option<Vec<(u64, u32)>> {
    if !payload.len().is_multiple_of(12) {
        return None;
    }
    let mut total = 0u64;
    let ranges: Vec<(u64, u32)> = payload
        .chunks_exact(12)
        .map(|c| {
            let start = u64::from_le_bytes(c[..8].try_into().expect("8 bytes"));
            (start, u32::from_le_bytes(c[8..].try_into().expect("4 bytes")))
        })
        .collect();
    for &(start, count) in &ranges {
        total += count as u64;
        start.checked_add(count as u64)?;
    }
    (total <= limit).then_some(ranges)
}

/// Groups sorted packet numbers into ranges.
pub fn to_ranges(seqs: impl IntoIterator<Item = u64>) -> Vec<(u64, u32)> {
    let mut ranges: Vec<(u64, u32)> = Vec::new();
    for s in seqs {
        match ranges.last_mut() {
            Some((start, count)) if *start + *count as u64 == s && *count < u32::MAX => *count += 1,
            _ => ranges.push((s, 1)),
        }
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn key() -> Key {
        Key::derive(b"test")
    }

    #[test]
    fn round_trip() {
        let h = Header { kind: Kind::Data, session: 7, seq: 42, a: 3 << 32 | 9, b: 123 };
        let mut out = Vec::new();
        encode(&key(), &h, b"hello", &mut out).unwrap();
        assert_eq!(out.len(), HEADER + 5 + TAG);
        let (d, payload) = decode(&key(), &out).unwrap();
        assert_eq!((d, payload), (h, &b"hello"[..]));
    }

    #[test]
    fn refuses_tampering_and_other_keys() {
        let h = Header { kind: Kind::Ack, session: 1, seq: 2, a: 3, b: 4 };
        let mut out = Vec::new();
        encode(&key(), &h, b"x", &mut out).unwrap();
        assert_eq!(decode(&Key::derive(b"other"), &out), Err(Refused::Forged));
        let mut flipped = out.clone();
        flipped[20] ^= 1;
        assert_eq!(decode(&key(), &flipped), Err(Refused::Forged));
        assert_eq!(decode(&key(), &out[..out.len() - 1]), Err(Refused::Malformed));
        let mut bad_kind = out.clone();
        bad_kind[4] = 200;
        assert_eq!(decode(&key(), &bad_kind), Err(Refused::Malformed));
        assert_eq!(decode(&key(), b"CGB1"), Err(Refused::Malformed));
    }

    #[test]
    fn ranges() {
        assert_eq!(to_ranges([1, 2, 3, 7, 9, 10]), vec![(1, 3), (7, 1), (9, 2)]);
        let enc = encode_ranges(&[(1, 3), (7, 1)]);
        assert_eq!(decode_ranges(&enc, 100), Some(vec![(1, 3), (7, 1)]));
        assert_eq!(decode_ranges(&enc, 3), None, "over the limit");
        assert_eq!(decode_ranges(&enc[..5], 100), None);
        assert_eq!(decode_ranges(&encode_ranges(&[(u64::MAX, 2)]), 100), None, "overflow");
    }

    proptest! {
        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode(&key(), &bytes);
            let _ = decode_ranges(&bytes, 1000);
        }
    }
}
