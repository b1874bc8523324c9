//! The graph layer of ChattyGraph: the CSR graph every engine reads, the readers and
//! writers of every input format, the `.cgr` binary format, the generators and the
//! transforms.
//!
//! # Brief overview
//!
//! - [`Graph`] / [`Adjacency`]: CSR with `u32` vertex ids and `u64` edge offsets,
//!   optional `u32` or `f32` weights, in-edges built on demand.
//! - [`build`]: the one parallel CSR builder, fed by an [`EdgeSource`]; readers,
//!   generators and [`transform`]s all go through it.
//! - [`read_graph`]: SNAP/plain edge lists, `.wel`, DIMACS-9 `.gr`, PACE `.gr`,
//!   Matrix Market, plain or gzip, `.cgr`, and GAPBS's `.sg` / `.wsg`.
//! - [`cgr`]: the binary format: write, mmap-load, check.
//! - [`generate`]: R-MAT, uniform random and road-like grid graphs.
//!
//! ```
//! use chatty_graph::{generate, NoProgress, GenOptions};
//! let g = generate::grid(4, 3, GenOptions { seed: 1, max_weight: None, undirected: true }, &NoProgress).unwrap();
//! assert_eq!(g.num_vertices(), 12);
//! assert_eq!(g.num_edges(), 2 * (3 * 3 + 4 * 2));
//! ```
//!
//! This crate knows nothing of engines, devices or kernels: it is the bottom layer.
#![deny(missing_docs)]

mod arrays;
mod buf;
pub mod build;
pub mod cgr;
mod csr;
pub mod datasets;
mod error;
pub mod file;
mod gapbs;
pub mod generate;
mod names;
pub mod partition;
mod progress;
pub mod read;
mod stats;
pub mod transform;
pub mod write;

pub use arrays::EdgeArrays;
pub use buf::Buf;
pub use build::{build, BuildOptions, EdgeSource};
pub use csr::{Adjacency, Graph, Rows, VertexId, VertexOrder, WeightSlice, WeightType};
pub use error::{available_memory, check_memory, human_bytes, parse_size, Error, Result};
pub use generate::GenOptions;
pub use names::{Name, Naming, VertexNames};
pub use progress::{NoProgress, Progress};
pub use read::{read_graph, Format, ReadOptions};
pub use stats::{stats, GraphStats};
pub use write::write_graph;

/// A graph built from an explicit edge list, for tests and small examples; an edge
/// naming a vertex at or above `n` is an error.
pub fn from_edges(n: usize, edges: &[(u32, u32)], directed: bool) -> Result<Graph> {
    let triples: Vec<(u32, u32, u32)> = edges.iter().map(|&(u, v)| (u, v, 0)).collect();
    from_triples(n, &triples, WeightType::None, directed)
}

/// A graph with integer weights built from an explicit edge list; an edge naming a
/// vertex at or above `n` is an error.
pub fn from_weighted_edges(n: usize, edges: &[(u32, u32, u32)], directed: bool) -> Result<Graph> {
    from_triples(n, edges, WeightType::Int, directed)
}

fn from_triples(n: usize, edges: &[(u32, u32, u32)], weight_type: WeightType, directed: bool) -> Result<Graph> {
    struct List<'a>(usize, &'a [(u32, u32, u32)], WeightType);
    impl EdgeSource for List<'_> {
        fn num_vertices(&self) -> usize {
            self.0
        }
        fn num_blocks(&self) -> usize {
            1
        }
        fn weight_type(&self) -> WeightType {
            self.2
        }
        fn for_each_edge<F: FnMut(u32, u32, u32)>(&self, _: usize, mut f: F) {
            self.1.iter().for_each(|&(u, v, w)| f(u, v, w));
        }
    }
    let opts = BuildOptions { symmetrize: !directed, ..Default::default() };
    build(&List(n, edges, weight_type), directed, opts, &NoProgress)
}
