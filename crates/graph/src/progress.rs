//! A progress hook, so long work can report without the graph layer knowing about terminals.

/// Receives progress from long operations (parsing, building, generating, writing).
///
/// The CLI implements it with a progress bar on a terminal; libraries and tests pass
/// [`NoProgress`].
pub trait Progress: Sync {
    /// Starts a new phase with a message and the amount of work it has.
    fn start(&self, message: &str, total: u64);
    /// Reports `delta` more units of work done in the current phase.
    fn advance(&self, delta: u64);
}

/// A [`Progress`] that reports nothing.
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _: &str, _: u64) {}
    fn advance(&self, _: u64) {}
}
