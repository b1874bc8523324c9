//! `--distribute multicast`: rank 0 sends the `.cgr` once over `chatty-net`'s reliable
//! multicast (the Chu et al. broadcast: RMA-pull recovery, keyed datagrams) to one
//! receiving rank per *place* (a host and a local directory), which writes it through
//! an atomic file and checks its checksum; then every rank maps the copy of its place,
//! as `--distribute shared` would. Ranks of rank 0's place read the original path.
//! The copy lives in a directory of the job's own inside the place's directory (no
//! file of the user's is replaced), removed when the receiving rank's engine ends.

use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chatty_graph::file::{AtomicFile, Pending};
use chatty_net::{file, Key, Receiver, ReceiverConfig, Recovery, Sender, SenderConfig, UdpNet};

use crate::{agree, Comm, DistError};

/// Where and how the file travels.
#[derive(Clone, Debug)]
pub struct Multicast {
    /// The directory on each host that receives the copy; `%r` in it is replaced by
    /// the rank (so that ranks of one host can each hold a copy, as a test does).
    pub local_dir: PathBuf,
    /// The multicast group.
    pub group: SocketAddrV4,
    /// The local address to multicast on (127.0.0.1: this host only).
    pub interface: Ipv4Addr,
    /// The group's key.
    pub key: Key,
    /// How long to wait for the receivers, and for each message.
    pub wait: Duration,
}

/// What the distribution did, for the report.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct Distribution {
    /// Ranks that received a copy.
    pub receivers: usize,
    /// Bytes of the file.
    pub bytes: u64,
    /// From the sender's start to every receiver holding the file.
    pub seconds: f64,
}

/// Sends `path` from rank 0 to one rank of every other place; returns the path this
/// rank maps, and on a receiving rank the copy's directory (removed when dropped).
/// Every rank calls it; a failure anywhere fails every rank.
pub fn distribute(comm: &Comm, path: &Path, m: &Multicast) -> Result<(PathBuf, Distribution, Option<Pending>), DistError> {
    let rank = comm.rank();
    let dir = PathBuf::from(m.local_dir.to_string_lossy().replace("%r", &rank.to_string()));
    let host = mpi::environment::processor_name().unwrap_or_default();
    let place = xxhash_rust::xxh3::xxh3_64(format!("{host}\0{}", std::path::absolute(&dir).unwrap_or(dir.clone()).display()).as_bytes());
    let places = comm.all_gather(&[place])?;
    let first_of = |p: u64| places.iter().position(|&q| q == p).expect("every place is someone's");
    // Rank 0's place already holds the file; every other place's first rank receives.
    let receiving: Vec<usize> = (0..places.len()).filter(|&r| places[r] != places[0] && first_of(places[r]) == r).collect();
    let name = path.file_name().ok_or_else(|| DistError::Distribute(format!("{}: not a file name", path.display())))?;
    let job = comm.broadcast_u64(std::hash::BuildHasher::hash_one(&std::collections::hash_map::RandomState::new(), std::process::id()));
    let copies = dir.join(format!(".chatty-multicast-{job:016x}"));
    let local = if places[rank] == places[0] { path.to_path_buf() } else { copies.join(name) };
    // Receivers make room first: a place that cannot hold a copy stops the job before
    // anything is sent.
    let fail = |what: String| DistError::Distribute(format!("{what} ({} by multicast)", path.display()));
    let prepared = match receiving.contains(&rank) {
        true => prepare(&copies, &local).map(Some).map_err(fail),
        false => Ok(None),
    };
    let (out, copy) = agree(comm, prepared)?.unzip();
    let start = Instant::now();
    let net = UdpNet::on(m.interface);
    let mine = match (rank, out) {
        _ if receiving.is_empty() => Ok(0),
        (0, _) => Sender::start(&net, SenderConfig::new(m.group, Recovery::Rma, m.key.clone()))
            .and_then(|sender| file::send_file(&sender, path, receiving.len(), m.wait))
            .map(|sent| sent.bytes)
            .map_err(|e| fail(format!("sending: {e}"))),
        (_, Some(out)) => receive(&net, m, out).map_err(|e| fail(format!("receiving into {}: {e}", local.display()))),
        (_, None) => Ok(0),
    };
    let bytes = agree(comm, mine)?;
    let done = Distribution { receivers: receiving.len(), bytes: comm.broadcast_u64(bytes), seconds: start.elapsed().as_secs_f64() };
    Ok((local, done, copy))
}

/// The job's directory (pending: removed when dropped or interrupted) and the atomic
/// file a receiving rank writes its copy through.
fn prepare(copies: &Path, local: &Path) -> Result<(AtomicFile, Pending), String> {
    let parent = copies.parent().expect("a directory inside the place's");
    std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    std::fs::create_dir(copies).map_err(|e| format!("cannot create {}: {e}", copies.display()))?;
    let pending = Pending::new(copies);
    Ok((AtomicFile::create(local).map_err(|e| e.to_string())?, pending))
}

fn receive(net: &UdpNet, m: &Multicast, mut out: AtomicFile) -> Result<u64, String> {
    let receiver = Receiver::start(net, ReceiverConfig::new(m.group, Recovery::Rma, m.key.clone())).map_err(|e| e.to_string())?;
    let got = file::receive_file(&receiver, &mut out, m.wait).map_err(|e| format!("{e}; nothing written"))?;
    out.commit().map_err(|e| e.to_string())?;
    receiver.leave();
    Ok(got.bytes)
}
