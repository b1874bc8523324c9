#![no_main]
//! Arbitrary bytes as a GAPBS `.sg` or `.wsg` file (the first byte picks which), the
//! header's counts fixed up to the size so that the fuzzer reaches the offsets, the
//! lists and the transpose check; what loads must be a graph the kernels can trust.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    std::env::set_var("CHATTY_MEMORY_LIMIT", "64M");
    let Some((&mode, rest)) = data.split_first() else { return };
    let mut bytes = rest.to_vec();
    let weighted = mode & 2 != 0;
    if bytes.len() >= 17 && mode & 1 != 0 {
        // n from the header's low byte; m as the rest of the file allows.
        let directed = (bytes[0] & 1) as usize;
        let n = bytes[9] as usize % 64;
        let sides = 1 + directed;
        let element = if weighted { 8 } else { 4 };
        let index = (n + 1) * 8 * sides;
        let m = bytes.len().saturating_sub(17 + index) / (element * sides);
        bytes[0] = directed as u8;
        bytes[1..9].copy_from_slice(&(m as i64).to_le_bytes());
        bytes[9..17].copy_from_slice(&(n as i64).to_le_bytes());
        bytes.truncate(17 + index + m * element * sides);
    }
    let path = if weighted { "/dev/shm/chatty-fuzz.wsg" } else { "/dev/shm/chatty-fuzz.sg" };
    std::fs::write(path, &bytes).unwrap();
    let read = chatty_graph::read_graph(std::path::Path::new(path), Default::default(), &chatty_graph::NoProgress);
    if let Ok(g) = read {
        chatty_fuzz::check_loaded(&g);
    }
});
