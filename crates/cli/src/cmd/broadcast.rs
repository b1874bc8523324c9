//! `chatty broadcast send|recv`: one file to every receiver of a multicast group, in
//! 1 MiB messages over chatty-net's reliable broadcast. A header message names the file
//! and its size, a trailer carries its XXH3 checksum; the receiver writes through an
//! atomic file, so an interrupted or corrupt transfer leaves nothing behind.

use std::io::{Read, Write};
use std::net::SocketAddrV4;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use chatty_graph::write::AtomicFile;
use chatty_net::{Event, Key, LossModel, Receiver, ReceiverConfig, Sender, SenderConfig, UdpNet};
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::Xxh3;

use crate::args::{BroadcastArgs, BroadcastRole};

const CHUNK: usize = 1 << 20;

#[derive(Serialize, Deserialize)]
struct FileHeader {
    name: String,
    bytes: u64,
}

#[derive(Serialize, Deserialize)]
struct FileTrailer {
    xxh3: String,
}

pub fn run(a: &BroadcastArgs) -> Result<i32> {
    let group: SocketAddrV4 = a.group.parse().with_context(|| format!("--group `{}`: expected an IPv4 multicast ADDRESS:PORT", a.group))?;
    if !group.ip().is_multicast() {
        bail!("--group {group}: not a multicast address (224.0.0.0/4)");
    }
    if group.port() == 0 {
        bail!("--group {group}: port 0 is not a port a group can meet on; choose one, e.g. {}:7400", group.ip());
    }
    let interface = a.interface.parse().with_context(|| format!("--interface `{}`: expected an IPv4 address", a.interface))?;
    let net = UdpNet { interface, ttl: if interface == std::net::Ipv4Addr::LOCALHOST { 0 } else { 8 } };
    let recovery = a.scheme;
    let secret = match a.key.clone().or_else(|| std::env::var("CHATTY_BROADCAST_KEY").ok()) {
        Some(k) if k.is_empty() => bail!("--key (or CHATTY_BROADCAST_KEY) is empty: a group's secret needs at least one character"),
        Some(k) => k,
        None => {
            eprintln!("note: no --key or CHATTY_BROADCAST_KEY: using the default key, which any chatty on this network can use");
            "chatty".to_string()
        }
    };
    let key = Key::derive(secret.as_bytes());
    match &a.role {
        BroadcastRole::Send { file, receivers, wait } => send(&net, SenderConfig::new(group, recovery, key), file, *receivers, *wait),
        BroadcastRole::Recv { output, wait, loss } => {
            if !(0.0..1.0).contains(loss) {
                bail!("--loss {loss}: a loss rate is at least 0 and below 1");
            }
            let mut cfg = ReceiverConfig::new(group, recovery, key);
            cfg.loss = (*loss > 0.0).then(|| LossModel::new(*loss, 1.0, cfg.id));
            receive(&net, cfg, output, *wait)
        }
    }
}

fn send(net: &UdpNet, cfg: SenderConfig, path: &std::path::Path, receivers: usize, wait: u64) -> Result<i32> {
    let mut file = std::fs::File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    let bytes = file.metadata().with_context(|| format!("{}: cannot stat", path.display()))?.len();
    let sender = Sender::start(net, cfg)?;
    eprintln!("waiting for {receivers} receiver(s) on {} ...", sender.control_addr());
    sender.wait_for_receivers(receivers, Duration::from_secs(wait))?;
    let start = Instant::now();
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    sender.send(&serde_json::to_vec(&FileHeader { name, bytes })?)?;
    let mut hasher = Xxh3::new();
    let mut chunk = vec![0u8; CHUNK];
    let mut sent = 0u64;
    while sent < bytes {
        let n = read_full(&mut file, &mut chunk).with_context(|| format!("{}: read failed", path.display()))?;
        if n == 0 {
            bail!("{}: the file shrank while it was sent ({sent} of {bytes} bytes)", path.display());
        }
        hasher.update(&chunk[..n]);
        sender.send(&chunk[..n])?;
        sent += n as u64;
    }
    sender.send(&serde_json::to_vec(&FileTrailer { xxh3: format!("{:016x}", hasher.digest()) })?)?;
    sender.flush(Duration::from_secs(wait.max(60)))?;
    let s = sender.stats();
    let secs = start.elapsed().as_secs_f64();
    // Members still in the group hold everything (the flush waited for them); of
    // those that left, only the ones that said so finished.
    let finished = s.members as u64 + s.finished;
    if finished < receivers as u64 {
        bail!(
            "only {finished} of {receivers} receiver(s) hold {}: {} stopped answering, {} left before the end",
            path.display(),
            s.evicted,
            s.left - s.finished
        );
    }
    println!(
        "sent {} ({bytes} bytes) to {} receiver(s) in {secs:.3} s ({:.1} MB/s); repairs {}, reads served {}",
        path.display(),
        finished,
        super::mb_per_s(bytes, secs),
        s.repairs,
        s.reads_served
    );
    Ok(0)
}

fn read_full(f: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

fn receive(net: &UdpNet, cfg: ReceiverConfig, output: &std::path::Path, wait: u64) -> Result<i32> {
    let mut out = AtomicFile::create(output)?;
    let receiver = Receiver::start(net, cfg)?;
    let wait = Duration::from_secs(wait);
    let next = || -> Result<Vec<u8>> {
        match receiver.recv(wait)? {
            Some(Event::Message(m)) => Ok(m.data),
            Some(other) => bail!("the broadcast was interrupted ({other:?}); nothing written"),
            None => bail!("no message from the sender for {} s; nothing written", wait.as_secs()),
        }
    };
    let header: FileHeader = serde_json::from_slice(&next()?).context("the first message is not a file header (joined mid-transfer?)")?;
    let mut hasher = Xxh3::new();
    let mut got = 0u64;
    while got < header.bytes {
        let chunk = next()?;
        if got + chunk.len() as u64 > header.bytes {
            bail!("the sender sent more than the announced {} bytes", header.bytes);
        }
        hasher.update(&chunk);
        out.write_all(&chunk).with_context(|| format!("{}: write failed", output.display()))?;
        got += chunk.len() as u64;
    }
    let trailer: FileTrailer = serde_json::from_slice(&next()?).context("missing the checksum trailer")?;
    let digest = format!("{:016x}", hasher.digest());
    if digest != trailer.xxh3 {
        bail!("checksum mismatch (got {digest}, sender says {}); nothing written", trailer.xxh3);
    }
    out.commit()?;
    let st = receiver.leave();
    println!("received {} ({got} bytes, xxh3 {digest}) into {}; recovered {} lost packets", header.name, output.display(), st.recovered);
    Ok(0)
}
