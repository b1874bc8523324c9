//! The owned vertices' in-edges grouped by their source, owned or ghost: how a rank
//! applies a frontier vertex's edges into its own range without messages (the
//! frontier's ghosts arrived through the halo). Built once per kernel that pushes.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use rayon::prelude::*;

use crate::graph::LocalGraph;

/// Sources `own` then `ghosts`, each row the owned targets of its in-edges.
pub struct PushRows {
    own: Range<u32>,
    ghosts: Vec<u32>,
    offsets: Vec<u64>,
    targets: Vec<u32>,
    weights: Option<Vec<u32>>,
}

impl PushRows {
    /// The rows of `g`'s in-edges, whose foreign sources are `ghosts` (ascending).
    pub fn new(g: &LocalGraph, ghosts: Vec<u32>) -> PushRows {
        let own = g.own();
        let inc = g.inc();
        let mut rows = PushRows { own: own.clone(), ghosts, offsets: Vec::new(), targets: Vec::new(), weights: None };
        let count: Vec<AtomicU64> = (0..rows.sources() + 1).map(|_| AtomicU64::new(0)).collect();
        own.clone().into_par_iter().for_each(|v| {
            for &u in inc.neighbors(v) {
                count[rows.index(u).expect("every source is owned or a ghost") + 1].fetch_add(1, Relaxed);
            }
        });
        let mut offsets: Vec<u64> = count.into_iter().map(AtomicU64::into_inner).collect();
        for i in 1..offsets.len() {
            offsets[i] += offsets[i - 1];
        }
        let edges = *offsets.last().unwrap_or(&0) as usize;
        let mut targets = vec![0u32; edges];
        let mut weights = inc.raw_weights().map(|_| vec![0u32; edges]);
        let mut cursor = offsets.clone();
        for v in own {
            for e in inc.range(v) {
                let slot = &mut cursor[rows.index(inc.targets()[e]).expect("indexed above")];
                targets[*slot as usize] = v;
                if let (Some(w), Some(raw)) = (weights.as_mut(), inc.raw_weights()) {
                    w[*slot as usize] = raw[e];
                }
                *slot += 1;
            }
        }
        (rows.offsets, rows.targets, rows.weights) = (offsets, targets, weights.take());
        rows
    }

    fn sources(&self) -> usize {
        self.own.len() + self.ghosts.len()
    }

    fn index(&self, u: u32) -> Option<usize> {
        if self.own.contains(&u) {
            Some((u - self.own.start) as usize)
        } else {
            self.ghosts.binary_search(&u).ok().map(|i| self.own.len() + i)
        }
    }

    /// The edges of source `u` into the owned range (empty if it has none here).
    #[inline]
    pub fn row(&self, u: u32) -> Range<usize> {
        match self.index(u) {
            Some(i) => self.offsets[i] as usize..self.offsets[i + 1] as usize,
            None => 0..0,
        }
    }

    /// Edge `e`'s owned target.
    #[inline]
    pub fn target(&self, e: usize) -> u32 {
        self.targets[e]
    }

    /// Edge `e`'s raw weight word (0 unweighted).
    #[inline]
    pub fn weight(&self, e: usize) -> u32 {
        self.weights.as_ref().map_or(0, |w| w[e])
    }
}
