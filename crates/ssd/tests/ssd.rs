//! The SSD engine against the CPU engine's references: every kernel, on generated
//! graphs and the datasets, with 1, 2 and 3 stripe files, through io_uring and through
//! the pread fallback, with and without binning; and broken files mid-run.

use std::path::Path;

use chatty_algo::{pick_sources, verify, Algorithm, BcSources, Params};
use chatty_graph::generate::{self, GenOptions};
use chatty_graph::read::{read_graph, ReadOptions};
use chatty_graph::{datasets, Graph, NoProgress};
use chatty_ssd::{kernels, EngineConfig, IoConfig, SsdGraph};

const ALGORITHMS: [Algorithm; 6] = [Algorithm::Bfs, Algorithm::Sssp, Algorithm::Pr, Algorithm::Wcc, Algorithm::Spmv, Algorithm::Bc];

fn config(uring: bool, binning: bool) -> EngineConfig {
    EngineConfig {
        io: IoConfig { queue_depth: 8, merge_pages: 4, direct: true, uring },
        scatter_threads: 2,
        gather_threads: 2,
        binning,
        bin_records: 512,
        staging_records: 16,
    }
}

/// Lays `g` out in `stripes` files and checks every kernel against the reference.
fn check_all(name: &str, g: &Graph, stripes: usize, cfg: EngineConfig, dir: &Path) {
    let index = dir.join(format!("{}-{stripes}.ssd", name.replace('/', "_")));
    chatty_ssd::layout::write(g, &index, stripes, &[]).unwrap();
    let ssd = SsdGraph::open(&index, cfg).unwrap();
    for alg in ALGORITHMS {
        let p = Params { bc_sources: BcSources::Random(2), ..Params::default() };
        let sources = if alg.has_source() { pick_sources(g, &p, 0).unwrap() } else { Vec::new() };
        if let Err(cpu) = chatty_algo::run(alg, g, &p, 0) {
            // What the CPU engine refuses (SSSP on negative weights), the SSD engine refuses too.
            let ssd = kernels::run(&ssd, alg, &p, sources).err().unwrap_or_else(|| panic!("{name} {alg:?}: CPU refused ({cpu}), SSD ran"));
            assert_eq!(ssd.to_string().split(';').next(), cpu.split(';').next());
            continue;
        }
        let r = kernels::run(&ssd, alg, &p, sources).unwrap_or_else(|e| panic!("{name} {alg:?} K={stripes}: {e}"));
        verify(alg, g, &p, &r).unwrap_or_else(|e| panic!("{name} {alg:?} K={stripes}: {e}"));
    }
    let (totals, rounds) = ssd.take_stats();
    assert!(totals.bytes_read > 0 && !rounds.is_empty());
    assert_eq!(totals.per_file.len(), stripes);
}

fn generated() -> Vec<(&'static str, Graph)> {
    let o = |max_weight, undirected| GenOptions { seed: 7, max_weight, undirected };
    vec![
        ("rmat-12-weighted", generate::rmat(12, 8, o(Some(20), false), &NoProgress).unwrap().with_in_edges()),
        ("rmat-11-undirected", generate::rmat(11, 8, o(None, true), &NoProgress).unwrap()),
        ("grid", generate::grid(60, 40, o(None, true), &NoProgress).unwrap()),
    ]
}

#[test]
fn every_kernel_matches_the_cpu_engine_on_generated_graphs() {
    let dir = tempfile::tempdir().unwrap();
    for (name, g) in generated() {
        for stripes in [1, 2, 3] {
            for (uring, binning) in [(true, true), (false, true), (true, false)] {
                check_all(name, &g, stripes, config(uring, binning), dir.path());
            }
        }
    }
}

#[test]
fn every_kernel_matches_the_cpu_engine_on_the_datasets() {
    let Some(data) = datasets::for_test() else { return };
    let dir = tempfile::tempdir().unwrap();
    let files = [
        "road/USA-road-NY.pace.gr.gz",
        "road/bremen-osm-d.gr.gz",
        "social/wiki-Vote.txt.gz",
        "social/email-Enron.el.gz",
        "web/cnr-2000.el.gz",
        "matrix/bcsstk13.mtx.gz",
    ];
    for (i, f) in files.iter().enumerate() {
        let g = read_graph(&data.join(f), ReadOptions::default(), &NoProgress).unwrap().with_in_edges();
        // Each dataset with one stripe count, alternating the IO path.
        check_all(f, &g, 1 + i % 3, config(i % 2 == 0, true), dir.path());
    }
}

#[test]
fn a_file_truncated_or_corrupted_mid_run_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let g = generate::rmat(12, 8, GenOptions { seed: 3, max_weight: None, undirected: false }, &NoProgress).unwrap();
    for uring in [true, false] {
        let index = dir.path().join(format!("t-{uring}.ssd"));
        let layout = chatty_ssd::layout::write(&g, &index, 2, &[]).unwrap();
        let ssd = SsdGraph::open(&index, config(uring, true)).unwrap();
        let victim = &layout.out.files[1];
        let len = std::fs::metadata(victim).unwrap().len();
        std::fs::OpenOptions::new().write(true).open(victim).unwrap().set_len(len / 2).unwrap();
        let e = kernels::run(&ssd, Algorithm::Pr, &Params::default(), Vec::new()).unwrap_err().to_string();
        assert!(e.contains("short read") && e.contains(".out.1"), "{e}");
        // Sparse rounds (read on the calling thread) meet the truncation too: a BFS from
        // every vertex whose pages lie in the lost half of a file.
        let lost = (0..g.num_vertices() as u32).find(|&v| {
            let o = &layout.out.offsets;
            let page = o[v as usize] * 4 / 4096;
            o[v as usize + 1] > o[v as usize] && page % 2 == 1 && page / 2 * 4096 >= len / 2
        });
        let p = Params { source: lost, ..Params::default() };
        let e = kernels::run(&ssd, Algorithm::Bfs, &p, vec![lost.unwrap()]).unwrap_err().to_string();
        assert!(e.contains("short read"), "{e}");
        // Opening it again refuses up front.
        let e = SsdGraph::open(&index, config(uring, true)).err().unwrap().to_string();
        assert!(e.contains("truncated"), "{e}");
    }
    let index = dir.path().join("c.ssd");
    let layout = chatty_ssd::layout::write(&g, &index, 1, &[]).unwrap();
    let mut bytes = std::fs::read(&layout.out.files[0]).unwrap();
    bytes[..4096].fill(0xff);
    std::fs::write(&layout.out.files[0], bytes).unwrap();
    let ssd = SsdGraph::open(&index, config(true, true)).unwrap();
    let e = kernels::run(&ssd, Algorithm::Wcc, &Params::default(), Vec::new()).unwrap_err().to_string();
    assert!(e.contains("corrupt page"), "{e}");
}

#[test]
fn a_broken_index_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let g = generate::urand(8, 4, GenOptions { seed: 1, max_weight: None, undirected: false }, &NoProgress).unwrap();
    let index = dir.path().join("g.ssd");
    chatty_ssd::layout::write(&g, &index, 2, &[]).unwrap();
    let bytes = std::fs::read(&index).unwrap();
    for (what, broken) in [("short", bytes[..bytes.len() - 8].to_vec()), ("magic", [b"NOTCHATT", &bytes[8..]].concat())] {
        std::fs::write(&index, &broken).unwrap();
        let e = SsdGraph::open(&index, EngineConfig::default()).err().unwrap_or_else(|| panic!("{what} accepted"));
        assert!(!e.to_string().is_empty());
    }
    assert!(chatty_ssd::layout::write(&g, &dir.path().join("x.ssd"), 0, &[]).is_err());
}
