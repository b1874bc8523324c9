//! A kernel's answer in a few figures: what `chatty run` prints and the report's
//! `result` carries, the same for every engine.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap};
use std::fmt;

use rayon::prelude::*;
use serde::Serialize;

use chatty_graph::{Name, Naming};

use crate::{bfs, Distances, Output};

/// The summary of one [`Output`], its vertices `V`: ids, or the user's [`Name`]s.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Summary<V = u32> {
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
        largest: Vec<(V, u64)>,
    },
    /// PageRank, BC, SpMV, clustering: the largest values.
    Values {
        /// The sum of every value.
        sum: f64,
        /// Their mean (clustering's is networkx's `average_clustering`).
        mean: f64,
        /// Their Euclidean norm.
        norm: f64,
        /// `(vertex, value)`, largest first.
        top: Vec<(V, f64)>,
    },
    /// HITS: the largest hub and authority scores.
    Hits {
        /// `(vertex, hub score)`, largest first.
        top_hubs: Vec<(V, f64)>,
        /// `(vertex, authority score)`, largest first.
        top_authorities: Vec<(V, f64)>,
    },
    /// TC: the graph's triangles and the vertices on most.
    Triangles {
        /// Triangles in the graph (a third of the per-vertex sum).
        triangles: u64,
        /// `(vertex, triangles on it)`, most first.
        top: Vec<(V, u64)>,
    },
    /// Louvain, Leiden: the communities, largest first, and their modularity.
    Communities {
        /// Number of communities.
        count: u64,
        /// The partition's modularity.
        modularity: f64,
        /// `(label, size)` of the largest communities.
        largest: Vec<(V, u64)>,
    },
    /// k-core: the largest core.
    Cores {
        /// The largest core number (the graph's degeneracy).
        degeneracy: u32,
        /// Vertices in that core.
        in_max_core: u64,
    },
}

/// Vertices per parallel piece of a summary: fixed, so sums come out the same
/// whatever the thread count.
const CHUNK: usize = 1 << 16;

impl Output {
    /// The summary, with the `k` largest values or components. Parallel, and with
    /// no pair per vertex to sort nor label to hash: on 16.7M vertices the sequential
    /// version took 0.44 s of a 1.4 s PageRank command on the GPU host, and 1.5-2.7 s
    /// of a WCC one.
    pub fn summary(&self, k: usize) -> Summary {
        match self {
            Output::Depths(d) => depths_summary(d),
            Output::Distances(d) => distances_summary(d),
            Output::Labels(l) => {
                let (count, largest) = classes(l, k);
                Summary::Components { count, largest }
            }
            Output::Values(v) => values_summary(v, k),
            Output::Hits { hubs, authorities } => {
                Summary::Hits { top_hubs: top_values(hubs, k), top_authorities: top_values(authorities, k) }
            }
            Output::Triangles(t) => triangles_summary(t, k),
            Output::Cores(c) => cores_summary(c),
            Output::Communities { labels, modularity } => {
                let (count, largest) = classes(labels, k);
                Summary::Communities { count, modularity: *modularity, largest }
            }
        }
    }
}

/// The depth histogram of a BFS.
fn depths_summary(d: &[u32]) -> Summary {
    let histogram = (d.par_chunks(CHUNK).map(|d| {
        let mut histogram: Vec<u64> = Vec::new();
        for &x in d.iter().filter(|&&x| x != bfs::UNREACHED) {
            if histogram.len() <= x as usize {
                histogram.resize(x as usize + 1, 0);
            }
            histogram[x as usize] += 1;
        }
        histogram
    }))
    .reduce(Vec::new, |mut a, b| {
        if a.len() < b.len() {
            a.resize(b.len(), 0);
        }
        a.iter_mut().zip(&b).for_each(|(a, b)| *a += b);
        a
    });
    Summary::Depths { reached: histogram.iter().sum(), max_depth: histogram.len().saturating_sub(1) as u32, histogram }
}

/// Reached vertices, and the largest and mean finite distance.
fn distances_summary(d: &Distances) -> Summary {
    // (reached, max, sum) of the finite distances.
    let finite = |xs: &mut dyn Iterator<Item = f64>| xs.fold((0u64, 0.0f64, 0.0), |(n, max, sum), x| (n + 1, max.max(x), sum + x));
    let parts: Vec<(u64, f64, f64)> = match d {
        Distances::Int(d) => d.par_chunks(CHUNK).map(|d| finite(&mut d.iter().filter(|&&x| x != u64::MAX).map(|&x| x as f64))).collect(),
        Distances::Float(d) => d.par_chunks(CHUNK).map(|d| finite(&mut d.iter().copied().filter(|x| x.is_finite()))).collect(),
    };
    let (reached, max, sum) = parts.iter().fold((0, 0.0f64, 0.0), |(n, max, sum), &(pn, pmax, psum)| (n + pn, max.max(pmax), sum + psum));
    Summary::Distances { reached, max, mean: if reached == 0 { 0.0 } else { sum / reached as f64 } }
}

/// How many classes the labels `l` make (components, communities), and the `k`
/// largest as `(label, size)`.
fn classes(l: &[u32], k: usize) -> (u64, Vec<(u32, u64)>) {
    let kept = |sizes: &[u32], first: usize| {
        let present = || sizes.iter().enumerate().filter(|&(_, &s)| s > 0);
        (present().count(), largest(present().map(|(i, &s)| (s as u64, Reverse((first + i) as u32))), k))
    };
    let (count, largest) = match l.iter().max() {
        // Labels are vertex ids (each component's smallest member): counted
        // in arrays, not hashed, each of a few threads counting one range of
        // labels over all of them (a shared array would contend on the giant
        // component's counter). Every range reads every label: at most 8,
        // or a 128-core machine would read them 128 times.
        Some(&max) if (max as usize) < l.len() => {
            let labels = max as usize + 1;
            let width = labels.div_ceil(rayon::current_num_threads().clamp(1, 8));
            let parts: Vec<_> = (0..labels.div_ceil(width))
                .into_par_iter()
                .map(|r| {
                    let first = r * width;
                    let mut sizes = vec![0u32; width.min(labels - first)];
                    for &c in l {
                        if let Some(s) = sizes.get_mut((c as usize).wrapping_sub(first)) {
                            *s += 1;
                        }
                    }
                    kept(&sizes, first)
                })
                .collect();
            (parts.iter().map(|p| p.0).sum(), largest(parts.into_iter().flat_map(|p| p.1), k))
        }
        _ => {
            let mut sizes: HashMap<u32, u64> = HashMap::new();
            l.iter().for_each(|&c| *sizes.entry(c).or_default() += 1);
            (sizes.len(), largest(sizes.into_iter().map(|(c, s)| (s, Reverse(c))), k))
        }
    };
    (count as u64, largest.into_iter().map(|(s, Reverse(c))| (c, s)).collect())
}

/// Sum, norm and the `k` largest values.
fn values_summary(v: &[f64], k: usize) -> Summary {
    let parts: Vec<_> = (v.par_chunks(CHUNK).enumerate())
        .map(|(i, v)| {
            let ranked = v.iter().enumerate().map(|(j, &x)| (Total(x), Reverse((i * CHUNK + j) as u32)));
            // Folded from +0 (an empty `sum()` of floats is -0, shown as "-0.0").
            (v.iter().fold(0.0, |a, x| a + x), v.iter().fold(0.0, |a, x| a + x * x), largest(ranked, k))
        })
        .collect();
    let top = largest(parts.iter().flat_map(|p| p.2.iter().copied()), k);
    let sum = parts.iter().fold(0.0, |a, p| a + p.0);
    Summary::Values {
        sum,
        mean: if v.is_empty() { 0.0 } else { sum / v.len() as f64 },
        norm: parts.iter().fold(0.0, |a, p| a + p.1).sqrt(),
        top: top.into_iter().map(|(Total(x), Reverse(v))| (v, x)).collect(),
    }
}

/// The `k` largest values, with their vertices.
fn top_values(v: &[f64], k: usize) -> Vec<(u32, f64)> {
    match values_summary(v, k) {
        Summary::Values { top, .. } => top,
        _ => unreachable!("values_summary summarises values"),
    }
}

/// The total and the `k` vertices on most triangles.
fn triangles_summary(t: &[u64], k: usize) -> Summary {
    let parts: Vec<_> = (t.par_chunks(CHUNK).enumerate())
        .map(|(i, t)| (t.iter().sum::<u64>(), largest(t.iter().enumerate().map(|(j, &x)| (x, Reverse((i * CHUNK + j) as u32))), k)))
        .collect();
    let top = largest(parts.iter().flat_map(|p| p.1.iter().copied()), k);
    Summary::Triangles {
        triangles: parts.iter().map(|p| p.0).sum::<u64>() / 3,
        top: top.into_iter().map(|(x, Reverse(v))| (v, x)).collect(),
    }
}

/// The largest core number and its size.
fn cores_summary(c: &[u32]) -> Summary {
    let degeneracy = c.par_iter().copied().max().unwrap_or(0);
    Summary::Cores { degeneracy, in_max_core: c.par_iter().filter(|&&x| x == degeneracy).count() as u64 }
}

/// An f64 ordered by `total_cmp`, so values rank in a heap.
#[derive(Copy, Clone, Debug)]
struct Total(f64);

impl PartialEq for Total {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}
impl Eq for Total {}
impl PartialOrd for Total {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Total {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// The `k` greatest items, greatest first, in one pass holding `k` of them: most
/// items lose one comparison against the least kept.
fn largest<T: Ord>(items: impl Iterator<Item = T>, k: usize) -> Vec<T> {
    if k == 0 {
        return Vec::new();
    }
    let mut kept: BinaryHeap<Reverse<T>> = BinaryHeap::with_capacity(k.min(1 << 20));
    for item in items {
        if kept.len() < k {
            kept.push(Reverse(item));
        } else if let Some(mut least) = kept.peek_mut() {
            if item > least.0 {
                *least = Reverse(item);
            }
        }
    }
    let mut kept: Vec<T> = kept.into_iter().map(|Reverse(t)| t).collect();
    kept.sort_unstable_by(|a, b| b.cmp(a));
    kept
}

impl Summary {
    /// The summary with its vertices (and component labels, which are vertices) as
    /// the user names them.
    pub fn named(self, naming: &Naming) -> Summary<Name<'_>> {
        match self {
            Summary::Components { count, largest } => {
                Summary::Components { count, largest: largest.into_iter().map(|(c, s)| (naming.name(c), s)).collect() }
            }
            Summary::Values { sum, mean, norm, top } => {
                Summary::Values { sum, mean, norm, top: top.into_iter().map(|(v, x)| (naming.name(v), x)).collect() }
            }
            Summary::Triangles { triangles, top } => {
                Summary::Triangles { triangles, top: top.into_iter().map(|(v, x)| (naming.name(v), x)).collect() }
            }
            Summary::Hits { top_hubs, top_authorities } => Summary::Hits {
                top_hubs: top_hubs.into_iter().map(|(v, x)| (naming.name(v), x)).collect(),
                top_authorities: top_authorities.into_iter().map(|(v, x)| (naming.name(v), x)).collect(),
            },
            Summary::Communities { count, modularity, largest } => {
                Summary::Communities { count, modularity, largest: largest.into_iter().map(|(c, s)| (naming.name(c), s)).collect() }
            }
            Summary::Cores { degeneracy, in_max_core } => Summary::Cores { degeneracy, in_max_core },
            Summary::Depths { reached, max_depth, histogram } => Summary::Depths { reached, max_depth, histogram },
            Summary::Distances { reached, max, mean } => Summary::Distances { reached, max, mean },
        }
    }
}

impl<V: fmt::Display> Summary<V> {
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
            Summary::Communities { largest, .. } => {
                for (label, size) in largest {
                    out += &format!("  community {label}: {size} vertices\n");
                }
            }
            Summary::Values { sum, mean, norm, top } => {
                out += &format!("Sum:                 {sum:.6e}, mean {mean:.6e}, norm {norm:.6e}\n");
                for (v, x) in top {
                    out += &format!("  vertex {v}: {x:.6e}\n");
                }
            }
            Summary::Triangles { top, .. } => {
                for (v, x) in top {
                    out += &format!("  vertex {v}: {x} triangles\n");
                }
            }
            Summary::Hits { top_hubs, top_authorities } => {
                for (v, x) in top_hubs {
                    out += &format!("  hub {v}: {x:.6e}\n");
                }
                for (v, x) in top_authorities {
                    out += &format!("  authority {v}: {x:.6e}\n");
                }
            }
            Summary::Cores { .. } => {}
        }
        out
    }
}

impl<V: fmt::Display> fmt::Display for Summary<V> {
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
            Summary::Triangles { triangles, .. } => write!(f, "Triangles:           {triangles}"),
            Summary::Communities { count, modularity, largest } => {
                write!(f, "Communities:         {count}, modularity {modularity:.6}")?;
                if let Some((label, size)) = largest.first() {
                    write!(f, ", largest {size} vertices (label {label})")?;
                }
                Ok(())
            }
            Summary::Cores { degeneracy, in_max_core } => {
                write!(f, "Largest core:        k = {degeneracy}, {in_max_core} vertices")
            }
            Summary::Values { top, .. } => match top.first() {
                Some((v, x)) => write!(f, "Largest value:       {x:.6e} at vertex {v}"),
                None => write!(f, "Largest value:       none (no vertices)"),
            },
            Summary::Hits { top_hubs, top_authorities } => match (top_hubs.first(), top_authorities.first()) {
                (Some((h, x)), Some((a, y))) => write!(f, "Top hub, authority:  vertex {h} ({x:.6e}), vertex {a} ({y:.6e})"),
                _ => write!(f, "Top hub, authority:  none (no vertices)"),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The summary as first written: every vertex sorted or hashed, sequentially.
    fn by_sorting(o: &Output, k: usize) -> Summary {
        match o {
            Output::Depths(d) => {
                let reached: Vec<u32> = d.iter().copied().filter(|&x| x != bfs::UNREACHED).collect();
                let max_depth = reached.iter().copied().max();
                let mut histogram = vec![0; max_depth.map_or(0, |m| m as usize + 1)];
                reached.iter().for_each(|&x| histogram[x as usize] += 1);
                Summary::Depths { reached: reached.len() as u64, max_depth: max_depth.unwrap_or(0), histogram }
            }
            Output::Distances(Distances::Int(d)) => {
                let finite: Vec<f64> = d.iter().filter(|&&x| x != u64::MAX).map(|&x| x as f64).collect();
                let mean = if finite.is_empty() { 0.0 } else { finite.iter().sum::<f64>() / finite.len() as f64 };
                Summary::Distances { reached: finite.len() as u64, max: finite.iter().copied().fold(0.0, f64::max), mean }
            }
            Output::Distances(Distances::Float(_)) => unreachable!("not generated"),
            Output::Labels(l) | Output::Communities { labels: l, .. } => {
                let mut sizes: HashMap<u32, u64> = HashMap::new();
                l.iter().for_each(|&c| *sizes.entry(c).or_default() += 1);
                let count = sizes.len() as u64;
                let mut largest: Vec<(u32, u64)> = sizes.into_iter().collect();
                largest.sort_unstable_by_key(|&(c, s)| (Reverse(s), c));
                largest.truncate(k);
                match o {
                    Output::Communities { modularity, .. } => Summary::Communities { count, modularity: *modularity, largest },
                    _ => Summary::Components { count, largest },
                }
            }
            Output::Values(v) => {
                let mut top: Vec<(u32, f64)> = v.iter().enumerate().map(|(i, &x)| (i as u32, x)).collect();
                top.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                top.truncate(k);
                let mean = if v.is_empty() { 0.0 } else { v.iter().sum::<f64>() / v.len() as f64 };
                Summary::Values { sum: v.iter().sum(), mean, norm: v.iter().map(|x| x * x).sum::<f64>().sqrt(), top }
            }
            Output::Hits { hubs, authorities } => {
                let top = |v: &[f64]| match by_sorting(&Output::Values(v.to_vec()), k) {
                    Summary::Values { top, .. } => top,
                    _ => unreachable!(),
                };
                Summary::Hits { top_hubs: top(hubs), top_authorities: top(authorities) }
            }
            Output::Triangles(t) => {
                let mut top: Vec<(u32, u64)> = t.iter().enumerate().map(|(i, &x)| (i as u32, x)).collect();
                top.sort_unstable_by_key(|&(v, x)| (Reverse(x), v));
                top.truncate(k);
                Summary::Triangles { triangles: t.iter().sum::<u64>() / 3, top }
            }
            Output::Cores(c) => {
                let degeneracy = c.iter().copied().max().unwrap_or(0);
                Summary::Cores { degeneracy, in_max_core: c.iter().filter(|&&x| x == degeneracy).count() as u64 }
            }
        }
    }

    /// Equal, floating-point totals within rounding (summed in another order).
    fn assert_same(got: Summary, want: Summary) {
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
        match (&got, &want) {
            (Summary::Values { sum, mean, norm, top }, Summary::Values { sum: s, mean: a, norm: n, top: t }) => {
                assert!(close(*sum, *s) && close(*mean, *a) && close(*norm, *n) && top == t, "{got:?} against {want:?}");
            }
            (Summary::Distances { reached, max, mean }, Summary::Distances { reached: r, max: m, mean: a }) => {
                assert!(reached == r && max == m && close(*mean, *a), "{got:?} against {want:?}");
            }
            _ => assert_eq!(got, want),
        }
    }

    #[test]
    fn the_parallel_summary_is_the_sorted_one() {
        // Sizes around the parallel pieces, values with ties (ids break them), labels
        // that are vertex ids and labels that are not (the map).
        let mut state = 12345u64;
        let mut next = |bound: u64| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) % bound
        };
        for n in [0, 1, 7, CHUNK - 1, CHUNK + 5, 3 * CHUNK + 17] {
            let depths: Vec<u32> = (0..n).map(|_| if next(5) == 0 { bfs::UNREACHED } else { next(40) as u32 }).collect();
            let distances: Vec<u64> = (0..n).map(|_| if next(7) == 0 { u64::MAX } else { next(1 << 40) }).collect();
            let values: Vec<f64> = (0..n).map(|_| next(1000) as f64 / 7.0).collect();
            let labels: Vec<u32> = (0..n).map(|_| next(n.max(1) as u64 / 3 + 1) as u32).collect();
            let far_labels: Vec<u32> = (0..n).map(|_| u32::MAX - next(50) as u32).collect();
            let triangles: Vec<u64> = (0..n).map(|_| next(30) * 3).collect();
            let cores: Vec<u32> = (0..n).map(|_| next(12) as u32).collect();
            let outputs = [
                Output::Depths(depths),
                Output::Distances(Distances::Int(distances)),
                Output::Labels(labels),
                Output::Labels(far_labels),
                Output::Communities { labels: (0..n).map(|_| next(n.max(1) as u64 / 5 + 1) as u32).collect(), modularity: 0.25 },
                Output::Hits { hubs: values.iter().map(|x| x / 3.0).collect(), authorities: values.iter().rev().copied().collect() },
                Output::Values(values),
                Output::Triangles(triangles),
                Output::Cores(cores),
            ];
            // Labels are counted in one range per thread up to 8: one, three, and
            // more threads than ranges.
            for threads in [1, 3, 10] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                for o in &outputs {
                    for k in [0, 1, 3, 10, 1000] {
                        assert_same(pool.install(|| o.summary(k)), by_sorting(o, k));
                    }
                }
            }
        }
    }
}
