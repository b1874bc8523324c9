//! The broadcast's guarantees under loss, joins, leaves, restarts and hostile packets,
//! on the in-process network (deterministic loss) and on real UDP multicast.

use std::net::{SocketAddr, SocketAddrV4};
use std::time::{Duration, Instant};

use chatty_net::packet::{self, Header, Kind};
use chatty_net::{Event, Key, LossModel, MemNet, Network, Receiver, ReceiverConfig, Recovery, Sender, SenderConfig, UdpNet};

const SCHEMES: [Recovery; 2] = [Recovery::Nack, Recovery::Rma];
const WAIT: Duration = Duration::from_secs(20);

fn group() -> SocketAddrV4 {
    "239.10.20.30:7000".parse().unwrap()
}

fn key() -> Key {
    Key::derive(b"tests")
}

/// Message `i`: its number, then a length and content that vary with it (sizes from 0
/// payload bytes to several packets).
fn message(i: u64) -> Vec<u8> {
    let len = (i * 977 % 6000) as usize;
    let mut m = i.to_le_bytes().to_vec();
    m.extend((0..len).map(|j| (i as usize ^ j) as u8));
    m
}

fn sender(net: &dyn Network, recovery: Recovery, tweak: impl FnOnce(&mut SenderConfig)) -> Sender {
    let mut cfg = SenderConfig::new(group(), recovery, key());
    tweak(&mut cfg);
    Sender::start(net, cfg).unwrap()
}

fn receiver(net: &dyn Network, recovery: Recovery, loss: Option<LossModel>) -> Receiver {
    let mut cfg = ReceiverConfig::new(group(), recovery, key());
    cfg.loss = loss;
    Receiver::start(net, cfg).unwrap()
}

/// Reads messages until `count` arrived; asserts they are exactly `first..first+count`
/// in order, whole and unchanged.
fn expect_messages(r: &Receiver, first: u64, count: u64) {
    let deadline = Instant::now() + WAIT;
    let mut next = first;
    while next < first + count {
        let left = deadline.saturating_duration_since(Instant::now());
        match r.recv(left).unwrap() {
            Some(Event::Message(m)) => {
                let i = u64::from_le_bytes(m.data[..8].try_into().unwrap());
                assert_eq!(i, next, "message out of order, duplicated or lost");
                assert_eq!(m.data, message(i), "message {i} corrupted");
                next += 1;
            }
            Some(other) => panic!("unexpected event {other:?}"),
            None => panic!("timed out after {} of {count} messages; stats {:?}", next - first, r.stats()),
        }
    }
}

fn first_message(r: &Receiver) -> u64 {
    match r.recv(WAIT).unwrap() {
        Some(Event::Message(m)) => {
            let i = u64::from_le_bytes(m.data[..8].try_into().unwrap());
            assert_eq!(m.data, message(i));
            i
        }
        other => panic!("expected a message, got {other:?}"),
    }
}

#[test]
fn exactly_once_in_order_under_heavy_and_bursty_loss() {
    for recovery in SCHEMES {
        for (rate, burst) in [(0.2, 1.0), (0.05, 8.0), (0.3, 4.0)] {
            let net = MemNet::new();
            let s = sender(&net, recovery, |c| c.window_bytes = 512 << 10);
            let receivers: Vec<Receiver> = (0..3).map(|i| receiver(&net, recovery, Some(LossModel::new(rate, burst, 100 + i)))).collect();
            s.wait_for_receivers(3, WAIT).unwrap();
            let n = 1500;
            std::thread::scope(|scope| {
                scope.spawn(|| {
                    for i in 0..n {
                        s.send(&message(i)).unwrap();
                    }
                });
                for r in &receivers {
                    scope.spawn(move || expect_messages(r, 0, n));
                }
            });
            s.flush(WAIT).unwrap();
            let st = s.stats();
            let recovered: u64 = receivers.iter().map(|r| r.stats().recovered).sum();
            assert!(recovered > 0, "{recovery:?} {rate}: loss was injected, something must be recovered");
            match recovery {
                Recovery::Nack => assert!(st.repairs > 0 && st.reads_served == 0, "{st:?}"),
                Recovery::Rma => assert!(st.reads_served > 0 && st.repairs == 0, "{st:?}"),
            }
            assert!(st.peak_window_bytes <= (512 << 10) + 8000, "window over its limit: {st:?}");
        }
    }
}

#[test]
fn late_join_gets_a_whole_suffix_and_leaving_does_not_stall_the_group() {
    for recovery in SCHEMES {
        let net = MemNet::new();
        let s = sender(&net, recovery, |c| c.window_bytes = 256 << 10);
        let early = receiver(&net, recovery, Some(LossModel::new(0.05, 2.0, 1)));
        let leaver = receiver(&net, recovery, Some(LossModel::new(0.05, 2.0, 2)));
        s.wait_for_receivers(2, WAIT).unwrap();
        for i in 0..300 {
            s.send(&message(i)).unwrap();
        }
        let late = receiver(&net, recovery, Some(LossModel::new(0.05, 2.0, 3)));
        s.wait_for_receivers(3, WAIT).unwrap();
        expect_messages(&leaver, 0, 100);
        drop(leaver);
        for i in 300..800 {
            s.send(&message(i)).unwrap();
        }
        expect_messages(&early, 0, 800);
        // The late receiver starts at a message boundary after it joined, then gets
        // every later message.
        let first = first_message(&late);
        assert!(first <= 300, "joined before message 300 was sent, started at {first}");
        expect_messages(&late, first + 1, 800 - first - 1);
        s.flush(WAIT).unwrap();
        let st = s.stats();
        assert_eq!((st.joined, st.left, st.members), (3, 1, 2), "{st:?}");
    }
}

#[test]
fn slow_reader_is_waited_for_and_a_silent_member_is_evicted() {
    let net = MemNet::new();
    let s = sender(&net, Recovery::Rma, |c| {
        c.window_bytes = 64 << 10;
        c.receiver_timeout = Duration::from_millis(300);
    });
    let mut cfg = ReceiverConfig::new(group(), Recovery::Rma, key());
    cfg.queue = 4;
    cfg.loss = Some(LossModel::new(0.05, 1.0, 9));
    let slow = Receiver::start(&net, cfg).unwrap();
    s.wait_for_receivers(1, WAIT).unwrap();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            for i in 0..200 {
                s.send(&message(i)).unwrap();
            }
        });
        scope.spawn(|| {
            let deadline = Instant::now() + WAIT;
            for i in 0..200 {
                if i % 20 == 0 {
                    std::thread::sleep(Duration::from_millis(30));
                }
                match slow.recv(deadline.saturating_duration_since(Instant::now())).unwrap() {
                    Some(Event::Message(m)) => assert_eq!(m.data, message(i)),
                    other => panic!("{other:?}"),
                }
            }
        });
    });
    s.flush(WAIT).unwrap();
    assert!(s.stats().peak_window_bytes <= (64 << 10) + 8000);

    // A member that joins and then falls silent (a crashed process) is evicted, and
    // the sender goes on.
    let mut ghost = net.open(Some(group()), None).unwrap();
    let mut buf = vec![0u8; packet::MAX_DATAGRAM];
    let (session, control) = loop {
        let (n, _) = ghost.recv(&mut buf, WAIT).unwrap().expect("heartbeat");
        if let Ok((h, payload)) = packet::decode(&key(), &buf[..n]) {
            if h.kind == Kind::Heartbeat {
                let a: [u8; 6] = payload[..6].try_into().unwrap();
                let addr = SocketAddrV4::new(a[..4].try_into().map(|o: [u8; 4]| o.into()).unwrap(), u16::from_le_bytes([a[4], a[5]]));
                break (h.session, SocketAddr::V4(addr));
            }
        }
    };
    let mut join = Vec::new();
    packet::encode(&key(), &Header { kind: Kind::Join, session, seq: 0, a: 4242, b: 0 }, &[], &mut join).unwrap();
    ghost.send_to(&join, control).unwrap();
    s.wait_for_receivers(2, WAIT).unwrap();
    for i in 200..300 {
        s.send(&message(i)).unwrap();
    }
    expect_messages(&slow, 200, 100);
    s.flush(WAIT).unwrap();
    assert_eq!(s.stats().evicted, 1);
}

#[test]
fn a_restarted_sender_is_detected() {
    for recovery in SCHEMES {
        let net = MemNet::new();
        let r = receiver(&net, recovery, Some(LossModel::new(0.02, 1.0, 5)));
        let old = sender(&net, recovery, |_| {});
        old.wait_for_receivers(1, WAIT).unwrap();
        for i in 0..50 {
            old.send(&message(i)).unwrap();
        }
        expect_messages(&r, 0, 50);
        let old_session = old.session();
        drop(old);
        std::thread::sleep(Duration::from_millis(2)); // a new wall-clock session id
        let new = sender(&net, recovery, |_| {});
        new.wait_for_receivers(1, WAIT).unwrap();
        match r.recv(WAIT).unwrap() {
            Some(Event::SenderRestarted { old, new: n }) => {
                assert_eq!(old, old_session);
                assert_eq!(n, new.session());
            }
            other => panic!("expected the restart, got {other:?}"),
        }
        for i in 0..50 {
            new.send(&message(i)).unwrap();
        }
        expect_messages(&r, 0, 50);
        assert_eq!(r.leave().restarts, 1);
    }
}

#[test]
fn malformed_and_forged_packets_are_dropped_and_counted() {
    for recovery in SCHEMES {
        let net = MemNet::new();
        let s = sender(&net, recovery, |_| {});
        let r = receiver(&net, recovery, None);
        s.wait_for_receivers(1, WAIT).unwrap();
        let attacker = net.open(None, None).unwrap();
        let to_group = SocketAddr::V4(group());
        let mut forged = Vec::new();
        let h = Header { kind: Kind::Data, session: s.session(), seq: 0, a: 1, b: 0 };
        packet::encode(&Key::derive(b"not the key"), &h, b"evil", &mut forged).unwrap();
        let mut truncated = forged.clone();
        truncated.truncate(30);
        let mut bad_len = forged.clone();
        bad_len[6] = 0xff;
        for _ in 0..10 {
            for d in [&forged[..], &truncated, &bad_len, b"", &[0xffu8; 1000]] {
                attacker.send_to(d, to_group).unwrap();
                attacker.send_to(d, s.control_addr()).unwrap();
            }
        }
        for i in 0..100 {
            s.send(&message(i)).unwrap();
        }
        expect_messages(&r, 0, 100);
        s.flush(WAIT).unwrap();
        let deadline = Instant::now() + WAIT;
        while (r.stats().forged, s.stats().forged) != (10, 10) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        let (rs, ss) = (r.stats(), s.stats());
        assert_eq!(rs.forged, 10, "{rs:?}");
        assert_eq!(rs.malformed, 40, "{rs:?}");
        assert_eq!(ss.forged, 10, "{ss:?}");
        assert_eq!(ss.malformed, 40, "{ss:?}");
    }
}

#[test]
fn real_udp_multicast_with_injected_loss() {
    for (i, recovery) in SCHEMES.into_iter().enumerate() {
        let net = UdpNet::default();
        let port = 30000 + (std::process::id() % 10000) as u16 * 2 + i as u16;
        let g = SocketAddrV4::new([239, 10, 77, 1].into(), port);
        let mut cfg = SenderConfig::new(g, recovery, key());
        cfg.window_bytes = 1 << 20;
        let s = Sender::start(&net, cfg).unwrap();
        let receivers: Vec<Receiver> = (0..2)
            .map(|j| {
                let mut c = ReceiverConfig::new(g, recovery, key());
                c.loss = Some(LossModel::new(0.05, 2.0, j));
                Receiver::start(&net, c).unwrap()
            })
            .collect();
        s.wait_for_receivers(2, WAIT).unwrap();
        std::thread::scope(|scope| {
            scope.spawn(|| {
                for i in 0..400 {
                    s.send(&message(i)).unwrap();
                }
            });
            for r in &receivers {
                scope.spawn(move || expect_messages(r, 0, 400));
            }
        });
        s.flush(WAIT).unwrap();
        assert!(receivers.iter().all(|r| r.stats().recovered > 0));
    }
}

#[test]
fn the_sender_counts_who_finished_and_who_left_early() {
    let net = MemNet::new();
    let s = sender(&net, Recovery::Rma, |_| {});
    let (done, quitter) = (receiver(&net, Recovery::Rma, None), receiver(&net, Recovery::Rma, None));
    s.wait_for_receivers(2, WAIT).unwrap();
    for i in 0..20 {
        s.send(&message(i)).unwrap();
    }
    // One takes a message and goes away (a receiver that failed, or was interrupted).
    first_message(&quitter);
    drop(quitter);
    expect_messages(&done, 0, 20);
    done.leave();
    s.flush(WAIT).unwrap();
    let deadline = Instant::now() + WAIT;
    while s.stats().left < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let st = s.stats();
    assert_eq!((st.left, st.finished, st.members), (2, 1, 0), "{st:?}");
}

/// A file written in place while it is being sent (here: after the sender opened it,
/// before it read it) reaches no receiver: the trailer says so and both sides fail.
/// A pipe, whose size is unknown, is refused before anything is sent.
#[test]
fn a_file_that_changes_while_it_is_sent_is_kept_by_nobody() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.bin");
    std::fs::write(&path, vec![1u8; 3 << 20]).unwrap();
    let net = MemNet::new();
    let s = sender(&net, Recovery::Nack, |_| {});
    std::thread::scope(|scope| {
        let sending = scope.spawn(|| chatty_net::file::send_file(&s, &path, 1, WAIT));
        // The same size, other bytes, a later modification time.
        std::thread::sleep(Duration::from_millis(200));
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().write_all(&vec![2u8; 3 << 20]).unwrap();
        let r = receiver(&net, Recovery::Nack, None);
        let mut out = Vec::new();
        let got = chatty_net::file::receive_file(&r, &mut out, WAIT);
        assert!(matches!(&got, Err(e) if e.to_string().contains("changed on the sender")), "{:?}", got.map(|g| g.bytes));
        let sent = sending.join().unwrap();
        assert!(matches!(&sent, Err(e) if e.to_string().contains("changed while it was sent")), "{:?}", sent.map(|s| s.bytes));
    });
    let fifo = dir.path().join("fifo");
    let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    let s = sender(&net, Recovery::Nack, |_| {});
    // Opened for writing too, so that opening it to read does not wait for a writer.
    let _writer = std::fs::OpenOptions::new().read(true).write(true).open(&fifo).unwrap();
    let refused = chatty_net::file::send_file(&s, &fifo, 1, Duration::from_secs(1));
    assert!(matches!(&refused, Err(e) if e.to_string().contains("not a regular file")), "{:?}", refused.map(|s| s.bytes));
}
