//! Inputs and answers moved between two numberings of one graph's vertices: the
//! caller's and the one a kernel runs in (a graph stored renumbered, a GPU's vertex
//! order). `new_id[v]` is the kernel's id of the caller's vertex `v`.

use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

use crate::{Distances, Output};

/// Per-vertex values in the caller's order, moved to the kernel's.
pub fn values_to_kernel(new_id: &[u32], x: &[f64]) -> Vec<f64> {
    let mut y = vec![0.0; x.len()];
    new_id.iter().zip(x).for_each(|(&i, &v)| y[i as usize] = v);
    y
}

/// A result in the kernel's order, in the caller's.
pub fn output_to_caller(new_id: &[u32], o: Output) -> Output {
    fn back<T: Copy + Send + Sync>(id: &[u32], v: &[T]) -> Vec<T> {
        id.par_iter().map(|&i| v[i as usize]).collect()
    }
    match o {
        Output::Depths(d) => Output::Depths(back(new_id, &d)),
        Output::Distances(Distances::Int(d)) => Output::Distances(Distances::Int(back(new_id, &d))),
        Output::Distances(Distances::Float(d)) => Output::Distances(Distances::Float(back(new_id, &d))),
        Output::Values(v) => Output::Values(back(new_id, &v)),
        Output::Hits { hubs, authorities } => Output::Hits { hubs: back(new_id, &hubs), authorities: back(new_id, &authorities) },
        Output::Labels(l) => Output::Labels(smallest_members(&back(new_id, &l))),
        Output::Triangles(t) => Output::Triangles(back(new_id, &t)),
        Output::Cores(c) => Output::Cores(back(new_id, &c)),
        Output::Communities { labels, modularity } => Output::Communities { labels: smallest_members(&back(new_id, &labels)), modularity },
    }
}

/// Parents in the kernel's order (`parents[new]` a kernel id, or
/// [`crate::paths::NO_PARENT`]), in the caller's: `old_id` inverts `new_id`.
pub fn parents_to_caller(new_id: &[u32], old_id: &[u32], parents: &[u32]) -> Vec<u32> {
    new_id
        .par_iter()
        .map(|&i| match parents[i as usize] {
            crate::paths::NO_PARENT => crate::paths::NO_PARENT,
            p => old_id[p as usize],
        })
        .collect()
}

/// Each vertex's label replaced by the smallest vertex carrying the same label (a
/// component's label is its smallest id, which renumbering changes).
pub(crate) fn smallest_members(labels: &[u32]) -> Vec<u32> {
    let smallest: Vec<AtomicU32> = (0..labels.len()).into_par_iter().map(|_| AtomicU32::new(u32::MAX)).collect();
    // Most vertices share a few labels: a load first keeps those cache lines shared
    // instead of bouncing an atomic between every thread.
    labels.par_iter().enumerate().for_each(|(v, &c)| {
        let cell = &smallest[c as usize];
        if (v as u32) < cell.load(Ordering::Relaxed) {
            cell.fetch_min(v as u32, Ordering::Relaxed);
        }
    });
    labels.par_iter().map(|&c| smallest[c as usize].load(Ordering::Relaxed)).collect()
}

#[cfg(test)]
mod tests {
    use super::smallest_members;

    #[test]
    fn labels_become_the_smallest_member_of_their_class() {
        // Vertex v in class (v * 7) % 5, classes named by an arbitrary member.
        let n = 100_000u32;
        let name = |class: u32| (0..n).rev().find(|&v| (v * 7) % 5 == class).unwrap();
        let labels: Vec<u32> = (0..n).map(|v| name((v * 7) % 5)).collect();
        let got = smallest_members(&labels);
        for v in 0..n {
            let class = (v * 7) % 5;
            assert_eq!(got[v as usize], (0..n).find(|&u| (u * 7) % 5 == class).unwrap(), "vertex {v}");
        }
        // One class over everything: the case that made a plain fetch_min contend.
        assert!(smallest_members(&vec![7; 1_500_000]).iter().all(|&x| x == 0));
    }
}
