//! The `chatty` binary end to end: exit codes, messages, outputs, no partial files.

use std::path::Path;
use std::process::{Command, Output};

fn chatty(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_chatty")).args(args).output().expect("chatty runs")
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// Fails with exit code 2, a message containing `needle`, and no panic.
fn fails(args: &[&str], needle: &str) {
    let o = chatty(args);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {t}");
    assert!(t.contains(needle), "{args:?}: `{t}` should mention `{needle}`");
    assert!(!t.contains("panicked"), "{args:?} panicked: {t}");
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

#[test]
fn demo_runs_offline() {
    let o = chatty(&["demo"]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("rmat-16") && t.contains("grid"), "{t}");
    assert!(t.contains("PASS") && !t.contains("FAIL"), "{t}");
}

#[test]
fn generate_convert_info_round_trip() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    assert!(chatty(&["generate", "rmat", "--scale", "10", "--edge-factor", "4", "--weights", "9", "-o", &p("r.wel")]).status.success());
    let o = chatty(&["convert", &p("r.wel"), "-o", &p("r.cgr"), "--transpose"]);
    assert!(o.status.success(), "{}", text(&o));
    let o = chatty(&["info", &p("r.cgr"), "--json", "--check"]);
    assert!(o.status.success(), "{}", text(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["vertices"], 1024);
    assert_eq!(j["edges"], 4096);
    assert_eq!(j["directed"], true);
    assert_eq!(j["weighted"], true);
    assert_eq!(j["has_transpose"], true);
    for key in ["self_loops", "max_out_degree", "max_in_degree"] {
        assert!(j[key].is_u64(), "{key}");
    }
    let o = chatty(&["generate", "grid", "--width", "20", "--height", "10", "-o", &p("g.cgr")]);
    assert!(o.status.success(), "{}", text(&o));
    let j: serde_json::Value = serde_json::from_slice(&chatty(&["info", &p("g.cgr"), "--json"]).stdout).unwrap();
    assert_eq!(
        (j["vertices"].as_u64(), j["edges"].as_u64(), j["directed"].as_bool()),
        (Some(200), Some(2 * (19 * 10 + 20 * 9)), Some(false))
    );
}

/// The in-edges a kernel reads are built once per run when the file does not store
/// them, and the report says how long that took, whatever the engine; its
/// `elapsed_seconds` covers every timed part of the wait.
#[test]
fn the_report_times_the_in_edges_built_for_the_run_and_the_whole_wait() {
    let d = tempfile::tempdir().unwrap();
    let plain = d.path().join("plain.cgr");
    let stored = d.path().join("stored.cgr");
    assert!(chatty(&["generate", "rmat", "-s", "12", "-e", "8", "-o", plain.to_str().unwrap(), "-q"]).status.success());
    assert!(chatty(&["convert", plain.to_str().unwrap(), "-o", stored.to_str().unwrap(), "--transpose", "-q"]).status.success());
    let in_edges = |g: &std::path::Path, alg: &str| {
        let o = chatty(&["run", alg, g.to_str().unwrap(), "-n", "2", "--verify", "--json"]);
        assert!(o.status.success(), "{}", text(&o));
        let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let s = j["in_edges_seconds"].as_f64().expect("in_edges_seconds");
        assert!(s <= j["prepare_seconds"].as_f64().unwrap(), "{j}");
        let part = |k: &str| j[k].as_f64().unwrap_or_else(|| panic!("{k}: {j}"));
        let trials: f64 = j["end_to_end_seconds"].as_array().unwrap().iter().map(|t| t.as_f64().unwrap()).sum();
        assert!(part("verify_seconds") > 0.0, "{j}");
        let accounted = part("load_seconds") + part("prepare_seconds") + part("warm_up_seconds") + trials + part("verify_seconds");
        assert!(part("elapsed_seconds") >= accounted, "elapsed covers load, prepare, warm-up, trials and verifying: {j}");
        s
    };
    assert!(in_edges(&plain, "pr") > 0.0, "pr pulls over in-edges the file lacks");
    assert_eq!(in_edges(&stored, "pr"), 0.0, "stored in the file");
    assert_eq!(in_edges(&plain, "sssp"), 0.0, "sssp reads out-edges only");
}

#[test]
fn run_prints_gapbs_lines_json_and_output_files() {
    let d = tempfile::tempdir().unwrap();
    let g = d.path().join("g.el");
    std::fs::write(&g, "0 1\n1 2\n2 0\n3 3\n").unwrap();
    let g = g.to_str().unwrap();
    let o = chatty(&["run", "bfs", g, "-r", "0", "-n", "3", "-v"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert_eq!(t.matches("Trial Time:").count(), 3, "{t}");
    assert_eq!(t.matches("Verification:        PASS").count(), 3, "{t}");
    assert!(t.contains("Average Time:"), "{t}");

    let out = d.path().join("depth.txt");
    let o = chatty(&["run", "bfs", g, "--source", "1", "--output", out.to_str().unwrap(), "--json", "--verify"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "0 2\n1 0\n2 1\n3 -1\n");
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for key in [
        "algorithm",
        "engine",
        "devices",
        "graph",
        "parameters",
        "trial_seconds",
        "iterations",
        "edges_traversed",
        "gteps",
        "transports",
        "bytes_between_devices",
        "verification",
        "version",
        "commit",
        "peak_memory_bytes",
    ] {
        assert!(!j[key].is_null(), "JSON lacks {key}: {j}");
    }
    assert_eq!(j["verification"], "PASS");
    assert_eq!(j["graph"]["n"], 4);

    let out = d.path().join("dist.txt");
    assert!(chatty(&["run", "sssp", g, "-r", "0", "-o", out.to_str().unwrap()]).status.success());
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "0 0\n1 1\n2 2\n3 inf\n");
    let out = d.path().join("wcc.txt");
    assert!(chatty(&["run", "wcc", g, "-o", out.to_str().unwrap()]).status.success());
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "0 0\n1 0\n2 0\n3 3\n");
    let x = d.path().join("x.txt");
    std::fs::write(&x, "1\n2\n3\n4\n").unwrap();
    let out = d.path().join("y.txt");
    assert!(chatty(&["run", "spmv", g, "--x", x.to_str().unwrap(), "-o", out.to_str().unwrap(), "-v"]).status.success());
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "0 3\n1 1\n2 2\n3 4\n");
    for alg in ["pr", "bc"] {
        let o = chatty(&["run", alg, g, "-v", "--json"]);
        assert!(o.status.success(), "{alg}: {}", text(&o));
    }
    let o = chatty(&["run", "bc", g, "--sources", "all", "-v"]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn bad_input_gives_clear_errors_and_no_partial_files() {
    let d = tempfile::tempdir().unwrap();
    let path = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    std::fs::write(path("bad.el"), "0 1\nfoo bar\n").unwrap();
    std::fs::write(path("neg.wel"), "0 1 -2\n").unwrap();
    std::fs::write(path("n.gr"), "p sp 2 1\na 1 3 1\n").unwrap();
    std::fs::write(path("huge.gr"), "p sp 5 999999999999\na 1 2 3\n").unwrap();
    std::fs::write(path("g.xyz"), "0 1\n").unwrap();
    std::fs::write(path("notcgr.cgr"), "0 1\n").unwrap();
    let mut gz = gzip(&"0 1\n".repeat(50_000));
    gz.truncate(gz.len() / 2);
    std::fs::write(path("trunc.el.gz"), gz).unwrap();
    let before = files_in(d.path());

    fails(&["convert", &path("bad.el"), "-o", &path("out.cgr")], "bad.el:2:");
    fails(&["convert", &path("neg.wel"), "-o", &path("out.cgr")], "negative weight");
    fails(&["convert", &path("n.gr"), "-o", &path("out.cgr")], "beyond");
    fails(&["convert", &path("huge.gr"), "-o", &path("out.cgr")], "cannot hold");
    fails(&["convert", &path("g.xyz"), "-o", &path("out.cgr")], "--format");
    fails(
        &["convert", &path("g.xyz"), "--format", "weird", "-o", &path("out.cgr")],
        "possible values: auto, el, wel, csv, gr, pace, mtx, cgr, sg, wsg",
    );
    fails(&["convert", &path("trunc.el.gz"), "-o", &path("out.cgr")], "truncated");
    fails(&["info", &path("notcgr.cgr")], "does not start with the .cgr magic");
    fails(&["info", &path("missing.el")], "cannot open");
    fails(&["convert", &path("n.gr"), "-o", &path("no/dir/out.cgr")], "does not exist");
    fails(&["generate", "rmat", "--scale", "8", "-o", &path("no/dir/r.cgr")], "does not exist");
    fails(&["generate", "rmat", "--scale", "40", "-o", &path("r.cgr")], "scale 40");
    fails(&["run", "nope", &path("bad.el")], "possible values: bfs, sssp, pr, wcc, bc, spmv");
    fails(&["run", "bfs", &path("bad.el")], "bad.el:2:");
    fails(&["run", "bfs", &path("n.gr"), "--engine", "gpu"], "no CUDA driver");
    fails(&["run", "pr", &path("neg.wel"), "--output", &path("no/dir/x.txt")], "does not exist");
    assert_eq!(files_in(d.path()), before, "failed commands must leave no files behind");
}

/// `text` compressed by the system's gzip.
fn gzip(text: &str) -> Vec<u8> {
    let d = tempfile::tempdir().unwrap();
    let plain = d.path().join("x.el");
    std::fs::write(&plain, text).unwrap();
    let o = Command::new("gzip").arg("-c").arg(&plain).output().expect("gzip is installed");
    o.stdout
}

#[test]
fn a_tiny_file_naming_a_huge_vertex_id_is_refused_under_a_memory_limit() {
    let d = tempfile::tempdir().unwrap();
    let g = d.path().join("big.el");
    std::fs::write(&g, "0 1000000000\n").unwrap();
    let info = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_chatty"))
            .args(["info", g.to_str().unwrap()])
            .args(extra)
            .env("CHATTY_MEMORY_LIMIT", "64M")
            .output()
            .unwrap()
    };
    // Its vertices are the two ids that appear; the id range is refused.
    let o = info(&[]);
    assert!(o.status.success() && text(&o).contains("vertices: 2") && text(&o).contains("named: true"), "{}", text(&o));
    let o = info(&["--keep-id-range"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("needs") && t.contains("GiB"), "{t}");
}

/// Ctrl-C during the demo removes its temporary directory, as it says it does.
#[test]
fn an_interrupted_demo_leaves_no_files() {
    let d = tempfile::tempdir().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_chatty"))
        .arg("demo")
        .env("TMPDIR", d.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once it has written a file (a whole demo takes about a second).
    while walk(d.path()).is_empty() {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let left = walk(d.path());
    assert!(left.is_empty(), "{left:?} left; {}", String::from_utf8_lossy(&out.stderr));
}

/// A SIGBUS (a mapped input truncated by another process) during `convert` removes
/// the output's temporary file before it exits, as Ctrl-C does.
#[test]
fn a_bus_error_leaves_no_partial_output() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    assert!(chatty(&["generate", "grid", "--width", "1000", "--height", "1000", "-o", &p("g.cgr")]).status.success());
    let out = d.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_chatty"))
        .args(["convert", &p("g.cgr"), "-o", out.join("g.el").to_str().unwrap()])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    while walk(&out).is_empty() {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGBUS) };
    let done = child.wait_with_output().unwrap();
    // Nothing, or (had it finished first) the whole output and nothing else.
    let left = walk(&out);
    assert!(left.is_empty() || left == [out.join("g.el")], "{left:?} left; {}", String::from_utf8_lossy(&done.stderr));
}

/// Every file under `dir` (what the demo removes as it goes is not there).
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|e| {
            let path = e.path();
            if path.is_dir() {
                walk(&path)
            } else {
                vec![path]
            }
        })
        .collect()
}

#[test]
fn a_closed_pipe_ends_quietly() {
    use std::io::Read;
    let mut child = Command::new(env!("CARGO_BIN_EXE_chatty"))
        .arg("demo")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child.stdout.as_mut().unwrap().read_exact(&mut first).unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn bench_broadcast_quick_json_reports_every_run_and_no_violation() {
    let o = chatty(&["bench", "broadcast", "--quick", "--json", "--latency-messages", "100", "--rate-messages", "300"]);
    assert!(o.status.success(), "{}", text(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let runs = j["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 8, "2 schemes x 2 losses x 2 receiver counts");
    for r in runs {
        assert!(["nack", "rma"].contains(&r["scheme"].as_str().unwrap()));
        for key in ["loss", "p50_us", "p99_us", "rate_msgs_per_s"] {
            assert!(r[key].as_f64().is_some_and(|v| v >= 0.0), "{key} in {r}");
        }
        assert!(r["receivers"].as_u64().is_some_and(|n| n == 1 || n == 4));
        for key in ["lost", "duplicated", "reordered"] {
            assert_eq!(r[key], 0, "{key} in {r}");
        }
        assert!(r["rate_msgs_per_s"].as_f64().unwrap() > 0.0);
    }
    fails(&["bench", "broadcast", "--schemes", "carrier-pigeon"], "possible values: nack, rma");
    fails(&["bench", "broadcast", "--loss", "2"], "--loss");
}

#[test]
fn broadcast_sends_a_file_to_receivers_despite_loss() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    assert!(chatty(&["generate", "rmat", "--scale", "12", "-o", &p("g.cgr")]).status.success());
    let group = format!("239.255.{}.{}:{}", std::process::id() % 200, 7, 20_000 + std::process::id() % 20_000);
    for scheme in ["rma", "nack"] {
        let out = [p(&format!("a-{scheme}.cgr")), p(&format!("b-{scheme}.cgr"))];
        let common = ["--group", group.as_str(), "--scheme", scheme, "--key", "test"];
        let recv = |o: &str, loss: &str| {
            Command::new(env!("CARGO_BIN_EXE_chatty"))
                .args(["broadcast", "recv", "-o", o, "--loss", loss, "--wait", "30"])
                .args(common)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        let receivers = [recv(&out[0], "0.05"), recv(&out[1], "0")];
        let s = Command::new(env!("CARGO_BIN_EXE_chatty"))
            .args(["broadcast", "send", &p("g.cgr"), "--receivers", "2", "--wait", "30"])
            .args(common)
            .output()
            .unwrap();
        assert!(s.status.success(), "{}", text(&s));
        for (r, o) in receivers.into_iter().zip(&out) {
            let r = r.wait_with_output().unwrap();
            assert!(r.status.success(), "{}", text(&r));
            assert_eq!(std::fs::read(o).unwrap(), std::fs::read(p("g.cgr")).unwrap(), "{scheme}: {o} differs");
        }
    }
    // The received file is a valid graph.
    assert!(chatty(&["info", &p("a-rma.cgr"), "--check"]).status.success());
    fails(&["broadcast", "send", &p("g.cgr"), "--group", "10.0.0.1:7000"], "not a multicast address");
    fails(&["broadcast", "send", &p("g.cgr"), "--group", "nonsense"], "--group");
    fails(&["broadcast", "send", &p("missing.cgr"), "--group", &group], "cannot open");
    fails(&["broadcast", "recv", "-o", &p("none.cgr"), "--wait", "1", "--group", &group, "--key", "k"], "nothing written");
    assert!(!files_in(d.path()).iter().any(|f| f.starts_with("none") || f.contains("partial")), "{:?}", files_in(d.path()));
}

#[test]
fn ssd_layout_and_engine_end_to_end() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    assert!(chatty(&["generate", "rmat", "--scale", "10", "--weights", "50", "-o", &p("g.cgr")]).status.success());
    let o = chatty(&["convert", &p("g.cgr"), "-o", &p("g.ssd"), "--layout", "ssd", "--stripes", "3"]);
    assert!(o.status.success(), "{}", text(&o));
    let stripe =
        |side: &str, k: usize| files_in(d.path()).into_iter().find(|f| f.starts_with("g.ssd.") && f.ends_with(&format!(".{side}.{k}")));
    for k in 0..3 {
        assert!(stripe("out", k).is_some() && stripe("in", k).is_some(), "{:?}", files_in(d.path()));
    }
    for alg in ["bfs", "sssp", "pr", "wcc", "spmv", "bc"] {
        let o = chatty(&["run", alg, &p("g.ssd"), "--engine", "ssd", "-v", "-n", "2", "--mem-budget", "256M"]);
        assert!(o.status.success() && text(&o).contains("Verification:        PASS"), "{alg}: {}", text(&o));
    }
    let o = chatty(&["run", "pr", &p("g.ssd"), "--json", "--pread", "--buffered", "--no-binning"]);
    assert!(o.status.success(), "{}", text(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["engine"], "ssd");
    let s = &j["detail"];
    assert!(s["bytes_read"].as_u64().unwrap() > 0 && s["gb_per_s"].as_f64().unwrap() > 0.0);
    assert_eq!(s["per_file_bytes"].as_array().unwrap().len(), 3);
    assert!(!s["rounds"].as_array().unwrap().is_empty());
    assert_eq!((s["io"].as_str(), s["binning"].as_bool(), s["direct"].as_bool()), (Some("pread"), Some(false), Some(false)));
    assert!(s["amplification"].as_f64().unwrap() >= 1.0 && s["skew"].as_f64().unwrap() >= 1.0);

    fails(&["run", "pr", &p("g.ssd"), "--engine", "ssd", "--mem-budget", "1M"], "fewer with a smaller --io-depth");
    fails(&["run", "pr", &p("g.cgr"), "--engine", "ssd"], "SSD layout");
    fails(&["run", "pr", &p("g.ssd"), "--engine", "cpu"], "--engine ssd");
    fails(&["convert", &p("g.cgr"), "-o", &p("h.ssd"), "--layout", "floppy"], "--layout");
    fails(&["convert", &p("g.cgr"), "-o", &p("h.ssd"), "--layout", "ssd", "--stripes", "0"], "--stripes");
    fails(&["convert", &p("g.cgr"), "-o", &p("h.cgr"), "--stripes", "2"], "--layout ssd");
    let f = std::fs::OpenOptions::new().write(true).open(d.path().join(stripe("out", 1).unwrap())).unwrap();
    f.set_len(4096).unwrap();
    fails(&["run", "pr", &p("g.ssd"), "--engine", "ssd"], "truncated");
}

#[test]
fn topo_reports_the_gpus_or_why_there_are_none() {
    let o = chatty(&["topo", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let t = &j["topology"];
    let gpus = t["gpus"].as_array().unwrap();
    let pairs = t["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), gpus.len() * gpus.len().saturating_sub(1), "every ordered pair");
    if gpus.is_empty() {
        assert!(!t["notes"].as_array().unwrap().is_empty(), "says why there is no GPU");
    }
    let o = chatty(&["topo"]);
    assert!(o.status.success() && text(&o).contains("GPUs:"), "{}", text(&o));
}

#[test]
fn topo_calibrate_without_a_gpu_fails_clearly() {
    if chatty_gpu_present() {
        return;
    }
    fails(&["topo", "--calibrate"], "calibration needs a GPU");
    fails(&["topo", "--calibrate", "--max-bytes", "lots"], "--max-bytes");
}

fn chatty_gpu_present() -> bool {
    let o = chatty(&["topo", "--json"]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    !j["topology"]["gpus"].as_array().unwrap().is_empty()
}

#[test]
fn info_shows_the_partition_and_bfs_order_reduces_its_boundary() {
    let d = tempfile::tempdir().unwrap();
    let g = d.path().join("g.cgr");
    assert!(chatty(&["generate", "rmat", "--scale", "10", "--undirected", "-o", g.to_str().unwrap()]).status.success());
    let o = chatty(&["info", g.to_str().unwrap(), "--json", "--partition", "3"]);
    assert!(o.status.success(), "{}", text(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let parts = j["partition"]["per_part"].as_array().unwrap();
    assert_eq!(parts.len(), 3);
    let sum = |k: &str| parts.iter().map(|p| p[k].as_u64().unwrap()).sum::<u64>();
    assert_eq!((sum("vertices"), sum("edges")), (j["vertices"].as_u64().unwrap(), j["edges"].as_u64().unwrap()));
    assert_eq!(sum("boundary_vertices"), j["partition"]["boundary_vertices"].as_u64().unwrap());
    let o = chatty(&["info", g.to_str().unwrap(), "--partition", "3", "--reorder", "bfs"]);
    assert!(o.status.success() && text(&o).contains("reorder: bfs"), "{}", text(&o));
    fails(&["info", g.to_str().unwrap(), "--partition", "0"], "--partition");
    fails(&["info", g.to_str().unwrap(), "--partition", "2", "--reorder", "random"], "--reorder");
}

#[test]
fn multi_gpu_flags_are_checked_before_the_graph_is_read() {
    let g = "no-such-graph.cgr";
    fails(&["run", "bfs", g, "--engine", "gpu", "--control", "many"], "--control");
    fails(&["run", "bfs", g, "--engine", "gpu", "--comm", "pigeon"], "--comm");
    fails(&["run", "bfs", g, "--engine", "gpu", "--reorder", "random"], "possible values: none, bfs");
    let dir = tempfile::tempdir().unwrap();
    let two = dir.path().join("two.el");
    std::fs::write(&two, "0 1\n").unwrap();
    fails(&["run", "bfs", two.to_str().unwrap(), "--engine", "gpu", "--devices", "0,0,0"], "2 vertices cannot be split into 3 parts");
    fails(&["run", "bfs", g, "--engine", "gpu", "--mode", "async", "--comm", "p2p"], "--comm p2p applies to mode bsp");
    fails(&["run", "bfs", g, "--engine", "gpu", "--watchdog", "0"], "--watchdog");
    fails(&["run", "bfs", g, "--engine", "gpu", "--gpus", "zero"], "--gpus");
    fails(&["run", "bfs", g, "--engine", "gpu", "--mode", "eager"], "--mode");
    fails(&["run", "pr", g, "--engine", "gpu", "--mode", "async"], "--mode async has bfs and sssp");
    fails(&["run", "wcc", g, "--engine", "gpu", "--mode", "gmpi"], "--mode gmpi has bfs and sssp");
    // GPU flags on engines without a GPU are refused, not ignored.
    fails(&["run", "bfs", g, "--engine", "cpu", "--reorder", "degree"], "--reorder applies to the GPU engine");
    fails(&["run", "bfs", g, "--engine", "cpu", "--gpus", "2"], "not the CPU engine");
    fails(&["run", "bfs", g, "--engine", "ssd", "--mode", "async"], "--mode applies to the GPU engine");
    fails(&["bench", "messaging", "--max-bytes", "lots"], "--max-bytes");
    fails(&["bench", "messaging", "--rounds", "0"], "at least 1");
    if !chatty_gpu_present() {
        fails(&["bench", "messaging"], "needs a GPU");
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("g.cgr");
        assert!(chatty(&["generate", "rmat", "--scale", "8", "-o", path.to_str().unwrap()]).status.success());
        fails(&["run", "pr", path.to_str().unwrap(), "--engine", "gpu", "--gpus", "2"], "no CUDA driver");
        // auto without a GPU runs on the CPU and says the GPU flag went unused.
        let o = chatty(&["run", "bfs", path.to_str().unwrap(), "--reorder", "degree"]);
        assert!(o.status.success() && text(&o).contains("note: --reorder applies to the GPU engine"), "{}", text(&o));
        fails(&["bench", "multi-gpu", path.to_str().unwrap()], "needs a GPU");
    }
}

#[test]
fn multi_gpu_report_makes_tables_and_charts_from_rows() {
    let d = tempfile::tempdir().unwrap();
    let row = |gpus: usize, comm: &str, control: &str, seconds: f64| {
        serde_json::json!({"graph": "g", "n": 4, "m": 8, "kernel": "pr", "gpus": gpus, "comm": comm, "control": control,
            "partition": "none", "seconds": seconds, "trial_seconds": [seconds], "iterations": 20, "steps": 20,
            "exchanges": 20, "dense_exchanges": 0, "updated": 80, "communicated": 40, "transports": {"p2p": [20, 640]},
            "boundary": [1, 1], "verification": "PASS", "commit": "x"})
        .to_string()
    };
    // The first p2p row is replaced by the later one of the same configuration.
    let rows = [
        row(1, "-", "-", 0.010),
        row(2, "p2p", "threads", 0.5),
        row(2, "auto", "threads", 0.006),
        row(2, "p2p", "threads", 0.0058),
        row(2, "staged", "single", 0.009),
        row(2, "async", "threads", 0.004),
        // A GPU-driven mode is not a forced transport, however fast.
        row(2, "gmpi", "threads", 0.003),
    ];
    let file = d.path().join("rows.jsonl");
    std::fs::write(&file, rows.join("\n")).unwrap();
    let charts = d.path().join("charts");
    let o = chatty(&["bench", "multi-gpu-report", file.to_str().unwrap(), "--charts", charts.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("| g | pr | 10.000 | 6.000 | 1.67x | p2p threads none | 5.800 | 1.03 | 4.000 | 2.50x |"), "{out}");
    assert!(out.contains("p2p 20x 0.00 MB"), "{out}");
    // One chart per kernel, so that each reads at page width.
    for chart in ["scaling-pr.svg", "modes-pr.svg"] {
        let svg = std::fs::read_to_string(charts.join(chart)).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("width=\"800\""), "{chart}");
        assert!(svg.contains("\ng\n</text>"), "{chart}: the graph names the group");
    }
    assert_eq!(std::fs::read_dir(&charts).unwrap().count(), 2, "no chart of other kernels");
    std::fs::write(&file, "{not json").unwrap();
    fails(&["bench", "multi-gpu-report", file.to_str().unwrap()], "not a bench multi-gpu row");
}

/// The JSON report has the same top-level keys, with the same types, on every engine
/// and kernel; what only one engine has lives under `detail`.
#[test]
fn the_json_report_is_the_same_on_every_engine() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    assert!(chatty(&["generate", "rmat", "--scale", "9", "--weights", "20", "-o", &p("g.cgr")]).status.success());
    assert!(chatty(&["convert", &p("g.cgr"), "-o", &p("g.ssd"), "--layout", "ssd", "--stripes", "2"]).status.success());
    fn shape(v: &serde_json::Value) -> &'static str {
        match v {
            serde_json::Value::Null => "null",
            serde_json::Value::Bool(_) => "bool",
            serde_json::Value::Number(_) => "number",
            serde_json::Value::String(_) => "string",
            serde_json::Value::Array(_) => "array",
            serde_json::Value::Object(_) => "object",
        }
    }
    let mut schemas: Vec<(String, Vec<(String, &str)>)> = Vec::new();
    for alg in ["bfs", "sssp", "pr", "wcc", "bc", "spmv"] {
        for (engine, graph) in [("cpu", p("g.cgr")), ("ssd", p("g.ssd"))] {
            let o = chatty(&["run", alg, &graph, "--engine", engine, "--json", "-v", "-n", "2", "-r", "1"]);
            assert!(o.status.success(), "{alg} {engine}: {}", text(&o));
            let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{alg} {engine}: {e}"));
            assert_eq!(j["engine"], engine);
            assert_eq!(j["verification"], "PASS", "{alg} {engine}");
            assert_eq!(j["trial_seconds"].as_array().unwrap().len(), 2);
            // The breakdown accounts for each trial's wall time, kernels included.
            for (b, e) in j["breakdown"].as_array().unwrap().iter().zip(j["end_to_end_seconds"].as_array().unwrap()) {
                let part = |k: &str| b[k].as_f64().unwrap_or_else(|| panic!("{alg} {engine}: breakdown.{k}"));
                let sum = part("setup_seconds") + part("kernel_seconds") + part("download_seconds") + part("other_seconds");
                assert!((sum - e.as_f64().unwrap()).abs() < 1e-6 && part("kernel_seconds") > 0.0, "{alg} {engine}: {b} vs {e}");
            }
            assert!(j["detail"].is_object() && j["result"].is_object() && j["parameters"].is_object());
            // Types of the top level and of the shared sub-objects; `delta` is null
            // where an engine's SSSP has no buckets, so parameters are compared by key.
            let mut keys: Vec<(String, &str)> =
                j.as_object().unwrap().iter().filter(|(k, _)| *k != "detail").map(|(k, v)| (k.clone(), shape(v))).collect();
            keys.extend(j["graph"].as_object().unwrap().iter().map(|(k, v)| (format!("graph.{k}"), shape(v))));
            keys.extend(j["parameters"].as_object().unwrap().keys().map(|k| (format!("parameters.{k}"), "")));
            keys.sort();
            schemas.push((format!("{alg} {engine}"), keys));
        }
    }
    let (first, want) = &schemas[0];
    for (which, got) in &schemas[1..] {
        // `result` differs by kernel in its fields, not its type.
        assert_eq!(got, want, "{which} differs from {first}");
    }
}

/// Answers a person can read and load: several kernels on one load, top-K summaries,
/// CSV/TSV with a header, files readable by others, networkx's names and damping.
#[test]
fn answers_people_can_read_and_load() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    assert!(chatty(&["generate", "rmat", "--scale", "9", "--undirected", "-o", &p("g.cgr")]).status.success());
    // Several kernels on one load: one JSON object and one output file each.
    let o = chatty(&["run", "pr,bfs,wcc", &p("g.cgr"), "--json", "-r", "1", "--top", "3", "--output", &p("out.csv")]);
    assert!(o.status.success(), "{}", text(&o));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.iter().map(|j| j["algorithm"].as_str().unwrap()).collect::<Vec<_>>(), ["pr", "bfs", "wcc"]);
    assert_eq!(lines[0]["result"]["top"].as_array().unwrap().len(), 3);
    let residual = lines[0]["result"]["residual"].as_f64().unwrap();
    assert!(residual < 512.0 * 1e-6 || lines[0]["iterations"] == 100, "converged by networkx's rule: {residual}");
    assert_eq!(lines[1]["result"]["kind"], "depths");
    assert!(lines[2]["result"]["count"].as_u64().unwrap() >= 1);
    for (alg, header) in [("pr", "vertex,pagerank"), ("bfs", "vertex,depth"), ("wcc", "vertex,component")] {
        let path = d.path().join(format!("out.{alg}.csv"));
        let body = std::fs::read_to_string(&path).unwrap();
        assert_eq!(body.lines().next(), Some(header), "{alg}");
        assert_eq!(body.lines().count(), 513, "{alg}: a header and one row per vertex");
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o044, 0o044, "{alg}: readable by others (umask permitting)");
    }
    // Text: one block per kernel, the top values listed.
    let o = chatty(&["run", "pr,bc", &p("g.cgr"), "--top", "2", "--sources", "4", "-o", &p("x.tsv")]);
    let t = text(&o);
    assert!(o.status.success() && t.contains("== pr") && t.contains("== bc") && t.matches("  vertex ").count() == 4, "{t}");
    assert!(std::fs::read_to_string(d.path().join("x.bc.tsv")).unwrap().starts_with("vertex\tbetweenness\n"));
    // networkx's names and damping.
    for name in ["pagerank", "dijkstra", "cc", "betweenness"] {
        assert!(chatty(&["run", name, &p("g.cgr"), "-r", "1"]).status.success(), "{name}");
    }
    let o = chatty(&["run", "pr", &p("g.cgr"), "--alpha", "0.5", "--json"]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["parameters"]["damping"], 0.5);
    fails(&["run", "pr", &p("g.cgr"), "--damping", "1.5"], "--damping");
    // Every BC source is in the report, drawn without replacement.
    let o = chatty(&["run", "bc", &p("g.cgr"), "--sources", "70", "--json"]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut s: Vec<u64> = j["parameters"]["sources"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    assert_eq!(s.len(), 70);
    s.sort_unstable();
    s.dedup();
    assert_eq!(s.len(), 70);
    // `--sources` is BC's: the other kernels of the same run keep one source.
    let o = chatty(&["run", "bfs,bc", &p("g.cgr"), "--sources", "4", "--json"]);
    let counts: Vec<u64> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["parameters"]["source_count"].as_u64().unwrap())
        .collect();
    assert_eq!(counts, [1, 4]);
    // Listed sources, numbered as --source (a repeated one counts each time): twice
    // from one source is twice its scores.
    let scores = |sources: &str| -> Vec<f64> {
        let o = chatty(&["run", "bc", &p("g.cgr"), "--sources", sources, "--zero-based", "-o", &p("bc.txt")]);
        assert!(o.status.success(), "{}", text(&o));
        std::fs::read_to_string(p("bc.txt")).unwrap().lines().map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap()).collect()
    };
    let (once, twice) = (scores("7,"), scores("7,7"));
    assert!(once.iter().zip(&twice).all(|(a, b)| (2.0 * a - b).abs() <= 1e-9 * b.abs().max(1.0)) && once.iter().any(|&x| x > 0.0));
    let o = chatty(&["run", "bc", &p("g.cgr"), "--sources", "3,40", "--zero-based", "--json"]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["parameters"]["sources"], serde_json::json!([3, 40]));
    fails(&["run", "bc", &p("g.cgr"), "--sources", "3,x"], "--sources x is not a vertex: this graph's vertices are 0 to 511");
    fails(&["run", "bc", &p("g.cgr"), "--sources", "3,99999999", "--zero-based"], "--sources 99999999 is not a vertex");
}

/// Memory limits hold (sizes parsed in any common spelling, kernel arrays counted,
/// refusals in human units), errors say their cause once, and the small defects stay
/// fixed: an edge list's header counts its lines, `--transpose` on an undirected
/// graph says why it stores nothing.
/// chatty under a resource limit of `bytes` (a file size limit's signal ignored, so
/// that writes fail with EFBIG as on a full disk).
fn chatty_under(resource: libc::__rlimit_resource_t, bytes: u64, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_chatty"));
    command.args(args);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, move || {
            libc::setrlimit(resource, &libc::rlimit { rlim_cur: bytes, rlim_max: bytes });
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
    command.output().unwrap()
}

#[test]
fn limits_and_messages_say_what_they_mean() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    assert!(chatty(&["generate", "grid", "--width", "300", "--height", "300", "-o", &p("g.cgr")]).status.success());
    let limited = |limit: &str, args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_chatty")).args(args).env("CHATTY_MEMORY_LIMIT", limit).output().unwrap()
    };
    for spelling in ["1KB", "1K", "1KiB"] {
        let o = limited(spelling, &["run", "pr", &p("g.cgr")]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{spelling}: {t}");
        assert!(t.contains("pr's arrays") && t.contains("is available") && t.contains("MiB"), "{spelling}: {t}");
    }
    for spelling in ["1.5GiB", "8G", "8GB", "4096M"] {
        assert!(limited(spelling, &["run", "pr", &p("g.cgr")]).status.success(), "{spelling}");
    }
    let o = limited("lots", &["run", "pr", &p("g.cgr")]);
    assert!(o.status.code() == Some(2) && text(&o).contains("CHATTY_MEMORY_LIMIT=`lots`"), "{}", text(&o));
    // How idle threads wait: both policies give the same answer; anything else is refused.
    let waiting = |policy: &str| {
        Command::new(env!("CARGO_BIN_EXE_chatty"))
            .args(["run", "wcc", &p("g.cgr"), "--threads", "2", "--verify"])
            .env("CHATTY_WAIT_POLICY", policy)
            .output()
            .unwrap()
    };
    for policy in ["active", "passive", "PASSIVE", ""] {
        assert!(waiting(policy).status.success(), "{policy}: {}", text(&waiting(policy)));
    }
    // An SSD layout opens as it was converted: read options are refused, not ignored.
    assert!(chatty(&["convert", &p("g.cgr"), "-o", &p("g.ssd"), "--layout", "ssd"]).status.success());
    for option in ["--format=el", "--symmetrize"] {
        let o = chatty(&["run", "bfs", &p("g.ssd"), option]);
        assert!(o.status.code() == Some(2) && text(&o).contains("not to an SSD layout"), "{option}: {}", text(&o));
    }
    // Counts that make no sense are refused up front, not turned into something else.
    for args in [vec!["run", "pr", "GRAPH", "--top", "0"], vec!["generate", "rmat", "-s", "4", "--weights", "0", "-o", "OUT"]] {
        let (graph, out) = (p("g.cgr"), p("zero.cgr"));
        let args: Vec<&str> = args
            .into_iter()
            .map(|a| {
                if a == "GRAPH" {
                    &graph
                } else if a == "OUT" {
                    &out
                } else {
                    a
                }
            })
            .collect();
        let o = chatty(&args);
        assert!(o.status.code() == Some(2) && text(&o).contains("invalid value '0'"), "{args:?}: {}", text(&o));
        assert!(!d.path().join("zero.cgr").exists());
    }
    // A build without MPI started by mpirun refuses, rather than run the job once per rank.
    if !cfg!(feature = "mpi") {
        let o =
            Command::new(env!("CARGO_BIN_EXE_chatty")).args(["run", "bfs", &p("g.cgr")]).env("OMPI_COMM_WORLD_SIZE", "2").output().unwrap();
        assert!(o.status.code() == Some(2) && text(&o).contains("--features mpi"), "{}", text(&o));
    }
    // A tuning override that is not a number is refused, not ignored.
    let o = Command::new(env!("CARGO_BIN_EXE_chatty"))
        .args(["run", "bc", &p("g.cgr"), "--threads", "2"])
        .env("CHATTY_BC_ALPHA", "six")
        .output()
        .unwrap();
    assert!(o.status.code() == Some(2) && text(&o).contains("CHATTY_BC_ALPHA `six`: expected a non-negative integer"), "{}", text(&o));
    let o = waiting("lazy");
    assert!(
        o.status.code() == Some(2) && text(&o).contains("CHATTY_WAIT_POLICY `lazy`: expected `active` or `passive` (or unset)"),
        "{}",
        text(&o)
    );
    // PageRank that runs out of iterations, or stops early by networkx's rule, says so.
    let o = chatty(&["run", "pr", &p("g.cgr"), "--max-iters", "1", "--tolerance", "1e-30", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(o.status.success() && text(&o).contains("note: PageRank did not converge in 1 iterations"), "{}", text(&o));
    assert_eq!(report["result"]["converged"], false);
    let o = chatty(&["run", "pr", &p("g.cgr"), "--max-iters", "1", "--tolerance", "0"]);
    assert!(o.status.success() && !text(&o).contains("note: PageRank"), "a fixed count asked for: {}", text(&o));
    let o = chatty(&["run", "pr", &p("g.cgr"), "--tolerance", "0.01"]);
    assert!(o.status.success() && text(&o).contains("by networkx's rule"), "{}", text(&o));
    let o = chatty(&["run", "pr", &p("g.cgr"), "--tolerance", "1e-12", "--max-iters", "1000", "--json"]);
    assert!(!text(&o).contains("note: PageRank"), "{}", text(&o));
    // A full disk (a file size limit here) names the output, not the temporary file,
    // and leaves neither behind.
    let o = chatty_under(libc::RLIMIT_FSIZE, 1 << 16, &["convert", &p("g.cgr"), "-o", &p("big.el")]);
    assert!(o.status.code() == Some(2) && text(&o).contains("big.el: cannot write: File too large"), "{}", text(&o));
    assert!(!text(&o).contains(".partial") && !d.path().join("big.el").exists(), "{}", text(&o));
    assert!(std::fs::read_dir(d.path()).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().ends_with(".partial")));
    // An address-space limit (`ulimit -v`) is the process's: a graph that does not fit
    // under it is refused, not an abort in the allocator.
    let o = chatty_under(libc::RLIMIT_AS, 300 << 20, &["generate", "rmat", "-s", "23", "-o", &p("r23.cgr")]);
    assert!(o.status.code() == Some(2) && text(&o).contains("is available"), "{}", text(&o));
    // RAYON_NUM_THREADS is held to the cap of --threads, with a note; a word is refused.
    let pool_size = |size: &str| {
        Command::new(env!("CARGO_BIN_EXE_chatty")).args(["run", "bfs", &p("g.cgr")]).env("RAYON_NUM_THREADS", size).output().unwrap()
    };
    let o = pool_size("100000");
    assert!(o.status.success() && text(&o).contains("RAYON_NUM_THREADS 100000 capped at"), "{}", text(&o));
    let o = pool_size("many");
    assert!(o.status.code() == Some(2) && text(&o).contains("RAYON_NUM_THREADS `many`: expected a thread count"), "{}", text(&o));
    assert!(pool_size("1").status.success() && pool_size("").status.success());
    // One cause, said once.
    let t = text(&chatty(&["info", &p("missing.el")]));
    assert_eq!(t.matches("No such file").count(), 1, "{t}");
    // An undirected edge list's header counts the lines below it.
    assert!(chatty(&["convert", &p("g.cgr"), "-o", &p("g.el")]).status.success());
    let body = std::fs::read_to_string(d.path().join("g.el")).unwrap();
    let lines = body.lines().filter(|l| !l.starts_with('#')).count();
    assert!(body.contains(&format!("Edges: {lines}\n")), "{}", &body[..200]);
    let o = chatty(&["convert", &p("g.cgr"), "-o", &p("t.cgr"), "--symmetrize", "--transpose"]);
    assert!(o.status.success() && text(&o).contains("--transpose: the graph is undirected"), "{}", text(&o));
}

/// 1-based inputs (DIMACS, PACE, Matrix Market) keep their numbering in every id the
/// user gives or reads, through a .cgr too; `--zero-based` opts out.
#[test]
fn one_based_inputs_keep_their_numbering() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    std::fs::write(d.path().join("g.gr"), "p sp 4 3\na 1 2 5\na 2 3 5\na 3 4 5\n").unwrap();
    assert!(chatty(&["convert", &p("g.gr"), "-o", &p("g.cgr")]).status.success());
    for graph in [p("g.gr"), p("g.cgr")] {
        let o = chatty(&["run", "sssp", &graph, "-r", "1", "-o", &p("d.csv"), "--json"]);
        assert!(o.status.success(), "{}", text(&o));
        assert_eq!(std::fs::read_to_string(d.path().join("d.csv")).unwrap(), "vertex,distance\n1,0\n2,5\n3,10\n4,15\n", "{graph}");
        let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!((j["parameters"]["sources"][0].as_u64(), j["graph"]["id_base"].as_u64()), (Some(1), Some(1)));
        fails(&["run", "bfs", &graph, "-r", "0"], "vertices are 1 to 4 (its input numbers vertices from 1; --zero-based");
        fails(&["run", "bfs", &graph, "-r", "5"], "vertices are 1 to 4");
        let o = chatty(&["run", "wcc", &graph, "--zero-based", "-o", &p("c.txt")]);
        assert!(o.status.success());
        assert_eq!(std::fs::read_to_string(d.path().join("c.txt")).unwrap(), "0 0\n1 0\n2 0\n3 0\n");
        let o = chatty(&["run", "wcc", &graph, "-o", &p("c.txt")]);
        assert!(o.status.success() && text(&o).contains("component 1: 4 vertices"), "{}", text(&o));
        assert_eq!(std::fs::read_to_string(d.path().join("c.txt")).unwrap(), "1 1\n2 1\n3 1\n4 1\n");
    }
}

/// A `.cgr` written in place by another process while a run reads it (mapped) is an
/// error whatever the kernels then read: no crash, no answer kept.
#[test]
fn a_graph_rewritten_in_place_under_a_run_is_an_error() {
    use std::io::{BufRead, Seek, Write};
    let d = tempfile::tempdir().unwrap();
    let g = d.path().join("g.cgr");
    // Trials long enough, in a debug build too, that the rewrite lands in the run.
    assert!(chatty(&["generate", "rmat", "--scale", "14", "--weights", "100", "-o", g.to_str().unwrap()]).status.success());
    let out = d.path().join("pr.txt");
    let mut run = Command::new(env!("CARGO_BIN_EXE_chatty"))
        .args(["run", "pr", g.to_str().unwrap(), "--trials", "100", "--tolerance", "0", "--max-iters", "50", "-o", out.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(run.stdout.take().unwrap()).lines();
    assert!(lines.next().unwrap().unwrap().starts_with("Graph:"));
    // Sections overwritten with bytes that are no graph: targets far beyond n.
    let mut f = std::fs::OpenOptions::new().write(true).open(&g).unwrap();
    let len = f.metadata().unwrap().len();
    f.seek(std::io::SeekFrom::Start(4096)).unwrap();
    f.write_all(&vec![0xa5; len as usize - 4096]).unwrap();
    drop(f);
    lines.for_each(drop);
    let o = run.wait_with_output().unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("truncated or changed by another process") && !t.contains("panicked"), "{t}");
    assert!(!out.exists());
}

/// An edge list's vertices are the labels or ids that appear: runs take sources and
/// vertex files and write every answer (text, JSON, Parquet) in them, through `.cgr`
/// and a renumbering; engines that cannot carry them refuse them.
#[test]
fn labels_and_ids_with_gaps_are_the_vertices() {
    use arrow_array::{Array, StringArray};
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    std::fs::write(d.path().join("g.csv"), "source,target,weight\nalice,bob,2\nbob,carl,3\nalice,carl,7\ndave,erin,1\n").unwrap();
    assert!(chatty(&["convert", &p("g.csv"), "-o", &p("g.cgr")]).status.success());
    assert!(chatty(&["convert", &p("g.csv"), "-o", &p("r.cgr"), "--reorder", "degree"]).status.success());
    for graph in [p("g.csv"), p("g.cgr"), p("r.cgr")] {
        let o = chatty(&["run", "sssp,wcc", &graph, "--source", "alice", "-o", &p("d.csv"), "--json"]);
        assert!(o.status.success(), "{}", text(&o));
        let want = "vertex,distance\nalice,0\nbob,2\ncarl,5\ndave,inf\nerin,inf\n";
        assert_eq!(std::fs::read_to_string(d.path().join("d.sssp.csv")).unwrap(), want, "{graph}");
        let want = "vertex,component\nalice,alice\nbob,alice\ncarl,alice\ndave,dave\nerin,dave\n";
        assert_eq!(std::fs::read_to_string(d.path().join("d.wcc.csv")).unwrap(), want, "{graph}");
        let j: serde_json::Value = serde_json::from_slice(o.stdout.split(|&b| b == b'\n').next().unwrap()).unwrap();
        assert_eq!((j["parameters"]["sources"][0].as_str(), j["graph"]["named"].as_bool()), (Some("alice"), Some(true)), "{graph}");
        fails(&["run", "bfs", &graph, "-r", "zoe"], "zoe is not a vertex: this graph's vertices are the labels its input uses");
    }
    std::fs::write(d.path().join("x.txt"), "alice 1\nbob 2\ncarl 3\ndave 4\nerin 5\n").unwrap();
    let o = chatty(&["run", "spmv", &p("g.cgr"), "--x", &p("x.txt"), "-o", &p("y.txt"), "--verify"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(d.path().join("y.txt")).unwrap(), "alice 0\nbob 2\ncarl 13\ndave 0\nerin 4\n");
    assert!(chatty(&["run", "bfs", &p("g.csv"), "-r", "bob", "-o", &p("b.parquet")]).status.success());
    let f = std::fs::File::open(d.path().join("b.parquet")).unwrap();
    let batch =
        parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f).unwrap().build().unwrap().next().unwrap().unwrap();
    let vertex = batch.column(0).as_any().downcast_ref::<StringArray>().unwrap();
    assert_eq!(vertex.iter().flatten().collect::<Vec<_>>(), ["alice", "bob", "carl", "dave", "erin"]);
    fails(&["convert", &p("g.csv"), "-o", &p("g.ssd"), "--layout", "ssd"], "named by its input");
    // Ids with gaps: the vertices that appear, in the file's ids.
    std::fs::write(d.path().join("gaps.el"), "3 8297\n8297 40\n").unwrap();
    let o = chatty(&["run", "bfs", &p("gaps.el"), "-r", "3", "-o", &p("b.txt")]);
    assert!(o.status.success() && text(&o).contains("3 vertices named by its input"), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(d.path().join("b.txt")).unwrap(), "3 0\n40 2\n8297 1\n");
    fails(&["run", "bfs", &p("gaps.el"), "-r", "4"], "ids that appear in no edge are not vertices");
    let o = chatty(&["run", "bfs", &p("gaps.el"), "-r", "4", "--keep-id-range"]);
    assert!(o.status.success() && text(&o).contains("8298 vertices"), "{}", text(&o));
}

/// `convert --reorder` stores a faster vertex order; runs on it take sources and write
/// answers in the input's ids, byte for byte what the input gives.
#[test]
fn a_renumbered_graph_answers_like_its_input() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    // One-based, weighted, two components: ids, distances and labels all show.
    let gr = "p sp 6 6\na 1 2 5\na 2 3 5\na 3 1 2\na 4 5 1\na 5 6 1\na 6 4 9\n";
    std::fs::write(d.path().join("g.gr"), gr).unwrap();
    let o = chatty(&["convert", &p("g.gr"), "-o", &p("d.cgr"), "--reorder", "degree", "--transpose"]);
    assert!(o.status.success() && text(&o).contains("renumbered in degree order"), "{}", text(&o));
    let j: serde_json::Value = serde_json::from_slice(&chatty(&["info", &p("d.cgr"), "--json", "--check"]).stdout).unwrap();
    assert_eq!(j["renumbered"], true);
    for (alg, extra) in [("bfs", "-r"), ("sssp", "-r"), ("wcc", ""), ("pr", ""), ("bc", "-r")] {
        let mut outs = Vec::new();
        for graph in [p("g.gr"), p("d.cgr")] {
            let out = p(&format!("{alg}.txt"));
            let mut args = vec!["run", alg, &graph, "-o", &out, "--json", "--verify"];
            if !extra.is_empty() {
                args.extend([extra, "5"]);
            }
            let o = chatty(&args);
            assert!(o.status.success(), "{alg} {graph}: {}", text(&o));
            let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            assert_eq!(j["verification"], "PASS");
            assert_eq!(j["graph"]["renumbered"], graph.ends_with(".cgr"));
            outs.push((std::fs::read_to_string(&out).unwrap(), j["parameters"]["sources"].clone(), j["result"].clone()));
        }
        assert_eq!(outs[0].0, outs[1].0, "{alg}: the answers");
        assert_eq!(outs[0].1, outs[1].1, "{alg}: the sources");
        if alg != "pr" && alg != "bc" {
            assert_eq!(outs[0].2, outs[1].2, "{alg}: the summary");
        }
    }
    // Back to text: the input's edges.
    assert!(chatty(&["convert", &p("d.cgr"), "-o", &p("back.wel")]).status.success());
    let o = chatty(&["run", "sssp", &p("back.wel"), "-r", "3", "-o", &p("b.txt")]); // text is 0-based
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(d.path().join("b.txt")).unwrap(), "0 inf\n1 inf\n2 inf\n3 0\n4 1\n5 2\n");
    fails(&["convert", &p("g.gr"), "-o", &p("r.el"), "--reorder", "bfs"], "--reorder stores the order in a .cgr output");
    fails(&["convert", &p("g.gr"), "-o", &p("r.ssd"), "--layout", "ssd", "--reorder", "bfs"], "--reorder stores the order");
    fails(&["convert", &p("d.cgr"), "-o", &p("r.ssd"), "--layout", "ssd"], "stored renumbered");
}

/// `.parquet` outputs read back with the Arrow reader: `vertex` and the kernel's
/// columns (named as in `.csv`), one row per vertex, ids in the input's numbering.
#[test]
fn parquet_outputs_read_back() {
    use arrow_array::{Array, Float64Array, Int64Array, UInt32Array};
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    std::fs::write(d.path().join("g.gr"), "p sp 4 2\na 1 2 5\na 2 3 5\n").unwrap();
    assert!(chatty(&["run", "bfs,sssp,pr", &p("g.gr"), "-r", "1", "-o", &p("out.parquet")]).status.success());
    let read = |alg: &str| {
        let f = std::fs::File::open(d.path().join(format!("out.{alg}.parquet"))).unwrap();
        let mut rows = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f).unwrap().build().unwrap();
        let batch = rows.next().unwrap().unwrap();
        let column = match alg {
            "bfs" => "depth",
            "sssp" => "distance",
            _ => "pagerank",
        };
        assert_eq!(batch.schema().fields().iter().map(|f| f.name().as_str()).collect::<Vec<_>>(), ["vertex", column]);
        batch
    };
    let bfs = read("bfs");
    let vertex = bfs.column(0).as_any().downcast_ref::<UInt32Array>().unwrap();
    assert_eq!(vertex.values().to_vec(), [1, 2, 3, 4]);
    assert_eq!(bfs.column(1).as_any().downcast_ref::<Int64Array>().unwrap().values().to_vec(), [0, 1, 2, -1]);
    let sssp = read("sssp");
    assert_eq!(sssp.column(1).as_any().downcast_ref::<Float64Array>().unwrap().values().to_vec(), [0.0, 5.0, 10.0, f64::INFINITY]);
    let pr = read("pr");
    let scores = pr.column(1).as_any().downcast_ref::<Float64Array>().unwrap();
    assert_eq!(scores.len(), 4);
    assert!((scores.values().iter().sum::<f64>() - 1.0).abs() < 1e-6);
    // HITS writes two value columns, `hub` and `authority`, as its `.csv` header names them.
    assert!(chatty(&["run", "hits", &p("g.gr"), "-o", &p("h.parquet")]).status.success());
    let f = std::fs::File::open(d.path().join("h.parquet")).unwrap();
    let batch =
        parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f).unwrap().build().unwrap().next().unwrap().unwrap();
    assert_eq!(batch.schema().fields().iter().map(|f| f.name().as_str()).collect::<Vec<_>>(), ["vertex", "hub", "authority"]);
    let column = |i: usize| batch.column(i).as_any().downcast_ref::<Float64Array>().unwrap().values().to_vec();
    assert_eq!((column(1), column(2)), (vec![0.5, 0.5, 0.0, 0.0], vec![0.0, 0.5, 0.5, 0.0]));
    assert!(chatty(&["run", "hits", &p("g.gr"), "-o", &p("h.csv")]).status.success());
    let csv = std::fs::read_to_string(d.path().join("h.csv")).unwrap();
    assert_eq!(csv.lines().take(3).collect::<Vec<_>>(), ["vertex,hub,authority", "1,0.5,0", "2,0.5,0.5"]);
}

/// Outputs go where the user asked, all or none: a directory gets a file per kernel
/// inside, `/dev/null` takes every kernel's answer and stays a device, and a run whose
/// second kernel fails leaves no file of the first.
#[test]
fn outputs_go_where_asked_all_or_none() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    std::fs::write(d.path().join("g.el"), "0 1\n1 2\n2 0\n").unwrap();
    std::fs::create_dir(d.path().join("results")).unwrap();
    assert!(chatty(&["run", "pr,bfs", &p("g.el"), "-r", "0", "-o", &p("results")]).status.success());
    let mut names: Vec<String> =
        std::fs::read_dir(d.path().join("results")).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["bfs.txt", "pr.txt"]);
    assert!(chatty(&["run", "pr,bfs", &p("g.el"), "-r", "0", "-o", "/dev/null"]).status.success());
    assert!(!std::fs::metadata("/dev/null").unwrap().is_file() && !std::path::Path::new("/dev/null.pr").exists());
    // SSSP refuses negative weights after PageRank has run: neither file appears.
    std::fs::write(d.path().join("neg.wel"), "0 1 2\n1 2 -1\n").unwrap();
    let o = chatty(&["run", "pr,sssp", &p("neg.wel"), "-r", "0", "-o", &p("set.csv")]);
    assert!(!o.status.success(), "{}", text(&o));
    let left: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("set") || n.contains("partial"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// `--personalization FILE` (networkx's teleport weights) in the user's numbering, with
/// clear errors for a bad file; the run header says weighted or unweighted.
#[test]
fn personalized_pagerank_from_a_file() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    std::fs::write(d.path().join("g.gr"), "p sp 3 3\na 1 2 1\na 2 3 1\na 3 1 1\n").unwrap();
    std::fs::write(d.path().join("t.txt"), "# teleport to vertex 1 only\n1 1.0\n").unwrap();
    let o = chatty(&["run", "pr", &p("g.gr"), "--personalization", &p("t.txt"), "--json", "--top", "3"]);
    assert!(o.status.success(), "{}", text(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["result"]["top"][0][0], 1, "vertex 1 (1-based) ranks first: {}", j["result"]);
    std::fs::write(d.path().join("bad.txt"), "1 1.0\n9 2.0\n").unwrap();
    fails(&["run", "pr", &p("g.gr"), "--personalization", &p("bad.txt")], "bad.txt:2: 9 is not a vertex: this graph's vertices are 1 to 3");
    std::fs::write(d.path().join("zero.txt"), "1 0\n").unwrap();
    fails(&["run", "pr", &p("g.gr"), "--personalization", &p("zero.txt")], "not all zero");
    let t = text(&chatty(&["run", "bfs", &p("g.gr"), "-r", "1"]));
    assert!(t.contains("weighted") && !t.contains("none weights"), "{t}");
}

/// `--weighted` PageRank: the heavier out-edge carries more of a vertex's score, the
/// run verifies, `auto` runs it on the CPU, and other kernels refuse the flag.
#[test]
fn weighted_pagerank_on_the_command_line() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    std::fs::write(d.path().join("g.wel"), "0 1 9\n0 2 1\n1 0 1\n2 0 1\n").unwrap();
    let o = chatty(&["run", "pr", &p("g.wel"), "--weighted", "--verify", "--json", "--top", "3"]);
    assert!(o.status.success(), "{}", text(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((j["engine"].as_str(), j["parameters"]["weighted"].as_bool()), (Some("cpu"), Some(true)), "{j}");
    let top: Vec<u64> = j["result"]["top"].as_array().unwrap().iter().map(|t| t[0].as_u64().unwrap()).collect();
    assert_eq!(top, [0, 1, 2], "{}", j["result"]);
    let o = chatty(&["run", "pr", &p("g.wel"), "--json", "--top", "3"]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["result"]["top"][1][1], j["result"]["top"][2][1], "unweighted, 1 and 2 tie: {}", j["result"]);
    fails(&["run", "bfs", &p("g.wel"), "--weighted"], "--weighted applies to pr, hits and bc");
}

/// On a terminal (a pseudo-terminal from `script`), long kernels draw a progress bar
/// over their sources; piped, the same run prints none.
#[test]
fn progress_bars_on_a_terminal_only() {
    let d = tempfile::tempdir().unwrap();
    let g = d.path().join("g.cgr");
    assert!(chatty(&["generate", "rmat", "--scale", "10", "--undirected", "-o", g.to_str().unwrap()]).status.success());
    let run = format!("{} run bc {} --sources 40 --engine cpu", env!("CARGO_BIN_EXE_chatty"), g.display());
    let o = Command::new("script").args(["-qec", &run, "/dev/null"]).output().expect("script (util-linux) runs");
    let t = text(&o);
    assert!(o.status.success() && t.contains("bc: sources") && t.contains("eta"), "{t}");
    let piped = text(&chatty(&["run", "bc", g.to_str().unwrap(), "--sources", "40", "--engine", "cpu"]));
    assert!(!piped.contains("bc: sources"), "{piped}");
}

/// `chatty` with `env` set and `stdin` fed.
fn chatty_with(args: &[&str], env: &[(&str, &str)], stdin: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_chatty"))
        .args(args)
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let _ = input.write_all(stdin);
    drop(input);
    child.wait_with_output().unwrap()
}

/// Exit 2, a message with every needle, no panic.
fn refused(o: &Output, needles: &[&str]) {
    let t = text(o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(!t.contains("panicked"), "{t}");
    for n in needles {
        assert!(t.contains(n), "`{t}` should mention `{n}`");
    }
}

#[test]
fn streams_are_read_once_and_within_the_memory_limit() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    // A pipe: every byte reaches the parser (the first ones used to be lost to sniffing).
    let o = chatty_with(&["convert", "/dev/stdin", "--format", "el", "-o", &p("o.el")], &[], b"100 2\n3 4\n");
    assert!(o.status.success(), "{}", text(&o));
    let body = std::fs::read_to_string(d.path().join("o.el")).unwrap();
    let edges: Vec<&str> = body.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(edges, ["3 4", "100 2"], "{body}");
    // A gzip stream and a .cgr stream, sniffed from their first bytes.
    let o = chatty_with(&["info", "/dev/stdin", "--format", "el", "--json"], &[], &gzip("0 1\n1 2\n2 0\n"));
    assert!(o.status.success() && text(&o).contains("\"edges\":3"), "{}", text(&o));
    assert!(chatty(&["generate", "rmat", "--scale", "8", "-o", &p("g.cgr")]).status.success());
    let o = chatty_with(&["run", "wcc", "/dev/stdin", "--verify"], &[], &std::fs::read(p("g.cgr")).unwrap());
    assert!(o.status.success() && text(&o).contains("PASS"), "{}", text(&o));
    // A FIFO.
    let fifo = p("fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let writer = std::thread::spawn({
        let fifo = fifo.clone();
        move || std::fs::write(fifo, "0 1\n1 2\n").unwrap()
    });
    let o = chatty(&["info", &fifo, "--format", "el", "--json"]);
    writer.join().unwrap();
    assert!(o.status.success() && text(&o).contains("\"edges\":2"), "{}", text(&o));
    // An endless device, and a gzip bomb: refused at the memory limit.
    let limit = [("CHATTY_MEMORY_LIMIT", "32M")];
    refused(&chatty_with(&["info", "/dev/zero", "--format", "el"], &limit, b""), &["/dev/zero", "MiB is available"]);
    std::fs::write(d.path().join("bomb.el.gz"), gzip(&"0 1\n".repeat(20 << 20))).unwrap();
    refused(&chatty_with(&["info", &p("bomb.el.gz")], &limit, b""), &["decompressing", "bomb.el.gz", "MiB is available"]);
    // Other compressions are named, whatever the file is called.
    std::fs::write(d.path().join("b.el.gz"), b"BZh91AY&SY\x12\x34 what bzip2 writes first").unwrap();
    refused(&chatty(&["info", &p("b.el.gz")]), &["bzip2-compressed", "bunzip2"]);
    refused(&chatty(&["info", d.path().to_str().unwrap()]), &["is a directory"]);
}

#[test]
fn hostile_numbers_and_flags_are_refused_before_any_allocation() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    assert!(chatty(&["generate", "rmat", "--scale", "10", "-o", &p("g.cgr")]).status.success());
    assert!(chatty(&["generate", "rmat", "--scale", "10", "--weights", "9", "-o", &p("w.cgr")]).status.success());
    // More BC sources than vertices: every vertex, said, nothing sized by the count.
    let o = chatty(&["run", "bc", &p("g.cgr"), "--sources", "100000000000", "--json"]);
    assert!(o.status.success() && text(&o).contains("the graph has 1024 vertices"), "{}", text(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(j["parameters"]["source_count"].as_u64().unwrap() <= 1024);
    std::fs::write(d.path().join("f.wel"), "0 1 0.5\n1 2 0.25\n2 3 4.5\n").unwrap();
    for delta in ["1e-300", "1e-9"] {
        refused(&chatty(&["run", "sssp", &p("f.wel"), "-r", "0", "--delta", delta]), &["too small for weights up to"]);
    }
    assert!(chatty(&["run", "sssp", &p("f.wel"), "-r", "0", "--delta", "1e-3", "--verify"]).status.success());
    std::fs::write(d.path().join("big.wel"), "0 1 0.5\n1 2 1e39\n").unwrap();
    refused(&chatty(&["run", "sssp", &p("big.wel")]), &["big.wel:2:", "overflows a 32-bit float"]);
    let limit = [("CHATTY_MEMORY_LIMIT", "1M")];
    assert!(chatty(&["generate", "rmat", "--scale", "16", "-o", &p("g16.cgr")]).status.success());
    refused(&chatty_with(&["run", "pr", &p("g16.cgr")], &limit, b""), &["needs", "is available"]);
    refused(&chatty_with(&["convert", &p("g16.cgr"), "--transpose", "-o", &p("t.cgr")], &limit, b""), &["needs", "is available"]);
    // The generator refuses from n and m before generating anything.
    let start = std::time::Instant::now();
    refused(
        &chatty_with(&["generate", "rmat", "--scale", "30", "-o", &p("r.cgr")], &[("CHATTY_MEMORY_LIMIT", "1G")], b""),
        &["17179869184 edges"],
    );
    assert!(start.elapsed().as_secs() < 5);
    // Thread counts are capped, with a note.
    let o = chatty(&["run", "bfs", &p("g.cgr"), "-r", "0", "--threads", "100000"]);
    assert!(o.status.success() && text(&o).contains("--threads 100000 capped at"), "{}", text(&o));
    refused(&chatty(&["run", "bfs", &p("g.cgr"), "--threads", "0"]), &["--threads must be at least 1"]);
    // SSD buffers and threads are admitted before they are allocated or started.
    assert!(chatty(&["convert", &p("g.cgr"), "-o", &p("g.ssd"), "--layout", "ssd"]).status.success());
    let ssd = |extra: &[&str]| chatty(&[&["run", "pr", &p("g.ssd"), "--engine", "ssd"][..], extra].concat());
    refused(
        &ssd(&["--io-depth", "4096", "--merge-pages", "256", "--mem-budget", "2G"]),
        &["--mem-budget", "IO buffers (", "--merge-pages"],
    );
    let o = ssd(&["--scatter-threads", "100000", "--gather-threads", "100000"]);
    assert!(!text(&o).contains("panicked") && text(&o).contains("--scatter-threads 100000 capped"), "{}", text(&o));
    // Broadcast flags.
    refused(&chatty(&["broadcast", "recv", "-o", &p("x"), "--loss", "1.5"]), &["--loss 1.5"]);
    refused(&chatty(&["broadcast", "send", &p("g.cgr"), "--group", "239.1.2.3:0"]), &["port 0"]);
    refused(&chatty(&["broadcast", "send", &p("g.cgr"), "--key", ""]), &["--key", "empty"]);
    assert!(
        !files_in(d.path()).iter().any(|f| f.contains("partial") || f == "x" || f == "r.cgr" || f == "t.cgr"),
        "{:?}",
        files_in(d.path())
    );
}

#[test]
fn vectors_are_read_by_id_and_verifiers_compare_exactly() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    std::fs::write(d.path().join("g.el"), "0 1\n1 2\n2 0\n2 3\n").unwrap();
    // y[v] = sum of x over v's in-neighbours: y = (x2, x0, x1, x2).
    std::fs::write(d.path().join("x.txt"), "3 40\n1 20\n0 10\n2 30\n").unwrap();
    let o = chatty(&["run", "spmv", &p("g.el"), "--x", &p("x.txt"), "-o", &p("y.txt"), "--verify"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(d.path().join("y.txt")).unwrap(), "0 30\n1 10\n2 20\n3 30\n");
    std::fs::write(d.path().join("dup.txt"), "0 1\n1 2\n1 3\n2 4\n3 5\n").unwrap();
    refused(&chatty(&["run", "spmv", &p("g.el"), "--x", &p("dup.txt")]), &["dup.txt:3:", "vertex 1 is listed twice"]);
    std::fs::write(d.path().join("gap.txt"), "0 1\n1 2\n3 5\n").unwrap();
    refused(&chatty(&["run", "spmv", &p("g.el"), "--x", &p("gap.txt")]), &["vertex 2 has no value"]);
    std::fs::write(d.path().join("inf.txt"), "1\ninf\n1\n1\n").unwrap();
    refused(&chatty(&["run", "spmv", &p("g.el"), "--x", &p("inf.txt")]), &["x must be finite"]);
    // An answer that overflows to inf is not a number a verifier accepts.
    std::fs::write(d.path().join("huge.txt"), "1e308\n1e308\n1e308\n").unwrap();
    std::fs::write(d.path().join("two.el"), "0 2\n1 2\n").unwrap();
    let o = chatty(&["run", "spmv", &p("two.el"), "--x", &p("huge.txt"), "--verify"]);
    assert!(o.status.code() == Some(1) && text(&o).contains("FAIL (the value of vertex 2 is inf, not a number)"), "{}", text(&o));
    // The sum of an empty answer is 0, not -0.
    std::fs::write(d.path().join("empty.el"), "").unwrap();
    let o = chatty(&["run", "pr", &p("empty.el")]);
    assert!(o.status.success() && text(&o).contains("Sum:                 0.0") && !text(&o).contains("-0.0"), "{}", text(&o));
}

#[test]
fn outputs_never_replace_inputs_or_devices_and_interruptions_leave_nothing() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    assert!(chatty(&["generate", "rmat", "--scale", "10", "-o", &p("g.cgr")]).status.success());
    let before = std::fs::read(p("g.cgr")).unwrap();
    let same = format!("{}/./g.cgr", d.path().display());
    refused(&chatty(&["run", "bfs", &p("g.cgr"), "-o", &same]), &["is the run's input"]);
    assert_eq!(std::fs::read(p("g.cgr")).unwrap(), before);
    // A device node is written into, not replaced.
    assert!(chatty(&["run", "bfs", &p("g.cgr"), "-r", "0", "-o", "/dev/null"]).status.success());
    assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
    // SIGINT or SIGTERM while writing: no temporary file or uncommitted stripe remains.
    for (args, signal) in [
        (vec!["generate", "rmat", "--scale", "21", "-o", "big.cgr"], "INT"),
        (vec!["generate", "rmat", "--scale", "20", "-o", "r.el"], "TERM"),
    ] {
        let o = interrupted(d.path(), &args, signal, std::time::Duration::from_millis(300));
        let left = files_in(d.path());
        match o.status.code() {
            Some(130) | Some(143) => {
                assert_eq!(left, ["g.cgr"], "{args:?}");
                assert!(text(&o).contains("interrupted"), "{}", text(&o));
            }
            // Finished before the signal: complete outputs only.
            Some(0) => {
                eprintln!("{args:?} finished before SIG{signal}");
                assert!(!left.iter().any(|f| f.contains("partial")), "{left:?}");
            }
            other => panic!("{args:?}: exit {other:?}: {}", text(&o)),
        }
        for f in left.iter().filter(|f| *f != "g.cgr") {
            std::fs::remove_file(d.path().join(f)).unwrap();
        }
    }
}

#[test]
fn ssd_runs_verify_against_the_original_graph() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    assert!(chatty(&["generate", "rmat", "--scale", "10", "-o", &p("g.cgr")]).status.success());
    assert!(chatty(&["generate", "rmat", "--scale", "10", "--seed", "2", "-o", &p("other.cgr")]).status.success());
    assert!(chatty(&["convert", &p("g.cgr"), "-o", &p("g.ssd"), "--layout", "ssd", "--stripes", "2"]).status.success());
    let o = chatty(&["run", "pr", &p("g.ssd"), "--verify", "--verify-against", &p("g.cgr"), "--json"]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("{}", text(&o)));
    assert_eq!((j["verification"].as_str(), j["verified_against"].as_str()), (Some("PASS"), Some(p("g.cgr").as_str())));
    let o = chatty(&["run", "pr", &p("g.ssd"), "--verify"]);
    assert!(text(&o).contains("Verified against:    the layout's own pages"), "{}", text(&o));
    // Against a different graph of the same size: the answers differ, exit 1.
    let o = chatty(&["run", "pr", &p("g.ssd"), "--verify", "--verify-against", &p("other.cgr")]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    refused(&chatty(&["run", "pr", &p("g.ssd"), "--verify-against", &p("g.cgr")]), &["--verify"]);
    // A flipped byte in a page: an error naming the page, not an answer.
    let stripe = files_in(d.path()).into_iter().find(|f| f.contains(".out.0")).unwrap();
    let mut bytes = std::fs::read(d.path().join(&stripe)).unwrap();
    bytes[4096 + 100] ^= 0x10;
    std::fs::write(d.path().join(&stripe), bytes).unwrap();
    refused(&chatty(&["run", "wcc", &p("g.ssd"), "--verify"]), &["corrupt page", "fails its checksum", &stripe]);
}

/// `chatty args` started in `dir`, sent `signal` after `after`; its output.
fn interrupted(dir: &Path, args: &[&str], signal: &str, after: std::time::Duration) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_chatty"))
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    Command::new("kill").arg(format!("-{signal}")).arg(child.id().to_string()).status().unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn a_receiver_stopped_mid_wait_leaves_no_file() {
    let d = tempfile::tempdir().unwrap();
    let args = ["broadcast", "recv", "-o", "got.cgr", "--wait", "30", "--key", "k", "--group", "239.255.77.1:7701"];
    let o = interrupted(d.path(), &args, "TERM", std::time::Duration::from_millis(500));
    assert_eq!(o.status.code(), Some(143), "{}", text(&o));
    assert!(files_in(d.path()).is_empty(), "{:?}", files_in(d.path()));
}

#[test]
fn a_graph_truncated_by_another_process_mid_run_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    // Undirected: PageRank pulls along the mapped out-edges themselves.
    assert!(chatty(&["generate", "rmat", "--scale", "14", "--undirected", "-o", &p("g.cgr")]).status.success());
    let child = Command::new(env!("CARGO_BIN_EXE_chatty"))
        .args(["run", "pr", &p("g.cgr"), "-n", "100000", "--tolerance", "0", "--max-iters", "50"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(700));
    std::fs::OpenOptions::new().write(true).open(p("g.cgr")).unwrap().set_len(4096).unwrap();
    let o = child.wait_with_output().unwrap();
    let t = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("truncated or changed by another process"), "{t}");
}

/// The structural kernels from the command line: their answers in text and CSV, the
/// summary in JSON, the note a directed input gets, and clustering's refusal of one.
#[test]
fn triangles_cores_and_strong_components_from_the_command_line() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    // A triangle 1-2-3 with a tail 3 -> 4 -> 5 -> 4, as a directed edge list.
    std::fs::write(d.path().join("g.el"), "1 2\n2 3\n3 1\n3 4\n4 5\n5 4\n").unwrap();
    let o = chatty(&["run", "triangles", &p("g.el"), "--verify", "-o", &p("t.csv")]);
    let t = text(&o);
    assert!(o.status.success() && t.contains("Triangles:           1") && t.contains("PASS"), "{t}");
    assert!(t.contains("note: tc counts the triangles of the undirected simple graph"), "{t}");
    assert_eq!(std::fs::read_to_string(p("t.csv")).unwrap(), "vertex,triangles\n1,1\n2,1\n3,1\n4,0\n5,0\n");
    let o = chatty(&["run", "scc", &p("g.el"), "--verify", "-o", &p("s.txt"), "--json"]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["result"]["count"], 2, "{}", text(&o));
    assert_eq!(std::fs::read_to_string(p("s.txt")).unwrap(), "1 1\n2 1\n3 1\n4 4\n5 4\n");
    let o = chatty(&["run", "kcore", &p("g.el"), "--verify", "--json"]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((j["result"]["degeneracy"].as_u64(), j["result"]["in_max_core"].as_u64()), (Some(2), Some(5)), "{}", text(&o));
    fails(&["run", "clustering", &p("g.el")], "clustering is defined here for undirected graphs");
    let o = chatty(&["run", "clustering", &p("g.el"), "--symmetrize", "--verify", "-o", &p("c.tsv")]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(p("c.tsv")).unwrap(), "vertex\tclustering\n1\t1\n2\t1\n3\t0.3333333333333333\n4\t0\n5\t0\n");
}

/// `--parents` adds a `parent` column (in the input's ids, -1 or null for none) to
/// every format, and `chatty path` prints one shortest path: by weight, or hops with
/// `--hops`; exit code 1 where there is none; verified on request.
#[test]
fn parents_columns_and_paths_between_two_vertices() {
    use arrow_array::{Array, UInt32Array};
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    // DIMACS ids from 1: 1 -5-> 2 -5-> 3, 1 -20-> 3, 4 alone.
    std::fs::write(d.path().join("g.gr"), "p sp 4 3\na 1 2 5\na 2 3 5\na 1 3 20\n").unwrap();
    let o = chatty(&["run", "bfs,sssp", &p("g.gr"), "-r", "1", "--parents", "--verify", "-o", &p("out.csv")]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("Parents:"), "{}", text(&o));
    let bfs = std::fs::read_to_string(d.path().join("out.bfs.csv")).unwrap();
    assert_eq!(bfs, "vertex,depth,parent\n1,0,1\n2,1,1\n3,1,1\n4,-1,-1\n");
    let sssp = std::fs::read_to_string(d.path().join("out.sssp.csv")).unwrap();
    assert_eq!(sssp, "vertex,distance,parent\n1,0,1\n2,5,1\n3,10,2\n4,inf,-1\n");
    assert!(chatty(&["run", "sssp", &p("g.gr"), "-r", "1", "--parents", "-o", &p("out.parquet")]).status.success());
    let f = std::fs::File::open(d.path().join("out.parquet")).unwrap();
    let batch =
        parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f).unwrap().build().unwrap().next().unwrap().unwrap();
    let parent = batch.column_by_name("parent").unwrap().as_any().downcast_ref::<UInt32Array>().unwrap();
    assert_eq!((0..4).map(|i| parent.is_valid(i).then(|| parent.value(i))).collect::<Vec<_>>(), [Some(1), Some(1), Some(2), None]);
    fails(&["run", "pr", &p("g.gr"), "--parents"], "--parents applies to bfs and sssp");

    let o = chatty(&["path", &p("g.gr"), "--from", "1", "--to", "3", "--verify"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("Path:                1 -> 2 -> 3") && text(&o).contains("Length:              10 (2 edges, by weight)"),
        "{}",
        text(&o)
    );
    assert!(text(&o).contains("Verification:        PASS"), "{}", text(&o));
    let o = chatty(&["path", &p("g.gr"), "--from", "1", "--to", "3", "--hops", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (j["path"].clone(), j["length"].clone(), j["edges"].clone()),
        (serde_json::json!([1, 3]), serde_json::json!(1), serde_json::json!(1))
    );
    assert_eq!(j["report"]["algorithm"], "bfs");
    let o = chatty(&["path", &p("g.gr"), "--from", "1", "--to", "4"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("No path from 1 to 4"), "{}", text(&o));
    fails(&["path", &p("g.gr"), "--from", "1", "--to", "9"], "--to");
    fails(&["path", &p("g.gr"), "--from", "0", "--to", "1"], "--from");
}
