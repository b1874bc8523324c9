//! Vertex subsets: a sparse list of ids or a dense bitmap, converted on demand
//! (Ligra's `vertexSubset`).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use rayon::prelude::*;

/// A set of vertices over `0..n`, stored as whichever form suits its size.
#[derive(Clone, Debug)]
pub enum Frontier {
    /// Vertex ids, unordered, no duplicates.
    Sparse {
        /// Size of the vertex universe.
        n: usize,
        /// The members.
        ids: Vec<u32>,
    },
    /// One bit per vertex.
    Dense {
        /// The bits.
        bits: Bitmap,
        /// Number of bits set.
        count: usize,
    },
}

impl Frontier {
    /// The set holding `v` alone.
    pub fn single(n: usize, v: u32) -> Frontier {
        Frontier::Sparse { n, ids: vec![v] }
    }

    /// Every vertex.
    pub fn all(n: usize) -> Frontier {
        let bits = Bitmap::new(n);
        bits.fill();
        Frontier::Dense { bits, count: n }
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        match self {
            Frontier::Sparse { ids, .. } => ids.len(),
            Frontier::Dense { count, .. } => *count,
        }
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The universe size.
    pub fn universe(&self) -> usize {
        match self {
            Frontier::Sparse { n, .. } => *n,
            Frontier::Dense { bits, .. } => bits.len(),
        }
    }

    /// The dense form (converting if needed).
    pub fn into_dense(self) -> Frontier {
        match self {
            Frontier::Sparse { n, ids } => {
                let bits = Bitmap::new(n);
                ids.par_iter().for_each(|&v| bits.set(v as usize));
                Frontier::Dense { bits, count: ids.len() }
            }
            dense => dense,
        }
    }

    /// The sparse form (converting if needed); ids come out ascending after a conversion.
    pub fn into_sparse(self) -> Frontier {
        match self {
            Frontier::Dense { bits, .. } => Frontier::Sparse { n: bits.len(), ids: bits.to_ids() },
            sparse => sparse,
        }
    }

    /// The members of either set.
    pub fn union(self, other: Frontier) -> Frontier {
        let (Frontier::Dense { bits, .. }, Frontier::Dense { bits: more, .. }) = (self.into_dense(), other.into_dense()) else {
            unreachable!("into_dense")
        };
        bits.or_with(&more);
        let count = bits.count();
        Frontier::Dense { bits, count }
    }

    /// The members as a slice of ids (converting to sparse).
    pub fn ids(&mut self) -> &[u32] {
        if let Frontier::Dense { .. } = self {
            let taken = std::mem::replace(self, Frontier::Sparse { n: 0, ids: Vec::new() });
            *self = taken.into_sparse();
        }
        match self {
            Frontier::Sparse { ids, .. } => ids,
            Frontier::Dense { .. } => unreachable!(),
        }
    }
}

/// A fixed-size bitmap whose bits can be set from many threads.
#[derive(Debug)]
pub struct Bitmap {
    words: Vec<AtomicU64>,
    len: usize,
}

impl Clone for Bitmap {
    fn clone(&self) -> Bitmap {
        Bitmap { words: self.words.par_iter().map(|w| AtomicU64::new(w.load(Relaxed))).collect(), len: self.len }
    }
}

impl Bitmap {
    /// `len` clear bits.
    pub fn new(len: usize) -> Bitmap {
        Bitmap { words: crate::zeroed_vec(len.div_ceil(64)), len }
    }

    /// Number of bits.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the bitmap has no bits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether bit `i` is set.
    #[inline]
    pub fn get(&self, i: usize) -> bool {
        self.words[i / 64].load(Relaxed) >> (i % 64) & 1 != 0
    }

    /// Whether bit `i` is set, without the bounds check: for the hottest loop, a pull
    /// step's test of every in-neighbour.
    ///
    /// # Safety
    /// `i < self.len()`.
    #[inline]
    pub unsafe fn get_unchecked(&self, i: usize) -> bool {
        debug_assert!(i < self.len);
        // SAFETY: i < len, and the words cover len bits.
        unsafe { self.words.get_unchecked(i / 64) }.load(Relaxed) >> (i % 64) & 1 != 0
    }

    /// Sets bit `i` (atomically).
    #[inline]
    pub fn set(&self, i: usize) {
        self.words[i / 64].fetch_or(1 << (i % 64), Relaxed);
    }

    /// Sets bit `i` (atomically); whether this call set it, not another before it.
    #[inline]
    pub fn set_new(&self, i: usize) -> bool {
        let bit = 1 << (i % 64);
        self.words[i / 64].fetch_or(bit, Relaxed) & bit == 0
    }

    /// Word `w` (bits `64w..64w+64`).
    #[inline]
    pub fn word(&self, w: usize) -> u64 {
        self.words[w].load(Relaxed)
    }

    /// Overwrites word `w` (bits `64w..64w+64`); for a thread that owns that word.
    #[inline]
    pub fn store_word(&self, w: usize, bits: u64) {
        self.words[w].store(bits, Relaxed);
    }

    /// Sets every bit.
    pub fn fill(&self) {
        self.words.par_iter().enumerate().for_each(|(w, word)| {
            let valid = (self.len - w * 64).min(64);
            word.store(if valid == 64 { u64::MAX } else { (1u64 << valid) - 1 }, Relaxed);
        });
    }

    /// Clears every bit.
    pub fn clear(&self) {
        self.words.par_iter().for_each(|w| w.store(0, Relaxed));
    }

    /// Ors every word of `other` into this one (same length).
    pub fn or_with(&self, other: &Bitmap) {
        self.words.par_iter().zip(&other.words).for_each(|(a, b)| {
            a.fetch_or(b.load(Relaxed), Relaxed);
        });
    }

    /// Ands every word of `other` into this one (same length).
    pub fn and_with(&self, other: &Bitmap) {
        self.words.par_iter().zip(&other.words).for_each(|(a, b)| {
            a.fetch_and(b.load(Relaxed), Relaxed);
        });
    }

    /// Number of set bits.
    pub fn count(&self) -> usize {
        self.words.par_iter().map(|w| w.load(Relaxed).count_ones() as usize).sum()
    }

    /// The set bits, ascending.
    pub fn to_ids(&self) -> Vec<u32> {
        self.words
            .par_chunks(1024)
            .enumerate()
            .flat_map_iter(|(c, chunk)| {
                let mut ids = Vec::new();
                for (i, w) in chunk.iter().enumerate() {
                    let mut bits = w.load(Relaxed);
                    while bits != 0 {
                        ids.push(((c * 1024 + i) * 64) as u32 + bits.trailing_zeros());
                        bits &= bits - 1;
                    }
                }
                ids
            })
            .collect()
    }
}
