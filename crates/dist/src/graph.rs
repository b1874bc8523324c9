//! What one rank holds of a graph: its vertex range's out- and in-edges, read from
//! the shared `.cgr` by rows (in-edges of a directed graph without a stored
//! transpose are shuffled from their sources' owners), and the checks every reader
//! of a `.cgr` makes, split across ranks: structure per rank, section checksums by
//! pieces, the transpose and symmetry by summed fingerprints.

use std::ops::Range;
use std::path::Path;

use chatty_graph::cgr::CgrFile;
use chatty_graph::{Buf, Rows, WeightType};
use rayon::prelude::*;

use crate::comm::Comm;
use crate::{agree, DistError};
use chatty_graph::partition::Ranges;

/// How the ranks get their rows (`--distribute`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Distribute {
    /// Every rank maps the same path (a shared or replicated file system).
    Shared,
    /// Rank 0 reads and checks the file and sends each rank its rows over MPI (the
    /// other ranks need no copy of the file).
    Mpi,
    /// Rank 0 multicasts the file to a local directory of every other host
    /// ([`crate::multicast`]); then as `Shared`, each rank on its host's copy.
    Multicast,
}

/// One rank's part of the graph.
pub struct LocalGraph {
    /// Every rank's vertex range.
    pub ranges: Ranges,
    /// This rank.
    pub rank: usize,
    /// Vertices.
    pub n: usize,
    /// Stored directed edges.
    pub m: u64,
    /// Whether edges are directed.
    pub directed: bool,
    /// How edges are weighted.
    pub weight_type: WeightType,
    /// The source's first vertex id.
    pub id_base: u32,
    /// Out-edges of the owned vertices.
    pub out: Rows,
    /// In-edges of the owned vertices (`None`: undirected, the out-edges).
    inc: Option<Rows>,
    /// Every vertex's out-offsets, mapped (degrees for source picking; touched where read).
    out_offsets: Buf<u64>,
}

/// `file`, unless it is stored renumbered: the ranks' answers and sources are in the
/// stored ids, which only the one-process engines map back.
fn in_input_order(file: CgrFile) -> Result<CgrFile, DistError> {
    let refuse = |what: &str| Err(DistError::Graph(chatty_graph::Error::Usage(what.into())));
    match (file.is_renumbered(), file.is_named()) {
        (false, false) => Ok(file),
        (true, _) => refuse(
            "the graph is stored renumbered (chatty convert --reorder); the MPI engine reads a graph in its input's order: convert it again without --reorder",
        ),
        (false, true) => refuse(
            "the graph's vertices are named by its input (ids with gaps, or labels); the MPI engine numbers them 0 to n-1: convert the input with --keep-id-range",
        ),
    }
}

impl LocalGraph {
    /// Opens `path` on every rank (collective) and checks it: the same header on every
    /// rank (its digest), header and section table here, rows' structure per rank, section checksums split by pieces across
    /// ranks, the stored transpose and undirected symmetry by fingerprints summed
    /// over ranks. Any rank's failure is every rank's error.
    pub fn open(comm: &Comm, path: &Path) -> Result<LocalGraph, DistError> {
        let file = agree(comm, CgrFile::open(path).map_err(DistError::Graph).and_then(in_input_order))?;
        // Before any rank sizes a collective by its own header.
        let (lo, hi) = comm.min_max_u64(file.digest());
        if lo != hi {
            return Err(DistError::Inconsistent(format!("{}: the ranks opened different graphs under this path", path.display())));
        }
        let out_offsets = agree(comm, file.offsets(false).map_err(DistError::Graph))?;
        let ranges = Ranges::balanced(&out_offsets, comm.size());
        let own = ranges.range(comm.rank());
        let shuffled = file.is_directed() && !file.has_transpose();
        admit(comm, &out_offsets, &own, if shuffled { shuffle_bytes(file.weight_type()) } else { 0 })?;
        let out = agree(comm, file.rows(false, own.start, own.end).map_err(DistError::Graph))?;
        let inc = match (file.is_directed(), file.has_transpose()) {
            (false, _) => None,
            (true, true) => Some(agree(comm, file.rows(true, own.start, own.end).map_err(DistError::Graph))?),
            (true, false) => Some(shuffle_in_edges(comm, &ranges, &out, file.num_vertices())?),
        };
        let g = LocalGraph {
            ranges,
            rank: comm.rank(),
            n: file.num_vertices(),
            m: file.num_edges(),
            directed: file.is_directed(),
            weight_type: file.weight_type(),
            id_base: file.id_base(),
            out,
            inc,
            out_offsets,
        };
        check_checksums(comm, &file)?;
        g.check_consistency(comm, &file, path)?;
        Ok(g)
    }

    /// Rank 0 reads `path`, checks all of it ([`chatty_graph::cgr::check`]: checksums,
    /// structure, consistency) and sends every rank the out-offsets of all vertices
    /// (degrees, ranges) and its own rows (collective). With `bfs_order`, rank 0 first
    /// renumbers the vertices in breadth-first order (`--partition bfs`: neighbours
    /// land in the same range) and every rank gets the permutation too (old id → new).
    pub fn receive(comm: &Comm, path: &Path, bfs_order: bool) -> Result<(LocalGraph, Option<Vec<u32>>), DistError> {
        let whole = match comm.rank() {
            0 => CgrFile::open(path)
                .map_err(DistError::Graph)
                .and_then(in_input_order)
                .and_then(|_| chatty_graph::cgr::check(path, &chatty_graph::NoProgress).map_err(DistError::Graph))
                .and_then(|g| {
                    if !bfs_order {
                        return Ok(Some((g, None)));
                    }
                    let new_id = chatty_graph::partition::bfs_order(&g);
                    let renumbered = chatty_graph::transform::relabel(&g, &new_id).map_err(DistError::Graph)?;
                    Ok(Some((renumbered.with_id_base(g.id_base()), Some(new_id))))
                }),
            _ => Ok(None),
        };
        let (whole, new_id) = agree(comm, whole)?.unzip();
        let new_id = bfs_order.then(|| from_rank_0(comm, new_id.flatten()));
        let header = share_header(comm, whole.as_ref());
        let (n, m, directed, transpose) = (header[0] as usize, header[1], header[2] != 0, header[3] != 0);
        let weight_type = [WeightType::None, WeightType::Int, WeightType::Float][header[4] as usize];
        let out_offsets: Buf<u64> = match &whole {
            Some(g) => g.out_edges().offsets().to_vec().into(),
            None => comm.receive_from::<u64>(0).into(),
        };
        let ranges = Ranges::balanced(&out_offsets, comm.size());
        let own = ranges.range(comm.rank());
        let sides: &[bool] = if directed && transpose { &[false, true] } else { &[false] };
        // The rows received, each side's, and a shuffle's where the transpose is built.
        let row_bytes = if weight_type == WeightType::None { 4 } else { 8 };
        let shuffle = if directed && !transpose { shuffle_bytes(weight_type) } else { 0 };
        admit(comm, &out_offsets, &own, sides.len() as u64 * row_bytes + shuffle)?;
        let mut rows = Vec::new();
        for &side in sides {
            let parts = match &whole {
                Some(g) => {
                    let adj = if side { g.in_edges() } else { g.out_edges() };
                    for r in 1..comm.size() {
                        let (offsets, targets, weights) = rows_of(adj, ranges.range(r));
                        comm.send_to(r, &offsets);
                        comm.send_to(r, targets);
                        comm.send_to(r, weights.unwrap_or(&[]));
                    }
                    let (offsets, targets, weights) = rows_of(adj, own.clone());
                    (offsets, targets.to_vec(), weights.map(<[u32]>::to_vec))
                }
                None => {
                    let (offsets, targets, weights) = (comm.receive_from(0), comm.receive_from(0), comm.receive_from::<u32>(0));
                    (offsets, targets, (weight_type != WeightType::None).then_some(weights))
                }
            };
            let (offsets, targets, weights) = parts;
            rows.push(
                Rows::from_parts(own.start, offsets.into(), targets.into(), weight_type, weights.map(Into::into), n)
                    .map_err(|e| DistError::Inconsistent(format!("rows sent to rank {}: {e}", comm.rank())))?,
            );
        }
        let out = rows.remove(0);
        let inc = match (directed, rows.pop()) {
            (false, _) => None,
            (true, Some(inc)) => Some(inc),
            (true, None) => Some(shuffle_in_edges(comm, &ranges, &out, n)?),
        };
        Ok((
            LocalGraph { ranges, rank: comm.rank(), n, m, directed, weight_type, id_base: header[5] as u32, out, inc, out_offsets },
            new_id,
        ))
    }

    /// `--partition bfs` on a file every rank maps (collective): after
    /// [`LocalGraph::open`]'s checks, rank 0 numbers the vertices in breadth-first
    /// order and every rank gets the permutation (old id → new); each rank then builds
    /// its own range's rows in the new ids from the mapped file, reading the rows it
    /// needs wherever they are stored and holding only its own.
    pub fn open_renumbered(comm: &Comm, path: &Path) -> Result<(LocalGraph, Vec<u32>), DistError> {
        let stored = LocalGraph::open(comm, path)?;
        let order = match comm.rank() {
            0 => chatty_graph::cgr::load(path).map(|g| Some(chatty_graph::partition::bfs_order(&g))).map_err(DistError::Graph),
            _ => Ok(None),
        };
        let new_id = from_rank_0(comm, agree(comm, order)?);
        let old_id = chatty_graph::transform::inverse_permutation(&new_id).map_err(DistError::Graph)?;
        let file = CgrFile::open(path).map_err(DistError::Graph)?;
        let n = stored.n as u32;
        let all_out = file.rows(false, 0, n).map_err(DistError::Graph)?;
        let mut out_offsets = Vec::with_capacity(stored.n + 1);
        out_offsets.push(0u64);
        for &v in &old_id {
            out_offsets.push(out_offsets[out_offsets.len() - 1] + all_out.degree(v) as u64);
        }
        let ranges = Ranges::balanced(&out_offsets, comm.size());
        let own = ranges.range(comm.rank());
        let out = renumber_rows(&all_out, &new_id, &old_id, own.clone(), stored.n)?;
        let inc = match (stored.directed, file.has_transpose()) {
            (false, _) => None,
            (true, true) => Some(renumber_rows(&file.rows(true, 0, n).map_err(DistError::Graph)?, &new_id, &old_id, own, stored.n)?),
            (true, false) => Some(shuffle_in_edges(comm, &ranges, &out, stored.n)?),
        };
        let g = LocalGraph { ranges, rank: comm.rank(), out, inc, out_offsets: out_offsets.into(), ..stored };
        Ok((g, new_id))
    }

    /// The whole graph's out-edges, gathered from every rank's rows (collective): what
    /// `--verify` reads when the ranks have no shared copy of the file.
    pub fn gather_whole(&self, comm: &Comm) -> Result<chatty_graph::Graph, DistError> {
        let o = self.out.offsets();
        let edges = o[0] as usize..o[o.len() - 1] as usize;
        let degrees: Vec<u64> = o.windows(2).map(|w| w[1] - w[0]).collect();
        let offsets: Vec<u64> = std::iter::once(0)
            .chain(comm.all_gather(&degrees)?.into_iter().scan(0, |at, d| {
                *at += d;
                Some(*at)
            }))
            .collect();
        let targets = comm.all_gather(&self.out.targets()[edges.clone()])?;
        let weights = match self.out.raw_weights() {
            Some(w) => Some(comm.all_gather(&w[edges])?),
            None => None,
        };
        let adj = chatty_graph::Adjacency::from_parts(offsets, targets, self.weight_type, weights).map_err(DistError::Inconsistent)?;
        Ok(chatty_graph::Graph::from_adjacency(adj, self.directed).with_id_base(self.id_base))
    }

    /// In-edges of the owned vertices.
    pub fn inc(&self) -> &Rows {
        self.inc.as_ref().unwrap_or(&self.out)
    }

    /// The owned vertices.
    pub fn own(&self) -> Range<u32> {
        self.ranges.range(self.rank)
    }

    /// Out-degree of any vertex.
    pub fn out_degree(&self, v: u32) -> u64 {
        self.out_offsets[v as usize + 1] - self.out_offsets[v as usize]
    }

    /// The sources of in-edges (or targets of out-edges) owned elsewhere, ascending.
    pub fn ghosts(&self, rows: &Rows) -> Vec<u32> {
        let own = self.own();
        let mut g: Vec<u32> =
            own.clone().into_par_iter().flat_map_iter(|v| rows.neighbors(v).iter().copied().filter(|u| !own.contains(u))).collect();
        g.par_sort_unstable();
        g.dedup();
        g
    }

    fn check_consistency(&self, comm: &Comm, file: &CgrFile, path: &Path) -> Result<(), DistError> {
        let key = comm.broadcast_u64(std::hash::BuildHasher::hash_one(&std::collections::hash_map::RandomState::new(), self.rank));
        let fp = chatty_graph::cgr::rows_fingerprints;
        let [out, out_reversed] = fp(&self.out, key);
        let [out, out_reversed, transposed] =
            comm.sum_u64([out, out_reversed, if file.has_transpose() { fp(self.inc(), key)[1] } else { 0 }]);
        let bad = |msg: &str| Err(DistError::Inconsistent(format!("{}: {msg}", path.display())));
        if file.has_transpose() && transposed != out {
            return bad("the stored transpose is not the transpose of the out-edges: the file is inconsistent");
        }
        if !self.directed && out_reversed != out {
            return bad("marked undirected, but its edges are not symmetric (some u→v has no v→u): the file is inconsistent");
        }
        Ok(())
    }
}

/// Bytes per local edge that building in-edges by a shuffle holds at its peak: the
/// parcels sent and received (a key, and a weight word), the sorted pairs and the rows.
fn shuffle_bytes(weight_type: WeightType) -> u64 {
    match weight_type {
        WeightType::None => 8 + 8 + 16 + 4,
        _ => 16 + 16 + 16 + 8,
    }
}

/// Admits what this rank will hold for its vertices `own` beside a mapped file:
/// `per_edge` bytes per local out-edge (`offsets`: every vertex's) and the kernels'
/// state, about 64 bytes per vertex, against the memory this process may use
/// ([`chatty_graph::check_memory`]). A refusal on any rank is every rank's.
fn admit(comm: &Comm, offsets: &[u64], own: &Range<u32>, per_edge: u64) -> Result<(), DistError> {
    let edges = offsets[own.end as usize] - offsets[own.start as usize];
    let bytes = edges * per_edge + 64 * own.len() as u64;
    let what = format!("rank {}'s part of the graph ({} vertices, {edges} edges)", comm.rank(), own.len());
    agree(comm, chatty_graph::check_memory(&what, bytes).map_err(DistError::Graph))
}

/// Rows `range` of `adj`: offsets from 0, targets and weights.
fn rows_of(adj: &chatty_graph::Adjacency, range: Range<u32>) -> (Vec<u64>, &[u32], Option<&[u32]>) {
    let o = adj.offsets();
    let (first, last) = (o[range.start as usize], o[range.end as usize]);
    let offsets = o[range.start as usize..=range.end as usize].iter().map(|x| x - first).collect();
    let edges = first as usize..last as usize;
    (offsets, &adj.targets()[edges.clone()], adj.raw_weights().map(|w| &w[edges]))
}

/// Every section checksum, each rank hashing every size-th piece.
fn check_checksums(comm: &Comm, file: &CgrFile) -> Result<(), DistError> {
    let (rank, size, pieces) = (comm.rank(), comm.size(), file.pieces());
    let mine: Vec<u64> = (rank..pieces).step_by(size).collect::<Vec<_>>().into_par_iter().map(|i| file.piece_checksum(i)).collect();
    let gathered = comm.all_gather(&mine)?;
    // Rank r's list holds pieces r, r + size, ...: put them back in piece order.
    let mut at = vec![0usize; size];
    for r in 1..size {
        at[r] = at[r - 1] + (r - 1..pieces).step_by(size).count();
    }
    let sums: Vec<u64> = (0..pieces).map(|i| gathered[at[i % size] + i / size]).collect();
    file.check_pieces(&sums).map_err(DistError::Graph)
}

/// Rank 0's header of `whole` (vertices, edges, directed, in-edges built, weight type,
/// id base), and the out-offsets of all vertices, sent to every other rank
/// (collective); returns the header.
fn share_header(comm: &Comm, whole: Option<&chatty_graph::Graph>) -> Vec<u64> {
    match whole {
        Some(g) => {
            let weight = match g.weight_type() {
                WeightType::None => 0,
                WeightType::Int => 1,
                WeightType::Float => 2,
            };
            let h =
                vec![g.num_vertices() as u64, g.num_edges(), g.is_directed() as u64, g.has_in_edges() as u64, weight, g.id_base() as u64];
            for r in 1..comm.size() {
                comm.send_to(r, &h);
                comm.send_to(r, g.out_edges().offsets());
            }
            h
        }
        None => comm.receive_from(0),
    }
}

/// In-edges of the owned vertices of a directed graph stored without its transpose:
/// every rank sends each out-edge to its target's owner.
fn shuffle_in_edges(comm: &Comm, ranges: &Ranges, out: &Rows, n: usize) -> Result<Rows, DistError> {
    let weighted = out.raw_weights().is_some();
    let mut parcels: Vec<Vec<u64>> = vec![Vec::new(); comm.size()];
    for u in out.vertices() {
        for e in out.range(u) {
            let v = out.targets()[e];
            let p = &mut parcels[ranges.owner(v)];
            p.push((v as u64) << 32 | u as u64);
            if let Some(w) = out.raw_weights() {
                p.push(w[e] as u64);
            }
        }
    }
    let got = comm.all_to_all(&parcels)?;
    drop(parcels);
    let stride = if weighted { 2 } else { 1 };
    let mut edges: Vec<(u64, u32)> =
        got.iter().flat_map(|p| p.chunks_exact(stride).map(|c| (c[0], c.get(1).map_or(0, |&w| w as u32)))).collect();
    edges.par_sort_unstable();
    let own = ranges.range(comm.rank());
    let mut offsets = vec![0u64; own.len() + 1];
    for &(key, _) in &edges {
        offsets[((key >> 32) as u32 - own.start) as usize + 1] += 1;
    }
    for i in 1..offsets.len() {
        offsets[i] += offsets[i - 1];
    }
    let targets: Vec<u32> = edges.iter().map(|&(key, _)| key as u32).collect();
    let weights = weighted.then(|| edges.iter().map(|&(_, w)| w).collect::<Vec<u32>>().into());
    Rows::from_parts(own.start, offsets.into(), targets.into(), out.weight_type(), weights, n)
        .map_err(|e| DistError::Inconsistent(format!("in-edges shuffled to rank {}: {e}", comm.rank())))
}

/// Rank 0's `value` on every rank (collective; `value` is `Some` on rank 0 only).
fn from_rank_0(comm: &Comm, value: Option<Vec<u32>>) -> Vec<u32> {
    match value {
        Some(v) => {
            for r in 1..comm.size() {
                comm.send_to(r, &v);
            }
            v
        }
        None => comm.receive_from::<u32>(0),
    }
}

/// Rows `range` (new ids) of `rows` (every vertex, file ids), renumbered by `new_id`
/// (`old_id` its inverse), each list sorted with its weights alongside.
fn renumber_rows(rows: &Rows, new_id: &[u32], old_id: &[u32], range: Range<u32>, n: usize) -> Result<Rows, DistError> {
    let lists: Vec<Vec<(u32, u32)>> = range
        .clone()
        .into_par_iter()
        .map(|w| {
            let edges = rows.range(old_id[w as usize]);
            let weight = |e: usize| rows.raw_weights().map_or(0, |ws| ws[e]);
            let mut list: Vec<(u32, u32)> = edges.map(|e| (new_id[rows.targets()[e] as usize], weight(e))).collect();
            list.sort_unstable();
            list
        })
        .collect();
    let mut offsets = Vec::with_capacity(lists.len() + 1);
    offsets.push(0u64);
    for list in &lists {
        offsets.push(offsets[offsets.len() - 1] + list.len() as u64);
    }
    let targets: Vec<u32> = lists.par_iter().flat_map_iter(|l| l.iter().map(|e| e.0)).collect();
    let weights = rows.raw_weights().map(|_| lists.par_iter().flat_map_iter(|l| l.iter().map(|e| e.1)).collect::<Vec<u32>>());
    Rows::from_parts(range.start, offsets.into(), targets.into(), rows.weight_type(), weights.map(Into::into), n)
        .map_err(|e| DistError::Inconsistent(format!("renumbered rows: {e}")))
}
