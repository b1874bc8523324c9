//! The one error type of the program model, the kernels and the engine trait.

/// What can stop a run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A kernel that needs a source ran on a graph without vertices.
    #[error("the graph has no vertices")]
    NoVertices,
    /// `--source` names no vertex.
    #[error("source {vertex} is not a vertex (the graph has {n})")]
    NotAVertex {
        /// The id given.
        vertex: u32,
        /// The number of vertices.
        n: usize,
    },
    /// A parameter out of its domain.
    #[error("{name} {problem}")]
    Parameter {
        /// The parameter, by its name in [`crate::Params`] (each front end spells it
        /// its own way: `--max-iters`, `max_iter=`).
        name: &'static str,
        /// What is wrong with its value.
        problem: String,
    },
    /// SSSP met a negative (or NaN) weight.
    #[error("SSSP needs non-negative weights; this graph has weight {0}")]
    NegativeWeight(f32),
    /// Betweenness: some vertex has more shortest paths from a source than a double
    /// counts, so its scores cannot be computed (they came out NaN or infinite).
    #[error(
        "betweenness: some vertex has more shortest paths from a source than a double can count (over 1.8e308); the scores on this graph would be NaN"
    )]
    PathCountOverflow,
    /// The engine cannot run this kernel, or not on this graph.
    #[error("{0}")]
    Unsupported(String),
    /// `--verify` found a difference from the sequential reference.
    #[error("{0}")]
    Mismatch(String),
    /// The engine failed (a driver, IO or memory error), in its own error type.
    #[error(transparent)]
    Engine(Box<dyn std::error::Error + Send + Sync>),
}

impl Error {
    /// Wraps an engine's own error.
    pub fn engine(e: impl std::error::Error + Send + Sync + 'static) -> Error {
        Error::Engine(Box::new(e))
    }
}

/// Result alias of the algorithms layer.
pub type Result<T, E = Error> = std::result::Result<T, E>;
