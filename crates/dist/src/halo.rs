//! The halo: the remote vertices ("ghosts") a rank reads, and the exchange that keeps
//! their values current. Only boundary vertices travel, each to the ranks that read
//! it, and per destination in the cheaper of two forms (the ChattyGraph idea across
//! processes, by the multi-GPU engine's rule, [`Form::cheaper`]): sparse `(id, value)`
//! pairs of the vertices that changed, or dense, every value of the boundary list the
//! two ranks agreed on at set-up, without ids.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use bytemuck::Pod;
use rayon::prelude::*;

use crate::comm::{words_of, Comm};
use crate::DistError;
use chatty_graph::partition::{Form, Ranges};

/// Values packed for every rank, sent by [`Halo::deliver`].
pub struct Parcels(Vec<Vec<u64>>);

/// `[SPARSE, k, ids (padded to words), values]`.
fn sparse<T: Pod + Send>(ids: &[u32], get: impl Fn(u32) -> T + Sync) -> Vec<u64> {
    let id_words = ids.len().div_ceil(2);
    let mut msg = vec![0u64; 2 + id_words + (ids.len() * std::mem::size_of::<T>()).div_ceil(8)];
    (msg[0], msg[1]) = (SPARSE, ids.len() as u64);
    let (head, values) = msg.split_at_mut(2 + id_words);
    bytemuck::cast_slice_mut::<u64, u32>(&mut head[2..])[..ids.len()].copy_from_slice(ids);
    fill(values, ids, get);
    msg
}

/// `[DENSE, values of every vertex in list]`.
fn dense<T: Pod + Send>(list: &[u32], get: impl Fn(u32) -> T + Sync) -> Vec<u64> {
    let mut msg = vec![0u64; 1 + (list.len() * std::mem::size_of::<T>()).div_ceil(8)];
    msg[0] = DENSE;
    fill(&mut msg[1..], list, get);
    msg
}

/// Writes `get(v)` for every `v` of `ids` into `words`, in parallel.
fn fill<T: Pod + Send>(words: &mut [u64], ids: &[u32], get: impl Fn(u32) -> T + Sync) {
    let size = std::mem::size_of::<T>();
    let bytes = &mut bytemuck::cast_slice_mut::<u64, u8>(words)[..ids.len() * size];
    bytes.par_chunks_mut(size * 4096).zip(ids.par_chunks(4096)).for_each(|(out, ids)| {
        for (slot, &v) in out.chunks_exact_mut(size).zip(ids) {
            slot.copy_from_slice(bytemuck::bytes_of(&get(v)));
        }
    });
}

/// Ghosts and readers between this rank and every other.
pub struct Halo {
    /// `send[r]`: this rank's vertices rank `r` reads, ascending.
    send: Vec<Vec<u32>>,
    /// `recv[r]`: rank `r`'s vertices this rank reads, ascending.
    recv: Vec<Vec<u32>>,
    /// Readers of each owned vertex (ranks), as CSR over the owned range.
    reader_offsets: Vec<u32>,
    readers: Vec<u32>,
    first: u32,
    /// Owned vertices some other rank reads.
    boundary: u64,
    /// Vertices updated here and vertex values sent, for the report.
    updated: AtomicU64,
    sent: AtomicU64,
}

const SPARSE: u64 = 0;
const DENSE: u64 = 1;

impl Halo {
    /// The halo of a rank that reads `ghosts` (ascending, none owned here): each rank
    /// tells the owners what it reads.
    pub fn new(comm: &Comm, ranges: &Ranges, ghosts: &[u32]) -> Result<Halo, DistError> {
        let size = comm.size();
        let mut recv = vec![Vec::new(); size];
        for &g in ghosts {
            recv[ranges.owner(g)].push(g);
        }
        // Each ask is `[count, ids padded to words]`.
        let asks: Vec<Vec<u64>> = recv.iter().map(|list| [vec![list.len() as u64], words_of(list)].concat()).collect();
        let send: Vec<Vec<u32>> =
            comm.all_to_all(&asks)?.iter().map(|w| bytemuck::cast_slice::<u64, u32>(&w[1..])[..w[0] as usize].to_vec()).collect();
        let own = ranges.range(comm.rank());
        let mut degree = vec![0u32; own.len() + 1];
        for list in &send {
            for &v in list {
                if !own.contains(&v) {
                    return Err(DistError::Inconsistent(format!(
                        "a rank reads vertex {v} from rank {}, which does not own it",
                        comm.rank()
                    )));
                }
                degree[(v - own.start) as usize + 1] += 1;
            }
        }
        for i in 1..degree.len() {
            degree[i] += degree[i - 1];
        }
        let mut readers = vec![0u32; *degree.last().unwrap_or(&0) as usize];
        let mut cursor = degree.clone();
        for (r, list) in send.iter().enumerate() {
            for &v in list {
                let c = &mut cursor[(v - own.start) as usize];
                readers[*c as usize] = r as u32;
                *c += 1;
            }
        }
        let boundary = degree.windows(2).filter(|w| w[1] > w[0]).count() as u64;
        Ok(Halo {
            send,
            recv,
            reader_offsets: degree,
            readers,
            first: own.start,
            boundary,
            updated: AtomicU64::new(0),
            sent: AtomicU64::new(0),
        })
    }

    /// Every ghost, ascending by owner then id.
    pub fn ghosts(&self) -> impl Iterator<Item = u32> + '_ {
        self.recv.iter().flatten().copied()
    }

    /// Vertices updated and vertex values sent since the last call.
    pub fn take_counts(&self) -> (u64, u64) {
        (self.updated.swap(0, Relaxed), self.sent.swap(0, Relaxed))
    }

    fn readers_of(&self, v: u32) -> &[u32] {
        let i = (v - self.first) as usize;
        &self.readers[self.reader_offsets[i] as usize..self.reader_offsets[i + 1] as usize]
    }

    /// Packs the values (`get`) of the owned vertices in `changed` for the ranks that
    /// read them; [`Halo::deliver`] sends them.
    pub fn pack<T: Pod + Send + Sync>(&self, comm: &Comm, changed: &[u32], get: impl Fn(u32) -> T + Sync) -> Parcels {
        let size = comm.size();
        // Per destination, the changed vertices it reads (chunks in parallel, in order).
        let (ids, boundary) = changed
            .par_chunks(1 << 14)
            .map(|chunk| {
                let (mut ids, mut boundary) = (vec![Vec::new(); size], 0usize);
                for &v in chunk {
                    let readers = self.readers_of(v);
                    boundary += usize::from(!readers.is_empty());
                    for &r in readers {
                        ids[r as usize].push(v);
                    }
                }
                (ids, boundary)
            })
            .reduce(
                || (vec![Vec::new(); size], 0),
                |(mut a, x), (b, y)| {
                    for (a, b) in a.iter_mut().zip(b) {
                        a.extend(b);
                    }
                    (a, x + y)
                },
            );
        let value_bytes = std::mem::size_of::<T>();
        let message = |r: usize| {
            if ids[r].is_empty() {
                return Vec::new();
            }
            match Form::cheaper(ids[r].len() as u64, self.send[r].len() as u64, value_bytes as u64) {
                Form::Sparse => sparse(&ids[r], &get),
                Form::Dense => dense(&self.send[r], &get),
            }
        };
        let out: Vec<Vec<u64>> =
            if changed.len() < 4096 { (0..size).map(message).collect() } else { (0..size).into_par_iter().map(message).collect() };
        self.count(boundary, &out, &ids);
        Parcels(out)
    }

    /// Every boundary value to every reader, dense (PageRank's contributions: all change).
    pub fn pack_all<T: Pod + Send + Sync>(&self, get: impl Fn(u32) -> T + Sync) -> Parcels {
        let out: Vec<Vec<u64>> = self.send.par_iter().map(|list| if list.is_empty() { Vec::new() } else { dense(list, &get) }).collect();
        self.updated.fetch_add(self.boundary, Relaxed);
        self.sent.fetch_add(self.readers.len() as u64, Relaxed);
        Parcels(out)
    }

    /// The reverse direction: the values (`get`) of the ghosts in `changed` for their
    /// owners (WCC's labels flowing back); sparse only.
    pub fn pack_to_owners<T: Pod + Send + Sync>(
        &self,
        comm: &Comm,
        ranges: &Ranges,
        changed: &[u32],
        get: impl Fn(u32) -> T + Sync,
    ) -> Parcels {
        let mut ids: Vec<Vec<u32>> = vec![Vec::new(); comm.size()];
        for &g in changed {
            ids[ranges.owner(g)].push(g);
        }
        let out: Vec<Vec<u64>> = ids.iter().map(|list| if list.is_empty() { Vec::new() } else { sparse(list, &get) }).collect();
        self.count(changed.len(), &out, &ids);
        Parcels(out)
    }

    /// Sends packed values (collective: every rank calls it) and gives each value
    /// received to `set`, from several threads at once (distinct vertices, but `set`
    /// must combine as the kernel needs: store, atomic min); returns the vertices for
    /// which `set` returned true (changed).
    pub fn deliver<T: Pod + Send>(
        &self,
        comm: &Comm,
        parcels: Parcels,
        set: impl Fn(u32, T) -> bool + Sync,
    ) -> Result<Vec<u32>, DistError> {
        let got = comm.all_to_all(&parcels.0)?;
        drop(parcels);
        // Small levels (road graphs: thousands of them) stay on this thread.
        let words: usize = got.iter().map(Vec::len).sum();
        let unpack = |(r, msg): (usize, &Vec<u64>)| self.unpack(msg, &self.recv[r], &set);
        let updated: Vec<Vec<u32>> =
            if words < 4096 { got.iter().enumerate().map(unpack).collect() } else { got.par_iter().enumerate().map(unpack).collect() };
        Ok(updated.concat())
    }

    /// Counts `changed` boundary vertices updated and the values `out` carries.
    fn count(&self, changed: usize, out: &[Vec<u64>], ids: &[Vec<u32>]) {
        self.updated.fetch_add(changed as u64, Relaxed);
        let sent: usize = out
            .iter()
            .zip(ids)
            .zip(&self.send)
            .map(|((m, i), s)| match m.first() {
                Some(&DENSE) => s.len(),
                Some(_) => i.len(),
                None => 0,
            })
            .sum();
        self.sent.fetch_add(sent as u64, Relaxed);
    }

    /// Calls `set` on every `(vertex, value)` of a message, in parallel; returns the
    /// vertices it changed. A dense message lists `dense`'s vertices.
    fn unpack<T: Pod + Send>(&self, msg: &[u64], dense: &[u32], set: &(impl Fn(u32, T) -> bool + Sync)) -> Vec<u32> {
        let Some(&tag) = msg.first() else { return Vec::new() };
        let bytes: &[u8] = bytemuck::cast_slice(msg);
        let size = std::mem::size_of::<T>();
        let (vertices, values): (&[u32], &[u8]) = if tag == DENSE {
            (dense, &bytes[8..])
        } else {
            let k = msg[1] as usize;
            let ids_end = 16 + (k * 4).div_ceil(8) * 8;
            (bytemuck::cast_slice(&bytes[16..16 + k * 4]), &bytes[ids_end..])
        };
        vertices
            .par_chunks(4096)
            .zip(values.par_chunks(4096 * size))
            .flat_map_iter(|(vs, xs)| {
                vs.iter()
                    .zip(xs.chunks_exact(size))
                    .filter(|&(&v, x)| set(v, bytemuck::pod_read_unaligned(x)))
                    .map(|(&v, _)| v)
                    .collect::<Vec<u32>>()
            })
            .collect()
    }
}
