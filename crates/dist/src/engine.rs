//! [`DistEngine`]: the engine trait over the ranks of an MPI job.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::time::Instant;

use chatty_algo::pool::{run_on_pool, WaitPolicy};
use chatty_algo::{
    Algorithm, Breakdown, Engine, EngineInfo, Error, GraphInfo, HostGraph, Output, Params, PrMethod, Result, Transfer, Trial,
};
use chatty_graph::{Progress, WeightType};
use rayon::prelude::*;
use serde::Serialize;

use crate::comm::Comm;
use crate::graph::{Distribute, LocalGraph};
use crate::halo::Halo;
use crate::multicast::{Distribution, Multicast};
use crate::push::PushRows;
use crate::{agree, bc, bfs, pr, sssp, wcc, DistError};

/// Whether MPI is running: from an engine's successful open until [`finish`]. An
/// error in between must stop every rank ([`abort_job`]): finalising instead would
/// wait for ranks that wait in a collective this one will never enter.
static RUNNING: AtomicBool = AtomicBool::new(false);

/// Stops the whole job with `code` if MPI is running; returns otherwise.
pub fn abort_job(code: i32) {
    if RUNNING.load(SeqCst) {
        // SAFETY: MPI is initialised and not finalised while RUNNING is set.
        unsafe { mpi::ffi::MPI_Abort(mpi::ffi::RSMPI_COMM_WORLD, code) };
    }
}

/// Finalises MPI after a successful run (every rank calls it once its work is done);
/// does nothing if no engine started it.
pub fn finish() {
    if RUNNING.swap(false, SeqCst) {
        // SAFETY: MPI is initialised (the universe was leaked by `open`) and no MPI
        // call is in flight: the engine has been dropped.
        unsafe { mpi::ffi::MPI_Finalize() };
    }
}

/// The halos and push rows a kernel needs, built by `prepare` (collectively).
#[derive(Default)]
struct Views {
    /// Readers along in-edges (every kernel but SpMV).
    forward: Option<Halo>,
    /// Readers along out-edges, directed graphs (BC's backward sweep).
    backward: Option<Halo>,
    /// Readers along both, directed graphs (WCC).
    both: Option<Halo>,
    push: Option<PushRows>,
}

/// How the engine is started.
#[derive(Clone, Debug)]
pub struct Options {
    /// How the ranks get their rows.
    pub distribute: Distribute,
    /// Where and how `Distribute::Multicast` sends the file.
    pub multicast: Option<Multicast>,
    /// `--partition bfs`: the vertices renumbered in breadth-first order (by rank 0,
    /// before it sends the rows, or on every rank from the mapped file); answers come
    /// back in the file's ids.
    pub bfs_order: bool,
    /// BC: each rank runs the CPU kernel on the whole graph for its share of the
    /// sources, and the scores are summed.
    pub split_sources: bool,
}

/// The multi-process engine: this rank's part of the graph and the communicator.
pub struct DistEngine {
    comm: Comm,
    graph: LocalGraph,
    /// The file this rank maps (its host's copy under `--distribute multicast`).
    path: PathBuf,
    /// What `--distribute multicast` did.
    distribution: Option<Distribution>,
    /// The copy it received here, removed with the engine.
    _copy: Option<chatty_graph::file::Pending>,
    /// `--partition bfs`: each file id's id in the engine (the ranks' rows are renumbered).
    new_id: Option<Vec<u32>>,
    views: Views,
    delta: f64,
    threads: usize,
    distribute: Distribute,
    split_sources: bool,
    /// The whole graph, for BC with split sources (read by `prepare`).
    whole: Option<chatty_graph::Graph>,
    /// Time spent gathering answers during the current trial.
    gather_nanos: AtomicU64,
    notes: Vec<String>,
}

/// The figures of one trial in the report's `detail`.
#[derive(Serialize)]
struct DistTrial {
    ranks: usize,
    /// Vertices that changed on their owner and had readers, summed over supersteps.
    vertices_updated: u64,
    /// Vertex values sent (a dense message counts every boundary vertex in it).
    vertices_sent: u64,
    exchanges: u64,
    gather_seconds: f64,
}

/// Starts MPI (at least threads serialized: one thread at a time calls it; multiple,
/// where MPI provides it, for the link of `--mode gmpi`) and checks that every
/// rank was given the same `flags` (a digest of the command line's parameters). From
/// here until [`finish`], an error on a rank must stop the job ([`abort_job`]); a
/// panicking rank stops it itself.
pub fn start(flags: u64) -> Result<Comm, DistError> {
    let (universe, level) = mpi::initialize_with_threading(mpi::Threading::Multiple)
        .ok_or_else(|| DistError::Mpi("MPI is already initialised in this process".into()))?;
    if level < mpi::Threading::Serialized {
        return Err(DistError::Mpi(format!("this MPI provides thread level {level:?}; the engine needs Serialized")));
    }
    let comm = Comm::new(universe.world(), level);
    // MPI outlives the engine: `finish` finalises it after the run, `abort_job` stops
    // the job on an error (dropping the universe would finalise now).
    std::mem::forget(universe);
    RUNNING.store(true, SeqCst);
    // A panicking rank would wait in MPI_Finalize while unwinding, and the others in
    // their next collective: report it, then stop the job.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        report(info);
        abort_job(101);
    }));
    let (lo, hi) = comm.min_max_u64(flags);
    if lo != hi {
        return Err(DistError::Inconsistent("the ranks were started with different parameters".into()));
    }
    Ok(comm)
}

impl DistEngine {
    /// Starts MPI ([`start`]), then opens and checks `path` on every rank (or on rank
    /// 0, which sends the rows: `distribute`), and checks that every rank was given the
    /// same graph.
    pub fn open(path: &Path, flags: u64, options: Options) -> Result<DistEngine, DistError> {
        let distribute = options.distribute;
        let comm = start(flags)?;
        let (path, distribution, copy) = match (distribute, &options.multicast) {
            (Distribute::Multicast, Some(m)) => {
                let (local, done, copy) = crate::multicast::distribute(&comm, path, m)?;
                (local, Some(done), copy)
            }
            (Distribute::Multicast, None) => return Err(DistError::Distribute("--distribute multicast needs its group and key".into())),
            _ => (path.to_path_buf(), None, None),
        };
        let path = path.as_path();
        let mut new_id = None;
        let graph = match distribute {
            Distribute::Shared | Distribute::Multicast => match options.bfs_order {
                true => {
                    let (graph, ids) = LocalGraph::open_renumbered(&comm, path)?;
                    new_id = Some(ids);
                    graph
                }
                false => LocalGraph::open(&comm, path)?,
            },
            Distribute::Mpi => {
                let (graph, ids) = LocalGraph::receive(&comm, path, options.bfs_order)?;
                new_id = ids;
                graph
            }
        };
        let threads = rayon::current_num_threads();
        let cores = std::thread::available_parallelism().map_or(threads, |c| c.get());
        let notes = if cores < threads {
            vec![format!(
                "rank {} may run on {cores} cores but runs {threads} threads: start mpirun with --bind-to none (or --map-by slot:PE={threads})",
                comm.rank()
            )]
        } else {
            Vec::new()
        };
        Ok(DistEngine {
            comm,
            graph,
            path: path.to_path_buf(),
            distribution,
            _copy: copy,
            new_id,
            views: Views::default(),
            delta: 1.0,
            threads,
            distribute,
            split_sources: options.split_sources,
            whole: None,
            gather_nanos: AtomicU64::new(0),
            notes,
        })
    }

    /// This process's rank (0 speaks for the job).
    pub fn rank(&self) -> usize {
        self.comm.rank()
    }

    fn halo<'a>(&'a self, which: &'a Option<Halo>) -> &'a Halo {
        which.as_ref().or(self.views.forward.as_ref()).expect("prepare built the halos")
    }

    fn prepare_views(&mut self, alg: Algorithm) -> std::result::Result<(), DistError> {
        if alg == Algorithm::Bc && self.split_sources {
            if self.whole.is_none() {
                self.whole = Some(self.read_whole()?);
            }
            return Ok(());
        }
        let (g, comm) = (&self.graph, &self.comm);
        let pushes = matches!(alg, Algorithm::Bfs | Algorithm::Sssp | Algorithm::Bc) || (alg == Algorithm::Wcc && !g.directed);
        let needs_forward = alg != Algorithm::Spmv && self.views.forward.is_none();
        let needs_push = pushes && self.views.push.is_none();
        let needs_both = g.directed && alg == Algorithm::Wcc && self.views.both.is_none();
        // A pass over the rank's in-edges: only when a view built from it is missing.
        let in_ghosts = if needs_forward || needs_push || needs_both { g.ghosts(g.inc()) } else { Vec::new() };
        if needs_forward {
            self.views.forward = Some(Halo::new(comm, &g.ranges, &in_ghosts)?);
        }
        if needs_push {
            self.views.push = Some(PushRows::new(g, in_ghosts.clone()));
        }
        if g.directed && alg == Algorithm::Bc && self.views.backward.is_none() {
            self.views.backward = Some(Halo::new(comm, &g.ranges, &g.ghosts(&g.out))?);
        }
        if needs_both {
            let mut both = [in_ghosts, g.ghosts(&g.out)].concat();
            both.sort_unstable();
            both.dedup();
            self.views.both = Some(Halo::new(comm, &g.ranges, &both)?);
        }
        if alg == Algorithm::Sssp {
            let (weights, negative) = local_weights(g);
            let [total, negative] = comm.sum_f64([weights, negative]);
            if negative > 0.0 {
                return Err(DistError::Inconsistent("SSSP needs non-negative weights; this graph has negative or NaN weights".into()));
            }
            self.delta = (total / g.m.max(1) as f64).max(1.0);
        }
        Ok(())
    }

    fn run_kernel(
        &self,
        alg: Algorithm,
        p: &Params,
        sources: &[u32],
        progress: &dyn Progress,
    ) -> std::result::Result<(Output, u64, Option<f64>), DistError> {
        let (g, comm, v) = (&self.graph, &self.comm, &self.views);
        let push = || v.push.as_ref().expect("prepare built the push rows");
        Ok(match alg {
            Algorithm::Bfs => {
                let (d, levels) = bfs::bfs(g, comm, self.halo(&None), push(), sources[0], p.direction)?;
                (Output::Depths(self.gather(&d)?), levels, None)
            }
            Algorithm::Sssp => {
                let (d, rounds) = sssp::sssp(g, comm, self.halo(&None), push(), sources[0], p.delta.unwrap_or(self.delta))?;
                let d = match d {
                    chatty_algo::Distances::Int(d) => chatty_algo::Distances::Int(self.gather(&d)?),
                    chatty_algo::Distances::Float(d) => chatty_algo::Distances::Float(self.gather(&d)?),
                };
                (Output::Distances(d), rounds, None)
            }
            Algorithm::Pr => {
                let (s, iters, residual) = pr::pagerank(g, comm, self.halo(&None), p.pr, p.personalization.as_deref())?;
                (Output::Values(self.gather_owned(&s)?), iters, Some(residual))
            }
            Algorithm::Wcc => {
                let push = if g.directed { None } else { v.push.as_ref() };
                let (labels, rounds) = wcc::wcc(g, comm, self.halo(&v.both), push)?;
                (Output::Labels(self.gather(&labels)?), rounds, None)
            }
            Algorithm::Bc if self.split_sources => {
                let whole = self.whole.as_ref().expect("prepare read the whole graph");
                let mine: Vec<u32> = sources.iter().skip(comm.rank()).step_by(comm.size()).copied().collect();
                let scores = chatty_algo::bc::bc(whole, &mine, progress).map_err(|e| DistError::Inconsistent(e.to_string()))?;
                (Output::Values(self.download(|| comm.sum_f64s(&scores))), sources.len() as u64, None)
            }
            Algorithm::Bc => {
                let halos = bc::BcHalos { forward: self.halo(&None), backward: v.backward.as_ref() };
                let s = bc::bc(g, comm, halos, push(), sources, progress)?;
                (Output::Values(self.gather(&s)?), sources.len() as u64, None)
            }
            Algorithm::Spmv => {
                let y = pr::spmv(g, &chatty_algo::spmv_x(g.n, p));
                (Output::Values(self.gather_owned(&y)?), 1, None)
            }
            Algorithm::Tc
            | Algorithm::Clustering
            | Algorithm::Kcore
            | Algorithm::Scc
            | Algorithm::Lpa
            | Algorithm::Eigenvector
            | Algorithm::Degree
            | Algorithm::Closeness
            | Algorithm::Katz
            | Algorithm::Hits
            | Algorithm::Louvain
            | Algorithm::Leiden => {
                unreachable!("refused by prepare")
            }
        })
    }

    /// The owned entries of an n-sized array, from every rank, in vertex order (the
    /// trial's download, timed apart from the kernel).
    fn gather<T: bytemuck::Pod + mpi::datatype::Equivalence + Send + Sync>(&self, all: &[T]) -> std::result::Result<Vec<T>, DistError> {
        let own = self.graph.own();
        self.gather_owned(&all[own.start as usize..own.end as usize])
    }

    /// The whole graph on this rank in the engine's ids (collective): the shared path
    /// mapped (and renumbered for `--partition bfs`), or the ranks' rows gathered when
    /// only rank 0 has the file.
    fn read_whole(&self) -> std::result::Result<chatty_graph::Graph, DistError> {
        if self.distribute == Distribute::Mpi {
            return self.graph.gather_whole(&self.comm);
        }
        let g = chatty_graph::cgr::load(&self.path).map_err(DistError::Graph)?;
        match &self.new_id {
            None => Ok(g),
            Some(ids) => Ok(chatty_graph::transform::relabel(&g, ids).map_err(DistError::Graph)?.with_id_base(g.id_base())),
        }
    }

    /// [`DistEngine::gather`] of an array of the owned entries only.
    fn gather_owned<T: bytemuck::Pod + mpi::datatype::Equivalence + Send + Sync>(
        &self,
        owned: &[T],
    ) -> std::result::Result<Vec<T>, DistError> {
        self.download(|| self.comm.all_gather(owned))
    }

    /// Runs `f`, which brings the answer to every rank, timed as the trial's download.
    fn download<R>(&self, f: impl FnOnce() -> R) -> R {
        let start = Instant::now();
        let answer = f();
        self.gather_nanos.fetch_add(start.elapsed().as_nanos() as u64, SeqCst);
        answer
    }

    /// The parameters and sources of a run in the engine's ids (`--partition bfs`
    /// renumbers; per-vertex inputs are moved to their vertices' new ids).
    fn to_engine_ids<'a>(&self, p: &'a Params, sources: &[u32]) -> (std::borrow::Cow<'a, Params>, Vec<u32>) {
        let Some(ids) = &self.new_id else { return (std::borrow::Cow::Borrowed(p), sources.to_vec()) };
        let moved = |values: &Vec<f64>| {
            let mut out = vec![0.0; values.len()];
            for (v, &x) in values.iter().enumerate() {
                out[ids[v] as usize] = x;
            }
            out
        };
        let p = Params { x: p.x.as_ref().map(moved), personalization: p.personalization.as_ref().map(moved), ..p.clone() };
        (std::borrow::Cow::Owned(p), sources.iter().map(|&s| ids[s as usize]).collect())
    }

    /// An answer in the file's ids. WCC labels name the smallest file id of their
    /// component, as every engine's do.
    fn to_file_ids(&self, output: Output) -> Output {
        let Some(ids) = &self.new_id else { return output };
        match output {
            Output::Depths(d) => Output::Depths(back(ids, &d)),
            Output::Distances(chatty_algo::Distances::Int(d)) => Output::Distances(chatty_algo::Distances::Int(back(ids, &d))),
            Output::Distances(chatty_algo::Distances::Float(d)) => Output::Distances(chatty_algo::Distances::Float(back(ids, &d))),
            Output::Values(v) => Output::Values(back(ids, &v)),
            Output::Hits { hubs, authorities } => Output::Hits { hubs: back(ids, &hubs), authorities: back(ids, &authorities) },
            Output::Triangles(t) => Output::Triangles(back(ids, &t)),
            Output::Cores(c) => Output::Cores(back(ids, &c)),
            Output::Labels(l) => Output::Labels(smallest_file_ids(ids, &l)),
            Output::Communities { labels, modularity } => Output::Communities { labels: smallest_file_ids(ids, &labels), modularity },
        }
    }

    fn halos(&self) -> impl Iterator<Item = &Halo> {
        [&self.views.forward, &self.views.backward, &self.views.both].into_iter().flatten()
    }
}

/// The sum of this rank's out-edge weights and how many are negative or NaN.
fn local_weights(g: &LocalGraph) -> (f64, f64) {
    let out = &g.out;
    let edges = out.offsets()[0] as usize..out.offsets()[out.offsets().len() - 1] as usize;
    match (out.raw_weights(), g.weight_type) {
        (Some(w), WeightType::Int) => (w[edges].iter().map(|&w| w as f64).sum(), 0.0),
        (Some(w), WeightType::Float) => {
            let w = &w[edges];
            (
                w.iter().map(|&w| f32::from_bits(w) as f64).sum(),
                w.iter().filter(|&&w| f32::from_bits(w).is_nan() || f32::from_bits(w) < 0.0).count() as f64,
            )
        }
        _ => (edges.len() as f64, 0.0),
    }
}

impl Engine for DistEngine {
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }

    fn info(&self) -> EngineInfo {
        EngineInfo {
            name: "mpi",
            devices: vec![format!("{} MPI ranks x {} threads", self.comm.size(), self.threads)],
            trial_timing: "wall time of the kernel on rank 0, exchanges included, gathering the answer not",
        }
    }

    fn graph_info(&self) -> GraphInfo {
        let g = &self.graph;
        GraphInfo {
            n: g.n,
            m: g.m,
            directed: g.directed,
            weighted: g.weight_type != WeightType::None,
            weight_type: g.weight_type,
            id_base: g.id_base,
            order: None,
            names: None,
        }
    }

    fn out_degree(&self, v: u32) -> u64 {
        self.graph.out_degree(self.new_id.as_ref().map_or(v, |ids| ids[v as usize]))
    }

    fn prepare(&mut self, alg: Algorithm) -> Result<()> {
        if !alg.on_every_engine() {
            return Err(Error::Unsupported(format!("the MPI engine has no {} kernel yet; run it on one machine's CPU engine", alg.name())));
        }
        let prepared = self.prepare_views(alg);
        agree(&self.comm, prepared).map_err(Error::engine)
    }

    fn default_delta(&self) -> Option<f64> {
        Some(self.delta)
    }

    fn run(&self, alg: Algorithm, p: &Params, sources: &[u32], progress: &dyn Progress) -> Result<Trial> {
        if matches!(alg, Algorithm::Pr | Algorithm::Bc) && p.weighted {
            return Err(Error::Unsupported(format!("weighted {} runs on one machine's CPU engine", alg.name())));
        }
        if alg == Algorithm::Pr && p.pr.method != PrMethod::Jacobi {
            return Err(Error::Unsupported(format!(
                "--pr-method {} runs on the CPU engine (the MPI engine iterates as jacobi)",
                p.pr.method.name()
            )));
        }
        self.comm.take_traffic();
        for h in self.halos() {
            h.take_counts();
        }
        self.gather_nanos.store(0, SeqCst);
        let start = Instant::now();
        // The kernel runs on a rayon worker: its many small parallel steps (thousands
        // of levels on road graphs) then start inline instead of waking the pool from
        // outside each time. Its MPI calls come from that one thread. Idle workers sleep
        // between loops whatever `CHATTY_WAIT_POLICY` says (regions' barriers still follow
        // it): ranks sharing a host would each keep a pool's worth of cores looking.
        let (p, internal) = self.to_engine_ids(p, sources);
        let outcome = run_on_pool(WaitPolicy::Passive, || self.run_kernel(alg, &p, &internal, progress));
        let (output, iterations, residual) = outcome.map_err(Error::engine)?;
        let output = self.to_file_ids(output);
        let gather_seconds = self.gather_nanos.load(SeqCst) as f64 * 1e-9;
        let seconds = start.elapsed().as_secs_f64() - gather_seconds;
        let (exchanges, bytes) = self.comm.take_traffic();
        let (updated, sent) = self.halos().map(Halo::take_counts).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        let [exchanges, bytes, updated, sent] = self.comm.sum_u64([exchanges, bytes, updated, sent]);
        let detail = DistTrial { ranks: self.comm.size(), vertices_updated: updated, vertices_sent: sent, exchanges, gather_seconds };
        Ok(Trial {
            output,
            sources: sources.to_vec(),
            iterations,
            seconds,
            breakdown: Breakdown { download_seconds: gather_seconds, ..Breakdown::default() },
            residual,
            transfers: vec![Transfer { transport: "mpi".into(), exchanges, bytes }],
            detail: serde_json::to_value(detail).map_err(Error::engine)?,
        })
    }

    fn trial_lines(&self, trial: &Trial) -> Vec<String> {
        let d = &trial.detail;
        let bytes: u64 = trial.transfers.iter().map(|t| t.bytes).sum();
        vec![format!(
            "MPI: {} ranks, {} exchanges, {:.1} MB sent; {} boundary vertices updated, {} values sent",
            d["ranks"],
            d["exchanges"],
            bytes as f64 / 1e6,
            d["vertices_updated"],
            d["vertices_sent"]
        )]
    }

    fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    fn reference_graph(&self) -> Result<HostGraph<'_>> {
        // Every rank verifies (they run the harness in lockstep), so each reads the
        // whole graph, in the file's ids.
        let whole = match &self.whole {
            Some(g) => HostGraph::Borrowed(g),
            None => HostGraph::Owned(Box::new(self.read_whole().map_err(Error::engine)?)),
        };
        let Some(ids) = &self.new_id else { return Ok(whole) };
        let graph_error = |e| Error::engine(DistError::Graph(e));
        let old_id = chatty_graph::transform::inverse_permutation(ids).map_err(graph_error)?;
        let renumbered = chatty_graph::transform::relabel(&whole, &old_id).map_err(graph_error)?;
        Ok(HostGraph::Owned(Box::new(renumbered.with_id_base(self.graph.id_base))))
    }

    fn reference_name(&self) -> String {
        format!("{} read whole on every rank", self.path.display())
    }

    fn detail(&self) -> serde_json::Value {
        let g = &self.graph;
        let own = g.own();
        let ghosts = self.views.forward.as_ref().map_or(0, |h| h.ghosts().count() as u64);
        let [max_edges, max_ghosts] = [g.out.num_edges(), ghosts].map(|x| self.comm.min_max_u64(x).1);
        serde_json::json!({
            "ranks": self.comm.size(),
            "threads_per_rank": self.threads,
            "distribute": format!("{:?}", self.distribute).to_lowercase(),
            "multicast": self.distribution,
            "split_sources": self.split_sources,
            "rank0_vertices": own.len(),
            "max_rank_edges": max_edges,
            "max_rank_ghosts": max_ghosts,
        })
    }
}

/// Per-vertex values by file id, from values by engine id (`new_id`: file id → engine id).
fn back<T: Copy + Send + Sync>(new_id: &[u32], values: &[T]) -> Vec<T> {
    new_id.par_iter().map(|&i| values[i as usize]).collect()
}

/// Labels `l` in the engine's ids, each replaced by the smallest file id carrying it.
fn smallest_file_ids(ids: &[u32], l: &[u32]) -> Vec<u32> {
    let mut smallest = vec![u32::MAX; l.len()];
    for (v, &i) in ids.iter().enumerate() {
        let label = l[i as usize] as usize;
        smallest[label] = smallest[label].min(v as u32);
    }
    ids.iter().map(|&i| smallest[l[i as usize] as usize]).collect()
}
