//! The `chattygraph` package's native module: a graph built from NumPy arrays or read
//! from any file the CLI reads, and every kernel run through the one engine trait and
//! harness (`chatty_algo::harness`), so results, checks and the report are the CLI's.
//!
//! What it is not: the Python API's shape (argument names, networkx conventions, the
//! networkx backend) lives in `chattygraph/*.py`; this layer takes plain arrays and
//! names and hands back arrays and the report.

#![deny(missing_docs)]

use std::path::PathBuf;
use std::sync::Mutex;

use chatty::{
    harness, Algorithm, BcSources, CommunityParams, DegreeKind, Distances, EngineKind, EngineSpec, ErrorKind, GraphSource, KatzParams,
    Output, Params, PrParams, Workload,
};
use chatty_algo::{Engine, GraphInfo};
use chatty_graph::{BuildOptions, EdgeArrays, Format, Graph, Naming, NoProgress, ReadOptions, VertexNames, WeightType};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyList, PyTuple};
use rayon::prelude::*;

/// The exception classes (`chattygraph/_errors.py`): `ChattyError` and its subclasses
/// that are also `ValueError`, `MemoryError`, `NotImplementedError` and `OSError`.
fn raise(kind: &str, message: String) -> PyErr {
    Python::attach(|py| {
        let class = py.import("chattygraph._errors").and_then(|m| m.getattr(kind));
        match class.and_then(|c| c.call1((message.clone(),))) {
            Ok(e) => PyErr::from_value(e),
            Err(e) => e,
        }
    })
}

/// A bad argument (`ParameterError`, a `ValueError`).
fn bad(e: impl std::fmt::Display) -> PyErr {
    raise("ParameterError", e.to_string())
}

/// An error of the front door, as the exception its kind calls for.
fn error(e: chatty::Error) -> PyErr {
    let class = match e.kind() {
        ErrorKind::Parameter => "ParameterError",
        ErrorKind::Unsupported => "UnsupportedError",
        ErrorKind::OutOfMemory => "OutOfMemoryError",
        ErrorKind::Io => "FileError",
        ErrorKind::Device => "DeviceError",
        ErrorKind::Input => "InputError",
        ErrorKind::Verification => "ChattyError",
    };
    raise(class, e.to_string())
}

/// Any layer's error through the front door's classification.
fn layer_error(e: impl Into<chatty::Error>) -> PyErr {
    error(e.into())
}

/// What holds the graph now: the graph itself, or the engine last asked for (a GPU
/// engine keeps the graph uploaded between calls).
#[allow(clippy::large_enum_variant)] // one per graph, moved only when the engine changes
enum Holder {
    Idle(Graph),
    Open {
        engine: Box<dyn Engine>,
        kind: EngineKind,
        /// The CPU engine's threads (`None`: every core).
        threads: Option<usize>,
    },
}

/// What an in-memory operation on an SSD layout says.
const ON_DISK: &str = "this graph is an SSD layout: its edges stay on disk and only engine='ssd' (or 'auto') runs on it";

impl Holder {
    /// The graph in memory (`None`: an SSD layout).
    fn graph(&mut self) -> Option<&Graph> {
        match self {
            Holder::Idle(g) => Some(g),
            Holder::Open { engine, .. } => engine.host_graph_mut().map(|g| &*g),
        }
    }
}

/// A graph in memory; kernels run on it through an engine kept between calls (a GPU
/// engine keeps the graph uploaded).
#[pyclass(name = "Graph", module = "chattygraph._chattygraph", frozen)]
struct PyGraph {
    info: GraphInfo,
    path: String,
    holder: Mutex<Option<Holder>>,
}

impl PyGraph {
    fn new(g: Graph, path: String) -> PyGraph {
        PyGraph { info: GraphInfo::of(&g), path, holder: Mutex::new(Some(Holder::Idle(g))) }
    }

    /// Runs `f` on the graph in memory; an SSD layout is an error.
    fn with_graph<T>(&self, f: impl FnOnce(&Graph) -> T) -> PyResult<T> {
        let mut holder = self.holder.lock().map_err(|_| bad("the graph was poisoned by an earlier panic"))?;
        let graph = holder.as_mut().expect("a holder is put back after every call").graph();
        Ok(f(graph.ok_or_else(|| raise("UnsupportedError", ON_DISK.into()))?))
    }
}

/// The weight type of weights named `name` (`None` when there are no weights).
fn weight_type_of(weighted: bool, name: &str) -> PyResult<WeightType> {
    match (weighted, name) {
        (false, _) => Ok(WeightType::None),
        (true, "int") => Ok(WeightType::Int),
        (true, "float") => Ok(WeightType::Float),
        (true, other) => Err(bad(format!("weight type `{other}`: expected int or float"))),
    }
}

#[pymethods]
impl PyGraph {
    /// Edges `src[i] → dst[i]` over vertices `0..n`; `weights` are raw 32-bit words
    /// of `weight_type` (`int`: u32, `float`: f32 bits); undirected graphs store each
    /// edge both ways.
    #[staticmethod]
    #[pyo3(signature = (src, dst, n, directed, weights=None, weight_type="int", dedup=false, drop_self_loops=false))]
    #[allow(clippy::too_many_arguments)]
    fn from_arrays(
        py: Python<'_>,
        src: PyReadonlyArray1<'_, u32>,
        dst: PyReadonlyArray1<'_, u32>,
        n: usize,
        directed: bool,
        weights: Option<PyReadonlyArray1<'_, u32>>,
        weight_type: &str,
        dedup: bool,
        drop_self_loops: bool,
    ) -> PyResult<PyGraph> {
        let t = weight_type_of(weights.is_some(), weight_type)?;
        let (src, dst) = (src.as_slice()?, dst.as_slice()?);
        let weights = match &weights {
            Some(w) => Some((w.as_slice()?, t)),
            None => None,
        };
        let opts = BuildOptions { symmetrize: false, dedup, drop_self_loops };
        let g = py.detach(|| EdgeArrays::new(n, src, dst, weights)?.build(directed, opts, &NoProgress)).map_err(layer_error)?;
        Ok(PyGraph::new(g, "<arrays>".into()))
    }

    /// Reads any input the CLI reads (edge lists, CSV, DIMACS, PACE, Matrix Market,
    /// SNAP, `.cgr`; gzip; a pipe), detecting the format unless given. An edge list's
    /// vertices are the ids or labels that appear (`names`), or with `keep_id_range`
    /// every id from 0 to the largest; `header` says whether its first line is one
    /// (default: decided for a CSV).
    #[staticmethod]
    /// An SSD layout (`chatty convert --layout ssd`) is opened, not read: its edges
    /// stay on disk for the SSD engine, whose index and buffers must fit `mem_budget`
    /// bytes (default: the memory available).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (path, format=None, symmetrize=false, dedup=false, drop_self_loops=false, mem_budget=None, keep_id_range=false, header=None))]
    fn read(
        py: Python<'_>,
        path: PathBuf,
        format: Option<&str>,
        symmetrize: bool,
        dedup: bool,
        drop_self_loops: bool,
        mem_budget: Option<u64>,
        keep_id_range: bool,
        header: Option<bool>,
    ) -> PyResult<PyGraph> {
        if chatty_ssd::layout::is_layout(&path) {
            if format.is_some() || symmetrize || dedup || drop_self_loops || keep_id_range || header.is_some() {
                return Err(bad(
                    "an SSD layout is read as it was written: format, symmetrize, dedup, drop_self_loops, keep_id_range and header do not apply",
                ));
            }
            let spec = EngineSpec {
                ssd: chatty::SsdSpec { budget: mem_budget, ..chatty::SsdSpec::default() },
                ..EngineSpec::new(EngineKind::Ssd)
            };
            let opened =
                py.detach(|| chatty::open(&spec, GraphSource::file(&path), &Workload::one(Algorithm::Pr), &NoProgress)).map_err(error)?;
            let info = opened.engine.graph_info();
            let holder = Holder::Open { engine: opened.engine, kind: EngineKind::Ssd, threads: None };
            return Ok(PyGraph { info, path: path.display().to_string(), holder: Mutex::new(Some(holder)) });
        }
        let format = format
            .map(|f| Format::from_name(f).ok_or_else(|| bad(format!("format `{f}`: expected one of {}", Format::NAMES))))
            .transpose()?;
        let ids = chatty_graph::read::IdOptions { keep_id_range, header };
        let opts = ReadOptions { format, build: BuildOptions { symmetrize, dedup, drop_self_loops }, ids };
        // A graph stored renumbered is read back in its input's ids: `csr()` and the
        // BFS tree read the adjacency itself, which answers must match.
        let g = py
            .detach(|| chatty_graph::read_graph(&path, opts, &NoProgress).and_then(chatty_graph::transform::in_input_order))
            .map_err(layer_error)?;
        Ok(PyGraph::new(g, path.display().to_string()))
    }

    /// Writes the graph in the format its name says (`.cgr`, `.el`, `.wel`, ...), or
    /// with `layout="ssd"` as an SSD layout of `stripes` files per side beside the
    /// index (`chatty convert --layout ssd`); a failed write leaves nothing behind.
    #[pyo3(signature = (path, layout=None, stripes=1))]
    fn write(&self, py: Python<'_>, path: PathBuf, layout: Option<&str>, stripes: usize) -> PyResult<()> {
        match layout {
            None => py.detach(|| self.with_graph(|g| chatty_graph::write_graph(g, &path, &NoProgress).map_err(layer_error)))?,
            Some("ssd") => {
                py.detach(|| self.with_graph(|g| chatty_ssd::layout::write(g, &path, stripes, &[]).map(drop).map_err(layer_error)))?
            }
            Some(other) => Err(bad(format!("layout `{other}`: expected ssd (or none for the format the name says)"))),
        }
    }

    /// Vertices.
    #[getter]
    fn n(&self) -> usize {
        self.info.n
    }

    /// Stored directed edges (an undirected edge counts twice).
    #[getter]
    fn m(&self) -> u64 {
        self.info.m
    }

    #[getter]
    fn directed(&self) -> bool {
        self.info.directed
    }

    #[getter]
    fn weighted(&self) -> bool {
        self.info.weighted
    }

    /// How the weights are stored: `none`, `int` or `float`.
    #[getter]
    fn weight_type(&self) -> &'static str {
        self.info.weight_type.name()
    }

    /// The first vertex id of the file's numbering (1 for DIMACS, PACE, Matrix Market).
    #[getter]
    fn id_base(&self) -> u32 {
        self.info.id_base
    }

    /// The input's names of the vertices (ints or strs, vertex i's at i), where they
    /// are not 0 to n-1: an edge list's ids with gaps, or its labels; else `None`.
    #[getter]
    fn names<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(names) = &self.info.names else { return Ok(None) };
        Ok(Some(match names.as_ref() {
            VertexNames::Numbers(ids) => PyList::new(py, ids)?.into_any(),
            VertexNames::Labels { .. } => PyList::new(py, (0..names.len() as u32).map(|v| names.name(v).to_string()))?.into_any(),
        }))
    }

    /// The out-edges as CSR arrays: offsets (n + 1), targets, and weights as floats
    /// (`None` when unweighted).
    #[allow(clippy::type_complexity)]
    fn csr<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<u32>>, Option<Bound<'py, PyArray1<f64>>>)> {
        let (off, targets, weights) = self.with_graph(|g| {
            let a = g.out_edges();
            let weights = a.weights().map(|_| (0..a.targets().len()).into_par_iter().map(|e| a.weight_f64(e)).collect::<Vec<f64>>());
            (a.offsets().to_vec(), a.targets().to_vec(), weights)
        })?;
        Ok((off.into_pyarray(py), targets.into_pyarray(py), weights.map(|w| w.into_pyarray(py))))
    }

    /// The BFS tree's edges in visit order (`chatty_algo::bfs::tree_edges_in_visit_order`)
    /// from `depths` (an engine's BFS answer, -1 unreached), down to `limit` levels:
    /// (parents, children). Neighbours in the graph's order, or in the order of the
    /// CSR `offsets`/`targets` given (networkx's, where it differs).
    #[pyo3(signature = (source, depths, limit, offsets=None, targets=None))]
    #[allow(clippy::type_complexity)]
    fn bfs_tree_edges<'py>(
        &self,
        py: Python<'py>,
        source: u32,
        depths: PyReadonlyArray1<'py, i64>,
        limit: u32,
        offsets: Option<PyReadonlyArray1<'py, u64>>,
        targets: Option<PyReadonlyArray1<'py, u32>>,
    ) -> PyResult<(Bound<'py, PyArray1<u32>>, Bound<'py, PyArray1<u32>>)> {
        let n = self.info.n;
        let depths = depths.as_slice()?;
        if depths.len() != n || source as usize >= n {
            return Err(bad(format!("{} depths and source {source} for a graph of {n} vertices", depths.len())));
        }
        let order = match (&offsets, &targets) {
            (Some(o), Some(t)) => Some((o.as_slice()?, t.as_slice()?)),
            (None, None) => None,
            _ => return Err(bad("offsets and targets come together")),
        };
        if let Some((off, adj)) = order {
            let ok = off.len() == n + 1
                && off.first() == Some(&0)
                && off.last() == Some(&(adj.len() as u64))
                && off.windows(2).all(|w| w[0] <= w[1])
                && adj.par_iter().all(|&v| (v as usize) < n);
            if !ok {
                return Err(bad("offsets and targets do not make a CSR over the graph's vertices"));
            }
        }
        let edges = py.detach(|| {
            let depth: Vec<u32> = depths.par_iter().map(|&d| u32::try_from(d).unwrap_or(chatty_algo::bfs::UNREACHED)).collect();
            match order {
                Some((off, adj)) => Ok(chatty_algo::bfs::tree_edges_in_visit_order(
                    |u| &adj[off[u as usize] as usize..off[u as usize + 1] as usize],
                    source,
                    &depth,
                    limit,
                )),
                None => {
                    self.with_graph(|g| chatty_algo::bfs::tree_edges_in_visit_order(|u| g.out_edges().neighbors(u), source, &depth, limit))
                }
            }
        })?;
        let (parents, children): (Vec<u32>, Vec<u32>) = edges.into_iter().unzip();
        Ok((parents.into_pyarray(py), children.into_pyarray(py)))
    }

    /// The strong components of `labels` (an `scc` answer), sinks first: every edge
    /// between two components leads from a later one to an earlier one.
    fn sinks_first<'py>(&self, py: Python<'py>, labels: PyReadonlyArray1<'py, i64>) -> PyResult<Bound<'py, PyArray1<u32>>> {
        let n = self.info.n;
        let labels = labels.as_slice()?;
        let labels: Vec<u32> = labels
            .iter()
            .map(|&l| u32::try_from(l).ok().filter(|&l| (l as usize) < n))
            .collect::<Option<_>>()
            .ok_or_else(|| bad("labels name vertices of the graph"))?;
        if labels.len() != n {
            return Err(bad(format!("{} labels for a graph of {n} vertices", labels.len())));
        }
        let order = py.detach(|| self.with_graph(|g| chatty_algo::scc::sinks_first(g, &labels)))?;
        Ok(order.into_pyarray(py))
    }

    /// The shortest-path DAG's in-lists (`chatty_algo::paths::tight_sources`) from
    /// distances `dist` (float64, inf unreached): counted in hops with `hops`, else
    /// over the graph's weights. (offsets, sources), each list by distance, then id.
    #[allow(clippy::type_complexity)]
    fn tight_sources<'py>(
        &self,
        py: Python<'py>,
        dist: PyReadonlyArray1<'py, f64>,
        hops: bool,
    ) -> PyResult<(Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<u32>>)> {
        let dist = dist.as_slice()?;
        if dist.len() != self.info.n || dist.iter().any(|&d| d.is_nan() || d < 0.0) {
            return Err(bad(format!(
                "{} distances for a graph of {} vertices (each a number at least 0, or inf)",
                dist.len(),
                self.info.n
            )));
        }
        let whole = |d: f64| if d.is_finite() { d as u64 } else { u64::MAX };
        let output = match (hops, self.info.weight_type) {
            (true, _) => Output::Depths(dist.iter().map(|&d| if d.is_finite() { d as u32 } else { chatty_algo::bfs::UNREACHED }).collect()),
            (false, WeightType::Float) => Output::Distances(Distances::Float(dist.to_vec())),
            (false, _) => Output::Distances(Distances::Int(dist.iter().map(|&d| whole(d)).collect())),
        };
        let (offsets, sources) = py.detach(|| self.with_graph(|g| chatty_algo::paths::tight_sources(g, &output)))?.map_err(layer_error)?;
        Ok((offsets.into_pyarray(py), sources.into_pyarray(py)))
    }

    fn __repr__(&self) -> String {
        let i = &self.info;
        format!(
            "chattygraph.Graph(n={}, m={}, {}, {})",
            i.n,
            i.m,
            if i.directed { "directed" } else { "undirected" },
            if i.weighted { "weighted" } else { "unweighted" }
        )
    }
}

/// The engine `spec` asks for, holding the graph (moved from whichever held it), for
/// `work`. The open one is kept when it is the one asked for, or under `auto` a GPU
/// engine; an SSD layout stays on the SSD engine.
fn engine_for(slot: &mut Option<Holder>, spec: &EngineSpec, work: &Workload) -> PyResult<()> {
    if let Some(Holder::Open { kind, threads, .. }) = slot.as_ref() {
        // Under auto the CPU engine is decided again: more work may now start the GPU.
        let keep = match spec.kind {
            EngineKind::Auto => *kind != EngineKind::Cpu,
            asked => asked == *kind && (asked != EngineKind::Cpu || spec.threads == *threads),
        };
        if keep {
            return Ok(());
        }
        if *kind == EngineKind::Ssd {
            return Err(raise("UnsupportedError", ON_DISK.into()));
        }
    }
    if spec.kind == EngineKind::Ssd {
        return Err(raise(
            "UnsupportedError",
            "engine='ssd' runs on an SSD layout: write one with g.write('NAME.ssd', layout='ssd') \
             (or `chatty convert GRAPH -o NAME.ssd --layout ssd`) and open it with chattygraph.read"
                .into(),
        ));
    }
    let mut held = match slot.take().expect("a holder is present") {
        Holder::Idle(g) => Some(g),
        Holder::Open { engine, .. } => engine.into_graph(),
    };
    match chatty::open_held(spec, &mut held, work) {
        Ok(o) => {
            let kind = o.choice.as_ref().map_or(spec.kind, |c| c.engine);
            *slot = Some(Holder::Open { engine: o.engine, kind, threads: spec.threads });
            Ok(())
        }
        Err(e) => {
            // The graph stayed in `held`, for the next call.
            *slot = held.map(Holder::Idle);
            Err(error(e))
        }
    }
}

fn algorithm(name: &str) -> PyResult<Algorithm> {
    let names = || Algorithm::ALL.map(Algorithm::name).join(", ");
    Algorithm::from_name(name).ok_or_else(|| bad(format!("algorithm `{name}`: expected one of {}", names())))
}

/// The answer as a NumPy array: BFS depths as int64 (-1 unreached), SSSP distances
/// as float64 (inf unreached), labels, triangles and core numbers as int64, values as
/// float64; HITS's as a tuple (hubs, authorities) of float64 arrays.
fn answer(py: Python<'_>, o: Output) -> PyResult<Bound<'_, PyAny>> {
    Ok(match o {
        Output::Depths(d) => d
            .into_par_iter()
            .map(|x| if x == chatty_algo::bfs::UNREACHED { -1i64 } else { x as i64 })
            .collect::<Vec<_>>()
            .into_pyarray(py)
            .into_any(),
        Output::Distances(Distances::Int(d)) => {
            d.into_par_iter().map(|x| if x == u64::MAX { f64::INFINITY } else { x as f64 }).collect::<Vec<_>>().into_pyarray(py).into_any()
        }
        Output::Distances(Distances::Float(d)) => d.into_pyarray(py).into_any(),
        Output::Values(v) => v.into_pyarray(py).into_any(),
        Output::Labels(l) | Output::Cores(l) | Output::Communities { labels: l, .. } => {
            l.into_par_iter().map(i64::from).collect::<Vec<_>>().into_pyarray(py).into_any()
        }
        Output::Triangles(t) => t.into_par_iter().map(|x| x as i64).collect::<Vec<_>>().into_pyarray(py).into_any(),
        Output::Hits { hubs, authorities } => PyTuple::new(py, [hubs.into_pyarray(py), authorities.into_pyarray(py)])?.into_any(),
    })
}

/// What [`run`] returns: the answer, the report, and the parents where asked for.
type RunAnswer<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>, Option<Bound<'py, PyArray1<i64>>>);

/// Runs one kernel and returns (answer, report, parents): the report is the CLI's
/// `--json` object as a dict; parents (bfs and sssp with `parents`, else `None`) as
/// int64, -1 for none. `sources` is BC's: `None` one source, a count, or `"all"`.
/// Engines are opened by the front door (`chatty::open`), parameters checked by the
/// harness, exactly as for `chatty run`.
#[pyfunction]
#[pyo3(signature = (graph, algorithm_name, engine="auto", threads=None, source=None, seed=None, delta=None,
                    damping=0.85, tol=1e-6, max_iter=100, personalization=None, sources=None, x=None, top=10, parents=false,
                    katz_alpha=0.1, katz_beta=1.0, normalized=true, degree="total", wf_improved=true, resolution=1.0,
                    threshold=1e-7, max_level=None, weighted=false))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    graph: &PyGraph,
    algorithm_name: &str,
    engine: &str,
    threads: Option<usize>,
    source: Option<u32>,
    seed: Option<u64>,
    delta: Option<f64>,
    damping: f64,
    tol: f64,
    max_iter: u32,
    personalization: Option<PyReadonlyArray1<'py, f64>>,
    sources: Option<Bound<'py, PyAny>>,
    x: Option<PyReadonlyArray1<'py, f64>>,
    top: usize,
    parents: bool,
    katz_alpha: f64,
    katz_beta: f64,
    normalized: bool,
    degree: &str,
    wf_improved: bool,
    resolution: f64,
    threshold: f64,
    max_level: Option<u32>,
    weighted: bool,
) -> PyResult<RunAnswer<'py>> {
    let alg = algorithm(algorithm_name)?;
    let kind = EngineKind::from_name(engine)
        .filter(|&k| k != EngineKind::Mpi)
        .ok_or_else(|| bad(format!("engine `{engine}`: expected auto, cpu, gpu or ssd")))?;
    let defaults = Params::default();
    let p = Params {
        source,
        seed: seed.unwrap_or(defaults.seed),
        delta,
        pr: PrParams { damping, tolerance: tol, max_iters: max_iter, ..PrParams::default() },
        katz: KatzParams { alpha: katz_alpha, beta: katz_beta, normalized },
        degree: DegreeKind::from_name(degree).ok_or_else(|| bad(format!("degree `{degree}`: expected in, out or total")))?,
        wf_improved,
        community: CommunityParams { resolution, threshold, max_level },
        bc_sources: bc_sources(sources.as_ref())?,
        x: x.map(|x| x.as_slice().map(<[f64]>::to_vec)).transpose()?,
        personalization: personalization.map(|p| p.as_slice().map(<[f64]>::to_vec)).transpose()?,
        direction: defaults.direction,
        parents,
        weighted,
    };
    let spec = EngineSpec { threads: threads.map(|t| checked_threads(py, t)).transpose()?, ..EngineSpec::new(kind) };
    let work = Workload::new(vec![alg], &p);
    let mut slot = graph.holder.lock().map_err(|_| bad("the graph was poisoned by an earlier panic"))?;
    engine_for(&mut slot, &spec, &work)?;
    let Some(Holder::Open { engine, .. }) = slot.as_mut() else { unreachable!("engine_for opened an engine") };
    let (report, json) = py
        .detach(|| -> chatty::Result<(harness::Report, String)> {
            let opts = harness::Options { trials: 1, verify: false, against: None };
            let report = harness::run(engine.as_mut(), alg, &p, &opts, |_| {})?;
            // Python numbers vertices from 0 (`Graph.nodes` holds the names).
            let naming = match &graph.info.names {
                Some(names) => Naming::Names(names.clone()),
                None => Naming::From(0),
            };
            let ctx = harness::Context {
                path: &graph.path,
                load_seconds: 0.0,
                started: None,
                commit: env!("CARGO_PKG_VERSION"),
                top,
                naming: &naming,
            };
            let json = report.json(&ctx).to_string();
            Ok((report, json))
        })
        .map_err(error)?;
    let report_dict = py.import("json")?.call_method1("loads", (json,))?;
    let parents = report.parents.map(|p| {
        p.into_par_iter().map(|v| if v == chatty_algo::paths::NO_PARENT { -1 } else { i64::from(v) }).collect::<Vec<_>>().into_pyarray(py)
    });
    Ok((answer(py, report.last.output)?, report_dict, parents))
}

/// BC's sources from Python: `None` one source, a count, `"all"`, or vertex ids.
fn bc_sources(sources: Option<&Bound<'_, PyAny>>) -> PyResult<BcSources> {
    Ok(match sources {
        None => BcSources::One,
        Some(s) if s.extract::<String>().is_ok_and(|s| s == "all") => BcSources::All,
        Some(s) => match s.extract::<usize>() {
            Ok(k) => BcSources::Random(k),
            Err(_) => {
                BcSources::List(s.extract::<Vec<u32>>().map_err(|_| bad("sources: a count of random sources, vertex ids, or \"all\""))?)
            }
        },
    })
}

/// A `threads=` count as the front door caps it, warning where it was capped.
fn checked_threads(py: Python<'_>, threads: usize) -> PyResult<usize> {
    let (threads, note) = chatty::process::threads("threads", threads).map_err(error)?;
    if let Some(note) = note {
        warn(py, &note)?;
    }
    Ok(threads)
}

/// Whether a GPU the engine can use is present (the CUDA driver loaded, a device).
#[pyfunction]
fn gpu_count() -> usize {
    chatty_gpu::Gpu::count()
}

/// Reads a networkx adjacency (`G._adj`, a dict of dicts) into edge arrays, with
/// `index` mapping each node to its id (`None`: the nodes are the ids 0..n-1 in
/// order), in one pass without building Python lists.
/// Returns (src, dst, weights or None, whether a weight was a Python float); a
/// missing weight attribute is `default`. networkx sums float weights into float
/// distances, integers into integers: the backend answers alike.
#[pyfunction]
#[pyo3(signature = (adj, index, weight=None, default=1.0))]
#[allow(clippy::type_complexity)]
fn edges_from_adjacency<'py>(
    py: Python<'py>,
    adj: &Bound<'py, PyDict>,
    index: Option<&Bound<'py, PyDict>>,
    weight: Option<&str>,
    default: f64,
) -> PyResult<(Bound<'py, PyArray1<u32>>, Bound<'py, PyArray1<u32>>, Option<Bound<'py, PyArray1<f64>>>, bool)> {
    let mut src = Vec::new();
    let mut dst = Vec::new();
    let mut weights = weight.map(|_| Vec::new());
    let mut floats = false;
    let n = adj.len();
    let id = |node: &Bound<'py, PyAny>| -> PyResult<u32> {
        let id: u32 = match index {
            Some(index) => index.get_item(node)?.ok_or_else(|| bad("a node is missing from the index"))?.extract()?,
            None => node.extract()?,
        };
        if id as usize >= n {
            return Err(bad(format!("node {id} is not below the node count {n}")));
        }
        Ok(id)
    };
    for (u, nbrs) in adj.iter() {
        let u = id(&u)?;
        let nbrs = nbrs.cast_into::<PyDict>()?;
        for (v, attrs) in nbrs.iter() {
            let v = id(&v)?;
            src.push(u);
            dst.push(v);
            if let (Some(w), Some(name)) = (weights.as_mut(), weight) {
                let value = match attrs.cast_into::<PyDict>()?.get_item(name)? {
                    Some(x) => {
                        floats |= x.is_instance_of::<PyFloat>();
                        x.extract::<f64>()?
                    }
                    None => default,
                };
                w.push(value);
            }
        }
    }
    Ok((src.into_pyarray(py), dst.into_pyarray(py), weights.map(|w| w.into_pyarray(py)), floats))
}

/// A front-door note as a Python `RuntimeWarning`.
fn warn(py: Python<'_>, note: &chatty::Note) -> PyResult<()> {
    let warning = std::ffi::CString::new(note.to_string()).expect("no NUL in a note");
    PyErr::warn(py, &py.get_type::<pyo3::exceptions::PyRuntimeWarning>(), &warning, 1)
}

#[pymodule]
fn _chattygraph(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The CLI's allocator settings, so that a kernel runs alike from either front end.
    if let Some(note) = chatty::process::configure(false).map_err(error)? {
        warn(m.py(), &note)?;
    }
    m.add_class::<PyGraph>()?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_count, m)?)?;
    m.add_function(wrap_pyfunction!(edges_from_adjacency, m)?)?;
    Ok(())
}
