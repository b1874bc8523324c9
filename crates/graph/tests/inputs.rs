//! One tiny graph in every input format, and every kind of bad input.

use std::io::Write;
use std::path::{Path, PathBuf};

use chatty_graph::{cgr, read_graph, stats, Error, Format, Graph, NoProgress, ReadOptions, WeightType};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    if name.ends_with(".gz") {
        let mut enc = flate2::write::GzEncoder::new(std::fs::File::create(&p).unwrap(), flate2::Compression::fast());
        enc.write_all(text.as_bytes()).unwrap();
        enc.finish().unwrap();
    } else {
        std::fs::write(&p, text).unwrap();
    }
    p
}

fn read(p: &Path) -> chatty_graph::Result<Graph> {
    read_graph(p, ReadOptions::default(), &NoProgress)
}

fn edges(g: &Graph) -> Vec<(u32, u32, f64)> {
    let a = g.out_edges();
    (0..g.num_vertices() as u32).flat_map(|u| a.range(u).map(move |e| (u, a.targets()[e], a.weight_f64(e)))).collect()
}

/// The directed triangle 0→1 (w 5), 1→2 (w 7), 2→0 (w 9), plus isolated vertex 3.
const TRIANGLE: [(u32, u32, f64); 3] = [(0, 1, 5.0), (1, 2, 7.0), (2, 0, 9.0)];

#[test]
fn the_same_graph_reads_the_same_in_every_format() {
    let d = tempfile::tempdir().unwrap();
    let cases = [
        ("t.wel", "# comment\n0 1 5\n1\t2\t7\r\n\n2 0 9\n"),
        ("t.gr", "c hello\np sp 4 3\na 1 2 5\nc mid-file comment\na 2 3 7\na 3 1 9\n"),
        ("t.mtx", "%%MatrixMarket matrix coordinate integer general\n% c\n4 4 3\n1 2 5\n2 3 7\n3 1 9\n"),
        ("t.wel.gz", "0 1 5\n1 2 7\n2 0 9\n3 3 1\n"),
    ];
    for (name, text) in cases {
        let g = read(&write(d.path(), name, text)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(g.is_directed(), "{name}");
        assert_eq!(g.weight_type(), WeightType::Int, "{name}");
        let mut want = TRIANGLE.to_vec();
        if name.ends_with(".gz") {
            want.push((3, 3, 1.0));
        }
        assert_eq!(edges(&g), want, "{name}");
        let n = if name == "t.wel" { 3 } else { 4 }; // edge lists have no declared n
        assert_eq!(g.num_vertices(), n, "{name}");
    }
}

#[test]
fn unweighted_and_undirected_formats() {
    let d = tempfile::tempdir().unwrap();
    let pace = read(&write(d.path(), "p.gr", "p tw 3 2\n1 2\n2 3\n")).unwrap();
    assert!(!pace.is_directed());
    assert_eq!(edges(&pace), vec![(0, 1, 1.0), (1, 0, 1.0), (1, 2, 1.0), (2, 1, 1.0)]);
    let el = read(&write(d.path(), "u.el", "# Undirected graph\n0 1\n1 1\n")).unwrap();
    assert!(!el.is_directed());
    assert_eq!(stats(&el).self_loops, 1);
    assert_eq!(el.num_edges(), 3);
    let sym =
        read(&write(d.path(), "s.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 2.5\n2 1 -1\n3 2 0.5\n")).unwrap();
    assert_eq!(sym.weight_type(), WeightType::Float);
    assert_eq!(edges(&sym), vec![(0, 0, 2.5), (0, 1, -1.0), (1, 0, -1.0), (1, 2, 0.5), (2, 1, 0.5)]);
    let pattern = read(&write(d.path(), "p.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 3 1\n2 3\n")).unwrap();
    assert_eq!(edges(&pattern), vec![(1, 2, 1.0)]);
    let floats = read(&write(d.path(), "f.wel", "0 1 2\n1 0 0.5\n")).unwrap();
    assert_eq!(floats.weight_type(), WeightType::Float);
    assert_eq!(edges(&floats), vec![(0, 1, 2.0), (1, 0, 0.5)]);
    let empty = read(&write(d.path(), "e.el", "# nothing\n")).unwrap();
    assert_eq!((empty.num_vertices(), empty.num_edges()), (0, 0));
}

#[test]
fn forced_formats_and_gr_sniffing() {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "graph.data", "0 1\n");
    let forced = read_graph(&p, ReadOptions { format: Some(Format::EdgeList), ..Default::default() }, &NoProgress).unwrap();
    assert_eq!(forced.num_edges(), 1);
    let pace_forced_as_dimacs = write(d.path(), "x.gr", "p tw 2 1\n1 2\n");
    let err =
        read_graph(&pace_forced_as_dimacs, ReadOptions { format: Some(Format::Dimacs), ..Default::default() }, &NoProgress).unwrap_err();
    assert!(err.to_string().contains("p tw"), "{err}");
}

fn expect_err(p: &Path, needles: &[&str]) -> Error {
    let err = read(p).expect_err("bad input must fail");
    let msg = err.to_string();
    for n in needles {
        assert!(msg.contains(n), "`{msg}` should mention `{n}`");
    }
    err
}

#[test]
fn truncated_gzip_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "t.el.gz", &"0 1\n".repeat(100_000));
    let bytes = std::fs::read(&p).unwrap();
    std::fs::write(&p, &bytes[..bytes.len() / 2]).unwrap();
    expect_err(&p, &["t.el.gz", "truncated"]);
}

#[test]
fn a_garbage_line_names_the_file_and_line() {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "g.el", "# header\n0 1\n1 2\nhello world\n2 3\n");
    let err = expect_err(&p, &["g.el:4:", "hello world"]);
    assert!(matches!(err, Error::Parse { line: 4, .. }));
    let p = write(d.path(), "three.el", "0 1\n0 1 5\n");
    expect_err(&p, &["three.el:2:", "--format wel"]);
    let p = write(d.path(), "bin.gr", "p sp 3 1\na 1 \u{0}2 3\n");
    expect_err(&p, &["bin.gr:2:"]);
    let big = format!("{}zzz\n", "0 1\n".repeat(3_000_000));
    let p = write(d.path(), "big.el", &big);
    expect_err(&p, &["big.el:3000001:", "zzz"]);
}

#[test]
fn ids_beyond_the_declared_n_are_errors() {
    let d = tempfile::tempdir().unwrap();
    expect_err(&write(d.path(), "n.gr", "p sp 3 2\na 1 2 1\na 2 4 1\n"), &["n.gr:3:", "beyond the 3 vertices"]);
    expect_err(&write(d.path(), "n.gr.gz", "p tw 3 1\n0 2\n"), &["id 0"]);
    expect_err(&write(d.path(), "n.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n3 1\n"), &["n.mtx:3:", "beyond"]);
}

/// An edge list's vertices are the ids or labels that appear, named as the file names
/// them (networkx's reading); `# Nodes: N` or `keep_id_range` keep every id below.
#[test]
fn edge_lists_name_the_vertices_that_appear() {
    let d = tempfile::tempdir().unwrap();
    let names = |g: &chatty_graph::Graph| g.names().map(|x| (0..x.len() as u32).map(|v| x.name(v).to_string()).collect::<Vec<_>>());
    let gaps = read(&write(d.path(), "gaps.el", "5 9\n9 7\n")).unwrap();
    assert_eq!((gaps.num_vertices(), names(&gaps)), (3, Some(vec!["5".into(), "7".into(), "9".into()])));
    assert_eq!(gaps.out_edges().neighbors(0), [2]);
    let mut keep = ReadOptions::default();
    keep.ids.keep_id_range = true;
    let range = read_graph(&write(d.path(), "gaps.el", "5 9\n9 7\n"), keep, &NoProgress).unwrap();
    assert_eq!((range.num_vertices(), range.names().is_none()), (10, true));
    let declared = read(&write(d.path(), "declared.el", "# Nodes: 12 Edges: 1\n5 9\n")).unwrap();
    assert_eq!((declared.num_vertices(), declared.names().is_none()), (12, true));
    let dense = read(&write(d.path(), "dense.el", "0 2\n2 1\n")).unwrap();
    assert!(dense.names().is_none());
    // Ids beyond u32 are names too.
    let big = read(&write(d.path(), "big.el", "0 4294967295\n4294967295 9000000000\n")).unwrap();
    assert_eq!(names(&big), Some(vec!["0".into(), "4294967295".into(), "9000000000".into()]));
    // Labels, in order of first appearance; a CSV's header and weights.
    let csv = read(&write(d.path(), "people.csv", "Source,Target,Weight\nalice, bob ,2\n\"bob\",carl,3.5\n")).unwrap();
    assert_eq!(names(&csv), Some(vec!["alice".into(), "bob".into(), "carl".into()]));
    assert_eq!((csv.weight_type(), csv.num_edges()), (chatty_graph::WeightType::Float, 2));
    let plain = read(&write(d.path(), "plain.csv", "alice,bob\nbob,carl\n")).unwrap();
    assert_eq!(plain.num_vertices(), 3, "a first line of labels without column names is an edge");
    let headed = read(&write(d.path(), "headed.csv", "person,friend\n1,2\n")).unwrap();
    assert_eq!(names(&headed), Some(vec!["1".into(), "2".into()]), "a header above numbers");
    let mut no_header = ReadOptions::default();
    no_header.ids.header = Some(false);
    let forced = read_graph(&write(d.path(), "named.csv", "source,target\n"), no_header, &NoProgress).unwrap();
    assert_eq!(forced.num_vertices(), 2);
    // A file numbered by its first edge keeps a garbage line an error.
    expect_err(&write(d.path(), "mixed.el", "0 1\nhello world\n"), &["mixed.el:2:", "numbers, not labels"]);
    let bytes = d.path().join("utf.el");
    std::fs::write(&bytes, b"\xc3\xa9t\xc3\xa9 b\nx \xff\n").unwrap();
    expect_err(&bytes, &["utf.el:2:", "not UTF-8"]);
}

#[test]
fn negative_or_non_numeric_weights_are_errors() {
    let d = tempfile::tempdir().unwrap();
    expect_err(&write(d.path(), "w.wel", "0 1 3\n1 2 -4\n"), &["w.wel:2:", "negative weight"]);
    expect_err(&write(d.path(), "w.wel", "0 1 abc\n"), &["w.wel:1:", "not a number"]);
    expect_err(&write(d.path(), "w.gr", "p sp 2 1\na 1 2 -1\n"), &["w.gr:2:", "negative"]);
    expect_err(&write(d.path(), "w.gr", "p sp 2 1\na 1 2 1.5\n"), &["w.gr:2:", "integer"]);
    expect_err(&write(d.path(), "w.wel", "0 1 nan\n"), &["finite"]);
    expect_err(&write(d.path(), "w.wel", "0 1\n"), &["third column"]);
    // Range-checked as the f32 they are stored in, not as the f64 they parse to.
    expect_err(&write(d.path(), "w.wel", "0 1 0.5\n1 2 1e39\n"), &["w.wel:2:", "overflows a 32-bit float", "1e39"]);
    expect_err(&write(d.path(), "w.wel", "0 1 1e-50\n"), &["w.wel:1:", "underflows"]);
    expect_err(&write(d.path(), "w.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 -3e40\n"), &["w.mtx:3:", "overflows"]);
    // A row beyond the declared rows is refused even where the columns reach further;
    // an `integer` field keeps every weight exact or refuses it.
    expect_err(
        &write(d.path(), "rows.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 5 1\n4 1\n"),
        &["rows.mtx:3:", "beyond the 2"],
    );
    let int = |w: &str| format!("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 {w}\n");
    expect_err(&write(d.path(), "big.mtx", &int("5016777218")), &["big.mtx:3:", "at most 4294967295"]);
    expect_err(&write(d.path(), "half.mtx", &int("1.5")), &["half.mtx:3:", "not an integer"]);
    expect_err(&write(d.path(), "neg.mtx", &int("-16777216")), &["neg.mtx:3:", "does not fit"]);
    let neg = read(&write(d.path(), "neg-ok.mtx", &int("-3"))).unwrap();
    assert_eq!(neg.weight_type(), WeightType::Float);
    assert_eq!(read(&write(d.path(), "w.wel", "0 1 3.4e38\n")).unwrap().out_edges().weight_f64(0), 3.4e38f32 as f64);
}

#[test]
fn headers_declaring_impossible_sizes_fail_before_allocating() {
    let d = tempfile::tempdir().unwrap();
    expect_err(&write(d.path(), "m.gr", "p sp 10 1000000000000\na 1 2 3\n"), &["declares 1000000000000 edges", "cannot hold"]);
    expect_err(&write(d.path(), "n.gr", "p sp 99999999999 1\na 1 2 3\n"), &["99999999999 vertices"]);
    // 4e9 vertices fit the id type but not this machine: refused with the bytes needed.
    let err = expect_err(&write(d.path(), "mem.gr", "p sp 4000000000 1\na 1 2 3\n"), &["needs", "GiB"]);
    assert!(matches!(err, Error::TooLarge { .. }));
    expect_err(
        &write(d.path(), "few.gr", "p sp 3 3\na 1 2 3\nc a comment long enough\na 2 3 4\n"),
        &["declares 3 edges but the file has 2"],
    );
    expect_err(&write(d.path(), "hdr.mtx", "%%MatrixMarket matrix coordinate pattern general\n"), &["size header"]);
    expect_err(&write(d.path(), "arr.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n"), &["dense"]);
}

#[test]
fn unknown_or_mismatched_formats_are_errors() {
    let d = tempfile::tempdir().unwrap();
    expect_err(&write(d.path(), "graph.xyz", "0 1\n"), &["cannot tell the format", "--format"]);
    expect_err(&write(d.path(), "noheader.gr", "a 1 2 3\n"), &["problem line"]);
    expect_err(&write(d.path(), "x.mtx", "1 2\n"), &["%%MatrixMarket"]);
    expect_err(&write(d.path(), "missing.el", "0 1\n").with_extension("nope.el"), &["cannot open"]);
}

fn small_cgr(dir: &Path) -> (PathBuf, Vec<u8>) {
    let g = chatty_graph::from_weighted_edges(5, &[(0, 1, 3), (1, 2, 4), (4, 0, 1)], true).unwrap().with_in_edges();
    let p = dir.join("g.cgr");
    chatty_graph::write_graph(&g, &p, &NoProgress).unwrap();
    let bytes = std::fs::read(&p).unwrap();
    (p, bytes)
}

#[test]
fn cgr_files_with_wrong_magic_version_or_truncation_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let (p, good) = small_cgr(d.path());
    let g = cgr::check(&p, &NoProgress).unwrap();
    assert_eq!(g.in_edges().neighbors(0), &[4]);

    let mut bad = good.clone();
    bad[0] = b'X';
    std::fs::write(&p, &bad).unwrap();
    assert!(read_graph(&p, ReadOptions { format: Some(Format::Cgr), ..Default::default() }, &NoProgress)
        .unwrap_err()
        .to_string()
        .contains("magic"));

    let mut bad = good.clone();
    bad[8] = 9;
    std::fs::write(&p, &bad).unwrap();
    assert!(cgr::load(&p).unwrap_err().to_string().contains("version 9"));

    for cut in [100, 4096, good.len() - 4096] {
        std::fs::write(&p, &good[..cut]).unwrap();
        let err = cgr::load(&p).unwrap_err().to_string();
        assert!(err.contains("truncated"), "cut at {cut}: {err}");
    }

    let mut bad = good.clone();
    bad[4096 + 8] ^= 1; // flip a bit in the offsets section
    std::fs::write(&p, &bad).unwrap();
    assert!(cgr::check(&p, &NoProgress).unwrap_err().to_string().contains("checksum"));

    let mut bad = good.clone();
    bad[20] ^= 1; // n, covered by the header checksum
    std::fs::write(&p, &bad).unwrap();
    assert!(cgr::load(&p).unwrap_err().to_string().contains("header checksum"));
}

/// A named graph keeps its names through `.cgr`, `.el` and `.csv`; a `.cgr` whose
/// names sections disagree with its version is refused.
#[test]
fn names_survive_every_format_that_can_carry_them() {
    let d = tempfile::tempdir().unwrap();
    let g = read(&write(d.path(), "g.csv", "source,target,weight\nalice,bob,2\nbob,carl,3\n")).unwrap();
    for out in ["g.cgr", "g2.csv", "g.wel"] {
        let p = d.path().join(out);
        chatty_graph::write_graph(&g, &p, &NoProgress).unwrap();
        let back = read(&p).unwrap();
        assert_eq!(back.names(), g.names(), "{out}");
        assert_eq!(back.out_edges().targets(), g.out_edges().targets(), "{out}");
    }
    let err = chatty_graph::write_graph(&g, &d.path().join("g.mtx"), &NoProgress).unwrap_err();
    assert!(err.to_string().contains("Matrix Market numbers vertices"), "{err}");
    let spaced = read(&write(d.path(), "s.csv", "new york,boston\n")).unwrap();
    let err = chatty_graph::write_graph(&spaced, &d.path().join("s.el"), &NoProgress).unwrap_err();
    assert!(err.to_string().contains("\"new york\""), "{err}");
    let gaps = read(&write(d.path(), "gaps.el", "3 8297\n")).unwrap();
    let p = d.path().join("gaps.cgr");
    chatty_graph::write_graph(&gaps, &p, &NoProgress).unwrap();
    assert_eq!(read(&p).unwrap().names(), gaps.names());
    // Version 3 without its names sections (removed from the table, resealed).
    let mut bytes = std::fs::read(&p).unwrap();
    assert_eq!(bytes[8], 3);
    let count = u32::from_le_bytes(bytes[32..36].try_into().unwrap());
    bytes[32..36].copy_from_slice(&(count - 1).to_le_bytes());
    cgr::seal(&mut bytes);
    std::fs::write(&p, &bytes).unwrap();
    assert!(read(&p).unwrap_err().to_string().contains("names sections"));
}

#[test]
fn outputs_in_missing_directories_fail_and_leave_nothing() {
    let d = tempfile::tempdir().unwrap();
    let g = chatty_graph::from_edges(3, &[(0, 1)], true).unwrap();
    let err = chatty_graph::write_graph(&g, &d.path().join("no/such/dir/g.cgr"), &NoProgress).unwrap_err();
    assert!(err.to_string().contains("does not exist"), "{err}");
    let err = chatty_graph::write_graph(&g, &d.path().join("g.txt2"), &NoProgress).unwrap_err();
    assert!(err.to_string().contains(".cgr, .el, .wel, .csv and .mtx"), "{err}");
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0, "no partial or temporary file may remain");
}

#[test]
fn text_writers_round_trip() {
    let d = tempfile::tempdir().unwrap();
    let g = chatty_graph::from_weighted_edges(4, &[(0, 1, 3), (1, 2, 4), (3, 3, 1)], false).unwrap();
    for name in ["g.wel", "g.cgr", "g.mtx"] {
        let p = d.path().join(name);
        chatty_graph::write_graph(&g, &p, &NoProgress).unwrap();
        let back = read(&p).unwrap();
        assert_eq!(edges(&back), edges(&g), "{name}");
        assert!(!back.is_directed());
    }
    // Directed and unweighted: a general pattern matrix, entry (u + 1, v + 1).
    let g = chatty_graph::from_edges(3, &[(0, 2), (2, 1), (1, 1)], true).unwrap();
    let p = d.path().join("d.mtx");
    chatty_graph::write_graph(&g, &p, &NoProgress).unwrap();
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(text.starts_with("%%MatrixMarket matrix coordinate pattern general\n"), "{text}");
    assert!(text.contains("\n3 3 3\n") && text.contains("\n1 3\n"), "{text}");
    let back = read(&p).unwrap();
    assert_eq!(edges(&back), edges(&g));
    assert!(back.is_directed());
}

/// A `.cgr` image of `g` edited by `edit` (bytes, and the offset of each section by
/// kind), with its checksums fixed up: what a crafted file can be.
fn crafted(g: &Graph, edit: impl FnOnce(&mut Vec<u8>, &dyn Fn(u32) -> usize)) -> Vec<u8> {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("g.cgr");
    chatty_graph::write_graph(g, &p, &NoProgress).unwrap();
    let mut bytes = std::fs::read(&p).unwrap();
    let table = bytes.clone();
    let at = move |kind: u32| -> usize {
        (0..8)
            .map(|i| 40 + i * 32)
            .find(|&e| u32::from_le_bytes(table[e..e + 4].try_into().unwrap()) == kind)
            .map(|e| u64::from_le_bytes(table[e + 8..e + 16].try_into().unwrap()) as usize)
            .unwrap()
    };
    edit(&mut bytes, &at);
    cgr::seal(&mut bytes);
    bytes
}

#[test]
fn cgr_files_with_valid_checksums_but_inconsistent_content_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("x.cgr");
    let refused = |bytes: Vec<u8>, needle: &str| {
        std::fs::write(&p, bytes).unwrap();
        let e = cgr::check(&p, &NoProgress).unwrap_err().to_string();
        assert!(e.contains(needle), "{e}");
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains(needle) && e.contains("x.cgr"), "{e}");
    };
    // 0→{1,2}, 1→{2}, 2→{0}, 3→{1}; transpose 0←{2}, 1←{0,3}, 2←{0,1}.
    let g = chatty_graph::from_edges(4, &[(0, 1), (0, 2), (1, 2), (2, 0), (3, 1)], true).unwrap().with_in_edges();
    let set_u32 = |b: &mut Vec<u8>, at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_le_bytes());
    // A transpose edge retargeted (still sorted, still in range): 2←{0,1} becomes 2←{0,3}.
    refused(crafted(&g, |b, at| set_u32(b, at(5) + 4 * 4, 3)), "stored transpose is not the transpose");
    // A neighbour list out of order: 0→{2,1}.
    refused(
        crafted(&g, |b, at| {
            let t = at(2);
            set_u32(b, t, 2);
            set_u32(b, t + 4, 1);
        }),
        "vertex 0 is not sorted",
    );
    // The undirected flag on one-way edges.
    let one_way = chatty_graph::from_edges(4, &[(0, 1), (1, 2)], true).unwrap();
    refused(crafted(&one_way, |b, _| b[12] &= !1), "not symmetric");
    // m such that 4·m wraps around to the targets section's real length.
    refused(
        crafted(&one_way, |b, _| {
            let m = (1u64 << 62) + 2;
            b[24..32].copy_from_slice(&m.to_le_bytes());
        }),
        "overflow",
    );
    // Weighted: the transpose's weights must match too.
    let w = chatty_graph::from_weighted_edges(3, &[(0, 1, 5), (1, 2, 7)], true).unwrap().with_in_edges();
    refused(crafted(&w, |b, at| set_u32(b, at(6), 6)), "stored transpose");
    // Unedited and resealed, every one of them loads.
    for g in [&g, &one_way, &w] {
        std::fs::write(&p, crafted(g, |_, _| {})).unwrap();
        cgr::check(&p, &NoProgress).unwrap();
    }
}

#[test]
fn a_renumbered_cgr_keeps_the_input_ids_and_refuses_bad_ones() {
    let d = tempfile::tempdir().unwrap();
    // A weighted directed graph with a transpose, renumbered by decreasing degree.
    let g = chatty_graph::from_weighted_edges(5, &[(0, 1, 3), (1, 2, 4), (4, 0, 1), (4, 2, 8), (4, 3, 2), (3, 4, 6)], true)
        .unwrap()
        .with_in_edges();
    let new_id = chatty_graph::transform::degree_order(&g);
    assert_ne!(new_id, (0..5).collect::<Vec<u32>>(), "the test needs an order other than the input's");
    let r = chatty_graph::transform::renumber(&g, new_id.clone()).unwrap();
    let order = r.order().unwrap();
    assert_eq!(order.stored_ids(), &new_id[..]);
    let p = d.path().join("r.cgr");
    chatty_graph::write_graph(&r, &p, &NoProgress).unwrap();
    let back = cgr::check(&p, &NoProgress).unwrap();
    assert_eq!(back.order().unwrap().as_ref(), order.as_ref());
    assert_eq!(edges(&back), edges(&r));
    assert_eq!(back.in_edges().neighbors(new_id[2]).len(), 2);
    // Renumbered again, the ids still lead to the input's.
    let twice = chatty_graph::transform::renumber(&back, (0..5).rev().collect()).unwrap();
    let input_edge = |h: &Graph| {
        let ids = h.order().unwrap().input_ids();
        let mut e: Vec<_> = edges(h).into_iter().map(|(u, v, w)| (ids[u as usize], ids[v as usize], w)).collect();
        e.sort_by(|a, b| a.partial_cmp(b).unwrap());
        e
    };
    assert_eq!(input_edge(&twice), edges(&g));
    // Text outputs and the way back carry the input's ids.
    for name in ["r.wel", "r.mtx"] {
        chatty_graph::write_graph(&back, &d.path().join(name), &NoProgress).unwrap();
        assert_eq!(edges(&read(&d.path().join(name)).unwrap()), edges(&g), "{name}");
    }
    assert_eq!(edges(&chatty_graph::transform::in_input_order(back).unwrap()), edges(&g));
    let sym = chatty_graph::from_edges(4, &[(0, 3), (3, 1), (1, 2)], false).unwrap();
    let sym_r = chatty_graph::transform::renumber(&sym, vec![2, 0, 3, 1]).unwrap();
    chatty_graph::write_graph(&sym_r, &d.path().join("s.mtx"), &NoProgress).unwrap();
    assert_eq!(edges(&read(&d.path().join("s.mtx")).unwrap()), edges(&sym));

    // Ids that are not a permutation, a version-1 header with ids, a short section.
    let refused = |bytes: Vec<u8>, needle: &str| {
        std::fs::write(&p, bytes).unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains(needle) && e.contains("r.cgr"), "{e}");
    };
    let ids_at = |b: &Vec<u8>| -> (usize, usize) {
        let e = (0..8).map(|i| 40 + i * 32).find(|&e| u32::from_le_bytes(b[e..e + 4].try_into().unwrap()) == 7).unwrap();
        (e, u64::from_le_bytes(b[e + 8..e + 16].try_into().unwrap()) as usize)
    };
    let good = std::fs::read(&p).unwrap();
    let mut bad = good.clone();
    let (_, at) = ids_at(&bad);
    bad.copy_within(at + 4..at + 8, at); // the first two stored vertices claim one input id
    cgr::seal(&mut bad);
    refused(bad, "not a permutation");
    let mut bad = good.clone();
    bad[at..at + 4].copy_from_slice(&9u32.to_le_bytes());
    cgr::seal(&mut bad);
    refused(bad, "not a permutation");
    let mut bad = good.clone();
    bad[8..12].copy_from_slice(&1u32.to_le_bytes());
    cgr::seal(&mut bad);
    refused(bad, "inconsistent");
    let mut bad = good.clone();
    let (entry, _) = ids_at(&bad);
    bad[entry + 16..entry + 24].copy_from_slice(&8u64.to_le_bytes());
    cgr::seal(&mut bad);
    refused(bad, "expected 20");
    // Version 2 without its ids (the entry's kind changed to one no reader knows), and
    // a section listed twice.
    let mut bad = good.clone();
    bad[entry..entry + 4].copy_from_slice(&99u32.to_le_bytes());
    cgr::seal(&mut bad);
    refused(bad, "without its input-ids section");
    let mut bad = good.clone();
    bad[entry..entry + 4].copy_from_slice(&2u32.to_le_bytes());
    bad[8..12].copy_from_slice(&1u32.to_le_bytes());
    cgr::seal(&mut bad);
    refused(bad, "section 2 is listed twice");
    // A file without ids stays version 1, which older builds read.
    chatty_graph::write_graph(&g, &p, &NoProgress).unwrap();
    assert_eq!(std::fs::read(&p).unwrap()[8], 1);
    assert!(read(&p).unwrap().order().is_none());
}
