//! Progress bars on a terminal, silence when piped.

use std::io::IsTerminal;

use chatty_graph::Progress;
use indicatif::{ProgressBar, ProgressStyle};

/// A [`Progress`] drawn with indicatif on stderr when it is a terminal.
pub struct Bar(Option<ProgressBar>);

impl Bar {
    /// A bar if stderr is a terminal (and `quiet` is off), else nothing.
    pub fn new(quiet: bool) -> Bar {
        let on = !quiet && std::io::stderr().is_terminal();
        Bar(on.then(|| {
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg:24} [{bar:40}] {percent:>3}% {elapsed_precise} eta {eta}")
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            bar
        }))
    }
}

impl Bar {
    /// Runs `f` (which prints) with the bar out of the way.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.0 {
            Some(b) => b.suspend(f),
            None => f(),
        }
    }
}

impl Progress for Bar {
    fn start(&self, message: &str, total: u64) {
        if let Some(b) = &self.0 {
            b.set_message(message.to_string());
            b.set_length(total);
            b.set_position(0);
        }
    }
    fn advance(&self, delta: u64) {
        if let Some(b) = &self.0 {
            b.inc(delta);
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}
