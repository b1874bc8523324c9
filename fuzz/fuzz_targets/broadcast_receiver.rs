//! Hostile datagrams against a live receiver: each input is split into datagrams at
//! 0xA5 bytes; each is sent raw and also as a correctly tagged packet (as a rogue
//! holder of the group key could), with header fields taken from its bytes.
#![no_main]

use std::time::Duration;

use chatty_net::packet::{self, Header, Key, Kind};
use chatty_net::{MemNet, Network, Receiver, ReceiverConfig, Recovery};

const KINDS: [Kind; 9] =
    [Kind::Data, Kind::Heartbeat, Kind::Ack, Kind::Nack, Kind::Join, Kind::JoinAck, Kind::Leave, Kind::Read, Kind::Gone];

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let net = MemNet::new();
    let group = "239.1.1.1:5000".parse().unwrap();
    let key = Key::derive(b"fuzz");
    let recovery = if mode & 1 == 0 { Recovery::Nack } else { Recovery::Rma };
    let mut cfg = ReceiverConfig::new(group, recovery, key.clone());
    cfg.id = 1;
    let receiver = Receiver::start(&net, cfg).unwrap();
    let port = net.open(None, None).unwrap();
    let mut out = Vec::new();
    for chunk in rest.split(|&b| b == 0xA5) {
        port.send_to(chunk, std::net::SocketAddr::V4(group)).unwrap();
        if chunk.len() >= 26 {
            let word = |i: usize| u64::from_le_bytes(chunk[i..i + 8].try_into().unwrap());
            let h = Header { kind: KINDS[chunk[0] as usize % 9], session: chunk[1] as u64 % 3, seq: word(2) % 64, a: word(10), b: word(18) };
            let h = Header { a: if chunk[0] & 0x80 != 0 { 1 } else { h.a }, ..h };
            packet::encode(&key, &h, &chunk[26..], &mut out).unwrap();
            port.send_to(&out, std::net::SocketAddr::V4(group)).unwrap();
        }
    }
    while let Ok(Some(_)) = receiver.recv(Duration::from_millis(2)) {}
    // The protocol thread must still be alive (a panic there aborts the fuzzer).
    receiver.stats();
});
