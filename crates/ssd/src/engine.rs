//! The SSD engine behind the engine trait: a layout opened under a memory budget,
//! the shared kernels run through [`SsdGraph`]'s streamed edge map, and the IO
//! figures of each trial in the report's `detail`.

use chatty_algo::{run_kernel, Algorithm, Breakdown, EdgeMapGraph, Engine, EngineInfo, Error, GraphInfo, HostGraph, Params, Trial};
use chatty_graph::WeightType;
use serde::Serialize;

use crate::stream::{EngineConfig, IoStats, SsdGraph};
use crate::SsdError;

/// The process itself (code, stacks, allocator slack) counts against the budget too.
const PROCESS_BYTES: u64 = 32 << 20;

/// Vertex data bytes per vertex each kernel keeps in memory, frontier bitmaps and
/// the per-round sums of PageRank and SpMV included (BC also keeps each level's
/// frontier: 4 bytes a vertex over all levels).
fn vertex_bytes(alg: Algorithm) -> u64 {
    match alg {
        Algorithm::Bfs => 5,
        Algorithm::Sssp => 9,
        Algorithm::Pr => 45, // 8 of them the out-weights of weighted PageRank
        // Two score vectors and the gathered sums.
        Algorithm::Eigenvector | Algorithm::Katz => 25,
        Algorithm::Wcc => 6,
        Algorithm::Spmv => 25,
        Algorithm::Bc => 33,
        // Labels, live in- and out-counts, colours, two bitmaps, frontier ids.
        Algorithm::Scc => 21,
        // Refused by `prepare` (`Algorithm::reads_lists`): they intersect or count
        // neighbour lists in memory.
        _ => 0,
    }
}

/// The semi-external engine over one layout.
pub struct SsdEngine {
    graph: SsdGraph,
    budget: u64,
    /// Bytes the prepared kernel needs (0 before [`Engine::prepare`]).
    needed: u64,
}

/// The IO figures of one trial, in the report's `detail`.
#[derive(Serialize)]
struct TrialIo<'a> {
    bytes_read: u64,
    io_seconds: f64,
    gb_per_s: f64,
    amplification: f64,
    skew: f64,
    per_file_bytes: &'a [u64],
    rounds: Vec<RoundIo>,
}

#[derive(Serialize)]
struct RoundIo {
    bytes: u64,
    seconds: f64,
    gb_per_s: f64,
    amplification: f64,
    skew: f64,
}

impl SsdEngine {
    /// Opens the layout whose index is `index`; its index and IO buffers must fit
    /// `budget` bytes (each kernel's vertex data is checked by [`Engine::prepare`]).
    pub fn open(index: &std::path::Path, cfg: EngineConfig, budget: u64) -> Result<SsdEngine, SsdError> {
        let graph = SsdGraph::open(index, cfg)?;
        let engine = SsdEngine { graph, budget, needed: 0 };
        let fixed = engine.fixed_bytes();
        if fixed > budget {
            return Err(SsdError::Budget { needed: fixed, budget, what: engine.fixed_parts() });
        }
        Ok(engine)
    }

    /// The graph on disk.
    pub fn graph(&self) -> &SsdGraph {
        &self.graph
    }

    /// Bytes needed whatever the kernel: the process, the index, IO buffers and bins.
    fn fixed_bytes(&self) -> u64 {
        PROCESS_BYTES + self.graph.layout.index_bytes() + self.graph.engine_bytes()
    }

    /// What [`Self::fixed_bytes`] is made of, and the options that shrink each part.
    fn fixed_parts(&self) -> String {
        let human = chatty_graph::human_bytes;
        let (buffers, bins) = self.graph.engine_parts();
        format!(
            "the process and index ({}), IO buffers ({}: fewer with a smaller --io-depth or --merge-pages) and bins ({}: \
             fewer with fewer --scatter-threads and --gather-threads)",
            human(PROCESS_BYTES + self.graph.layout.index_bytes()),
            human(buffers),
            human(bins)
        )
    }
}

impl Engine for SsdEngine {
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }

    fn info(&self) -> EngineInfo {
        EngineInfo {
            name: "ssd",
            devices: vec![format!("{} stripe file(s)", self.graph.layout.out.files.len())],
            trial_timing: "wall time of the kernel, reads from disk included",
        }
    }

    fn graph_info(&self) -> GraphInfo {
        let h = &self.graph.layout.header;
        GraphInfo {
            n: self.graph.num_vertices(),
            m: h.edges,
            directed: h.directed,
            weighted: self.graph.layout.weight_type != WeightType::None,
            weight_type: self.graph.layout.weight_type,
            id_base: h.id_base,
            // Layouts are written in the input's order and ids (layout::write refuses
            // renumbered and named graphs).
            order: None,
            names: None,
        }
    }

    fn out_degree(&self, v: u32) -> u64 {
        EdgeMapGraph::out_degree(&self.graph, v)
    }

    fn prepare(&mut self, alg: Algorithm) -> Result<(), Error> {
        if alg.reads_lists() {
            let problem = format!(
                "{} reads adjacency lists at random, which the SSD engine streams; run it on the CPU engine over the graph's .cgr",
                alg.name()
            );
            return Err(Error::Unsupported(problem));
        }
        let vertex = self.graph.num_vertices() as u64 * vertex_bytes(alg);
        self.needed = self.fixed_bytes() + vertex;
        if self.needed > self.budget {
            let human = chatty_graph::human_bytes;
            let what = format!("{}'s vertex data ({}), {}", alg.name(), human(vertex), self.fixed_parts());
            return Err(Error::engine(SsdError::Budget { needed: self.needed, budget: self.budget, what }));
        }
        Ok(())
    }

    fn default_delta(&self) -> Option<f64> {
        None // frontier Bellman–Ford: no buckets
    }

    fn run(&self, alg: Algorithm, p: &Params, sources: &[u32], progress: &dyn chatty_graph::Progress) -> Result<Trial, Error> {
        self.graph.take_stats();
        let start = std::time::Instant::now();
        let (output, iterations, residual) = run_kernel(&self.graph, alg, p, sources, progress)?;
        let seconds = start.elapsed().as_secs_f64();
        let (io, rounds) = self.graph.take_stats();
        let round = |r: &IoStats| RoundIo {
            bytes: r.bytes_read,
            seconds: r.seconds,
            gb_per_s: r.gb_per_s(),
            amplification: r.amplification(),
            skew: r.skew(),
        };
        let detail = TrialIo {
            bytes_read: io.bytes_read,
            io_seconds: io.seconds,
            gb_per_s: io.gb_per_s(),
            amplification: io.amplification(),
            skew: io.skew(),
            per_file_bytes: &io.per_file,
            rounds: rounds.iter().map(round).collect(),
        };
        let detail = serde_json::to_value(detail).map_err(Error::engine)?;
        let breakdown = Breakdown::default();
        Ok(Trial { output, sources: sources.to_vec(), iterations, seconds, breakdown, residual, transfers: Vec::new(), detail })
    }

    fn trial_lines(&self, trial: &Trial) -> Vec<String> {
        let d = &trial.detail;
        let line = |what: &str, r: &serde_json::Value| {
            format!(
                "{what:<20} {:.1} MB in {:.3} s = {:.3} GB/s, amplification {:.2}, skew {:.2}",
                r["bytes_read"].as_u64().or(r["bytes"].as_u64()).unwrap_or(0) as f64 / 1e6,
                r["io_seconds"].as_f64().or(r["seconds"].as_f64()).unwrap_or(0.0),
                r["gb_per_s"].as_f64().unwrap_or(0.0),
                r["amplification"].as_f64().unwrap_or(0.0),
                r["skew"].as_f64().unwrap_or(0.0),
            )
        };
        let rounds = d["rounds"].as_array().map_or(&[][..], |r| r.as_slice());
        // Per-round lines like Blaze's, unless there are too many to read (roads:
        // thousands of BFS levels); the JSON always has them.
        let mut lines: Vec<String> = if rounds.len() > 40 {
            vec![format!("({} rounds; per-round IO figures in --json)", rounds.len())]
        } else {
            rounds.iter().enumerate().map(|(i, r)| line(&format!("round {i}:"), r)).collect()
        };
        lines.push(line("IO", d));
        lines
    }

    /// Streamed from the pages, as the kernels are, rather than read back whole.
    fn parents(&self, source: u32, output: &chatty_algo::Output) -> Result<Vec<u32>, Error> {
        chatty_algo::paths::parents(&self.graph, source, output)
    }

    fn reference_graph(&self) -> Result<HostGraph<'_>, Error> {
        crate::layout::read_graph(&self.graph.layout).map(|g| HostGraph::Owned(Box::new(g))).map_err(Error::engine)
    }

    fn reference_name(&self) -> String {
        "the layout's own pages, read back with their checksums verified (--verify-against GRAPH compares with the original)".into()
    }

    fn detail(&self) -> serde_json::Value {
        let cfg = &self.graph.cfg;
        serde_json::json!({
            "binning": cfg.binning,
            "direct": self.graph.direct(),
            "io": if cfg.io.uring { "io_uring" } else { "pread" },
            "queue_depth": cfg.io.queue_depth,
            "merge_pages": cfg.io.merge_pages,
            "scatter_threads": cfg.scatter_threads,
            "gather_threads": cfg.gather_threads,
            "data_bytes": self.graph.layout.data_bytes(),
            "mem_budget_bytes": self.budget,
            "memory_needed_bytes": self.needed,
        })
    }

    fn take_notes(&mut self) -> Vec<String> {
        self.graph.notes.take()
    }
}
