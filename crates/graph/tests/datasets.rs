//! Every graph in `../shared/datasets`: the counts its README states.

use chatty_graph::{datasets, read_graph, stats, NoProgress, ReadOptions};

struct Expect {
    file: &'static str,
    vertices: u64,
    /// Edge (or arc, or entry) lines in the file.
    lines: u64,
    directed: bool,
    self_loops: u64,
    parallel: u64,
    weighted: bool,
}

const fn e(file: &'static str, vertices: u64, lines: u64, directed: bool, self_loops: u64, parallel: u64, weighted: bool) -> Expect {
    Expect { file, vertices, lines, directed, self_loops, parallel, weighted }
}

const ALL: &[Expect] = &[
    e("road/USA-road-NY.pace.gr.gz", 264_346, 365_050, false, 0, 0, false),
    e("road/USA-road-BAY.pace.gr.gz", 321_270, 397_415, false, 0, 0, false),
    e("road/USA-road-COL.pace.gr.gz", 435_666, 521_200, false, 0, 0, false),
    e("road/USA-road-FLA.pace.gr.gz", 1_070_376, 1_343_951, false, 0, 0, false),
    e("road/USA-road-NW.pace.gr.gz", 1_207_945, 1_410_387, false, 0, 0, false),
    e("road/USA-road-NE.pace.gr.gz", 1_524_453, 1_934_010, false, 0, 0, false),
    e("road/bremen-osm-d.gr.gz", 40_461, 86_475, true, 305, 1_198, true),
    e("road/bremen-osm-t.gr.gz", 40_461, 86_475, true, 305, 1_198, true),
    e("road/moscow-osm.gr.gz", 411_992, 901_838, true, 0, 0, true),
    e("social/soc-Slashdot0902.el.gz", 82_168, 948_464, true, 78_303, 0, false),
    e("social/ego-Twitter.undirected.el.gz", 81_306, 1_342_310, false, 14, 0, false),
    e("social/email-Enron.el.gz", 36_692, 183_831, false, 0, 0, false),
    e("social/cit-HepPh.el.gz", 34_546, 421_578, true, 44, 0, false),
    // ids run to 8297; the 7,115 used are the vertices, as networkx reads them.
    e("social/wiki-Vote.txt.gz", 7_115, 103_689, true, 0, 0, false),
    e("web/cnr-2000.el.gz", 325_557, 3_216_152, true, 87_442, 0, false),
    e("matrix/bcsstk13.mtx.gz", 2_003, 42_943, false, 2_003, 0, true),
];

#[test]
fn every_dataset_has_its_documented_counts() {
    let Some(dir) = datasets::for_test() else { return };
    for x in ALL {
        let g = read_graph(&dir.join(x.file), ReadOptions::default(), &NoProgress).unwrap_or_else(|e| panic!("{e}"));
        let s = stats(&g);
        // An undirected line u-v is stored twice, a self-loop once.
        let stored = if x.directed { x.lines } else { 2 * x.lines - x.self_loops };
        assert_eq!((s.vertices, s.edges, s.directed, s.self_loops), (x.vertices, stored, x.directed, x.self_loops), "{}", x.file);
        assert_eq!(s.parallel_edges, x.parallel, "{}", x.file);
        assert_eq!(s.weight_type != chatty_graph::WeightType::None, x.weighted, "{}", x.file);
    }
}

#[test]
fn dataset_details_match_the_readme() {
    let Some(dir) = datasets::for_test() else { return };
    let load = |f: &str| stats(&read_graph(&dir.join(f), ReadOptions::default(), &NoProgress).unwrap());
    let cnr = load("web/cnr-2000.el.gz");
    assert_eq!((cnr.max_in_degree, cnr.max_out_degree), (18_235, 2_716));
    let wiki = read_graph(&dir.join("social/wiki-Vote.txt.gz"), ReadOptions::default(), &NoProgress).unwrap();
    let names = wiki.names().expect("wiki-Vote's ids have gaps: its vertices are named");
    assert_eq!((names.len(), names.find("3"), names.find("8297"), names.find("0")), (7_115, Some(0), Some(7_114), None));
    let mut keep = ReadOptions::default();
    keep.ids.keep_id_range = true;
    let range = stats(&read_graph(&dir.join("social/wiki-Vote.txt.gz"), keep, &NoProgress).unwrap());
    assert_eq!((range.vertices, range.vertices - range.isolated_vertices), (8_298, 7_115));
    let ny = load("road/USA-road-NY.pace.gr.gz");
    assert_eq!(ny.max_out_degree, 8);
    let moscow = load("road/moscow-osm.gr.gz");
    assert_eq!(moscow.max_out_degree, 6);
}

#[test]
fn every_dataset_round_trips_through_cgr() {
    let Some(dir) = datasets::for_test() else { return };
    let tmp = tempfile::tempdir().unwrap();
    for x in ALL.iter().filter(|x| x.lines < 1_000_000) {
        let g = read_graph(&dir.join(x.file), ReadOptions::default(), &NoProgress).unwrap();
        let out = tmp.path().join("g.cgr");
        chatty_graph::write_graph(&g, &out, &NoProgress).unwrap();
        let back = chatty_graph::cgr::check(&out, &NoProgress).unwrap();
        assert_eq!(back.out_edges().offsets(), g.out_edges().offsets(), "{}", x.file);
        assert_eq!(back.out_edges().targets(), g.out_edges().targets(), "{}", x.file);
        assert_eq!(back.out_edges().raw_weights(), g.out_edges().raw_weights(), "{}", x.file);
        assert_eq!(back.is_directed(), g.is_directed());
    }
}
