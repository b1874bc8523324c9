//! `chatty bench multi-gpu` (the ChattyGraph paper's ablation: every kernel on one GPU,
//! then on several under each transport and control mode) and `bench
//! multi-gpu-report` (its tables and charts).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use chatty::{EngineKind, EngineSpec, GpuCount, GpuSpec, Workload};
use chatty_algo::{harness, Algorithm, Engine, Params, PrParams};
use chatty_gpu::{Comm, Gpu, GpuEngine, Mode};
use serde::{Deserialize, Serialize};

use super::{load_graph, median};
use crate::args::{MultiGpuBenchArgs, MultiGpuReportArgs, Reorder};
use crate::chart::speedup_chart;
use crate::progress::Bar;

/// One configuration's result.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct Row {
    pub graph: String,
    pub n: u64,
    pub m: u64,
    pub kernel: String,
    pub gpus: usize,
    pub comm: String,
    pub control: String,
    pub partition: String,
    /// Median of the timed trials.
    pub seconds: f64,
    pub trial_seconds: Vec<f64>,
    pub iterations: u64,
    pub steps: u64,
    pub exchanges: u64,
    pub dense_exchanges: u64,
    pub updated: u64,
    pub communicated: u64,
    /// Transport name → (exchanges, bytes).
    pub transports: BTreeMap<String, (u64, u64)>,
    pub boundary: Vec<u64>,
    pub verification: Option<String>,
    pub commit: String,
    /// The CUDA ordinals of the parts (empty in rows from before it was recorded).
    #[serde(default)]
    pub devices: Vec<usize>,
}

fn verdict(v: &Option<std::result::Result<(), String>>) -> Option<String> {
    v.as_ref().map(|v| match v {
        Ok(()) => "PASS".into(),
        Err(e) => format!("FAIL: {e}"),
    })
}

/// The GPUs of a `bench multi-gpu`: `--devices`, else the first `--gpus`.
fn bench_devices(a: &MultiGpuBenchArgs) -> Result<Vec<usize>> {
    let count = Gpu::count();
    if count == 0 {
        bail!("bench multi-gpu needs a GPU (none found)");
    }
    Ok(match (&a.devices, a.gpus.as_str()) {
        (Some(d), _) => {
            if let Some(bad) = d.iter().find(|&&o| o >= count) {
                bail!("--devices: GPU {bad} does not exist ({count} found)");
            }
            d.clone()
        }
        (None, "all") => (0..count).collect(),
        (None, s) => (0..s
            .parse::<usize>()
            .ok()
            .filter(|&k| (1..=count).contains(&k))
            .with_context(|| format!("--gpus {s}: this machine has {count} GPUs"))?)
            .collect(),
    })
}

/// What the rows of one graph and kernel share.
struct RowsOf<'a> {
    label: &'a str,
    alg: Algorithm,
    devices: &'a [usize],
}

impl RowsOf<'_> {
    /// The row of one configuration's report.
    fn row(&self, gpus: usize, comm: &str, control: &str, reorder: &str, report: &harness::Report) -> Row {
        Row {
            graph: self.label.to_string(),
            n: report.graph.n as u64,
            m: report.graph.m,
            kernel: self.alg.name().into(),
            gpus,
            comm: comm.into(),
            control: control.into(),
            partition: reorder.into(),
            seconds: median(&report.trial_seconds).unwrap_or(f64::NAN),
            trial_seconds: report.trial_seconds.clone(),
            iterations: report.last.iterations,
            steps: report.detail["steps"].as_u64().unwrap_or(0),
            exchanges: report.detail["exchanges"].as_u64().unwrap_or(0),
            dense_exchanges: report.detail["dense_exchanges"].as_u64().unwrap_or(0),
            updated: report.detail["updated_vertices"].as_u64().unwrap_or(0),
            communicated: report.detail["communicated_vertices"].as_u64().unwrap_or(0),
            transports: report.last.transfers.iter().map(|t| (t.transport.clone(), (t.exchanges, t.bytes))).collect(),
            boundary: report.detail["parts"].as_array().into_iter().flatten().filter_map(|p| p["boundary"].as_u64()).collect(),
            verification: verdict(&report.verification),
            commit: env!("CHATTY_COMMIT").into(),
            devices: if gpus == 1 { vec![0] } else { self.devices.to_vec() },
        }
    }
}

/// Every configuration of `a` on the GPUs of `rows` at once, one upload per order:
/// a row each on standard output.
fn split_runs(
    a: &MultiGpuBenchArgs,
    graph: &mut Option<chatty_graph::Graph>,
    rows: &RowsOf,
    configs: &[(Mode, Comm)],
    p: &Params,
) -> Result<()> {
    let (alg, k) = (rows.alg, rows.devices.len());
    let work = Workload::one(alg);
    for &reorder in &a.reorder {
        let several = GpuSpec {
            devices: Some(rows.devices.to_vec()),
            comm: Some(Comm::Auto),
            mode: Mode::Bsp,
            watchdog: std::time::Duration::from_secs(120),
            ..GpuSpec::default()
        };
        let spec = EngineSpec { reorder: reorder.order(), gpu: several, ..EngineSpec::new(EngineKind::Gpu) };
        // One upload per graph, kernel and order; every configuration reuses it.
        let mut opened = chatty::open_held(&spec, graph, &work)?.engine;
        let multi: &mut GpuEngine = opened.as_any_mut().downcast_mut().expect("the GPU engine opens a GpuEngine");
        let mut verified = false;
        for &control in &a.control {
            for &(mode, comm) in configs {
                if !mode.supports(alg) {
                    continue;
                }
                let name = if mode == Mode::Bsp { comm.name() } else { mode.name() };
                if let Err(e) = multi.prepare(alg).map_err(anyhow::Error::from).and_then(|_| Ok(multi.reconfigure(control, comm, mode)?)) {
                    eprintln!("{} {}: {name} {}: skipped ({e})", rows.label, alg.name(), control.name());
                    continue;
                }
                let opts = harness::Options { trials: a.trials, verify: a.verify && !verified, against: None };
                let report = harness::run(multi, alg, p, &opts, |_| {})?;
                verified |= report.verification.is_some();
                let r = rows.row(k, name, control.name(), reorder.name(), &report);
                eprintln!("{} {} {k} GPUs {name} {} {}: {:.3} ms", rows.label, alg.name(), control.name(), reorder.name(), r.seconds * 1e3);
                println!("{}", serde_json::to_string(&r)?);
            }
        }
        for note in multi.take_notes() {
            eprintln!("note: {note}");
        }
        *graph = opened.into_graph();
    }
    Ok(())
}

pub fn bench(a: &MultiGpuBenchArgs) -> Result<i32> {
    if a.kernels.contains(&Algorithm::Bc) {
        bail!("--kernels: bc does not split the graph (chatty run bc --gpus K splits its sources); this is the split engine's ablation");
    }
    // BSP under every transport; the GPU-driven modes bring their own (peer stores,
    // messages) and show as their mode's name.
    let configs: Vec<(Mode, Comm)> = a
        .mode
        .iter()
        .flat_map(|&m| match m {
            Mode::Bsp => a.comm.iter().map(|&c| (m, c)).collect::<Vec<_>>(),
            Mode::Async | Mode::Gmpi | Mode::Auto => vec![(m, Comm::Auto)],
        })
        .collect();
    anyhow::ensure!(a.trials > 0, "--trials must be at least 1");
    let devices = bench_devices(a)?;
    let k = devices.len();
    for path in &a.graphs {
        let mut graph = Some(load_graph(path, &a.load, &Bar::new(true))?);
        let label = path.file_stem().map_or_else(|| path.display().to_string(), |s| s.to_string_lossy().into_owned());
        for &alg in &a.kernels {
            let p = Params { pr: PrParams { tolerance: 0.0, max_iters: a.pr_iters, ..PrParams::default() }, ..Params::default() };
            let g = graph.as_ref().expect("the graph");
            let rows = RowsOf { label: &label, alg, devices: &devices };
            if alg == Algorithm::Sssp && chatty_algo::sssp::check_weights(g).is_err() {
                eprintln!("{label}: sssp skipped (negative weights)");
                continue;
            }
            let opts = harness::Options { trials: a.trials, verify: a.verify, against: None };
            let work = Workload::one(alg);
            // One GPU: the single-GPU engine.
            let one_gpu = GpuSpec { gpus: GpuCount::Count(1), ..GpuSpec::default() };
            let spec = EngineSpec { reorder: Reorder::None.order(), gpu: one_gpu, ..EngineSpec::new(EngineKind::Gpu) };
            let mut one = chatty::open_held(&spec, &mut graph, &work)?.engine;
            let report = harness::run(one.as_mut(), alg, &p, &opts, |_| {});
            graph = one.into_graph();
            let r = rows.row(1, "-", "-", Reorder::None.name(), &report?);
            eprintln!("{label} {} 1 GPU: {:.3} ms", alg.name(), r.seconds * 1e3);
            println!("{}", serde_json::to_string(&r)?);
            if k < 2 {
                continue;
            }
            split_runs(a, &mut graph, &rows, &configs, &p)?;
        }
    }
    Ok(0)
}

fn ms(s: f64) -> String {
    format!("{:.3}", s * 1e3)
}

/// `chatty bench multi-gpu report`: the tables (and charts) of the rows in `a.rows`.
pub fn report(a: &MultiGpuReportArgs) -> Result<i32> {
    let rows = Rows::read(&a.rows)?;
    let (categories, scaling) = summary_table(&rows);
    let per_mode = modes_table(&rows);
    bytes_table(&rows);
    if let Some(dir) = &a.charts {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let gpus = rows.rows.iter().map(|r| r.gpus).max().unwrap_or(2);
        charts_per_kernel(dir, "scaling", &format!("{gpus} GPUs over one"), &categories, &scaling)?;
        let mode_categories: Vec<(String, String)> =
            rows.keys.iter().filter(|k| rows.one(k).is_some() && rows.select(k).any(|r| r.gpus > 1)).cloned().collect();
        charts_per_kernel(dir, "modes", "Each transport (threads control)", &mode_categories, &per_mode)?;
        eprintln!("charts: {}", Path::new(dir).display());
    }
    Ok(0)
}

/// The rows of a report, and their (graph, kernel) pairs in first-seen order.
struct Rows {
    rows: Vec<Row>,
    keys: Vec<(String, String)>,
}

impl Rows {
    /// The rows of every file; a later row of a configuration (a newer run) replaces
    /// an earlier one.
    fn read(files: &[std::path::PathBuf]) -> Result<Rows> {
        let mut rows: Vec<Row> = Vec::new();
        for f in files {
            let text = std::fs::read_to_string(f).with_context(|| format!("cannot read {}", f.display()))?;
            for (i, line) in text.lines().enumerate().filter(|(_, l)| l.starts_with('{')) {
                let mut row: Row =
                    serde_json::from_str(line).with_context(|| format!("{}:{}: not a bench multi-gpu row", f.display(), i + 1))?;
                if row.partition == "natural" {
                    row.partition = Reorder::None.name().into(); // rows from before `--reorder`
                }
                // A later row of the same configuration (a newer run) replaces the earlier.
                let same = |r: &Row| {
                    (&r.graph, &r.kernel, r.gpus, &r.comm, &r.control, &r.partition)
                        == (&row.graph, &row.kernel, row.gpus, &row.comm, &row.control, &row.partition)
                };
                match rows.iter().position(same) {
                    Some(i) => rows[i] = row,
                    None => rows.push(row),
                }
            }
        }
        if rows.is_empty() {
            bail!("no rows");
        }
        let mut keys: Vec<(String, String)> = Vec::new();
        for r in &rows {
            let key = (r.graph.clone(), r.kernel.clone());
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        Ok(Rows { rows, keys })
    }

    /// The rows of one (graph, kernel).
    fn select<'a>(&'a self, key: &'a (String, String)) -> impl Iterator<Item = &'a Row> {
        self.rows.iter().filter(move |r| r.graph == key.0 && r.kernel == key.1)
    }

    /// The one-GPU time of a (graph, kernel).
    fn one(&self, key: &(String, String)) -> Option<f64> {
        self.select(key).find(|r| r.gpus == 1).map(|r| r.seconds)
    }
}

/// Prints the summary table; returns its (graph, kernel) pairs and speedup series.
#[allow(clippy::type_complexity)]
fn summary_table(rows: &Rows) -> (Vec<(String, String)>, Vec<(String, Vec<f64>)>) {
    println!("## Summary (median ms; speedup over one GPU)\n");
    println!("| graph | kernel | 1 GPU ms | auto ms | speedup | best forced | best ms | auto / best | async ms | async speedup | steps | updated | sent | sent % | verification |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut scaling: Vec<(String, Vec<f64>)> = vec![
        ("auto, threads".into(), Vec::new()),
        ("best forced mode".into(), Vec::new()),
        ("async (GPU-driven levels)".into(), Vec::new()),
    ];
    let mut categories = Vec::new();
    for key in &rows.keys {
        let base = rows.one(key);
        let multi: Vec<&Row> = rows.select(key).filter(|r| r.gpus > 1).collect();
        let auto = multi.iter().filter(|r| r.comm == "auto" && r.control == "threads").min_by(|a, b| a.seconds.total_cmp(&b.seconds));
        // The best forced transport (auto itself when none was forced).
        let best = multi
            .iter()
            .filter(|r| r.comm != "auto" && !Mode::ALL.iter().any(|m| m.name() == r.comm))
            .min_by(|a, b| a.seconds.total_cmp(&b.seconds))
            .or(auto);
        let async_best = multi.iter().filter(|r| r.comm == "async").min_by(|a, b| a.seconds.total_cmp(&b.seconds));
        let (Some(auto), Some(best), Some(base)) = (auto, best, base) else { continue };
        let checks: Vec<String> = rows.select(key).filter_map(|r| r.verification.clone()).collect();
        let verification = match checks.iter().find(|v| *v != "PASS") {
            Some(failed) => failed.clone(),
            None if checks.is_empty() => "not checked".into(),
            None => "PASS".into(),
        };
        println!(
            "| {} | {} | {} | {} | {:.2}x | {} {} {} | {} | {:.2} | {} | {} | {} | {} | {} | {:.1}% | {} |",
            key.0,
            key.1,
            ms(base),
            ms(auto.seconds),
            base / auto.seconds,
            best.comm,
            best.control,
            best.partition,
            ms(best.seconds),
            auto.seconds / best.seconds,
            async_best.map_or("-".into(), |r| ms(r.seconds)),
            async_best.map_or("-".into(), |r| format!("{:.2}x", base / r.seconds)),
            auto.steps,
            auto.updated,
            auto.communicated,
            100.0 * auto.communicated as f64 / auto.updated.max(1) as f64,
            verification
        );
        categories.push(key.clone());
        scaling[0].1.push(base / auto.seconds);
        scaling[1].1.push(base / best.seconds);
        scaling[2].1.push(async_best.map_or(f64::NAN, |r| base / r.seconds));
    }
    (categories, scaling)
}

/// Prints every mode's times; returns each transport's speedups (threads control).
fn modes_table(rows: &Rows) -> Vec<(String, Vec<f64>)> {
    println!("\n## Every mode (median ms)\n");
    let mut modes: Vec<(String, String, String)> = Vec::new();
    for r in rows.rows.iter().filter(|r| r.gpus > 1) {
        let m = (r.comm.clone(), r.control.clone(), r.partition.clone());
        if !modes.contains(&m) {
            modes.push(m);
        }
    }
    let mode_name = |m: &(String, String, String)| {
        if m.2 == Reorder::None.name() {
            format!("{} {}", m.0, m.1)
        } else {
            format!("{} {} {}", m.0, m.1, m.2)
        }
    };
    println!("| graph | kernel | 1 GPU | {} |", modes.iter().map(mode_name).collect::<Vec<_>>().join(" | "));
    println!("|---|---|---|{}", "---|".repeat(modes.len()));
    let mut per_mode: Vec<(String, Vec<f64>)> =
        modes.iter().filter(|m| m.1 == "threads" && m.2 == Reorder::None.name()).map(|m| (m.0.clone(), Vec::new())).collect();
    for key in &rows.keys {
        let Some(base) = rows.one(key) else { continue };
        if !rows.select(key).any(|r| r.gpus > 1) {
            continue;
        }
        let cell = |m: &(String, String, String)| {
            rows.select(key).find(|r| r.gpus > 1 && r.comm == m.0 && r.control == m.1 && r.partition == m.2).map(|r| r.seconds)
        };
        println!(
            "| {} | {} | {} | {} |",
            key.0,
            key.1,
            ms(base),
            modes.iter().map(|m| cell(m).map_or("-".into(), ms)).collect::<Vec<_>>().join(" | ")
        );
        for (name, v) in per_mode.iter_mut() {
            let m = (name.clone(), "threads".to_string(), Reorder::None.name().to_string());
            v.push(cell(&m).map_or(f64::NAN, |s| base / s));
        }
    }
    per_mode
}

/// Prints the bytes between GPUs per trial.
fn bytes_table(rows: &Rows) {
    println!("\n## Bytes between GPUs per trial (auto, threads)\n");
    println!("| graph | kernel | exchanges | dense | transports (exchanges, MB) |");
    println!("|---|---|---|---|---|");
    for key in &rows.keys {
        if let Some(r) =
            rows.select(key).find(|r| r.gpus > 1 && r.comm == "auto" && r.control == "threads" && r.partition == Reorder::None.name())
        {
            let t: Vec<String> = r.transports.iter().map(|(t, (x, b))| format!("{t} {x}x {:.2} MB", *b as f64 / 1e6)).collect();
            println!(
                "| {} | {} | {} | {} | {} |",
                key.0,
                key.1,
                r.exchanges,
                r.dense_exchanges,
                if t.is_empty() { "none".into() } else { t.join(", ") }
            );
        }
    }
}

/// One speedup chart per kernel, `DIR/STEM-KERNEL.svg`, its graphs the groups:
/// every (graph, kernel) pair in one chart was unreadable at page width.
fn charts_per_kernel(dir: &Path, stem: &str, title: &str, categories: &[(String, String)], series: &[(String, Vec<f64>)]) -> Result<()> {
    let mut kernels: Vec<&str> = Vec::new();
    for (_, kernel) in categories {
        if !kernels.contains(&kernel.as_str()) {
            kernels.push(kernel);
        }
    }
    for kernel in kernels {
        let at: Vec<usize> = (0..categories.len()).filter(|&i| categories[i].1 == kernel).collect();
        let graphs: Vec<String> = at.iter().map(|&i| categories[i].0.clone()).collect();
        let values: Vec<(String, Vec<f64>)> = series
            .iter()
            .map(|(name, v)| (name.clone(), at.iter().map(|&i| v[i]).collect::<Vec<f64>>()))
            .filter(|(_, v)| v.iter().any(|x| x.is_finite()))
            .collect();
        speedup_chart(&dir.join(format!("{stem}-{kernel}.svg")), &format!("{title}: {kernel}"), "speedup over 1 GPU", &graphs, &values)?;
    }
    Ok(())
}
