//! Betweenness centrality on one GPU (Brandes, 2001), sources in batches swept
//! together.

use chatty_algo::tuning::Tuning;
use chatty_comm::cuda::{Check, Dev, Launch};
use chatty_graph::Progress;

use super::{Pending, Step};
use crate::context::Gpu;
use crate::device_graph::{road_like, DeviceGraph};
use crate::launch;
use crate::layouts::{BcArrays, BcCtl};
use crate::{GpuError, Result};

/// Blocks per SM of the BC sweeps on road-like graphs, whose thousands of small levels
/// pay for every block at each grid barrier (moscow one source 8.76 / 9.78 ms, path5k
/// from all sources 111 / 124 ms at 4 / 5 blocks), and on the others, whose big levels
/// need warps in flight (kron22 one source 5.71 / 5.58 / 5.77 ms at 4 / 6 / 8 blocks,
/// 8 spilling registers). One H200 (docs/benchmarks/gpu.md, "fifth pass"). bc.cu
/// bounds the kernel's registers so the wide grid fits (`BC_MAX_BLOCKS_PER_SM`).
const BC_BLOCKS_PER_SM: u32 = 4;
const BC_WIDE_BLOCKS_PER_SM: u32 = 6;
/// Bits a BC batch holds per (source, vertex) pair: its state (value and depth), its
/// place in the order of discovery, and its bits in bc.cu's four bitmaps.
const BC_PAIR_BITS: u64 = (BC_PAIR_STATE_BYTES + 4) * 8 + BC_BITMAPS;
/// bc.cu's BcPair.
const BC_PAIR_STATE_BYTES: u64 = 16;
/// bc.cu's BC_BITMAPS: visited, and three rotating levels.
const BC_BITMAPS: u64 = 4;
/// bc.cu's BC_BITS_*: the forward sweep keeps the bitmaps (its bottom-up levels test
/// them), the backward sweep tests successors in them (when the pairs reached outgrow
/// the L2). On for undirected graphs that are not road-like (kron22 from 64 sources
/// 284 -> 198 ms, urand22 from one 5.3 -> 3.6 ms); off on road-like graphs (top-down
/// only there: the bitmaps' upkeep costs each of thousands of levels) and on directed
/// graphs, where they lost 8-15% (cnr-2000, soc-Slashdot0902) for a cause not yet
/// found. docs/benchmarks/gpu.md, "Issue 26, session 15". `CHATTY_BC_BITS` overrides,
/// for the tuning sweep.
const BC_BITS_FORWARD: u32 = 1;
const BC_BITS_BACKWARD: u32 = 2;
/// Device memory a BC batch may take, at most.
const BC_BATCH_BYTES: u64 = 4 << 30;

/// Sources per BC sweep on a graph of `n` vertices with `free` bytes of device memory:
/// as many as `BC_BATCH_BYTES` (or half the free memory) holds, with every pair's index
/// b * n + v a u32.
fn bc_batch_size(n: usize, sources: usize, free: u64) -> usize {
    let n = n.max(1) as u64;
    let by_memory = BC_BATCH_BYTES.min(free / 2) * 8 / (BC_PAIR_BITS * n);
    by_memory.min(u32::MAX as u64 / n).clamp(1, sources.max(1) as u64) as usize
}

/// Predicted seconds of [`bc`] from `sources` sources on a graph of `n` vertices and
/// `m` edges, about `levels` deep: per batch a launch and two grid barriers a level
/// (about 8 µs each: 11.4 on a 5,000-vertex path, 5.5 on moscow), plus about 0.05 ns
/// per edge and source (kron22: 6.6 ms from one source). Measured on one H200
/// (docs/benchmarks/gpu.md, "Issue 18, second pass").
pub fn bc_predicted_seconds(n: usize, m: u64, sources: usize, levels: u32) -> f64 {
    let batches = sources.div_ceil(bc_batch_size(n, sources, u64::MAX));
    batches as f64 * (20e-6 + 2.0 * levels as f64 * 8e-6) + sources as f64 * m as f64 * 0.05e-9
}

/// A BC level holding more than 1 / `BC_UP_SHARE` of a batch's pairs (or, by bc.cu's
/// edge rule, many edges) is expanded bottom-up, except on road-like graphs, whose
/// bottom-up levels came only at the tail of a search and lost (road-NE from 64 sources
/// 130 -> 124 ms top-down only, path5k from all 111 -> 100 ms; moscow from one 8.76 ->
/// 9.18 ms); `CHATTY_BC_UP_SHARE` overrides (0: top-down only), for the tuning sweep.
const BC_UP_SHARE: u32 = 20;

pub(super) fn bc(gpu: &Gpu, dg: &DeviceGraph, sources: &[u32], progress: &dyn Progress, peak: &mut u64) -> Result<Step> {
    let n = dg.n as u32;
    let (free, _) = gpu.ctx.mem_get_info().check("querying memory")?;
    // CHATTY_BC_BATCH caps the batch, for the tuning sweep.
    let batch = bc_batch_size(dg.n, sources.len(), free as u64).min(Tuning::get().bc_batch.unwrap_or(usize::MAX).max(1));
    let pairs = batch * dg.n;
    let road = road_like(dg.n, dg.m);
    let bit_use = Tuning::get().bc_bits.unwrap_or(if road || dg.directed { 0 } else { BC_BITS_FORWARD | BC_BITS_BACKWARD });
    let words = if bit_use == 0 { 0 } else { pairs.div_ceil(32) };
    let bits = gpu.zeros::<u32>((BC_BITMAPS as usize * words).max(1), "pair bitmaps")?;
    // bc.cu's BcPair: two 8-byte words per pair, zero while unreached.
    let state = gpu.zeros::<u64>(2 * pairs, "path counts and depths")?;
    let order = gpu.zeros::<u32>(pairs, "levels")?;
    let level_end = gpu.zeros::<u32>(dg.n + 1, "level ends")?;
    let hubs = gpu.zeros::<u32>(batch * dg.hubs as usize, "hub pairs")?;
    let hub_sum = gpu.zeros::<f64>((batch * dg.hubs as usize).max(1), "hub sums")?;
    let scores = gpu.zeros::<f64>(dg.n, "scores")?;
    let mut batch_sources = gpu.zeros::<u32>(batch, "sources")?;
    let ctl = gpu.control(&BcCtl::default())?;
    // Bottom-up levels read in-edges: the out-edges of an undirected graph.
    let in_edges = (!dg.directed).then_some(&dg.out).or(dg.inc.as_ref());
    let up_share = Tuning::get().bc_up_share.unwrap_or(if road { 0 } else { BC_UP_SHARE });
    let mut arrays = BcArrays {
        off: Dev::from(&dg.out.off).addr(),
        adj: Dev::from(&dg.out.adj).addr(),
        in_off: in_edges.map_or(0, |e| Dev::from(&e.off).addr()),
        in_adj: in_edges.map_or(0, |e| Dev::from(&e.adj).addr()),
        sources: Dev::from(&batch_sources).addr(),
        pair: Dev::from(&state).addr(),
        hub_sum: Dev::from(&hub_sum).addr(),
        order: Dev::from(&order).addr(),
        level_end: Dev::from(&level_end).addr(),
        hubs: Dev::from(&hubs).addr(),
        bc: Dev::from(&scores).addr(),
        bits: Dev::from(&bits).addr(),
        n,
        batch: 0,
        up_share: if in_edges.is_some() { up_share } else { 0 },
        words: words as u32,
        bit_use,
        l2_pairs: (gpu.l2_bytes / BC_PAIR_STATE_BYTES).min(u32::MAX as u64) as u32,
    };
    *peak = (*peak).max(gpu.used_bytes());
    let blocks_per_sm = if road { BC_BLOCKS_PER_SM } else { BC_WIDE_BLOCKS_PER_SM };
    let cfg = gpu.cooperative_cfg_with(gpu.f("bc_batch"), blocks_per_sm)?;
    let start = gpu.timer()?;
    progress.start("bc: sources", sources.len() as u64);
    for chunk in sources.chunks(batch) {
        gpu.stream.memcpy_htod(chunk, &mut batch_sources.slice_mut(0..chunk.len())).check("uploading sources")?;
        arrays.batch = chunk.len() as u32;
        // SAFETY: every array holds batch x n pairs (hubs and
        // their sums: batch x the hub vertices, level ends n + 1, bitmaps a bit per pair),
        // the kernel leaves the pairs, bitmaps and sums zero. Cooperative: its grid barriers need every block resident.
        unsafe { launch::bc_batch(gpu, Launch::Cooperative(cfg), &ctl, arrays) }.map_err(|e| {
            GpuError::unsupported(format!("bc needs a cooperative launch, which this GPU refused ({e}); run it with --engine cpu"))
        })?;
        progress.advance(chunk.len() as u64);
    }
    Ok((Pending::Values(scores), sources.len() as u64, start, gpu.timer()?))
}
