//! `chatty`: parse the command line, run one command, map the outcome to an exit code
//! (0 success, 1 a verification failed, 2 an error).

mod args;
mod chart;
mod cmd;
mod progress;

use clap::Parser;

fn main() {
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
    let cli = args::Cli::parse();
    let code = match cmd::run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("chatty: error: {}", message(&e));
            2
        }
    };
    std::process::exit(code);
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
