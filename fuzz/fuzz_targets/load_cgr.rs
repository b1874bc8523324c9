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
    let n = g.num_vertices();
    let out = g.out_edges();
    for v in 0..n as u32 {
        let list = out.neighbors(v);
        assert!(list.iter().all(|&t| (t as usize) < n));
        assert!(list.windows(2).all(|p| p[0] <= p[1]), "vertex {v}: unsorted list loaded");
    }
    let edges = |adj: &chatty_graph::Adjacency, reverse: bool| {
        let mut e: Vec<(u32, u32, u32)> = (0..n as u32)
            .flat_map(|u| {
                adj.range(u).map(move |i| {
                    let (a, b) = (u, adj.targets()[i]);
                    let w = adj.raw_weights().map_or(0, |w| w[i]);
                    if reverse { (b, a, w) } else { (a, b, w) }
                })
            })
            .collect();
        e.sort_unstable();
        e
    };
    if let Some(inc) = g.transpose_if_built() {
        assert_eq!(edges(inc, true), edges(out, false), "a transpose that is not the transpose loaded");
    }
    if !g.is_directed() {
        assert_eq!(edges(out, true), edges(out, false), "an asymmetric undirected graph loaded");
    }
    if let Some(order) = g.order() {
        let (input, stored) = (order.input_ids(), order.stored_ids());
        assert!(input.len() == n && stored.len() == n);
        assert!((0..n).all(|v| stored[input[v] as usize] as usize == v), "input ids that are not a permutation loaded");
    }
});
