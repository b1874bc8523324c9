#![no_main]
//! Arbitrary bytes behind a `.el.gz` name: inflation errors must be clean.

use std::io::Write;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let path = std::path::Path::new("/dev/shm/chatty-fuzz.el.gz");
    let mut gz = vec![0x1f, 0x8b];
    gz.extend_from_slice(data);
    std::fs::File::create(path).unwrap().write_all(&gz).unwrap();
    let _ = chatty_graph::read_graph(path, Default::default(), &chatty_graph::NoProgress);
});
