//! The `chattygraph` package's native module: a graph built from NumPy arrays or read
//! from any file the CLI reads, and every kernel run through the one engine trait and
//! harness (`chatty_algo::harness`), so results, checks and the report are the CLI's.
//!
//! What it is not: the Python API's shape (argument names, networkx conventions, the
//! networkx backend) lives in `chattygraph/*.py`; this layer takes plain arrays and
//! names and hands back arrays and the report.

use std::path::PathBuf;
use std::sync::Mutex;

use chatty_algo::{harness, Algorithm, BcSources, CpuEngine, Distances, Engine, GraphInfo, Output, Params, PrParams};
use chatty_gpu::{Gpu, GpuEngine};
use chatty_graph::{BuildOptions, EdgeArrays, Format, Graph, NoProgress, ReadOptions, WeightType};
use chatty_ssd::SsdEngine;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;

create_exception!(chattygraph, ChattyError, PyException, "An error ChattyGraph reports: bad input, a failed engine, no GPU.");

fn error(e: impl std::fmt::Display) -> PyErr {
    ChattyError::new_err(e.to_string())
}

/// Which engine holds the graph now.
enum Holder {
    Idle(Graph),
    Cpu(CpuEngine),
    Gpu(Box<GpuEngine>),
    /// An SSD layout: the edges stay on disk, only this engine runs on them.
    Ssd(Box<SsdEngine>),
}

/// What an in-memory operation on an SSD layout says.
const ON_DISK: &str = "this graph is an SSD layout: its edges stay on disk and only engine='ssd' (or 'auto') runs on it";

impl Holder {
    fn name(&self) -> &'static str {
        match self {
            Holder::Idle(_) => "idle",
            Holder::Cpu(_) => "cpu",
            Holder::Gpu(_) => "gpu",
            Holder::Ssd(_) => "ssd",
        }
    }

    /// The graph in memory (`None`: an SSD layout).
    fn graph(&self) -> Option<&Graph> {
        match self {
            Holder::Idle(g) => Some(g),
            Holder::Cpu(e) => Some(e.graph()),
            Holder::Gpu(e) => Some(e.graph()),
            Holder::Ssd(_) => None,
        }
    }

    fn engine(&mut self) -> Option<&mut dyn Engine> {
        match self {
            Holder::Idle(_) => None,
            Holder::Cpu(e) => Some(e),
            Holder::Gpu(e) => Some(&mut **e),
            Holder::Ssd(e) => Some(&mut **e),
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
        let holder = self.holder.lock().map_err(|_| error("the graph was poisoned by an earlier panic"))?;
        Ok(f(holder.as_ref().expect("a holder is put back after every call").graph().ok_or_else(|| error(ON_DISK))?))
    }
}

/// The weight type of weights named `name` (`None` when there are no weights).
fn weight_type_of(weighted: bool, name: &str) -> PyResult<WeightType> {
    match (weighted, name) {
        (false, _) => Ok(WeightType::None),
        (true, "int") => Ok(WeightType::Int),
        (true, "float") => Ok(WeightType::Float),
        (true, other) => Err(error(format!("weight type `{other}`: expected int or float"))),
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
        let g = py.detach(|| EdgeArrays::new(n, src, dst, weights)?.build(directed, opts, &NoProgress)).map_err(error)?;
        Ok(PyGraph::new(g, "<arrays>".into()))
    }

    /// Reads any input the CLI reads (edge lists, DIMACS, PACE, Matrix Market,
    /// METIS, SNAP, `.cgr`; gzip; a pipe), detecting the format unless given.
    #[staticmethod]
    /// An SSD layout (`chatty convert --layout ssd`) is opened, not read: its edges
    /// stay on disk for the SSD engine, whose index and buffers must fit `mem_budget`
    /// bytes (default: the memory available).
    #[pyo3(signature = (path, format=None, symmetrize=false, dedup=false, drop_self_loops=false, mem_budget=None))]
    fn read(
        py: Python<'_>,
        path: PathBuf,
        format: Option<&str>,
        symmetrize: bool,
        dedup: bool,
        drop_self_loops: bool,
        mem_budget: Option<u64>,
    ) -> PyResult<PyGraph> {
        if chatty_ssd::layout::is_layout(&path) {
            if format.is_some() || symmetrize || dedup || drop_self_loops {
                return Err(error("an SSD layout is read as it was written: format, symmetrize, dedup and drop_self_loops do not apply"));
            }
            let engine = py
                .detach(|| {
                    let budget = mem_budget.map_or_else(chatty_graph::available_memory, Ok).map_err(|e| e.to_string())?;
                    SsdEngine::open(&path, chatty_ssd::EngineConfig::default(), budget).map_err(|e| e.to_string())
                })
                .map_err(error)?;
            let info = engine.graph_info();
            return Ok(PyGraph { info, path: path.display().to_string(), holder: Mutex::new(Some(Holder::Ssd(Box::new(engine)))) });
        }
        let format = format
            .map(|f| Format::from_name(f).ok_or_else(|| error(format!("format `{f}`: expected one of {}", Format::NAMES))))
            .transpose()?;
        let opts = ReadOptions { format, build: BuildOptions { symmetrize, dedup, drop_self_loops } };
        // A graph stored renumbered is read back in its input's ids: `csr()` and the
        // BFS tree read the adjacency itself, which answers must match.
        let g = py
            .detach(|| chatty_graph::read_graph(&path, opts, &NoProgress).and_then(chatty_graph::transform::in_input_order))
            .map_err(error)?;
        Ok(PyGraph::new(g, path.display().to_string()))
    }

    /// Writes the graph in the format its name says (`.cgr`, `.el`, `.wel`, ...), or
    /// with `layout="ssd"` as an SSD layout of `stripes` files per side beside the
    /// index (`chatty convert --layout ssd`); a failed write leaves nothing behind.
    #[pyo3(signature = (path, layout=None, stripes=1))]
    fn write(&self, py: Python<'_>, path: PathBuf, layout: Option<&str>, stripes: usize) -> PyResult<()> {
        match layout {
            None => py.detach(|| self.with_graph(|g| chatty_graph::write_graph(g, &path, &NoProgress).map_err(|e| e.to_string())))?,
            Some("ssd") => {
                py.detach(|| self.with_graph(|g| chatty_ssd::layout::write(g, &path, stripes, &[]).map(drop).map_err(|e| e.to_string())))?
            }
            Some(other) => Err(format!("layout `{other}`: expected ssd (or none for the format the name says)")),
        }
        .map_err(error)
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
    fn weight_type(&self) -> PyResult<&'static str> {
        use chatty_algo::EdgeMapGraph;
        let holder = self.holder.lock().map_err(|_| error("the graph was poisoned by an earlier panic"))?;
        Ok(match holder.as_ref().expect("a holder is put back after every call") {
            Holder::Ssd(e) => e.graph().weight_type(),
            h => h.graph().expect("in memory").weight_type(),
        }
        .name())
    }

    /// The first vertex id of the file's numbering (1 for DIMACS, PACE, Matrix Market).
    #[getter]
    fn id_base(&self) -> u32 {
        self.info.id_base
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
            return Err(error(format!("{} depths and source {source} for a graph of {n} vertices", depths.len())));
        }
        let order = match (&offsets, &targets) {
            (Some(o), Some(t)) => Some((o.as_slice()?, t.as_slice()?)),
            (None, None) => None,
            _ => return Err(error("offsets and targets come together")),
        };
        if let Some((off, adj)) = order {
            let ok = off.len() == n + 1
                && off.first() == Some(&0)
                && off.last() == Some(&(adj.len() as u64))
                && off.windows(2).all(|w| w[0] <= w[1])
                && adj.par_iter().all(|&v| (v as usize) < n);
            if !ok {
                return Err(error("offsets and targets do not make a CSR over the graph's vertices"));
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

/// Edges (times BC's sources) of work from which `engine='auto'` starts the GPU in a
/// process that has not started it: the start (CUDA context, kernel module) costs
/// about 0.4 s once per process on the H200 host, where the CPU engine's first
/// PageRank on soc-Slashdot0902 (0.95 M edges) takes 25–50 ms and a kernel over 16 M
/// edges about what the start costs (docs/benchmarks/python.md).
const AUTO_GPU_MIN_EDGES: u64 = 16 << 20;

/// Whether this process has started a GPU (then `auto` takes it for any work).
static GPU_STARTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The engine `want` names, holding the graph (moved from whichever held it);
/// `work_edges` is what `auto` weighs against the GPU's start.
fn engine_for(slot: &mut Option<Holder>, want: &str, work_edges: u64) -> PyResult<()> {
    use std::sync::atomic::Ordering::Relaxed;
    let have = slot.as_ref().expect("a holder is present").name();
    let want = match want {
        "auto" if have == "ssd" || have == "gpu" => have,
        "auto" if (GPU_STARTED.load(Relaxed) || work_edges >= AUTO_GPU_MIN_EDGES) && Gpu::count() > 0 => "gpu",
        "auto" if have == "cpu" => have,
        "auto" => "cpu",
        "cpu" | "gpu" | "ssd" => want,
        other => return Err(error(format!("engine `{other}`: expected auto, cpu, gpu or ssd"))),
    };
    if want == have {
        return Ok(());
    }
    if have == "ssd" {
        return Err(error(ON_DISK));
    }
    if want == "ssd" {
        return Err(error(
            "engine='ssd' runs on an SSD layout: write one with g.write('NAME.ssd', layout='ssd') \
             (or `chatty convert GRAPH -o NAME.ssd --layout ssd`) and open it with chattygraph.read",
        ));
    }
    let gpu = if want == "gpu" { Some(Gpu::open(0).map_err(error)?) } else { None };
    GPU_STARTED.fetch_or(gpu.is_some(), std::sync::atomic::Ordering::Relaxed);
    let graph = match slot.take().expect("a holder is present") {
        Holder::Idle(g) => g,
        Holder::Cpu(e) => e.into_graph(),
        Holder::Gpu(e) => e.into_graph(),
        Holder::Ssd(_) => unreachable!("an SSD layout never moves (refused above)"),
    };
    *slot = Some(match gpu {
        Some(gpu) => Holder::Gpu(Box::new(GpuEngine::one(gpu, graph, chatty_gpu::Order::Natural))),
        None => Holder::Cpu(CpuEngine::new(graph)),
    });
    Ok(())
}

fn algorithm(name: &str) -> PyResult<Algorithm> {
    let names = || Algorithm::ALL.map(Algorithm::name).join(", ");
    Algorithm::from_name(name).ok_or_else(|| error(format!("algorithm `{name}`: expected one of {}", names())))
}

/// The answer as a NumPy array: BFS depths as int64 (-1 unreached), SSSP distances
/// as float64 (inf unreached), labels as int64, values as float64.
fn answer(py: Python<'_>, o: Output) -> Bound<'_, PyAny> {
    match o {
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
        Output::Labels(l) => l.into_par_iter().map(i64::from).collect::<Vec<_>>().into_pyarray(py).into_any(),
    }
}

/// Runs one kernel and returns (answer, report): the report is the CLI's `--json`
/// object as a dict. `sources` is BC's: `None` one source, a count, or `"all"`.
#[pyfunction]
#[pyo3(signature = (graph, algorithm_name, engine="auto", threads=None, source=None, seed=None, delta=None,
                    damping=0.85, tol=1e-6, max_iter=100, personalization=None, sources=None, x=None, top=10))]
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
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let alg = algorithm(algorithm_name)?;
    let bc_sources = match &sources {
        None => BcSources::One,
        Some(s) if s.extract::<String>().is_ok_and(|s| s == "all") => BcSources::All,
        Some(s) => match s.extract::<usize>() {
            Ok(k) => BcSources::Random(k),
            Err(_) => {
                BcSources::List(s.extract::<Vec<u32>>().map_err(|_| error("sources: a count of random sources, vertex ids, or \"all\""))?)
            }
        },
    };
    let defaults = Params::default();
    let p = Params {
        source,
        seed: seed.unwrap_or(defaults.seed),
        delta,
        pr: PrParams { damping, tolerance: tol, max_iters: max_iter, ..PrParams::default() },
        bc_sources,
        x: x.map(|x| x.as_slice().map(<[f64]>::to_vec)).transpose()?,
        personalization: personalization.map(|p| p.as_slice().map(<[f64]>::to_vec)).transpose()?,
        direction: defaults.direction,
    };
    if threads == Some(0) {
        return Err(error("threads must be at least 1"));
    }
    let pool = threads.map(|t| rayon::ThreadPoolBuilder::new().num_threads(t).build()).transpose().map_err(error)?;
    let mut slot = graph.holder.lock().map_err(|_| error("the graph was poisoned by an earlier panic"))?;
    let passes = if alg == Algorithm::Bc { p.bc_sources.count(graph.info.n) as u64 } else { 1 };
    let work_edges = graph.info.m.saturating_mul(passes);
    engine_for(&mut slot, engine, work_edges)?;
    let holder = slot.as_mut().expect("a holder is present");
    let (report, json) = py
        .detach(|| {
            let mut work = || -> Result<(harness::Report, String), String> {
                let e = holder.engine().expect("engine_for made an engine");
                let opts = harness::Options { trials: 1, verify: false, against: None };
                let report = harness::run(e, alg, &p, &opts, |_| {}).map_err(|e| e.to_string())?;
                let ctx = harness::Context { path: &graph.path, load_seconds: 0.0, started: None, commit: env!("CARGO_PKG_VERSION"), top, id_base: 0 };
                let json = report.json(&ctx).to_string();
                Ok((report, json))
            };
            match &pool {
                Some(pool) => pool.install(work),
                None => work(),
            }
        })
        .map_err(error)?;
    let report_dict = py.import("json")?.call_method1("loads", (json,))?;
    Ok((answer(py, report.last.output), report_dict))
}

/// Whether a GPU the engine can use is present (the CUDA driver loaded, a device).
#[pyfunction]
fn gpu_count() -> usize {
    Gpu::count()
}

/// Reads a networkx adjacency (`G._adj`, a dict of dicts) into edge arrays, with
/// `index` mapping each node to its id (`None`: the nodes are the ids 0..n-1 in
/// order), in one pass without building Python lists.
/// Returns (src, dst, weights or None); a missing weight attribute is `default`.
#[pyfunction]
#[pyo3(signature = (adj, index, weight=None, default=1.0))]
#[allow(clippy::type_complexity)]
fn edges_from_adjacency<'py>(
    py: Python<'py>,
    adj: &Bound<'py, PyDict>,
    index: Option<&Bound<'py, PyDict>>,
    weight: Option<&str>,
    default: f64,
) -> PyResult<(Bound<'py, PyArray1<u32>>, Bound<'py, PyArray1<u32>>, Option<Bound<'py, PyArray1<f64>>>)> {
    let mut src = Vec::new();
    let mut dst = Vec::new();
    let mut weights = weight.map(|_| Vec::new());
    let n = adj.len();
    let id = |node: &Bound<'py, PyAny>| -> PyResult<u32> {
        let id: u32 = match index {
            Some(index) => index.get_item(node)?.ok_or_else(|| error("a node is missing from the index"))?.extract()?,
            None => node.extract()?,
        };
        if id as usize >= n {
            return Err(error(format!("node {id} is not below the node count {n}")));
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
                    Some(x) => x.extract::<f64>()?,
                    None => default,
                };
                w.push(value);
            }
        }
    }
    Ok((src.into_pyarray(py), dst.into_pyarray(py), weights.map(|w| w.into_pyarray(py))))
}

#[pymodule]
fn _chattygraph(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyGraph>()?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_count, m)?)?;
    m.add_function(wrap_pyfunction!(edges_from_adjacency, m)?)?;
    m.add("ChattyError", m.py().get_type::<ChattyError>())?;
    Ok(())
}
