//! Synthetic graphs, deterministic from a seed whatever the thread count.
//!
//! Edges are generated in fixed blocks, each with its own RNG stream seeded from
//! (seed, block), so a block yields the same edges on both builder passes and on any
//! machine; that is what lets [`crate::build`] regenerate instead of storing an edge
//! list.
//!
//! - [`rmat`]: R-MAT / Kronecker with the Graph500 parameters a = 0.57, b = c = 0.19
//!   (Chakrabarti, Zhan, Faloutsos, "R-MAT: A Recursive Model for Graph Mining",
//!   SDM 2004), vertex ids scrambled by a seeded bijection as Graph500 and GAPBS do so
//!   that degree does not follow id.
//! - [`urand`]: Erdős–Rényi-like, both endpoints uniform.
//! - [`grid`]: a road-like weighted planar grid: degree ≤ 4, diameter width + height.

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::build::{build, BuildOptions, EdgeSource};
use crate::csr::{Graph, WeightType};
use crate::error::{Error, Result};
use crate::progress::Progress;

/// Options shared by the generators.
#[derive(Copy, Clone, Debug)]
pub struct GenOptions {
    /// The seed; the same seed gives the same graph.
    pub seed: u64,
    /// Attach integer weights uniform in `1..=max_weight` (GAPBS uses 255).
    pub max_weight: Option<u32>,
    /// Store each edge in both directions (an undirected graph).
    pub undirected: bool,
}

const BLOCK_EDGES: u64 = 1 << 16;

/// A weight uniform in `1..=max`.
#[inline]
fn uniform_weight(rng: &mut Xoshiro256PlusPlus, max: u32) -> u32 {
    1 + ((rng.next_u32() as u64 * max as u64) >> 32) as u32
}

fn block_rng(seed: u64, block: usize) -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(seed ^ (block as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Which random endpoint distribution a [`RandomEdges`] draws from.
#[derive(Copy, Clone)]
enum Model {
    Rmat,
    Uniform,
}

/// `m` random edges over `2^scale` vertices.
struct RandomEdges {
    scale: u32,
    m: u64,
    model: Model,
    opts: GenOptions,
    /// Multiplier and addend of the id scramble (both odd / arbitrary, from the seed).
    scramble: [u64; 4],
}

/// R-MAT quadrant thresholds on a 32-bit draw: a, a + b, a + b + c.
const RMAT_AB: [u32; 3] = [(0.57 * 4294967296.0) as u32, (0.76 * 4294967296.0) as u32, (0.95 * 4294967296.0) as u32];

impl RandomEdges {
    fn new(scale: u32, edge_factor: u64, model: Model, opts: GenOptions) -> Result<Self> {
        if !(1..=32).contains(&scale) {
            return Err(Error::Usage(format!("scale {scale}: must be 1..=32 (2^scale vertices, u32 ids)")));
        }
        let m = edge_factor.checked_mul(1u64 << scale).ok_or_else(|| Error::Usage("edge count overflows".into()))?;
        let mut r = block_rng(opts.seed, usize::MAX);
        let scramble = [r.next_u64() | 1, r.next_u64(), r.next_u64() | 1, r.next_u64()];
        Ok(RandomEdges { scale, m, model, opts, scramble })
    }

    /// A bijection on `scale`-bit ids: multiply by an odd constant, add, xor-shift, twice.
    #[inline]
    fn scramble(&self, x: u64) -> u32 {
        let mask = if self.scale == 64 { u64::MAX } else { (1u64 << self.scale) - 1 };
        let half = self.scale.div_ceil(2);
        let mut x = (x.wrapping_mul(self.scramble[0]).wrapping_add(self.scramble[1])) & mask;
        x ^= x >> half;
        x = (x.wrapping_mul(self.scramble[2]).wrapping_add(self.scramble[3])) & mask;
        x ^= x >> half;
        x as u32
    }
}

impl EdgeSource for RandomEdges {
    fn num_vertices(&self) -> usize {
        1usize << self.scale
    }
    fn num_blocks(&self) -> usize {
        self.m.div_ceil(BLOCK_EDGES) as usize
    }
    fn weight_type(&self) -> WeightType {
        if self.opts.max_weight.is_some() {
            WeightType::Int
        } else {
            WeightType::None
        }
    }
    fn known_edges(&self) -> Option<u64> {
        Some(self.m)
    }
    fn for_each_edge<F: FnMut(u32, u32, u32)>(&self, block: usize, mut f: F) {
        let mut rng = block_rng(self.opts.seed, block);
        let first = block as u64 * BLOCK_EDGES;
        let count = BLOCK_EDGES.min(self.m - first);
        for _ in 0..count {
            let (u, v) = match self.model {
                Model::Uniform => {
                    let mask = (1u64 << self.scale) - 1;
                    let r = rng.next_u64();
                    (r & mask, (r >> 32 | rng.next_u64() << 32) & mask)
                }
                Model::Rmat => {
                    let (mut u, mut v) = (0u64, 0u64);
                    let mut bits = 0u64;
                    for level in 0..self.scale {
                        if level % 2 == 0 {
                            bits = rng.next_u64();
                        }
                        let r = (bits >> (32 * (level % 2))) as u32;
                        // Quadrants by threshold, branch-free (a data-dependent branch
                        // here mispredicts about every other level): below a: (0,0);
                        // a..a+b: (0,1); a+b..a+b+c: (1,0); above: (1,1).
                        let (a, ab, abc) = ((r >= RMAT_AB[0]) as u64, (r >= RMAT_AB[1]) as u64, (r >= RMAT_AB[2]) as u64);
                        u |= ab << level;
                        v |= ((a ^ ab) | abc) << level;
                    }
                    (u, v)
                }
            };
            let w = self.opts.max_weight.map_or(0, |max| uniform_weight(&mut rng, max));
            match self.model {
                Model::Rmat => f(self.scramble(u), self.scramble(v), w),
                Model::Uniform => f(u as u32, v as u32, w),
            }
        }
    }
}

fn build_random(source: RandomEdges, progress: &dyn Progress) -> Result<Graph> {
    let undirected = source.opts.undirected;
    build(&source, !undirected, BuildOptions { symmetrize: undirected, ..Default::default() }, progress)
}

/// An R-MAT graph with `2^scale` vertices and `edge_factor · 2^scale` generated edges.
pub fn rmat(scale: u32, edge_factor: u64, opts: GenOptions, progress: &dyn Progress) -> Result<Graph> {
    build_random(RandomEdges::new(scale, edge_factor, Model::Rmat, opts)?, progress)
}

/// A uniform random graph with `2^scale` vertices and `edge_factor · 2^scale` edges.
pub fn urand(scale: u32, edge_factor: u64, opts: GenOptions, progress: &dyn Progress) -> Result<Graph> {
    build_random(RandomEdges::new(scale, edge_factor, Model::Uniform, opts)?, progress)
}

/// The grid's edges: vertex (x, y) is `y · width + x`, joined to its right and lower
/// neighbours with weight uniform in `1..=max_weight` (default 1000); always undirected.
struct GridEdges {
    width: u64,
    height: u64,
    opts: GenOptions,
}

const GRID_ROWS_PER_BLOCK: u64 = 256;

impl EdgeSource for GridEdges {
    fn num_vertices(&self) -> usize {
        (self.width * self.height) as usize
    }
    fn num_blocks(&self) -> usize {
        self.height.div_ceil(GRID_ROWS_PER_BLOCK) as usize
    }
    fn weight_type(&self) -> WeightType {
        WeightType::Int
    }
    fn known_edges(&self) -> Option<u64> {
        Some(self.height * (self.width - 1) + self.width * (self.height - 1))
    }
    fn for_each_edge<F: FnMut(u32, u32, u32)>(&self, block: usize, mut f: F) {
        let mut rng = block_rng(self.opts.seed, block);
        let max = self.opts.max_weight.unwrap_or(1000);
        let mut weight = || uniform_weight(&mut rng, max);
        let rows = block as u64 * GRID_ROWS_PER_BLOCK..((block as u64 + 1) * GRID_ROWS_PER_BLOCK).min(self.height);
        for y in rows {
            for x in 0..self.width {
                let v = (y * self.width + x) as u32;
                if x + 1 < self.width {
                    f(v, v + 1, weight());
                }
                if y + 1 < self.height {
                    f(v, v + self.width as u32, weight());
                }
            }
        }
    }
}

/// A `width × height` road-like grid (undirected, weighted).
pub fn grid(width: u64, height: u64, opts: GenOptions, progress: &dyn Progress) -> Result<Graph> {
    let n = width.checked_mul(height).filter(|&n| n > 0 && n <= u32::MAX as u64);
    if n.is_none() {
        return Err(Error::Usage(format!("grid {width}x{height}: needs 1 to {} vertices", u32::MAX)));
    }
    build(&GridEdges { width, height, opts }, false, BuildOptions { symmetrize: true, ..Default::default() }, progress)
}
