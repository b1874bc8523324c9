//! A kernel's answer in a few figures: what `chatty run` prints and the report's
//! `result` carries, the same for every engine.

use std::collections::HashMap;
use std::fmt;

use serde::Serialize;

use crate::{bfs, Distances, Output};

/// The summary of one [`Output`].
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Summary {
    /// BFS: vertices reached and how many at each depth.
    Depths {
        /// Vertices reached (the source included).
        reached: u64,
        /// The deepest level.
        max_depth: u32,
        /// Vertices at depth 0, 1, 2, ...
        histogram: Vec<u64>,
    },
    /// SSSP: vertices reached and their distances.
    Distances {
        /// Vertices reached.
        reached: u64,
        /// The largest finite distance.
        max: f64,
        /// The mean finite distance.
        mean: f64,
    },
    /// WCC: the components, largest first.
    Components {
        /// Number of components.
        count: u64,
        /// `(label, size)` of the largest components.
        largest: Vec<(u32, u64)>,
    },
    /// PageRank, BC, SpMV: the largest values.
    Values {
        /// The sum of every value.
        sum: f64,
        /// Their Euclidean norm.
        norm: f64,
        /// `(vertex, value)`, largest first.
        top: Vec<(u32, f64)>,
    },
}

impl Output {
    /// The summary, with the `k` largest values or components.
    pub fn summary(&self, k: usize) -> Summary {
        match self {
            Output::Depths(d) => {
                let mut histogram = Vec::new();
                for &x in d.iter().filter(|&&x| x != bfs::UNREACHED) {
                    if histogram.len() <= x as usize {
                        histogram.resize(x as usize + 1, 0);
                    }
                    histogram[x as usize] += 1;
                }
                Summary::Depths { reached: histogram.iter().sum(), max_depth: histogram.len().saturating_sub(1) as u32, histogram }
            }
            Output::Distances(d) => {
                let finite: Vec<f64> = match d {
                    Distances::Int(d) => d.iter().filter(|&&x| x != u64::MAX).map(|&x| x as f64).collect(),
                    Distances::Float(d) => d.iter().copied().filter(|x| x.is_finite()).collect(),
                };
                let max = finite.iter().copied().fold(0.0, f64::max);
                let mean = if finite.is_empty() { 0.0 } else { finite.iter().sum::<f64>() / finite.len() as f64 };
                Summary::Distances { reached: finite.len() as u64, max, mean }
            }
            Output::Labels(l) => {
                let mut sizes: HashMap<u32, u64> = HashMap::new();
                for &c in l {
                    *sizes.entry(c).or_default() += 1;
                }
                let count = sizes.len() as u64;
                let mut largest: Vec<(u32, u64)> = sizes.into_iter().collect();
                largest.sort_unstable_by_key(|&(c, s)| (std::cmp::Reverse(s), c));
                largest.truncate(k);
                Summary::Components { count, largest }
            }
            Output::Values(v) => {
                let mut top: Vec<(u32, f64)> = v.iter().enumerate().map(|(i, &x)| (i as u32, x)).collect();
                let k = k.min(top.len());
                if k > 0 {
                    top.select_nth_unstable_by(k - 1, |a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                }
                top.truncate(k);
                top.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                // Folded from +0 (an empty `sum()` of floats is -0, shown as "-0.0").
                Summary::Values { sum: v.iter().fold(0.0, |a, x| a + x), norm: v.iter().fold(0.0, |a, x| a + x * x).sqrt(), top }
            }
        }
    }
}

impl Summary {
    /// The summary with vertex ids shown from `base` (1 for 1-based inputs).
    pub fn renumbered(self, base: u32) -> Summary {
        match self {
            Summary::Components { count, largest } => {
                Summary::Components { count, largest: largest.into_iter().map(|(c, s)| (c + base, s)).collect() }
            }
            Summary::Values { sum, norm, top } => Summary::Values { sum, norm, top: top.into_iter().map(|(v, x)| (v + base, x)).collect() },
            other => other,
        }
    }

    /// The summary as the text report prints it: the [`fmt::Display`] line, then the
    /// histogram, the largest components or the top values, one per line.
    pub fn report(&self) -> String {
        let mut out = format!("{self}\n");
        match self {
            Summary::Depths { histogram, .. } => {
                let levels: Vec<String> = histogram.iter().enumerate().take(32).map(|(d, c)| format!("{d}:{c}")).collect();
                let more = if histogram.len() > 32 { format!(" ... ({} levels)", histogram.len()) } else { String::new() };
                out += &format!("Depth histogram:     {}{more}\n", levels.join(" "));
            }
            Summary::Distances { .. } => {}
            Summary::Components { largest, .. } => {
                for (label, size) in largest {
                    out += &format!("  component {label}: {size} vertices\n");
                }
            }
            Summary::Values { sum, norm, top } => {
                out += &format!("Sum:                 {sum:.6e}, norm {norm:.6e}\n");
                for (v, x) in top {
                    out += &format!("  vertex {v}: {x:.6e}\n");
                }
            }
        }
        out
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Summary::Depths { reached, max_depth, .. } => write!(f, "Reached:             {reached} vertices, max depth {max_depth}"),
            Summary::Distances { reached, max, mean } => {
                write!(f, "Reached:             {reached} vertices, max distance {max}, mean {mean:.6}")
            }
            Summary::Components { count, largest } => {
                write!(f, "Components:          {count}")?;
                if let Some((label, size)) = largest.first() {
                    write!(f, ", largest {size} vertices (label {label})")?;
                }
                Ok(())
            }
            Summary::Values { top, .. } => match top.first() {
                Some((v, x)) => write!(f, "Largest value:       {x:.6e} at vertex {v}"),
                None => write!(f, "Largest value:       none (no vertices)"),
            },
        }
    }
}
