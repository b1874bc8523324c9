//! The front door on real and generated graphs: every engine it can open here (CPU,
//! SSD; the GPU refused cleanly without one), one validation, and the auto policy's
//! reasons, checked against the sequential references.

use chatty::graph::{datasets, generate, GenOptions, NoProgress};
use chatty::{harness, open, open_held, Algorithm, EngineKind, EngineSpec, ErrorKind, GraphSource, Params, PrParams, Workload};

fn rmat() -> chatty::graph::Graph {
    generate::rmat(12, 8, GenOptions { seed: 3, max_weight: Some(50), undirected: true }, &NoProgress).unwrap()
}

fn verified(engine: &mut dyn chatty::Engine, alg: Algorithm, p: &Params) -> harness::Report {
    let opts = harness::Options { trials: 1, verify: true, against: None };
    let report = harness::run(engine, alg, p, &opts, |_| {}).unwrap();
    assert_eq!(report.verification, Some(Ok(())), "{}", alg.name());
    report
}

#[test]
fn every_kernel_through_auto_and_cpu_on_its_threads() {
    for spec in [EngineSpec::auto(), EngineSpec::cpu(Some(3)), EngineSpec::cpu(None)] {
        let work = Workload::new(Algorithm::ALL.to_vec(), &Params::default());
        let mut opened = open(&spec, GraphSource::Memory(rmat()), &work, &NoProgress).unwrap();
        assert!(opened.speaks);
        if spec.kind == EngineKind::Auto {
            // No GPU where the tests run without one: the policy says so.
            let choice = opened.choice.clone().unwrap();
            assert_eq!(choice.engine, EngineKind::Cpu);
            assert!(!choice.why.is_empty());
        }
        let threads = spec.threads.unwrap_or_else(rayon::current_num_threads);
        assert_eq!(opened.engine.info().devices, vec![format!("cpu ({threads} threads)")]);
        for alg in Algorithm::ALL {
            verified(opened.engine.as_mut(), alg, &Params { source: Some(0), ..Params::default() });
        }
    }
}

#[test]
fn a_real_graph_from_its_file() {
    let Some(dir) = datasets::for_test() else { return };
    let path = dir.join("social/soc-Slashdot0902.el.gz");
    let mut opened = open(&EngineSpec::cpu(Some(2)), GraphSource::file(&path), &Workload::one(Algorithm::Wcc), &NoProgress).unwrap();
    let report = verified(opened.engine.as_mut(), Algorithm::Wcc, &Params::default());
    assert_eq!(report.graph.n, 82_168);
}

#[test]
fn parameters_are_checked_for_every_caller() {
    let mut opened = open(&EngineSpec::cpu(None), GraphSource::Memory(rmat()), &Workload::one(Algorithm::Pr), &NoProgress).unwrap();
    let opts = harness::Options { trials: 1, verify: false, against: None };
    for damping in [1.5, 0.0, 1.0, -0.1, f64::NAN] {
        let p = Params { pr: PrParams { damping, ..PrParams::default() }, ..Params::default() };
        let e = chatty::Error::from(harness::run(opened.engine.as_mut(), Algorithm::Pr, &p, &opts, |_| {}).err().unwrap());
        assert_eq!(e.kind(), ErrorKind::Parameter, "{damping}: {e}");
    }
    for delta in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let p = Params { delta: Some(delta), source: Some(0), ..Params::default() };
        assert!(harness::run(opened.engine.as_mut(), Algorithm::Sssp, &p, &opts, |_| {}).is_err(), "{delta}");
    }
    let zero = open(&EngineSpec::cpu(Some(0)), GraphSource::Memory(rmat()), &Workload::one(Algorithm::Pr), &NoProgress);
    assert!(matches!(zero.err().unwrap(), chatty::Error::Parameter { name: "threads", .. }));
    // Capped, with a note, rather than thousands of threads started.
    let many = open(&EngineSpec::cpu(Some(1_000_000)), GraphSource::Memory(rmat()), &Workload::one(Algorithm::Pr), &NoProgress).unwrap();
    assert_eq!(many.notes.len(), 1, "{:?}", many.notes);
    assert!(many.notes[0].to_string().starts_with("threads 1000000 capped at"));
}

#[test]
fn engines_refuse_what_they_cannot_do_and_the_graph_survives() {
    let work = Workload::one(Algorithm::Bfs);
    let mut held = Some(rmat());
    let mut gpu_option = EngineSpec::cpu(None);
    gpu_option.gpu.gpus = chatty::GpuCount::Count(2);
    let e = open_held(&gpu_option, &mut held, &work).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert_eq!(e.to_string(), "gpus applies to the GPU engine, not the CPU engine");
    let e = open_held(&EngineSpec::new(EngineKind::Ssd), &mut held, &work).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    if chatty_gpu::Gpu::count() == 0 {
        let e = open_held(&EngineSpec::gpu(), &mut held, &work).err().unwrap();
        assert_eq!(e.kind(), ErrorKind::Device, "{e}");
    }
    let e = open_held(&EngineSpec::new(EngineKind::Mpi), &mut held, &work).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    // A GPU engine's refusal names the option to change (checked before a GPU is opened).
    let mut tiny = Some(chatty::graph::from_edges(2, &[(0, 1)], true).unwrap());
    let mut three_parts = EngineSpec::gpu();
    three_parts.gpu.devices = Some(vec![0, 0, 0]);
    let mut opened = open_held(&three_parts, &mut tiny, &work).unwrap();
    let opts = harness::Options { trials: 1, verify: false, against: None };
    let e = chatty::Error::from(harness::run(opened.engine.as_mut(), Algorithm::Bfs, &Params::default(), &opts, |_| {}).err().unwrap());
    assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
    assert_eq!(e.option().map(|(o, _)| o), Some("devices"), "{e}");
    // Every refusal left the graph where it was.
    let mut opened = open_held(&EngineSpec::cpu(None), &mut held, &work).unwrap();
    assert!(held.is_none());
    verified(opened.engine.as_mut(), Algorithm::Bfs, &Params { source: Some(1), ..Params::default() });
    // And an engine hands it back for the next.
    let mut again = Some(opened.engine.into_graph().unwrap());
    assert!(open_held(&EngineSpec::cpu(Some(2)), &mut again, &work).is_ok());
}

#[test]
fn an_ssd_layout_opens_on_the_ssd_engine_under_auto() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.ssd");
    chatty_ssd::layout::write(&rmat(), &path, 2, &[]).unwrap();
    let mut spec = EngineSpec::auto();
    spec.ssd.budget = Some(256 << 20);
    let mut opened = open(&spec, GraphSource::file(&path), &Workload::one(Algorithm::Pr), &NoProgress).unwrap();
    assert_eq!(opened.choice.as_ref().unwrap().engine, EngineKind::Ssd);
    verified(opened.engine.as_mut(), Algorithm::Pr, &Params::default());
    // Its budget is checked up front, as the SSD engine's own error.
    spec.ssd.budget = Some(1 << 20);
    let e = open(&spec, GraphSource::file(&path), &Workload::one(Algorithm::Pr), &NoProgress).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::OutOfMemory, "{e}");
    // And only the SSD engine (or auto) runs on a layout.
    let e = open(&EngineSpec::cpu(None), GraphSource::file(&path), &Workload::one(Algorithm::Pr), &NoProgress).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
}
