#![no_main]
//! Arbitrary edits of a real SSD layout's index, with the index checksum fixed up
//! (what a crafted index can be): the first bytes of the input say where to write the
//! rest. Loading must refuse it or give a layout whose every page read is verified:
//! reading the graph back either fails with an error or yields a valid CSR; a BFS
//! through the engine either fails with an error or matches the reference on that CSR.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use chatty_algo::{harness, Algorithm, Params};
use chatty_graph::generate::{self, GenOptions};
use chatty_ssd::{EngineConfig, SsdEngine};

const DIR: &str = "/dev/shm/chatty-fuzz-ssd";

/// The pristine index, written once per process.
fn pristine() -> &'static (PathBuf, Vec<u8>) {
    static LAYOUT: OnceLock<(PathBuf, Vec<u8>)> = OnceLock::new();
    LAYOUT.get_or_init(|| {
        let dir = Path::new(DIR);
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir).unwrap();
        let g = generate::rmat(7, 8, GenOptions { seed: 5, max_weight: Some(9), undirected: false }, &chatty_graph::NoProgress).unwrap();
        let index = dir.join("g.ssd");
        chatty_ssd::layout::write(&g, &index, 2, &[]).unwrap();
        let bytes = std::fs::read(&index).unwrap();
        (index, bytes)
    })
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    std::env::set_var("CHATTY_MEMORY_LIMIT", "64M");
    let (index, good) = pristine();
    let Some((at, patch)) = data.split_first_chunk::<4>() else { return };
    let mut bytes = good.clone();
    let body = bytes.len() - 8;
    let at = u32::from_le_bytes(*at) as usize % body;
    for (i, b) in patch.iter().enumerate().take(body - at) {
        bytes[at + i] = *b;
    }
    let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..body]);
    bytes[body..].copy_from_slice(&sum.to_le_bytes());
    let crafted = index.with_file_name("crafted.ssd");
    std::fs::write(&crafted, &bytes).unwrap();
    let Ok(mut engine) = SsdEngine::open(&crafted, EngineConfig::default(), 1 << 30) else { return };
    let opts = harness::Options { trials: 1, verify: true, against: None };
    let p = Params { source: Some(0), ..Params::default() };
    // The reference is read back from the same (verified) pages: an error or a match.
    if let Ok(report) = harness::run(&mut engine, Algorithm::Bfs, &p, &opts, |_| {}) {
        assert_eq!(report.verification, Some(Ok(())), "a crafted index gave a wrong BFS");
    }
});
