//! Where the shared real-world datasets live, for tests and benchmarks.
//!
//! They are read from `$CHATTY_DATASETS`, or from `shared/datasets` in the checkout or
//! any directory above it (the team's layout puts it beside the checkout). Tests skip
//! when it is missing, except under `CI=true`, where a missing directory is a failure.

use std::path::{Path, PathBuf};

/// The datasets directory, if it can be found.
pub fn find() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("CHATTY_DATASETS") {
        return Some(PathBuf::from(d));
    }
    let start = std::env::current_dir().ok()?;
    let mut dir: Option<&Path> = Some(&start);
    while let Some(d) = dir {
        for candidate in [d.join("shared/datasets"), d.join("../shared/datasets")] {
            if candidate.join("README.md").is_file() {
                return Some(candidate);
            }
        }
        dir = d.parent();
    }
    None
}

/// The datasets directory for a test: `None` (skip, with a note) when absent outside
/// CI; a panic when absent under `CI=true`, since CI must run every dataset test.
pub fn for_test() -> Option<PathBuf> {
    match find() {
        Some(d) => Some(d),
        None if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") => {
            panic!("CI=true but the shared datasets are missing (set CHATTY_DATASETS or place shared/datasets beside the checkout)")
        }
        None => {
            eprintln!("note: shared datasets not found; skipping");
            None
        }
    }
}
