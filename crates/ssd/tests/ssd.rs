//! The SSD engine against the CPU engine's references: every kernel, on generated
//! graphs and the datasets, with 1, 2 and 3 stripe files, through io_uring and through
//! the pread fallback, with and without binning; and broken files mid-run.

use std::path::Path;

use chatty_algo::{harness, Algorithm, BcSources, Engine, Params};
use chatty_graph::generate::{self, GenOptions};
use chatty_graph::read::{read_graph, ReadOptions};
use chatty_graph::{datasets, Graph, NoProgress};
use chatty_ssd::{EngineConfig, IoConfig, SsdEngine, SsdGraph};

const ALGORITHMS: [Algorithm; 9] = [
    Algorithm::Bfs,
    Algorithm::Sssp,
    Algorithm::Pr,
    Algorithm::Wcc,
    Algorithm::Spmv,
    Algorithm::Bc,
    Algorithm::Scc,
    Algorithm::Eigenvector,
    Algorithm::Katz,
];

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

/// Lays `g` out in `stripes` files and checks every kernel against the reference,
/// through the harness as `chatty run --engine ssd --verify` does.
fn check_all(name: &str, g: &Graph, stripes: usize, cfg: EngineConfig, dir: &Path) {
    let index = dir.join(format!("{}-{stripes}.ssd", name.replace('/', "_")));
    chatty_ssd::layout::write(g, &index, stripes, &[]).unwrap();
    let mut ssd = SsdEngine::open(&index, cfg, u64::MAX).unwrap();
    let opts = harness::Options { trials: 1, verify: true, against: None };
    for alg in ALGORITHMS {
        let p = Params { bc_sources: BcSources::Random(2), ..Params::default() };
        if alg == Algorithm::Sssp && chatty_algo::sssp::check_weights(g).is_err() {
            // What the CPU engine refuses (SSSP on negative weights), the SSD engine refuses too.
            let e = harness::run(&mut ssd, alg, &p, &opts, |_| {}).err().unwrap_or_else(|| panic!("{name}: negative weights accepted"));
            assert!(matches!(e, chatty_algo::Error::NegativeWeight(_)), "{name}: {e}");
            continue;
        }
        let r = harness::run(&mut ssd, alg, &p, &opts, |_| {}).unwrap_or_else(|e| panic!("{name} {alg:?} K={stripes}: {e}"));
        assert_eq!(r.verification, Some(Ok(())), "{name} {alg:?} K={stripes}");
        assert!(r.detail["bytes_read"].as_u64().unwrap() > 0 || g.num_edges() == 0);
        assert_eq!(r.detail["per_file_bytes"].as_array().unwrap().len(), stripes);
    }
    // Weighted PageRank: out-weights by one push, the weights read along the gather.
    let weighted = Params { weighted: true, ..Params::default() };
    match (chatty_algo::sssp::check_weights(g), harness::run(&mut ssd, Algorithm::Pr, &weighted, &opts, |_| {})) {
        (Ok(()), r) => assert_eq!(r.unwrap_or_else(|e| panic!("{name} weighted pr: {e}")).verification, Some(Ok(())), "{name}"),
        (Err(_), r) => assert!(r.is_err(), "{name}: weighted pr on negative weights"),
    }
    // The kernels that read adjacency lists at random are refused, with the way out.
    for alg in Algorithm::ALL.into_iter().filter(|a| a.reads_lists()) {
        let e = harness::run(&mut ssd, alg, &Params::default(), &opts, |_| {}).err().unwrap_or_else(|| panic!("{name}: {alg:?} ran"));
        assert!(e.to_string().contains("run it on the CPU engine"), "{name}: {e}");
    }
}

/// One trial of `alg` on the SSD engine, from the given source.
fn run_ssd(ssd: &mut SsdEngine, alg: Algorithm, source: Option<u32>) -> Result<(), chatty_algo::Error> {
    let p = Params { source, ..Params::default() };
    harness::run(ssd, alg, &p, &harness::Options { trials: 1, verify: false, against: None }, |_| {}).map(|_| ())
}

#[test]
fn the_memory_budget_is_enforced_per_kernel() {
    let dir = tempfile::tempdir().unwrap();
    let g = generate::rmat(12, 8, GenOptions { seed: 3, max_weight: None, undirected: false }, &NoProgress).unwrap();
    let index = dir.path().join("b.ssd");
    chatty_ssd::layout::write(&g, &index, 1, &[]).unwrap();
    let e = SsdEngine::open(&index, config(true, true), 1 << 20).err().unwrap().to_string();
    assert!(e.contains("--mem-budget"), "{e}");
    let mut ssd = SsdEngine::open(&index, config(true, true), 64 << 20).unwrap();
    ssd.prepare(Algorithm::Bfs).unwrap();
    let needed = ssd.detail()["memory_needed_bytes"].as_u64().unwrap();
    let mut tight = SsdEngine::open(&index, config(true, true), needed).unwrap();
    tight.prepare(Algorithm::Bfs).unwrap();
    let e = tight.prepare(Algorithm::Bc).unwrap_err().to_string();
    assert!(e.contains("bc") && e.contains("--mem-budget"), "{e}");
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
    // A layout numbers vertices 0 to n-1: wiki-Vote's id range, its gaps isolated.
    let mut opts = ReadOptions::default();
    opts.ids.keep_id_range = true;
    for (i, f) in files.iter().enumerate() {
        let g = read_graph(&data.join(f), opts, &NoProgress).unwrap().with_in_edges();
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
        let mut ssd = SsdEngine::open(&index, config(uring, true), u64::MAX).unwrap();
        let victim = &layout.out.files[1];
        let len = std::fs::metadata(victim).unwrap().len();
        std::fs::OpenOptions::new().write(true).open(victim).unwrap().set_len(len / 2).unwrap();
        let e = run_ssd(&mut ssd, Algorithm::Pr, None).unwrap_err().to_string();
        assert!(e.contains("short read") && e.contains(".out.1"), "{e}");
        // Sparse rounds (read on the calling thread) meet the truncation too: a BFS from
        // every vertex whose pages lie in the lost half of a file.
        let lost = (0..g.num_vertices() as u32).find(|&v| {
            let o = &layout.out.offsets;
            let page = o[v as usize] * 4 / 4096;
            o[v as usize + 1] > o[v as usize] && page % 2 == 1 && page / 2 * 4096 >= len / 2
        });
        let e = run_ssd(&mut ssd, Algorithm::Bfs, Some(lost.unwrap())).unwrap_err().to_string();
        assert!(e.contains("short read"), "{e}");
        // Opening it again refuses up front.
        let e = SsdGraph::open(&index, config(uring, true)).err().unwrap().to_string();
        assert!(e.contains("truncated"), "{e}");
    }
}

/// Conversions to one name at once leave one layout and its stripes, never another's
/// stripes beside it.
#[test]
fn concurrent_conversions_to_one_name_leave_one_layout() {
    let g = generate::rmat(12, 8, GenOptions { seed: 4, max_weight: Some(50), undirected: false }, &NoProgress).unwrap();
    let d = tempfile::tempdir().unwrap();
    let index = d.path().join("g.ssd");
    for _ in 0..4 {
        let start = std::sync::Barrier::new(3);
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    start.wait();
                    chatty_ssd::layout::write(&g, &index, 2, &[]).unwrap();
                });
            }
        });
        let mut files: Vec<String> =
            std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        files.sort();
        assert_eq!(files.len(), 5, "the index and its 2 + 2 stripes, nothing else: {files:?}");
        let layout = chatty_ssd::layout::load(&index).unwrap();
        assert!(layout.out.files.iter().all(|f| f.exists()));
    }
}

/// Edits one stripe file of a fresh layout of `g` in `dir` with `edit`, then returns
/// what opening it and running WCC and `--verify`'s reference read say.
fn after_editing(g: &Graph, dir: &Path, name: &str, edit: impl FnOnce(&chatty_ssd::layout::Layout)) -> String {
    let index = dir.join(name);
    let layout = chatty_ssd::layout::write(g, &index, 2, &[]).unwrap();
    edit(&layout);
    let mut ssd = match SsdEngine::open(&index, config(true, true), u64::MAX) {
        Ok(ssd) => ssd,
        Err(e) => return e.to_string(),
    };
    let run = run_ssd(&mut ssd, Algorithm::Wcc, None).unwrap_err().to_string();
    let reference = ssd.reference_graph().err().unwrap().to_string();
    assert!(reference.contains("checksum"), "{reference}");
    run
}

#[test]
fn damaged_swapped_stale_or_foreign_pages_are_errors_never_data() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let g = generate::rmat(12, 8, GenOptions { seed: 3, max_weight: Some(9), undirected: false }, &NoProgress).unwrap();
    let flip = |f: &Path, at: u64, value: Option<u8>| {
        let mut bytes = std::fs::read(f).unwrap();
        match value {
            Some(v) => bytes[at as usize..at as usize + 4096].fill(v),
            None => bytes[at as usize] ^= 1,
        }
        std::fs::write(f, bytes).unwrap();
    };
    // A flipped bit or a zeroed page inside the data: refused as each page is read.
    let e = after_editing(&g, d, "flip.ssd", |l| flip(&l.out.files[1], 4096 * 3 + 17, None));
    assert!(e.contains("corrupt page") && e.contains("checksum") && e.contains(".out.1"), "{e}");
    let e = after_editing(&g, d, "zero.ssd", |l| flip(&l.out.files[0], 4096 * 2, Some(0)));
    assert!(e.contains("fails its checksum"), "{e}");
    // Two data pages of one file exchanged: each is intact but misplaced.
    let e = after_editing(&g, d, "moved.ssd", |l| {
        let f = &l.out.files[0];
        let mut bytes = std::fs::read(f).unwrap();
        let (a, b) = bytes[4096..].split_at_mut(4096);
        a.swap_with_slice(&mut b[..4096]);
        std::fs::write(f, bytes).unwrap();
    });
    assert!(e.contains("fails its checksum"), "{e}");
    // Swapped stripe files, a stripe from another layout: refused at open.
    let e = after_editing(&g, d, "swap.ssd", |l| {
        let (a, b) = (&l.out.files[0], &l.out.files[1]);
        let tmp = d.join("tmp");
        std::fs::rename(a, &tmp).unwrap();
        std::fs::rename(b, a).unwrap();
        std::fs::rename(&tmp, b).unwrap();
    });
    assert!(e.contains("not stripe 0") || e.contains("expected"), "{e}");
    let other = chatty_ssd::layout::write(&g, &d.join("other.ssd"), 2, &[]).unwrap();
    let e = after_editing(&g, d, "foreign.ssd", |l| {
        std::fs::copy(&other.out.files[1], &l.out.files[1]).unwrap();
    });
    assert!(e.contains("not stripe 1") && e.contains("another layout"), "{e}");
    // The index: any changed byte (offsets shifted, a name edited) fails its checksum.
    let index = d.join("idx.ssd");
    let layout = chatty_ssd::layout::write(&g, &index, 2, &[]).unwrap();
    let mut bytes = std::fs::read(&index).unwrap();
    let at = bytes.len() - 8 - layout.out.sums.len() * 4 * 2 - 40;
    bytes[at] ^= 4;
    std::fs::write(&index, &bytes).unwrap();
    let e = SsdGraph::open(&index, config(true, true)).err().unwrap().to_string();
    assert!(e.contains("index checksum mismatch"), "{e}");
}

/// An index rewritten with its checksum fixed up: what a crafted file can say.
fn with_header(index: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let bytes = std::fs::read(index).unwrap();
    let len = u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
    let mut header: serde_json::Value = serde_json::from_slice(&bytes[12..12 + len]).unwrap();
    edit(&mut header);
    let body = &bytes[(12 + len).next_multiple_of(8)..bytes.len() - 8];
    let json = serde_json::to_vec(&header).unwrap();
    let mut out = b"CHATTYSD".to_vec();
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(&json);
    out.resize(out.len().next_multiple_of(8), 0);
    out.extend_from_slice(body);
    out.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(&out).to_le_bytes());
    std::fs::write(index, out).unwrap();
}

#[test]
fn stripe_names_stay_beside_the_index_and_old_layouts_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let g = generate::urand(8, 4, GenOptions { seed: 1, max_weight: None, undirected: false }, &NoProgress).unwrap();
    let index = dir.path().join("n.ssd");
    chatty_ssd::layout::write(&g, &index, 1, &[]).unwrap();
    with_header(&index, |h| h["out_files"][0] = "../../etc/passwd".into());
    let e = SsdGraph::open(&index, config(true, true)).err().unwrap().to_string();
    assert!(e.contains("neither a plain name nor an absolute path"), "{e}");
    chatty_ssd::layout::write(&g, &index, 1, &[]).unwrap();
    with_header(&index, |h| h["out_files"][0] = "/etc/passwd".into());
    let e = SsdGraph::open(&index, config(true, true)).err().unwrap().to_string();
    assert!(e.contains("/etc/passwd") && (e.contains("expected") || e.contains("not stripe")), "{e}");
    chatty_ssd::layout::write(&g, &index, 1, &[]).unwrap();
    with_header(&index, |h| h["version"] = 1.into());
    let e = SsdGraph::open(&index, config(true, true)).err().unwrap().to_string();
    assert!(e.contains("version 1") && e.contains("convert the graph again"), "{e}");
}

#[test]
fn a_reconversion_commits_by_its_index_and_a_failed_one_leaves_the_old_layout() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = |seed| GenOptions { seed, max_weight: None, undirected: false };
    let (g1, g2) = (generate::urand(9, 4, o(1), &NoProgress).unwrap(), generate::urand(9, 6, o(2), &NoProgress).unwrap());
    let index = d.join("g.ssd");
    let first = chatty_ssd::layout::write(&g1, &index, 2, &[]).unwrap();
    let old_index = std::fs::read(&index).unwrap();
    let second = chatty_ssd::layout::write(&g2, &index, 2, &[]).unwrap();
    assert_eq!(second.header.edges, g2.num_edges());
    // The old layout's stripes are gone; the directory holds exactly the new layout.
    assert!(first.out.files.iter().all(|f| !f.exists()));
    assert_eq!(std::fs::read_dir(d).unwrap().count(), 1 + 2 * 2);
    // An interruption between the stripes and the index (old index, new stripes).
    std::fs::write(&index, &old_index).unwrap();
    assert!(SsdGraph::open(&index, config(true, true)).is_err());
    // A conversion that fails (a stripe directory that does not exist) leaves no
    // stripe behind and the layout at the index as it was.
    let third = chatty_ssd::layout::write(&g1, &index, 2, &[]).unwrap();
    let before: Vec<_> = std::fs::read_dir(d).unwrap().map(|e| e.unwrap().path()).collect();
    assert!(chatty_ssd::layout::write(&g2, &index, 2, &[d.to_path_buf(), d.join("missing")]).is_err());
    let after: Vec<_> = std::fs::read_dir(d).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(before.len(), after.len(), "{after:?}");
    let kept = SsdGraph::open(&index, config(true, true)).unwrap();
    assert_eq!(kept.layout.header.id, third.header.id);
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
