//! `chatty`: parse the command line, run one command, map the outcome to an exit code
//! (0 success, 1 a verification failed, 2 an error).

mod args;
mod cmd;
mod progress;

use clap::Parser;

fn main() {
    let cli = args::Cli::parse();
    let code = match cmd::run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("chatty: error: {e:#}");
            2
        }
    };
    std::process::exit(code);
}
