//! Process settings, in one place: the allocator's, the environment defaults the
//! libraries rely on, the thread pools, thread counts, and what the MPI launcher says.
//! The CLI and the Python module both call [`configure`], so a kernel runs under the
//! same settings whichever front end started it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Once};

use crate::{EngineKind, Error, Note, Result};

/// The most threads a thread flag gets per core: more only cost start-up time and
/// memory (thousands take seconds to start).
pub const THREADS_PER_CORE: usize = 4;

/// The machine's cores (its cgroup's quota on Linux).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |c| c.get())
}

/// A thread count asked for as `name`: at least 1, at most [`THREADS_PER_CORE`] a core.
/// Returns the count to use and, when capped, a note saying so.
pub fn threads(name: &'static str, asked: usize) -> Result<(usize, Option<Note>)> {
    let most = THREADS_PER_CORE * cores();
    match asked {
        0 => Err(Error::Parameter { name, problem: "must be at least 1".into() }),
        t if t > most => {
            let text = format!("{t} capped at {most} ({THREADS_PER_CORE} per core on this machine's {} cores)", cores());
            Ok((most, Some(Note { option: Some(name), text })))
        }
        t => Ok((t, None)),
    }
}

/// Settings every front end applies once, before its first kernel:
///
/// - glibc's allocator keeps freed memory for the next allocation instead of handing
///   it back to the kernel. A kernel allocates its per-vertex arrays each trial, so
///   with glibc's defaults (the heap's top trimmed once 128 KiB is free, arrays over a
///   dynamic threshold mapped afresh) every trial faulted its arrays in page by page: a
///   BFS reaching 12 vertices of cnr-2000 (325,557) spent 0.7 of its 0.8 ms on 300
///   page faults (2 threads). Nothing is mapped per allocation, however large: glibc
///   maps blocks of 32 MiB and more afresh whatever its threshold, and a 2048² grid's
///   PageRank scores are 32 MiB (8,192 faults a trial before). A block too large for a
///   worker thread's heap (64 MiB) is still mapped.
/// - With `environment`, NVLink multicast (NVLS) stays off unless the environment asks
///   for it: it is forbidden on the shared GPU machines, and NCCL turns it on by
///   default. Only a program's `main` may ask for this, before it starts any thread:
///   setting a variable races with threads reading the environment.
/// - `RAYON_NUM_THREADS`, which sizes the default pool, is held to the cap of a
///   thread flag ([`threads`]; 1,000 threads made a 0.5 s BFS 19 s): over it, `main`
///   rewrites the variable (with `environment`) and a library builds the global pool
///   now. Returns the note that says so; an error where it is not a count.
pub fn configure(environment: bool) -> Result<Option<Note>> {
    static ALLOCATOR: Once = Once::new();
    ALLOCATOR.call_once(|| {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: mallopt only sets allocator parameters.
        unsafe {
            libc::mallopt(libc::M_MMAP_MAX, 0);
            libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
        }
    });
    if environment && std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
        std::env::set_var("NCCL_NVLS_ENABLE", "0");
    }
    let Some((capped, note)) = environment_threads()? else { return Ok(None) };
    if note.is_some() {
        match environment {
            true => std::env::set_var(POOL_SIZE, capped.to_string()),
            // Built already (a second configure), it keeps its size.
            false => drop(rayon::ThreadPoolBuilder::new().num_threads(capped).build_global()),
        }
    }
    Ok(note)
}

/// The variable that sizes rayon's default pool.
const POOL_SIZE: &str = "RAYON_NUM_THREADS";

/// [`POOL_SIZE`] as [`threads`] caps it; `None` where it is unset, empty or 0 (rayon's
/// one per core).
fn environment_threads() -> Result<Option<(usize, Option<Note>)>> {
    let Some(value) = std::env::var_os(POOL_SIZE) else { return Ok(None) };
    let value = value.to_string_lossy();
    match value.trim() {
        "" => Ok(None),
        t => match t.parse() {
            Ok(0) => Ok(None),
            Ok(t) => threads(POOL_SIZE, t).map(Some),
            Err(_) => Err(Error::Parameter { name: POOL_SIZE, problem: format!("`{value}`: expected a thread count") }),
        },
    }
}

/// Builds the global thread pool of `threads` (or rayon's default: `RAYON_NUM_THREADS`,
/// else one per core) when a thread count or the CPU engine asks for one. The calling
/// thread is the pool's worker 0 where that is safe, as an OpenMP program's main
/// thread is: a kernel then starts there rather than being handed to a worker, and ends
/// without waking it (ego-Twitter BFS on the 16-core host, median of 60 trials, 3.49 /
/// 1.20 / 0.69 → 3.31 / 1.04 / 0.55 ms at 1 / 4 / 16 threads; cnr-2000's 0.1-0.2 ms
/// BFS on the dev VM 2.7-3.2x faster). Not in a pool of one under an engine with
/// threads of its own (GPU, SSD, MPI): the caller would be the only worker, and work
/// those threads sent while it waited on them would never run. Nor under
/// `CHATTY_WAIT_POLICY=active`, whose workers look for work from a broadcast that
/// starts the kernel on a worker ([`chatty_algo::pool::run_on_pool`]).
///
/// For a program's main thread, which then stays in the pool; a library caller takes
/// [`pool`] instead.
pub fn build_global_pool(threads: Option<usize>, engine: EngineKind) -> Result<()> {
    let cpu = engine == EngineKind::Cpu;
    if threads.is_none() && !cpu {
        return Ok(());
    }
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(t) = threads {
        pool = pool.num_threads(t);
    }
    let active = matches!(chatty_algo::pool::wait_policy(), Ok(chatty_algo::pool::WaitPolicy::Active));
    if (cpu || threads.is_some_and(|t| t > 1)) && !active {
        pool = pool.use_current_thread();
    }
    pool.build_global().map_err(|e| Error::Parameter { name: "threads", problem: format!("cannot size the thread pool: {e}") })
}

/// A pool of `threads` workers, built once per count and kept for the process: a
/// library's callers (Python's `threads=`) ask for counts call by call, and a pool
/// built per call started its threads every time.
pub fn pool(threads: usize) -> Result<Arc<rayon::ThreadPool>> {
    static POOLS: Mutex<BTreeMap<usize, Arc<rayon::ThreadPool>>> = Mutex::new(BTreeMap::new());
    let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = pools.get(&threads) {
        return Ok(p.clone());
    }
    let built = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Parameter { name: "threads", problem: format!("cannot start {threads} threads: {e}") })?;
    Ok(pools.entry(threads).or_insert(Arc::new(built)).clone())
}

/// Whether this process was started by `mpirun`/`srun` (Open MPI's, PMI's or PMIx's
/// environment).
pub fn under_mpirun() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"].iter().any(|k| std::env::var_os(k).is_some())
}

/// Whether this process is rank 0 of an MPI job (or not in one), from the launcher's
/// environment, before MPI starts.
pub fn under_rank_0() -> bool {
    ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"].iter().find_map(|k| std::env::var(k).ok()).is_none_or(|r| r == "0")
}

/// This process's rank among the job's ranks on its host (the launcher's environment),
/// else `rank`, its rank in the job.
pub fn local_rank(rank: usize) -> usize {
    ["OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"]
        .iter()
        .find_map(|k| std::env::var(k).ok()?.parse::<usize>().ok())
        .unwrap_or(rank)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_counts_are_positive_and_capped() {
        assert!(matches!(threads("threads", 0), Err(Error::Parameter { name: "threads", .. })));
        assert_eq!(threads("threads", 1).unwrap(), (1, None));
        let most = THREADS_PER_CORE * cores();
        let (t, note) = threads("threads", 100_000).unwrap();
        assert_eq!(t, most);
        assert!(note.unwrap().to_string().starts_with("threads 100000 capped at"));
    }

    #[test]
    fn pools_are_kept_per_count() {
        let a = pool(2).unwrap();
        let b = pool(2).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(a.current_num_threads(), 2);
        assert_eq!(pool(3).unwrap().install(rayon::current_num_threads), 3);
    }
}
