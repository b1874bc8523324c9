//! The one harness every engine runs under: ready the engine, check the parameters
//! and resolve their defaults, pick each trial's sources, time the trials (after an
//! untimed one where the engine asks for it), verify against the sequential
//! references, and build the report whose JSON form is the same for every engine
//! (the schema is in docs/report.md).

use std::time::Instant;

use chatty_graph::{Name, Naming, VertexOrder};
use rayon::prelude::*;
use serde_json::{json, Value};

use crate::engine::{Breakdown, Engine, EngineInfo, GraphInfo, HostGraph, Trial};
use crate::{check_params, edges_traversed, pick_sources, renumber, verify, Algorithm, BcSources, Params, Result, EDGES_COUNTING};

/// How many trials, and whether to verify them.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Timed trials (at least 1).
    pub trials: u32,
    /// Check every trial against the sequential reference.
    pub verify: bool,
    /// The graph the references read, named, instead of the engine's own copy
    /// ([`Engine::reference_graph`]): an independent original, such as the `.cgr` an
    /// SSD layout was made from.
    pub against: Option<(String, std::sync::Arc<chatty_graph::Graph>)>,
}

/// One finished trial, as the harness hands it to the front end while it runs.
pub struct TrialEvent<'a> {
    /// 0-based trial number.
    pub index: u32,
    /// The trial.
    pub trial: &'a Trial,
    /// Its verdict, when verifying.
    pub verification: Option<&'a Result<()>>,
    /// The engine's lines about it ([`Engine::trial_lines`]).
    pub lines: Vec<String>,
}

/// Everything a run of trials produced.
pub struct Report {
    /// The kernel.
    pub algorithm: Algorithm,
    /// The engine.
    pub engine: EngineInfo,
    /// Its graph.
    pub graph: GraphInfo,
    /// The parameters with their defaults resolved.
    pub params: Params,
    /// The engine's timed region of each trial.
    pub trial_seconds: Vec<f64>,
    /// Each trial from the call to its return (source set-up and copies included).
    pub end_to_end_seconds: Vec<f64>,
    /// Where each trial's time went, as its engine measured it.
    pub breakdowns: Vec<Breakdown>,
    /// Seconds readying the engine for the kernel (uploads, transposes), once.
    pub prepare_seconds: f64,
    /// Of those, seconds building the in-edges the kernel reads, which the graph's
    /// file did not store (`chatty convert --transpose` stores them).
    pub in_edges_seconds: f64,
    /// Seconds of the untimed first trial (0 where the engine needs none).
    pub warm_up_seconds: f64,
    /// Seconds verifying: the reference graph made ready, every trial's answer checked
    /// (0 without verification).
    pub verify_seconds: f64,
    /// The last trial (its output is the run's answer).
    pub last: Trial,
    /// With [`Params::parents`]: each vertex's parent on a shortest path from the last
    /// trial's source ([`crate::paths`]), in the caller's ids.
    pub parents: Option<Vec<u32>>,
    /// Seconds finding the parents after the last trial (0 without them).
    pub parents_seconds: f64,
    /// `None` unless verifying; else the first failure, or `Ok`.
    pub verification: Option<std::result::Result<(), String>>,
    /// What the trials were verified against, when verifying.
    pub verified_against: Option<String>,
    /// [`EDGES_COUNTING`]'s count for the last trial.
    pub edges_traversed: u64,
    /// The engine's configuration and the last trial's figures.
    pub detail: Value,
}

/// Builds the in-edges `alg` reads in the engine's host graph where it has none yet,
/// returning the seconds it took (0 when stored, not needed, or no host graph).
fn build_in_edges(engine: &mut dyn Engine, alg: Algorithm) -> Result<f64> {
    match engine.host_graph_mut() {
        Some(g) if alg.wants_in_edges() && g.is_directed() && g.transpose_if_built().is_none() => {
            let building = Instant::now();
            g.build_in_edges().map_err(crate::Error::engine)?;
            Ok(building.elapsed().as_secs_f64())
        }
        _ => Ok(0.0),
    }
}

/// Runs `opts.trials` trials of `alg` on `engine`, calling `on_trial` after each.
pub fn run(engine: &mut dyn Engine, alg: Algorithm, p: &Params, opts: &Options, on_trial: impl FnMut(TrialEvent)) -> Result<Report> {
    run_with_progress(engine, alg, p, opts, &chatty_graph::NoProgress, on_trial)
}

/// [`run`], with long kernels reporting to `progress` (the CLI's bar).
pub fn run_with_progress(
    engine: &mut dyn Engine,
    alg: Algorithm,
    p: &Params,
    opts: &Options,
    progress: &dyn chatty_graph::Progress,
    mut on_trial: impl FnMut(TrialEvent),
) -> Result<Report> {
    let preparing = Instant::now();
    let in_edges_seconds = build_in_edges(engine, alg)?;
    engine.prepare(alg)?;
    let prepare_seconds = preparing.elapsed().as_secs_f64();
    let graph = engine.graph_info();
    check_params(alg, graph.n, p)?;
    let mut p = p.clone();
    if alg == Algorithm::Sssp && p.delta.is_none() {
        p.delta = engine.default_delta();
    }
    // Everything here but the engine's calls and verification speaks the input's ids;
    // a graph stored renumbered is answered in them (`to_engine`, `to_caller`).
    let order = graph.order.as_deref();
    let engine_params = match order {
        Some(o) => std::borrow::Cow::Owned(params_to_engine(o, &p)),
        None => std::borrow::Cow::Borrowed(&p),
    };
    let to_engine = |sources: Vec<u32>| match order {
        Some(o) => sources.into_iter().map(|v| o.stored_ids()[v as usize]).collect(),
        None => sources,
    };
    let degree = |v: u32| engine.out_degree(order.map_or(v, |o| o.stored_ids()[v as usize]));
    let has_edges = graph.m > 0;
    let sources = |trial: u64| -> Result<Vec<u32>> {
        if alg.starts_from_sources(&p) {
            Ok(to_engine(pick_sources(alg, graph.n, degree, has_edges, &p, trial)?))
        } else {
            Ok(Vec::new())
        }
    };
    let warming = Instant::now();
    if engine.warm_up() {
        engine.run(alg, &engine_params, &sources(0)?, progress)?;
    }
    let warm_up_seconds = if engine.warm_up() { warming.elapsed().as_secs_f64() } else { 0.0 };
    let verifying = Instant::now();
    let (reference, verified_against, verify_stored) = reference_for(engine, &graph, opts)?;
    let mut verify_seconds = verifying.elapsed().as_secs_f64();
    let checks = Checks { reference: reference.as_ref(), verify_stored, caller_params: &p };
    let trials = run_trials(engine, alg, &engine_params, order, &checks, &sources, opts.trials.max(1), progress, &mut on_trial)?;
    verify_seconds += trials.verify_seconds;
    drop(reference);
    chatty_graph::file::check_mapped_inputs().map_err(crate::Error::engine)?;
    let Trials { trial_seconds, end_to_end_seconds, breakdowns, verification, last, parents, parents_seconds, .. } = trials;
    let last = scaled_as_networkx(alg, graph.directed, last);
    let edges_traversed = edges_traversed(alg, graph.m, degree, &last);
    let detail = merge(engine.detail(), last.detail.clone());
    Ok(Report {
        algorithm: alg,
        engine: engine.info(),
        graph,
        params: p,
        trial_seconds,
        end_to_end_seconds,
        breakdowns,
        prepare_seconds,
        in_edges_seconds,
        warm_up_seconds,
        verify_seconds,
        last,
        parents,
        parents_seconds,
        verification,
        verified_against,
        edges_traversed,
        detail,
    })
}

/// What verifies the trials: the reference graph (none without `--verify`), whether
/// it is checked in the engine's stored ids, and the parameters in the caller's ids.
struct Checks<'a> {
    reference: Option<&'a HostGraph<'a>>,
    verify_stored: bool,
    caller_params: &'a Params,
}

/// What the trials of a run gathered.
struct Trials {
    trial_seconds: Vec<f64>,
    end_to_end_seconds: Vec<f64>,
    breakdowns: Vec<Breakdown>,
    verification: Option<std::result::Result<(), String>>,
    verify_seconds: f64,
    last: Trial,
    parents: Option<Vec<u32>>,
    parents_seconds: f64,
}

/// Runs `trials` trials of `alg`, each answer mapped to the caller's ids (`order`)
/// and verified by `checks`, calling `on_trial` after each.
#[allow(clippy::too_many_arguments)]
fn run_trials(
    engine: &dyn Engine,
    alg: Algorithm,
    engine_params: &Params,
    order: Option<&VertexOrder>,
    checks: &Checks,
    sources: &dyn Fn(u64) -> Result<Vec<u32>>,
    trials: u32,
    progress: &dyn chatty_graph::Progress,
    on_trial: &mut dyn FnMut(TrialEvent),
) -> Result<Trials> {
    let mut trial_seconds = Vec::new();
    let mut end_to_end_seconds = Vec::new();
    let mut breakdowns = Vec::new();
    let mut verification: Option<std::result::Result<(), String>> = None;
    let mut last = None;
    let mut verify_seconds = 0.0;
    let (mut parents, mut parents_seconds) = (None, 0.0);
    for index in 0..trials {
        let sources = sources(index as u64)?;
        // The answer kept so far goes before the next trial runs: its blocks are then
        // the ones that trial allocates, already mapped, not fresh pages to fault in
        // (PageRank on the 2048² grid, one thread: the second of three trials 90 ms
        // with its predecessor's 32 MB of scores alive, 78 ms after them).
        drop(last.take());
        let start = Instant::now();
        let trial = finite(alg, engine.run(alg, engine_params, &sources, progress)?)?;
        let mut end_to_end = start.elapsed().as_secs_f64();
        // The answer's parents, once: from the last trial, in the engine's ids.
        let tree = if engine_params.parents && index + 1 == trials {
            let finding = Instant::now();
            let tree = engine.parents(trial.sources[0], &trial.output)?;
            parents_seconds = finding.elapsed().as_secs_f64();
            Some(tree)
        } else {
            None
        };
        let verifying = Instant::now();
        let stored_verdict =
            checks.reference.filter(|_| checks.verify_stored).map(|g| check(alg, g, engine_params, &trial, tree.as_deref()));
        verify_seconds += verifying.elapsed().as_secs_f64();
        let (trial, tree) = match order {
            Some(o) => {
                let mapping = Instant::now();
                let trial = to_caller(o, trial);
                let tree = tree.map(|t| renumber::parents_to_caller(o.stored_ids(), o.input_ids(), &t));
                end_to_end += mapping.elapsed().as_secs_f64();
                (trial, tree)
            }
            None => (trial, tree),
        };
        end_to_end_seconds.push(end_to_end);
        trial_seconds.push(trial.seconds);
        breakdowns.push(trial.breakdown.clone());
        let verifying = Instant::now();
        let verdict = stored_verdict.or_else(|| checks.reference.map(|g| check(alg, g, checks.caller_params, &trial, tree.as_deref())));
        verify_seconds += verifying.elapsed().as_secs_f64();
        if let Some(v) = &verdict {
            let so_far = verification.take().unwrap_or(Ok(()));
            verification = Some(so_far.and(v.as_ref().map_err(|e| e.to_string()).copied()));
        }
        on_trial(TrialEvent { index, trial: &trial, verification: verdict.as_ref(), lines: engine.trial_lines(&trial) });
        last = Some(trial);
        parents = parents.or(tree);
    }
    let last = last.expect("at least one trial");
    Ok(Trials { trial_seconds, end_to_end_seconds, breakdowns, verification, verify_seconds, last, parents, parents_seconds })
}

/// A trial's answer checked against the reference `g` (ids as `g`'s), and its
/// parents where it has them.
fn check(alg: Algorithm, g: &chatty_graph::Graph, p: &Params, trial: &Trial, parents: Option<&[u32]>) -> Result<()> {
    verify(alg, g, p, &trial.sources, &trial.output)?;
    match parents {
        Some(parents) => crate::paths::verify(g, trial.sources[0], &trial.output, parents),
        None => Ok(()),
    }
}

/// The graph `opts` verifies against (none without `--verify`), its name, and whether
/// the answers are checked in the engine's stored ids (the reference is the engine's
/// renumbered graph) rather than the input's.
fn reference_for<'a>(
    engine: &'a dyn Engine,
    graph: &GraphInfo,
    opts: &'a Options,
) -> Result<(Option<HostGraph<'a>>, Option<String>, bool)> {
    let order = graph.order.as_deref();
    let (reference, verified_against) = match (&opts.verify, &opts.against) {
        (false, _) => (None, None),
        (true, Some((name, g))) => {
            let (ours, theirs) = (graph, g);
            if (ours.n, ours.m, ours.directed, ours.weighted)
                != (theirs.num_vertices(), theirs.num_edges(), theirs.is_directed(), theirs.weight_type() != chatty_graph::WeightType::None)
            {
                let problem = format!(
                    "{name} is not the engine's graph: {} vertices and {} edges against {} and {} (or directedness or weights differ)",
                    theirs.num_vertices(),
                    theirs.num_edges(),
                    ours.n,
                    ours.m
                );
                return Err(crate::Error::Parameter { name: "verify_against", problem });
            }
            (Some(HostGraph::Borrowed(g)), Some(name.clone()))
        }
        (true, None) => (Some(engine.reference_graph()?), Some(engine.reference_name())),
    };
    // The reference answers in its own ids: the stored ones when it is the engine's
    // renumbered graph, the input's when it is in the input's order.
    let verify_stored = match (order, reference.as_ref().and_then(|g| g.order())) {
        (Some(o), Some(r)) if o == r.as_ref() => true,
        (_, None) => false,
        (_, Some(_)) => {
            let problem = format!(
                "{} is stored in another vertex order than the engine's graph: verify against the input, or the same file",
                verified_against.unwrap_or_default()
            );
            return Err(crate::Error::Parameter { name: "verify_against", problem });
        }
    };
    Ok((reference, verified_against, verify_stored))
}

/// `p`'s vertex ids and per-vertex arrays in a renumbered graph's stored order. What
/// is out of range stays as it is, for the checks that name it in the input's ids.
fn params_to_engine(order: &VertexOrder, p: &Params) -> Params {
    let stored = order.stored_ids();
    let id = |v: u32| stored.get(v as usize).copied().unwrap_or(v);
    let values =
        |x: &Option<Vec<f64>>| x.as_ref().map(|x| if x.len() == stored.len() { renumber::values_to_kernel(stored, x) } else { x.clone() });
    Params {
        source: p.source.map(id),
        bc_sources: match &p.bc_sources {
            BcSources::List(l) => BcSources::List(l.iter().map(|&v| id(v)).collect()),
            other => other.clone(),
        },
        x: values(&p.x),
        personalization: values(&p.personalization),
        ..p.clone()
    }
}

/// A trial on a renumbered graph, its answer and sources in the input's ids. The
/// mapping is part of what the user waits for: it counts as download, like a GPU
/// engine's own renumbering.
fn to_caller(order: &VertexOrder, trial: Trial) -> Trial {
    let mapping = Instant::now();
    let mut trial = Trial {
        output: renumber::output_to_caller(order.stored_ids(), trial.output),
        sources: trial.sources.iter().map(|&v| order.input_ids()[v as usize]).collect(),
        ..trial
    };
    trial.breakdown.download_seconds += mapping.elapsed().as_secs_f64();
    trial
}

/// `trial`, unless it is a BC answer that is not finite: every Brandes implementation
/// poisons a vertex whose path count overflowed (`bc::dependency`).
fn finite(alg: Algorithm, trial: Trial) -> Result<Trial> {
    if let (Algorithm::Bc, crate::Output::Values(scores)) = (alg, &trial.output) {
        if scores.par_iter().any(|x| !x.is_finite()) {
            return Err(crate::Error::PathCountOverflow);
        }
    }
    Ok(trial)
}

/// A verified answer as networkx scales it: BC on an undirected graph halved, as
/// `betweenness_centrality_subset` halves it (Brandes' sums, which every engine's
/// kernel and reference compute, count a path from both of its ends when both are
/// sources).
fn scaled_as_networkx(alg: Algorithm, directed: bool, mut trial: Trial) -> Trial {
    if let (Algorithm::Bc, false, crate::Output::Values(scores)) = (alg, directed, &mut trial.output) {
        scores.par_iter_mut().for_each(|x| *x /= 2.0);
    }
    trial
}

/// The union of two JSON objects (`b` wins); a null side is empty.
fn merge(a: Value, b: Value) -> Value {
    match (a, b) {
        (Value::Object(mut a), Value::Object(b)) => {
            a.extend(b);
            Value::Object(a)
        }
        (Value::Null, b) => b,
        (a, Value::Null) => a,
        (_, b) => b,
    }
}

/// The report lists every source up to this many; beyond, `source_count` and `seed`
/// reproduce them.
pub const SOURCES_LISTED: usize = 1000;

/// Where the report was made: what the front end knows and the engines do not.
pub struct Context<'a> {
    /// The graph's path as the user gave it.
    pub path: &'a str,
    /// Seconds to load (and convert) the graph and open the engine (a GPU's context
    /// and kernels; several GPUs open in `prepare`).
    pub load_seconds: f64,
    /// When the command started, when there is one: the report's `elapsed_seconds`
    /// counts from here to the report, which with the exit is all a user waits for.
    pub started: Option<Instant>,
    /// The commit the binary was built from.
    pub commit: &'a str,
    /// How many of the largest values or components the `result` lists.
    pub top: usize,
    /// How the user names the vertices ([`GraphInfo::naming`]): every vertex in the
    /// report is shown so.
    pub naming: &'a Naming,
}

impl Report {
    /// What the run did that the kernel's name alone does not say, for the user
    /// (triangles of a directed graph's undirected one, WCC answering SCC).
    pub fn kernel_note(&self) -> Option<&'static str> {
        if self.algorithm == Algorithm::Closeness && self.algorithm.starts_from_sources(&self.params) {
            return Some("closeness: estimated from the sampled sources' searches (Eppstein and Wang), not exact; --sources all gives the exact values");
        }
        match self.graph.directed {
            true => self.algorithm.directed_note(),
            false => self.algorithm.undirected_note(),
        }
    }

    /// Mean of the trials' timed regions.
    pub fn average_seconds(&self) -> f64 {
        self.trial_seconds.iter().sum::<f64>() / self.trial_seconds.len().max(1) as f64
    }

    /// Edges traversed per second of the average trial, in billions.
    pub fn gteps(&self) -> f64 {
        self.edges_traversed as f64 / self.average_seconds() / 1e9
    }

    /// The answer's summary, with PageRank's residual (the L1 change of its last
    /// iteration) and whether it converged beside it.
    fn result(&self, ctx: &Context) -> Value {
        let mut result = serde_json::to_value(self.last.output.summary(ctx.top).named(ctx.naming)).expect("a summary serialises");
        if let (Value::Object(r), Some(residual)) = (&mut result, self.last.residual) {
            r.insert("residual".into(), json!(residual));
            r.insert("converged".into(), json!(self.settled(residual)));
        }
        result
    }

    /// Whether an iteration's last change (PageRank's, eigenvector's, Katz's, HITS's), `residual`, says
    /// it converged: below the stop, or (PageRank) below the rounding of its f32
    /// contributions ([`PRECISION_FLOOR`]), which no further iteration removes. An
    /// empty graph has nothing to converge.
    fn settled(&self, residual: f64) -> bool {
        let floor = if self.algorithm == Algorithm::Pr { PRECISION_FLOOR } else { 0.0 };
        self.graph.n == 0 || residual < self.params.pr.stop(self.graph.n).max(floor)
    }

    /// What a user must hear beside the answer: PageRank that ran out of iterations
    /// before its change fell below the stop, or that stopped by networkx's rule
    /// (L1 change below n × tolerance, loose on a large graph: NY roads stopped after
    /// 2 iterations, its top 10 sharing one vertex with the converged ranking) while
    /// its scores still moved by more than [`LOOSE_RESIDUAL`]. None for a tolerance
    /// of 0, which asks for the iterations given.
    pub fn caveat(&self) -> Option<String> {
        let (residual, pr, n) = (self.last.residual?, &self.params.pr, self.graph.n);
        let (iterations, stop) = (self.last.iterations, pr.stop(n));
        let what = match self.algorithm {
            Algorithm::Pr => "PageRank",
            Algorithm::Katz => "Katz centrality",
            Algorithm::Hits => "HITS",
            _ => "eigenvector centrality",
        };
        if n == 0 || pr.tolerance == 0.0 {
            None
        } else if !self.settled(residual) {
            let way_out = match self.algorithm {
                Algorithm::Katz => format!("allow more iterations, or lower --katz-alpha ({}) below 1/λ_max", self.params.katz.alpha),
                _ => "allow more iterations".to_string(),
            };
            Some(format!(
                "{what} did not converge in {iterations} iterations (its last changed the scores by {residual:.1e}, \
                 the stop is below {stop:.1e}): the scores are not final; {way_out}"
            ))
        } else if residual > LOOSE_RESIDUAL && !matches!(self.algorithm, Algorithm::Katz | Algorithm::Hits) {
            // Katz's scores are not a distribution (each is beta or more), nor are
            // HITS's as it iterates (the largest is 1): the loose stop's scale does
            // not apply.
            Some(format!(
                "{what} stopped after {iterations} iterations by networkx's rule (L1 change below n × tolerance = \
                 {stop:.1e}) while its scores still moved by {residual:.1e}: a tolerance of {:.0e} converges",
                CONVERGED_RESIDUAL / n as f64
            ))
        } else {
            None
        }
    }

    /// The report as one JSON object, with the same top-level keys and types on
    /// every engine; what only one engine has lives under `detail`.
    pub fn json(&self, ctx: &Context) -> Value {
        let p = &self.params;
        let sources: Vec<Name> = self.last.sources.iter().map(|&s| ctx.naming.name(s)).collect();
        // Made first, so the elapsed time includes summarising the answer.
        let result = self.result(ctx);
        let elapsed_seconds = ctx.started.map(|s| s.elapsed().as_secs_f64());
        json!({
            "algorithm": self.algorithm.name(),
            "engine": self.engine.name,
            "devices": self.engine.devices,
            "graph": {
                "path": ctx.path,
                "n": self.graph.n,
                "m": self.graph.m,
                "directed": self.graph.directed,
                "weighted": self.graph.weighted,
                "id_base": match ctx.naming { Naming::From(base) => *base, Naming::Names(_) => 0 },
                "named": self.graph.names.is_some(),
                "renumbered": self.graph.order.is_some(),
            },
            "parameters": {
                "sources": if sources.len() <= SOURCES_LISTED { &sources[..] } else { &[] },
                "source_count": sources.len(),
                "delta": p.delta,
                "tolerance": p.pr.tolerance,
                "max_iters": p.pr.max_iters,
                "damping": p.pr.damping,
                "pr_method": p.pr.method.name(),
                "weighted": p.weighted,
                "seed": p.seed,
                "direction": p.direction.name(),
                "parents": p.parents,
            },
            "load_seconds": ctx.load_seconds,
            "elapsed_seconds": elapsed_seconds,
            "trial_seconds": self.trial_seconds,
            "trial_timing": self.engine.trial_timing,
            "end_to_end_seconds": self.end_to_end_seconds,
            "breakdown": self.breakdowns.iter().zip(&self.trial_seconds).zip(&self.end_to_end_seconds).map(|((b, k), e)| {
                let mut o = serde_json::to_value(b).expect("a breakdown serialises");
                o["kernel_seconds"] = json!(k);
                o["other_seconds"] = json!((e - b.setup_seconds - k - b.download_seconds).max(0.0));
                o
            }).collect::<Vec<_>>(),
            "prepare_seconds": self.prepare_seconds,
            "in_edges_seconds": self.in_edges_seconds,
            "warm_up_seconds": self.warm_up_seconds,
            "verify_seconds": self.verify_seconds,
            "parents_seconds": self.parents.as_ref().map(|_| self.parents_seconds),
            "average_seconds": self.average_seconds(),
            "iterations": self.last.iterations,
            "edges_traversed": self.edges_traversed,
            "edges_counting": EDGES_COUNTING,
            "gteps": self.gteps(),
            "result": result,
            "transports": self.last.transfers,
            "bytes_between_devices": self.last.transfers.iter().map(|t| t.bytes).sum::<u64>(),
            "verification": self.verification.as_ref().map(|v| match v {
                Ok(()) => "PASS".to_string(),
                Err(e) => format!("FAIL: {e}"),
            }),
            "verified_against": self.verified_against,
            "caveat": self.caveat(),
            "peak_memory_bytes": peak_rss(),
            "version": env!("CARGO_PKG_VERSION"),
            "commit": ctx.commit,
            "detail": match &self.detail {
                Value::Null => json!({}),
                d => d.clone(),
            },
        })
    }
}

/// An L1 change of PageRank's scores (which sum to 1) above which a run that stopped
/// by its tolerance is worth a note: a thousandth of the mass still moving reorders
/// the ranking.
pub const LOOSE_RESIDUAL: f64 = 1e-3;

/// The L1 change of PageRank's scores that is the rounding of its contributions:
/// every engine gathers them as f32, so a smaller tolerance runs every iteration
/// allowed without getting below it (a 50-vertex forest changes by 1.6e-7 at every
/// iteration from the 100th).
const PRECISION_FLOOR: f64 = 8.0 * f32::EPSILON as f64;

/// The L1 change the note's suggested tolerance stops below.
const CONVERGED_RESIDUAL: f64 = 1e-6;

/// Peak resident memory of this process (VmHWM), in bytes; 0 where unknown.
pub fn peak_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| l.strip_prefix("VmHWM:").map(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().unwrap_or(0)))
        })
        .unwrap_or(0)
        * 1024
}
