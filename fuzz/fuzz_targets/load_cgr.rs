#![no_main]
//! Arbitrary bytes as a `.cgr` file, its checksums fixed up (`cgr::seal`) so that the
//! fuzzer reaches the section table, the structure and the consistency checks; what
//! loads must be a graph the kernels can trust, checked here exactly: targets in
//! range, lists sorted, the stored transpose the transpose, undirected symmetric, the
//! input ids of a renumbered graph a permutation with its inverse beside it.

const PATH: &str = "/dev/shm/chatty-fuzz.cgr";

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    std::env::set_var("CHATTY_MEMORY_LIMIT", "64M");
    let mut bytes = data.to_vec();
    if bytes.len() >= 4096 {
        bytes[..8].copy_from_slice(chatty_graph::cgr::MAGIC);
        bytes[8..12].copy_from_slice(&chatty_graph::cgr::VERSION.to_le_bytes());
        chatty_graph::cgr::seal(&mut bytes);
    }
    std::fs::write(PATH, &bytes).unwrap();
    let path = std::path::Path::new(PATH);
    let Ok(g) = chatty_graph::cgr::check(path, &chatty_graph::NoProgress) else { return };
    chatty_fuzz::check_loaded(&g);
});
