#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| chatty_fuzz::parse(chatty_graph::Format::WeightedEdgeList, data));
