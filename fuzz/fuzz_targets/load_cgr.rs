#![no_main]
//! Arbitrary bytes as a `.cgr` file. The header checksum is fixed up first, so the
//! fuzzer reaches the section table and structure checks instead of stopping there.

const PATH: &str = "/dev/shm/chatty-fuzz.cgr";

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut bytes = data.to_vec();
    if bytes.len() >= 4096 {
        bytes[..8].copy_from_slice(chatty_graph::cgr::MAGIC);
        let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..4088]);
        bytes[4088..4096].copy_from_slice(&sum.to_le_bytes());
    }
    std::fs::write(PATH, &bytes).unwrap();
    let path = std::path::Path::new(PATH);
    if let Ok(g) = chatty_graph::cgr::load(path) {
        for v in 0..g.num_vertices() as u32 {
            assert!(g.out_edges().neighbors(v).iter().all(|&t| (t as usize) < g.num_vertices()));
        }
    }
    let _ = chatty_graph::cgr::check(path, &chatty_graph::NoProgress);
});
