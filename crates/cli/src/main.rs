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
    // Before any thread starts: the allocator's settings and the environment's
    // defaults (`chatty::process::configure`).
    match chatty::process::configure(true) {
        Ok(note) => note.iter().for_each(|n| eprintln!("note: {}", cmd::spell(n))),
        Err(e) => {
            eprintln!("chatty: error: {}", message(&e.into()));
            std::process::exit(2);
        }
    }
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

/// The error and its causes, each said once (library errors often include their
/// cause's text in their own message already).
fn message(e: &anyhow::Error) -> String {
    // The front door names options as `EngineSpec` does; here they are flags.
    let mut text = match e.downcast_ref::<chatty::Error>().and_then(chatty::Error::option) {
        Some((option, problem)) => format!("{} {problem}", cmd::flag(option)),
        None => e.to_string(),
    };
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
/// by another process mid-run (SIGBUS), or written in place so that a kernel reads
/// out of bounds (SIGSEGV, or a panic), is an error, not a crash.
fn handle_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    match signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) {
        Ok(mut signals) => {
            std::thread::spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    let _held = chatty_graph::file::remove_pending();
                    eprintln!("chatty: interrupted; temporary files removed");
                    std::process::exit(128 + signal);
                }
            });
        }
        Err(e) => eprintln!("note: cannot watch for interruptions ({e}); an interrupted write may leave a .partial file"),
    }
    extern "C" fn on_fault(signal: libc::c_int) {
        const TRUNCATED: &[u8] = b"chatty: error: an input file was truncated or changed by another process while mapped (SIGBUS)\n";
        const CHANGED: &[u8] = b"chatty: error: an input file was truncated or changed by another process while the run read it (mapped); \
            write a new file and rename it over the old one instead\n";
        let message = match (signal, chatty_graph::file::mapped_input_changed_in_signal_handler()) {
            (_, true) => CHANGED,
            (libc::SIGBUS, false) => TRUNCATED,
            // A fault of our own: crash as the signal would, with its core.
            _ => {
                // SAFETY: signal(2) is async-signal-safe; returning re-runs the faulting
                // instruction under the default disposition.
                unsafe { libc::signal(signal, libc::SIG_DFL) };
                return;
            }
        };
        chatty_graph::file::unlink_pending_in_signal_handler();
        // SAFETY: write(2) and _exit(2) are async-signal-safe.
        unsafe {
            libc::write(2, message.as_ptr().cast(), message.len());
            libc::_exit(2);
        }
    }
    // SAFETY: installs a handler that only calls async-signal-safe functions.
    unsafe {
        libc::signal(libc::SIGBUS, on_fault as extern "C" fn(libc::c_int) as libc::sighandler_t);
        libc::signal(libc::SIGSEGV, on_fault as extern "C" fn(libc::c_int) as libc::sighandler_t);
    }
    // A kernel's bounds check failing on a file rewritten under it is the same error.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| match chatty_graph::file::check_mapped_inputs() {
        Err(changed) => {
            let _held = chatty_graph::file::remove_pending();
            eprintln!("chatty: error: {changed}");
            std::process::exit(2);
        }
        Ok(()) => report(info),
    }));
}
