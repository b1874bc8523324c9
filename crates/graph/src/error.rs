//! The graph layer's error type: what went wrong, and where (file, line, text).

use std::path::{Path, PathBuf};

/// Result alias for the graph layer.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An error from reading, writing, checking or building a graph.
///
/// The `Display` form is meant for users: it names the file, the line and the
/// offending text where they are known.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The operating system refused an operation on a file.
    #[error("{path}: {what}: {source}")]
    Io {
        /// The file involved.
        path: PathBuf,
        /// What we were doing ("cannot open", "cannot read", ...).
        what: &'static str,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A text input is malformed at a specific line.
    #[error("{path}:{line}: {message}: `{text}`")]
    Parse {
        /// The input file.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// What is wrong.
        message: String,
        /// The offending line, shortened.
        text: String,
    },
    /// The input is malformed in a way that no single line shows (header sizes, counts).
    #[error("{path}: {message}")]
    Invalid {
        /// The input file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The format could not be determined or is not supported.
    #[error("{path}: {message}")]
    Format {
        /// The input file.
        path: PathBuf,
        /// What is wrong, and what the user can do.
        message: String,
    },
    /// The graph would need more memory than the machine has available.
    #[error("{what} needs {} but only {} is available", human_bytes(*needed), human_bytes(*available))]
    TooLarge {
        /// What would be allocated.
        what: String,
        /// Bytes needed.
        needed: u64,
        /// Bytes available.
        available: u64,
    },
    /// A request that makes no sense for this graph (bad parameter, unsupported combination).
    #[error("{0}")]
    Usage(String),
}

impl Error {
    pub(crate) fn io(path: &Path, what: &'static str, source: std::io::Error) -> Error {
        Error::Io { path: path.to_path_buf(), what, source }
    }

    pub(crate) fn invalid(path: &Path, message: impl Into<String>) -> Error {
        Error::Invalid { path: path.to_path_buf(), message: message.into() }
    }

    pub(crate) fn format(path: &Path, message: impl Into<String>) -> Error {
        Error::Format { path: path.to_path_buf(), message: message.into() }
    }

    pub(crate) fn parse(path: &Path, line: u64, message: impl Into<String>, text: &[u8]) -> Error {
        const MAX: usize = 80;
        let shown = &text[..text.len().min(MAX)];
        let mut text = String::from_utf8_lossy(shown).trim_end().to_string();
        if shown.len() < text.len() || text.len() >= MAX {
            text.push_str("...");
        }
        Error::Parse { path: path.to_path_buf(), line, message: message.into(), text }
    }
}

/// Refuses an allocation of `needed` bytes that the machine cannot hold, before it is made.
///
/// Hostile headers ("p sp 4000000000 1") must fail here with a clear message rather
/// than abort in the allocator.
pub fn check_memory(what: &str, needed: u64) -> Result<()> {
    let available = available_memory()?;
    if needed > available {
        return Err(Error::TooLarge { what: what.to_string(), needed, available });
    }
    Ok(())
}

/// Bytes of memory this process may still take: the least of `MemAvailable` from
/// `/proc/meminfo`, its cgroup's `memory.max` less `memory.current`, its address-space
/// limit (`ulimit -v`) less what it has mapped, and `$CHATTY_MEMORY_LIMIT` (a size
/// such as `8G`, `8GB` or `1.5GiB`, binary units; a bad value is an error) less what
/// it holds; unlimited where none can be read. Every limit is the whole process's,
/// so an allocation is weighed with what came before it (a 350M limit admitted each
/// of a run's arrays alone, and the run peaked at 600 MiB). The variable is a budget
/// for shared machines, and what keeps the fuzz targets from allocating gigabytes
/// for a ten-byte file naming vertex 10^9.
pub fn available_memory() -> Result<u64> {
    let limit = match std::env::var("CHATTY_MEMORY_LIMIT") {
        Ok(v) => {
            parse_size(&v).ok_or_else(|| Error::Usage(format!("CHATTY_MEMORY_LIMIT=`{v}`: expected a size such as 512M, 8GB or 1.5GiB")))?
        }
        Err(_) => u64::MAX,
    };
    let kib = |text: &str, key: &str| -> Option<u64> {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|k| k * 1024)
    };
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok().and_then(|info| kib(&info, "MemAvailable:"));
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let (resident, mapped) = (kib(&status, "VmRSS:").unwrap_or(0), kib(&status, "VmSize:").unwrap_or(0));
    let headroom =
        [meminfo, cgroup_headroom(), address_space_limit().map(|l| l.saturating_sub(mapped)), Some(limit.saturating_sub(resident))];
    Ok(headroom.into_iter().flatten().min().unwrap_or(u64::MAX))
}

/// The cgroup (v2) memory limit less its use, where one is set.
fn cgroup_headroom() -> Option<u64> {
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let dir = Path::new("/sys/fs/cgroup").join(cgroup.lines().find_map(|l| l.strip_prefix("0::"))?.trim_start_matches('/'));
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok()?.trim().parse::<u64>().ok();
    Some(read("memory.max")?.saturating_sub(read("memory.current")?))
}

/// The address-space limit (`RLIMIT_AS`), where one is set.
fn address_space_limit() -> Option<u64> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes the struct it is given.
    let read = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } == 0;
    (read && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
}

/// A size with binary units: `512M`, `512MB` and `512MiB` are 536870912 bytes; plain
/// digits are bytes; fractions (`1.5G`) are allowed.
pub fn parse_size(s: &str) -> Option<u64> {
    parse_size::Config::new().with_binary().parse_size(s.trim()).ok()
}

/// `bytes` in binary units for people (`1.5 GiB`).
pub fn human_bytes(bytes: u64) -> String {
    bytesize::ByteSize::b(bytes).display().iec().to_string()
}
