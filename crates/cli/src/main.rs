//! `chatty`: parse the command line, run one command, map the outcome to an exit code
//! (0 success, 1 a verification failed, 2 an error).

mod args;
mod chart;
mod cmd;
mod progress;

use std::sync::OnceLock;
use std::time::Instant;

use clap::Parser;

/// When the command started: reports count the seconds a user has waited from here.
static STARTED: OnceLock<Instant> = OnceLock::new();

/// When the command started.
fn started() -> Instant {
    *STARTED.get_or_init(Instant::now)
}

fn main() {
    STARTED.get_or_init(Instant::now);
    // Like other Unix tools, end quietly when the reader of our output goes away
    // (`chatty run ... | head`), instead of panicking in println!.
    // SAFETY: restoring the default disposition of one signal, before any thread starts.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    // NVLink multicast (NVLS) is forbidden on the shared GPU machines: NCCL leaves it
    // off unless the environment asks for it. Set here, once, before any thread
    // starts (the libraries never touch the environment).
    if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
        std::env::set_var("NCCL_NVLS_ENABLE", "0");
    }
    keep_freed_memory();
    handle_signals();
    let cli = args::Cli::parse();
    let code = match cmd::run(cli) {
        Ok(code) => {
            #[cfg(feature = "mpi")]
            chatty_dist::finish();
            code
        }
        Err(e) => {
            eprintln!("chatty: error: {}", message(&e));
            // A rank of an MPI job that fails mid-run takes the job down with it:
            // the others may be waiting for it in a collective.
            #[cfg(feature = "mpi")]
            chatty_dist::abort_job(2);
            2
        }
    };
    std::process::exit(code);
}

/// Has glibc's allocator keep freed memory for the next allocation instead of handing
/// it back to the kernel. A kernel allocates its per-vertex arrays each trial, so with
/// glibc's defaults (the heap's top trimmed once 128 KiB is free, arrays over a dynamic
/// threshold mapped afresh) every trial faulted its arrays in page by page: a BFS
/// reaching 12 vertices of cnr-2000 (325,557) spent 0.7 of its 0.8 ms on 300 page
/// faults (2 threads). Nothing is mapped per allocation, however large: glibc maps
/// blocks of 32 MiB and more afresh whatever its threshold, and a 2048² grid's PageRank
/// scores are 32 MiB (8,192 faults a trial before). A block too large for a worker
/// thread's heap (64 MiB) is still mapped.
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_MAX, 0);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
    }
}

/// The error and its causes, each said once (library errors often include their
/// cause's text in their own message already).
fn message(e: &anyhow::Error) -> String {
    let mut text = e.to_string();
    for cause in e.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text = format!("{text}: {cause}");
        }
    }
    text
}

/// Interrupted (SIGINT, SIGTERM, SIGHUP), remove every temporary or uncommitted output
/// file, then exit as the signal would (128 + its number). A mapped input truncated
/// by another process mid-run (SIGBUS) is an error, not a crash.
fn handle_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    match signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) {
        Ok(mut signals) => {
            std::thread::spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    let _held = chatty_graph::write::remove_pending();
                    eprintln!("chatty: interrupted; temporary files removed");
                    std::process::exit(128 + signal);
                }
            });
        }
        Err(e) => eprintln!("note: cannot watch for interruptions ({e}); an interrupted write may leave a .partial file"),
    }
    extern "C" fn on_sigbus(_: libc::c_int) {
        const MESSAGE: &[u8] = b"chatty: error: an input file was truncated or changed by another process while mapped (SIGBUS)\n";
        // SAFETY: write(2) and _exit(2) are async-signal-safe.
        unsafe {
            libc::write(2, MESSAGE.as_ptr().cast(), MESSAGE.len());
            libc::_exit(2);
        }
    }
    // SAFETY: installs a handler that only calls async-signal-safe functions.
    unsafe { libc::signal(libc::SIGBUS, on_sigbus as extern "C" fn(libc::c_int) as libc::sighandler_t) };
}
