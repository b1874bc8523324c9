//! The one auto policy: which engine `EngineKind::Auto` opens for a graph and the
//! kernels to run on it, with the reason as a value the front ends print.
//!
//! Before a graph is read: an SSD layout runs on the SSD engine (its edges stay on
//! disk), and under `mpirun` the MPI engine runs (every rank holds its rows). For a
//! graph in memory, [`choose`]:
//!
//! 1. No usable GPU, or a kernel or option the GPU engine lacks (label propagation,
//!    communities, most centralities; personalized or weighted PageRank): the CPU.
//! 2. BC from so many sources on so deep a graph that the GPU's per-level round trips
//!    would cost more than the CPU's whole run, as the two engines' models predict
//!    (the depth from one BFS on the CPU): the CPU.
//! 3. A process that has not started a GPU, for less work than
//!    [`GPU_START_PAYS_EDGES`]: the CPU. Starting CUDA and loading the kernels costs
//!    about 0.4 s once per process (H200 host), where the CPU engine's first PageRank
//!    on soc-Slashdot0902 (0.95 M edges) takes 25-50 ms, and a kernel over 16 M edges
//!    costs about what the start does (docs/benchmarks/python.md).
//! 4. Otherwise the GPU.

use std::sync::atomic::{AtomicBool, Ordering};

use chatty_algo::{Algorithm, BcSources, Params};
use chatty_graph::Graph;

use crate::EngineKind;

/// Edges of work (BC's counted once per source) from which a process that has not
/// started a GPU starts one: below, the start costs more than the GPU saves.
pub const GPU_START_PAYS_EDGES: u64 = 16 << 20;

/// What a run will ask of the engine: the policy weighs it.
#[derive(Clone, Debug)]
pub struct Workload {
    /// The kernels, in the order they will run on one engine.
    pub kernels: Vec<Algorithm>,
    /// BC's sources, when BC is among them.
    pub bc_sources: BcSources,
    /// Why the GPU engine would refuse the parameters, if it would.
    pub gpu_refuses: Option<String>,
}

impl Workload {
    /// One kernel with its defaults (BC from one source).
    pub fn one(alg: Algorithm) -> Workload {
        Workload { kernels: vec![alg], bc_sources: BcSources::One, gpu_refuses: None }
    }

    /// The kernels with the parameters they will run with.
    pub fn new(kernels: Vec<Algorithm>, p: &Params) -> Workload {
        let gpu_refuses = kernels.iter().find_map(|&a| chatty_gpu::refuse_options(a, p).err().map(|e| e.to_string()));
        Workload { kernels, bc_sources: p.bc_sources.clone(), gpu_refuses }
    }

    /// Edges the run streams on `g`, counting BC once per source.
    pub fn edges(&self, g: &Graph) -> u64 {
        let n = g.num_vertices();
        let passes: u64 = self.kernels.iter().map(|&a| if a == Algorithm::Bc { self.bc_sources.count(n) as u64 } else { 1 }).sum();
        g.num_edges().saturating_mul(passes)
    }

    fn has_bc(&self) -> bool {
        self.kernels.contains(&Algorithm::Bc)
    }
}

/// Whether a GPU can run the work, as far as the policy needs to know.
#[derive(Clone, Debug, PartialEq)]
pub enum GpuState {
    /// None is usable, and why.
    Unusable(String),
    /// One is present; this process has not started it.
    Present,
    /// This process has started one already: its start is paid.
    Started,
}

/// Set once this process opens a GPU engine.
static GPU_STARTED: AtomicBool = AtomicBool::new(false);

/// Records that this process has started a GPU.
pub(crate) fn gpu_started() {
    GPU_STARTED.store(true, Ordering::Relaxed);
}

/// The GPU state of this process: started, present, or absent (no driver, no device).
pub fn gpu_state() -> GpuState {
    if GPU_STARTED.load(Ordering::Relaxed) {
        GpuState::Started
    } else if chatty_gpu::Gpu::count() > 0 {
        GpuState::Present
    } else {
        GpuState::Unusable("no GPU on this machine".into())
    }
}

/// An engine the policy chose, and why, in words for the user.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    /// The engine (never `Auto`).
    pub engine: EngineKind,
    /// Why.
    pub why: String,
}

impl std::fmt::Display for Choice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "engine: {} (auto: {})", self.engine.name(), self.why)
    }
}

/// The engine for `work` on `g` in memory (steps 1-4 of the module's policy).
pub fn choose(g: &Graph, work: &Workload, gpu: &GpuState) -> Choice {
    let cpu = |why: String| Choice { engine: EngineKind::Cpu, why };
    if let GpuState::Unusable(why) = gpu {
        return cpu(why.clone());
    }
    if let Some(alg) = work.kernels.iter().find(|&&a| !chatty_gpu::has_kernel(a)) {
        return cpu(format!("the GPU engine has no {} kernel yet", alg.name()));
    }
    if let Some(why) = &work.gpu_refuses {
        return cpu(why.clone());
    }
    if let Some(why) = bc_prefers_cpu(g, work) {
        return cpu(why);
    }
    let edges = work.edges(g);
    if *gpu == GpuState::Present && edges < GPU_START_PAYS_EDGES {
        return cpu(format!(
            "{:.2} M edges of work, under the {} M from which starting the GPU (about 0.4 s) pays",
            edges as f64 / 1e6,
            GPU_START_PAYS_EDGES >> 20
        ));
    }
    Choice { engine: EngineKind::Gpu, why: format!("{:.2} M edges of work", edges as f64 / 1e6) }
}

/// Why the CPU runs BC faster than a GPU here, if it does (step 2).
fn bc_prefers_cpu(g: &Graph, work: &Workload) -> Option<String> {
    let n = g.num_vertices();
    if !work.has_bc() || n == 0 {
        return None;
    }
    let sources = work.bc_sources.count(n);
    let root = (0..n as u32).find(|&v| g.out_edges().degree(v) > 0).unwrap_or(0);
    let (_, levels) = chatty_algo::bfs::bfs(g, root, chatty_algo::Direction::Auto, &chatty_graph::NoProgress).ok()?;
    let cpu = chatty_algo::bc::predicted_seconds(n, g.num_edges(), sources, levels);
    let gpu = chatty_gpu::bc_predicted_seconds(n, g.num_edges(), sources, levels);
    (cpu < gpu).then(|| {
        format!(
            "bc from {sources} source(s) about {levels} levels deep: predicted {cpu:.2} s on {} CPU threads against {gpu:.2} s on the GPU",
            rayon::current_num_threads()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(n: u32) -> Graph {
        let edges: Vec<(u32, u32)> = (1..n).map(|v| (v - 1, v)).collect();
        chatty_graph::from_edges(n as usize, &edges, false).unwrap()
    }

    #[test]
    fn no_gpu_is_the_cpu_with_the_reason() {
        let c = choose(&path(10), &Workload::one(Algorithm::Pr), &GpuState::Unusable("no GPU on this machine".into()));
        assert_eq!(c, Choice { engine: EngineKind::Cpu, why: "no GPU on this machine".into() });
    }

    #[test]
    fn small_work_stays_on_the_cpu_until_a_gpu_is_started() {
        let g = path(1000);
        let c = choose(&g, &Workload::one(Algorithm::Pr), &GpuState::Present);
        assert_eq!(c.engine, EngineKind::Cpu);
        assert!(c.why.contains("pays"), "{c}");
        assert_eq!(choose(&g, &Workload::one(Algorithm::Pr), &GpuState::Started).engine, EngineKind::Gpu);
        let c = choose(&g, &Workload::one(Algorithm::Lpa), &GpuState::Started);
        assert_eq!((c.engine, c.why.as_str()), (EngineKind::Cpu, "the GPU engine has no lpa kernel yet"));
        for alg in [Algorithm::Tc, Algorithm::Kcore, Algorithm::Scc] {
            assert_eq!(choose(&g, &Workload::one(alg), &GpuState::Started).engine, EngineKind::Gpu);
        }
        let weighted = Params { weighted: true, ..Params::default() };
        let c = choose(&g, &Workload::new(vec![Algorithm::Pr], &weighted), &GpuState::Started);
        assert_eq!(c.engine, EngineKind::Cpu);
        assert!(c.why.contains("weighted PageRank runs on the CPU and SSD engines"), "{c}");
    }

    #[test]
    fn deep_bc_from_many_sources_prefers_the_cpu() {
        let p = Params { bc_sources: BcSources::Random(64), ..Params::default() };
        let work = Workload::new(vec![Algorithm::Bc], &p);
        let c = choose(&path(5000), &work, &GpuState::Started);
        assert_eq!(c.engine, EngineKind::Cpu, "{c}");
        assert!(c.why.starts_with("bc from 64 source(s) about 4999 levels deep"), "{c}");
    }

    #[test]
    fn work_counts_bc_once_per_source() {
        let g = path(100);
        let p = Params { bc_sources: BcSources::Random(10), ..Params::default() };
        let work = Workload::new(vec![Algorithm::Pr, Algorithm::Bc], &p);
        assert_eq!(work.edges(&g), g.num_edges() * 11);
    }
}
