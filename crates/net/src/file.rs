//! One file over the broadcast: a header message (its name and size), the file in
//! 1 MiB messages, and a trailer carrying its XXH3 checksum, which the receiver checks
//! before it says the file is whole. The receiver writes into any `Write`; callers
//! that write a file use an atomic one and commit only on success, so an interrupted
//! or corrupt transfer leaves nothing behind.

use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::Xxh3;

use crate::{Event, NetError, Receiver, Sender, SenderStats};

/// Bytes of the file per message.
pub const CHUNK: usize = 1 << 20;

#[derive(Serialize, Deserialize)]
struct FileHeader {
    name: String,
    bytes: u64,
}

#[derive(Serialize, Deserialize)]
struct FileTrailer {
    xxh3: String,
    /// Set when the file changed while it was sent: what went out is neither the old
    /// file nor the new, and the receivers must not keep it.
    #[serde(default)]
    changed: bool,
}

/// What a sender did.
pub struct Sent {
    /// Bytes of the file.
    pub bytes: u64,
    /// Receivers that hold the whole file.
    pub receivers: u64,
    /// From the first message to the last receiver holding everything.
    pub seconds: f64,
    /// The sender's counters.
    pub stats: SenderStats,
}

/// What a receiver got.
pub struct Received {
    /// The file's name on the sender (without its directory).
    pub name: String,
    /// Bytes received.
    pub bytes: u64,
    /// Its XXH3 checksum, as hex, checked.
    pub xxh3: String,
}

fn failed(what: String) -> NetError {
    NetError::Failed(what)
}

/// Waits (up to `wait`) for `receivers` to join, sends `path` and waits until each
/// holds all of it; fails unless `receivers` of them do.
pub fn send_file(sender: &Sender, path: &Path, receivers: usize, wait: Duration) -> Result<Sent, NetError> {
    let open = |e: std::io::Error| failed(format!("{}: {e}", path.display()));
    let mut file = std::fs::File::open(path).map_err(open)?;
    let before = file.metadata().map_err(open)?;
    if !before.is_file() {
        return Err(failed(format!(
            "{}: not a regular file (a pipe or device has no size to announce): write it to a file first",
            path.display()
        )));
    }
    let bytes = before.len();
    sender.wait_for_receivers(receivers, wait)?;
    let start = Instant::now();
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    sender.send(&serde_json::to_vec(&FileHeader { name, bytes }).expect("a header serialises"))?;
    let mut hasher = Xxh3::new();
    let mut chunk = vec![0u8; CHUNK];
    let mut sent = 0u64;
    while sent < bytes {
        let n = read_full(&mut file, &mut chunk).map_err(|e| failed(format!("{}: read failed: {e}", path.display())))?;
        if n == 0 {
            return Err(failed(format!("{}: the file shrank while it was sent ({sent} of {bytes} bytes)", path.display())));
        }
        hasher.update(&chunk[..n]);
        sender.send(&chunk[..n])?;
        sent += n as u64;
    }
    let changed = file.metadata().map_or(true, |after| changed(&before, &after));
    let trailer = FileTrailer { xxh3: format!("{:016x}", hasher.digest()), changed };
    sender.send(&serde_json::to_vec(&trailer).expect("a trailer serialises"))?;
    sender.flush(wait.max(Duration::from_secs(60)))?;
    if changed {
        return Err(failed(format!("{} changed while it was sent: the receivers discarded it; send it again", path.display())));
    }
    let stats = sender.stats();
    // Members still in the group hold everything (the flush waited for them); of
    // those that left, only the ones that said so finished.
    let finished = stats.members as u64 + stats.finished;
    if finished < receivers as u64 {
        return Err(failed(format!(
            "only {finished} of {receivers} receiver(s) hold {}: {} stopped answering, {} left before the end",
            path.display(),
            stats.evicted,
            stats.left - stats.finished
        )));
    }
    Ok(Sent { bytes, receivers: finished, seconds: start.elapsed().as_secs_f64(), stats })
}

/// Whether a file was written between two looks at it: its size, or its
/// modification or change time (written in place, the same size: neither old nor new).
fn changed(before: &std::fs::Metadata, after: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    (before.len(), before.mtime(), before.mtime_nsec(), before.ctime(), before.ctime_nsec())
        != (after.len(), after.mtime(), after.mtime_nsec(), after.ctime(), after.ctime_nsec())
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

/// Receives one file into `out`, each message waited for at most `wait`; an error
/// means `out` holds nothing usable (the checksum is checked last).
pub fn receive_file(receiver: &Receiver, out: &mut dyn Write, wait: Duration) -> Result<Received, NetError> {
    let next = || -> Result<Vec<u8>, NetError> {
        match receiver.recv(wait)? {
            Some(Event::Message(m)) => Ok(m.data),
            Some(other) => Err(failed(format!("the broadcast was interrupted ({other:?})"))),
            None => Err(NetError::Timeout(format!("no message from the sender for {} s", wait.as_secs()))),
        }
    };
    let header: FileHeader =
        serde_json::from_slice(&next()?).map_err(|_| failed("the first message is not a file header (joined mid-transfer?)".into()))?;
    let mut hasher = Xxh3::new();
    let mut got = 0u64;
    while got < header.bytes {
        let chunk = next()?;
        if got + chunk.len() as u64 > header.bytes {
            return Err(failed(format!("the sender sent more than the announced {} bytes", header.bytes)));
        }
        hasher.update(&chunk);
        out.write_all(&chunk)?;
        got += chunk.len() as u64;
    }
    let trailer: FileTrailer = serde_json::from_slice(&next()?).map_err(|_| failed("missing the checksum trailer".into()))?;
    if trailer.changed {
        return Err(failed(format!("{} changed on the sender while it was sent: nothing kept", header.name)));
    }
    let xxh3 = format!("{:016x}", hasher.digest());
    if xxh3 != trailer.xxh3 {
        return Err(failed(format!("checksum mismatch (got {xxh3}, the sender says {})", trailer.xxh3)));
    }
    Ok(Received { name: header.name, bytes: got, xxh3 })
}
