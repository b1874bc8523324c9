//! The multi-process engine under `mpirun`: every kernel on 2 and 3 ranks equals the
//! sequential references (and, for the exact kernels, the CPU engine's output file)
//! on generated graphs (directed and undirected, integer and float weights, isolated
//! vertices, ranks that own no edges or no vertices) and on real datasets; a killed
//! rank, mismatched command lines and a corrupt file end the job with an error.
//! Needs `mpirun` (Open MPI); built only with the `mpi` feature.
#![cfg(feature = "mpi")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const CHATTY: &str = env!("CARGO_BIN_EXE_chatty");

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// `mpirun` for `ranks` processes of `args` (each chatty's), allowed to oversubscribe
/// the CI machine's cores and to run as root in its container.
fn mpirun(ranks: usize) -> Command {
    let mut c = Command::new("mpirun");
    c.args(["--oversubscribe", "--timeout", "300", "-np", &ranks.to_string()])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1");
    c
}

fn chatty(args: &[&str]) -> Output {
    Command::new(CHATTY).args(args).output().expect("chatty runs")
}

fn convert(src: &Path, dst: &Path, extra: &[&str]) {
    let o = chatty(&[&["convert", src.to_str().unwrap(), "-o", dst.to_str().unwrap()], extra].concat());
    assert!(o.status.success(), "convert {}: {}", src.display(), text(&o));
}

const KERNELS: &str = "bfs,sssp,pr,wcc,bc,spmv";

/// Every kernel on `ranks` ranks (`distribute`: how they get the graph), verified; the
/// exact kernels' answers byte-equal to the CPU engine's.
fn same_as_one_process(g: &Path, ranks: usize, dir: &Path, distribute: &[&str]) {
    let name = g.file_stem().unwrap().to_string_lossy().into_owned();
    let common = ["--source", "0", "--zero-based", "--sources", "3", "--verify", "--threads", "1"];
    let cpu_out = dir.join(format!("{name}.cpu.txt"));
    let o = chatty(&[&["run", KERNELS, g.to_str().unwrap(), "--engine", "cpu", "-o", cpu_out.to_str().unwrap()], &common[..]].concat());
    assert!(o.status.success(), "cpu on {name}: {}", text(&o));
    let mpi_out = dir.join(format!("{name}.mpi{ranks}.txt"));
    let o = mpirun(ranks)
        .args([CHATTY, "run", KERNELS, g.to_str().unwrap(), "--engine", "mpi", "-o", mpi_out.to_str().unwrap()])
        .args(distribute)
        .args(common)
        .output()
        .unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{ranks} ranks ({distribute:?}) on {name}: {t}");
    assert_eq!(t.matches("Verification:        PASS").count(), 6, "{ranks} ranks on {name}: {t}");
    assert!(t.contains(&format!("MPI: {ranks} ranks")), "{t}");
    for alg in ["bfs", "sssp", "wcc"] {
        let file = |p: &Path| std::fs::read(p.with_extension(format!("{alg}.txt"))).unwrap();
        assert!(file(&cpu_out) == file(&mpi_out), "{alg} on {name}, {ranks} ranks: the answers differ from the CPU engine's");
    }
}

fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p
}

/// Generated graphs of every shape the engine distinguishes, as `.cgr`.
fn generated(dir: &Path) -> Vec<PathBuf> {
    let p = |n: &str| dir.join(n);
    let gen = |args: &[&str]| {
        let o = chatty(args);
        assert!(o.status.success(), "{args:?}: {}", text(&o));
    };
    gen(&["generate", "rmat", "--scale", "10", "--edge-factor", "8", "--weights", "9", "-o", p("rmat.cgr").to_str().unwrap()]);
    gen(&["generate", "rmat", "--scale", "10", "--edge-factor", "8", "-o", p("rmat.el").to_str().unwrap()]);
    convert(&p("rmat.el"), &p("rmat-t.cgr"), &["--transpose"]);
    gen(&["generate", "urand", "--scale", "10", "--edge-factor", "4", "--undirected", "-o", p("urand.cgr").to_str().unwrap()]);
    gen(&["generate", "grid", "--width", "40", "--height", "25", "-o", p("grid.cgr").to_str().unwrap()]);
    // Float weights, directed, with a vertex of no out-edges.
    let mut body = String::new();
    for u in 0..200u32 {
        for k in 1..4u32 {
            if u != 7 {
                body += &format!("{u} {} {}\n", (u * 37 + k * 11) % 200, 0.25 + ((u * k) % 13) as f32 / 8.0);
            }
        }
    }
    convert(&write(dir, "float.wel", &body), &p("float.cgr"), &[]);
    // 40 vertices, edges among the first three only: with 3 ranks two own no edges.
    let body = "%%MatrixMarket matrix coordinate pattern general\n40 40 3\n1 2\n2 3\n3 1\n";
    convert(&write(dir, "isolated.mtx", body), &p("isolated.cgr"), &[]);
    // Two vertices: with 3 ranks one owns none.
    convert(&write(dir, "tiny.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n"), &p("tiny.cgr"), &[]);
    ["rmat", "rmat-t", "urand", "grid", "float", "isolated", "tiny"].iter().map(|n| p(&format!("{n}.cgr"))).collect()
}

#[test]
fn every_kernel_on_generated_graphs_equals_one_process() {
    let d = tempfile::tempdir().unwrap();
    for g in generated(d.path()) {
        for ranks in [2, 3] {
            same_as_one_process(&g, ranks, d.path(), &["--distribute", "shared"]);
        }
        // Rank 0 reads the file and sends the rows (and, for --verify, the ranks
        // gather the whole graph from each other); renumbered in BFS order first.
        same_as_one_process(&g, 3, d.path(), &["--distribute", "mpi"]);
        same_as_one_process(&g, 3, d.path(), &["--distribute", "mpi", "--partition", "bfs"]);
        // Every rank renumbers its own rows from the shared file.
        same_as_one_process(&g, 3, d.path(), &["--distribute", "shared", "--partition", "bfs"]);
    }
}

/// Parents from the ranks' distances: a verified tree on every generated graph, the
/// CPU engine's own where the ranks keep the file's ids.
#[test]
fn parents_across_ranks_are_verified_trees() {
    let d = tempfile::tempdir().unwrap();
    for g in generated(d.path()) {
        let name = g.file_stem().unwrap().to_string_lossy().into_owned();
        let common = ["--source", "0", "--zero-based", "--parents", "--verify", "--threads", "1"];
        let cpu_out = d.path().join(format!("{name}.cpu.txt"));
        let o =
            chatty(&[&["run", "bfs,sssp", g.to_str().unwrap(), "--engine", "cpu", "-o", cpu_out.to_str().unwrap()], &common[..]].concat());
        assert!(o.status.success(), "cpu on {name}: {}", text(&o));
        for partition in [&[][..], &["--distribute", "mpi", "--partition", "bfs"][..]] {
            let mpi_out = d.path().join(format!("{name}.mpi.txt"));
            let o = mpirun(2)
                .args([CHATTY, "run", "bfs,sssp", g.to_str().unwrap(), "--engine", "mpi", "-o", mpi_out.to_str().unwrap()])
                .args(partition)
                .args(common)
                .output()
                .unwrap();
            let t = text(&o);
            assert!(o.status.success() && t.matches("Verification:        PASS").count() == 2, "{name} {partition:?}: {t}");
            if partition.is_empty() {
                for alg in ["bfs", "sssp"] {
                    let file = |p: &Path| std::fs::read(p.with_extension(format!("{alg}.txt"))).unwrap();
                    assert!(file(&cpu_out) == file(&mpi_out), "{alg} on {name}: the parents differ from the CPU engine's");
                }
            }
        }
    }
}

#[test]
fn every_kernel_on_datasets_equals_one_process() {
    let Some(data) = chatty_graph::datasets::for_test() else { return };
    let d = tempfile::tempdir().unwrap();
    for (file, extra) in
        [("social/email-Enron.el.gz", &[][..]), ("road/bremen-osm-d.gr.gz", &[][..]), ("social/cit-HepPh.el.gz", &["--transpose"][..])]
    {
        let g = d.path().join(format!("{}.cgr", file.split('/').nth(1).unwrap().split('.').next().unwrap()));
        convert(&data.join(file), &g, extra);
        for ranks in [2, 3] {
            same_as_one_process(&g, ranks, d.path(), &["--distribute", "shared"]);
        }
    }
}

#[test]
fn a_graph_multicast_to_each_rank_gives_the_same_answers() {
    let d = tempfile::tempdir().unwrap();
    let copies = d.path().join("copies");
    let local = format!("{}/%r", copies.display());
    let multicast = ["--distribute", "multicast", "--local-dir", &local, "--multicast-group", "239.255.42.9:7409"];
    let graphs = generated(d.path());
    for g in &graphs[..2] {
        // A file of the user's under the copy's name stays as it was.
        let name = g.file_name().unwrap();
        std::fs::create_dir_all(copies.join("1")).unwrap();
        std::fs::write(copies.join("1").join(name), "the user's own file").unwrap();
        same_as_one_process(g, 3, d.path(), &multicast);
        // Ranks 1 and 2 each received a copy (a place of their own), removed when the
        // job ended; rank 0 read the original.
        assert_eq!(std::fs::read_to_string(copies.join("1").join(name)).unwrap(), "the user's own file");
        let left: Vec<_> =
            [1, 2].iter().flat_map(|r| std::fs::read_dir(copies.join(r.to_string())).unwrap()).map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, [name], "only the user's file remains");
        assert!(!copies.join("0").exists());
        std::fs::remove_file(copies.join("1").join(name)).unwrap();
    }
    // A rank that cannot store its copy stops every rank, with no output file.
    let out = d.path().join("out.txt");
    let o = mpirun(3)
        .args([CHATTY, "run", "bfs", graphs[0].to_str().unwrap(), "--engine", "mpi", "-o", out.to_str().unwrap()])
        .args(["--distribute", "multicast", "--local-dir", "/proc/chatty-nowhere/%r", "--multicast-group", "239.255.42.9:7409"])
        .output()
        .unwrap();
    let t = text(&o);
    assert!(!o.status.success() && t.contains("cannot create") && !t.contains("panicked"), "{t}");
    assert!(!out.exists());
    let o = chatty(&["run", "bfs", graphs[0].to_str().unwrap(), "--engine", "mpi", "--local-dir", "/tmp"]);
    assert!(!o.status.success() && text(&o).contains("--local-dir applies to --distribute multicast"), "{}", text(&o));
}

#[test]
fn bc_with_sources_split_across_ranks_equals_the_reference() {
    let d = tempfile::tempdir().unwrap();
    let g = d.path().join("grid.cgr");
    assert!(chatty(&["generate", "grid", "--width", "30", "--height", "20", "-o", g.to_str().unwrap()]).status.success());
    for distribute in ["shared", "mpi"] {
        let o = mpirun(3)
            .args([CHATTY, "run", "bc", g.to_str().unwrap(), "--engine", "mpi", "--sources", "all", "--split-sources"])
            .args(["--distribute", distribute, "--verify", "--threads", "1", "--json"])
            .output()
            .unwrap();
        let t = text(&o);
        assert!(o.status.success(), "{distribute}: {t}");
        let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(j["verification"], "PASS", "{distribute}: {t}");
        assert_eq!(j["parameters"]["source_count"], 600);
        assert_eq!(j["detail"]["split_sources"], true);
    }
}

/// Children of `pid` (the ranks mpirun started).
fn children(pid: u32) -> Vec<u32> {
    let mut kids = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else { continue };
        // The parent is the second field after the parenthesised command name.
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        if after.split(' ').nth(1) == Some(&pid.to_string()) && stat.contains("(chatty)") {
            kids.push(child);
        }
    }
    kids
}

#[test]
fn a_killed_rank_stops_the_job_within_10_seconds() {
    let d = tempfile::tempdir().unwrap();
    let g = d.path().join("grid.cgr");
    assert!(chatty(&["generate", "grid", "--width", "300", "--height", "300", "-o", g.to_str().unwrap()]).status.success());
    let out = d.path().join("bc.txt");
    let mut job = mpirun(2)
        .args([
            CHATTY,
            "run",
            "bc",
            g.to_str().unwrap(),
            "--engine",
            "mpi",
            "--sources",
            "all",
            "--threads",
            "1",
            "-o",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let ranks = loop {
        let kids = children(job.id());
        if kids.len() == 2 || start.elapsed() > Duration::from_secs(30) {
            break kids;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(ranks.len(), 2, "mpirun should have started 2 ranks");
    std::thread::sleep(Duration::from_secs(2));
    assert!(job.try_wait().unwrap().is_none(), "the job should still be running");
    let killed = Instant::now();
    // SAFETY: kill(2) on a child process id.
    unsafe { libc_kill(ranks[1] as i32, 9) };
    let status = loop {
        if let Some(s) = job.try_wait().unwrap() {
            break s;
        }
        assert!(killed.elapsed() < Duration::from_secs(10), "the job still runs 10 s after a rank was killed");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(!status.success());
    assert!(children(job.id()).is_empty());
    assert!(std::fs::read_dir(d.path()).unwrap().flatten().all(|e| !e.file_name().to_string_lossy().starts_with("bc")), "no output file");
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, signal: i32) -> i32;
}

#[test]
fn ranks_given_different_flags_refuse_to_start() {
    let d = tempfile::tempdir().unwrap();
    let g = d.path().join("r.cgr");
    assert!(chatty(&["generate", "rmat", "--scale", "8", "-o", g.to_str().unwrap()]).status.success());
    let g = g.to_str().unwrap();
    let o = mpirun(1)
        .args([
            CHATTY, "run", "bfs", g, "--engine", "mpi", "-n", "1", ":", "-np", "1", CHATTY, "run", "bfs", g, "--engine", "mpi", "-n", "2",
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(text(&o).contains("different parameters"), "{}", text(&o));
}

/// Ranks that find different files under one path (here: one relative path, two
/// working directories) refuse the job before any rank sizes a message by its own file.
#[test]
fn ranks_that_open_different_graphs_refuse_them() {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    for (dir, scale) in [(&a, "8"), (&b, "9")] {
        std::fs::create_dir(dir).unwrap();
        assert!(chatty(&["generate", "rmat", "--scale", scale, "-o", dir.join("g.cgr").to_str().unwrap()]).status.success());
    }
    for reorder in ["none", "bfs"] {
        let rank = |dir: &Path| {
            ["--wdir", dir.to_str().unwrap(), CHATTY, "run", "pr", "g.cgr", "--engine", "mpi", "--reorder", reorder].map(String::from)
        };
        let o = mpirun(1).args(rank(&a)).args([":", "-np", "1"]).args(rank(&b)).output().unwrap();
        let t = text(&o);
        assert!(!o.status.success() && t.contains("different graphs"), "{t}");
        assert!(!t.contains("panicked"), "{t}");
    }
}

/// Each rank admits what it will hold against the memory its process may use: over
/// the limit, every rank refuses the job with the bytes needed.
#[test]
fn ranks_admit_their_part_within_the_memory_limit() {
    let d = tempfile::tempdir().unwrap();
    let g = d.path().join("r.cgr");
    assert!(chatty(&["generate", "rmat", "--scale", "20", "-o", g.to_str().unwrap()]).status.success());
    let out = d.path().join("out.txt");
    let o = mpirun(2)
        .env("CHATTY_MEMORY_LIMIT", "150M")
        .args([CHATTY, "run", "pr", g.to_str().unwrap(), "--engine", "mpi", "-o", out.to_str().unwrap()])
        .output()
        .unwrap();
    let t = text(&o);
    assert!(!o.status.success() && t.contains("part of the graph") && t.contains("needs"), "{t}");
    assert!(!t.contains("panicked") && !out.exists(), "{t}");
}

#[test]
fn a_corrupt_graph_is_an_error_on_every_rank() {
    let d = tempfile::tempdir().unwrap();
    let g = d.path().join("r.cgr");
    assert!(chatty(&["generate", "rmat", "--scale", "10", "-o", g.to_str().unwrap()]).status.success());
    let mut bytes = std::fs::read(&g).unwrap();
    let at = bytes.len() - 100;
    bytes[at] ^= 0x40;
    std::fs::write(&g, bytes).unwrap();
    let out = d.path().join("out.txt");
    let o = mpirun(2).args([CHATTY, "run", "bfs", g.to_str().unwrap(), "--engine", "mpi", "-o", out.to_str().unwrap()]).output().unwrap();
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(t.contains("r.cgr: "), "the error should name the file: {t}");
    assert!(!t.contains("panicked"), "{t}");
    assert!(!out.exists());
}

#[test]
fn engine_mpi_needs_a_cgr() {
    let d = tempfile::tempdir().unwrap();
    let g = write(d.path(), "g.el", "0 1\n1 2\n");
    let o = mpirun(2).args([CHATTY, "run", "bfs", g.to_str().unwrap(), "--engine", "mpi"]).output().unwrap();
    assert!(!o.status.success());
    assert!(text(&o).contains("chatty convert"), "{}", text(&o));
    // A graph stored renumbered: the ranks would answer in the stored ids.
    let r = d.path().join("r.cgr");
    convert(&g, &r, &["--reorder", "degree"]);
    let o = mpirun(2).args([CHATTY, "run", "bfs", r.to_str().unwrap(), "--engine", "mpi"]).output().unwrap();
    assert!(!o.status.success());
    assert!(text(&o).contains("without --reorder") && !text(&o).contains("panicked"), "{}", text(&o));
}

/// `--engine gpu` under mpirun is the multi-GPU engine across the ranks: every kernel
/// verified where there are GPUs; on a machine without one (CI), every rank stops
/// with a clear error instead of one rank waiting for the other.
#[test]
fn engine_gpu_spans_the_ranks_or_says_there_is_no_gpu() {
    let d = tempfile::tempdir().unwrap();
    let g = d.path().join("r.cgr");
    assert!(chatty(&["generate", "rmat", "--scale", "10", "--weights", "9", "-o", g.to_str().unwrap()]).status.success());
    let out = d.path().join("out.txt");
    let started = Instant::now();
    let o = mpirun(2)
        .args([CHATTY, "run", KERNELS, g.to_str().unwrap(), "--engine", "gpu", "--verify", "--sources", "3", "-o", out.to_str().unwrap()])
        .output()
        .unwrap();
    let t = text(&o);
    assert!(!t.contains("panicked"), "{t}");
    if t.contains("found no GPU") {
        assert!(!o.status.success(), "{t}");
        assert!(started.elapsed() < Duration::from_secs(60), "{t}");
        assert!(
            std::fs::read_dir(d.path()).unwrap().flatten().all(|e| !e.file_name().to_string_lossy().starts_with("out")),
            "no output file"
        );
    } else {
        assert!(o.status.success(), "{t}");
        assert_eq!(t.matches("Verification:        PASS").count(), 6, "{t}");
        assert!(t.contains("2 processes"), "{t}");
    }
}

/// `chatty bench messaging` under mpirun measures GMPI across the two processes; without
/// a GPU (CI) both ranks stop with a clear error, and a job of three is refused.
#[test]
fn bench_messaging_spans_two_processes_or_says_there_is_no_gpu() {
    let started = Instant::now();
    let o = mpirun(2).args([CHATTY, "bench", "messaging", "--max-bytes", "64", "--rounds", "10"]).output().unwrap();
    needs_a_gpu(&o, started, |t| assert!(t.contains("| pingpong | gpu-mpi-gpu") && t.contains("target ≥ 85%"), "{t}"));
    let o = mpirun(3).args([CHATTY, "bench", "messaging"]).output().unwrap();
    assert!(!o.status.success() && text(&o).contains("runs on two"), "{}", text(&o));
}

/// `chatty topo --calibrate` under mpirun measures the link between the processes;
/// without a GPU (CI) every rank stops with a clear error.
#[test]
fn topo_calibrates_between_processes_or_says_there_is_no_gpu() {
    let d = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let o = mpirun(2).env("CHATTY_CACHE_DIR", d.path()).args([CHATTY, "topo", "--calibrate", "--max-bytes", "64K"]).output().unwrap();
    needs_a_gpu(&o, started, |t| {
        assert!(t.contains("Parts of the job: 2") && t.contains("every part -> every other part") && t.contains("mpi us"), "{t}")
    });
}

/// A job that needs a GPU, started at `started`: without one (CI) every rank stops
/// with a clear error within a minute, no rank waiting for another; with one,
/// `succeeded` checks what it printed.
fn needs_a_gpu(o: &Output, started: Instant, succeeded: impl Fn(&str)) {
    let t = text(o);
    assert!(!t.contains("panicked"), "{t}");
    if t.contains("needs a GPU") {
        assert!(!o.status.success(), "{t}");
        assert!(started.elapsed() < Duration::from_secs(60), "{t}");
    } else {
        assert!(o.status.success(), "{t}");
        succeeded(&t);
    }
}
