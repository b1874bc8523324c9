//! Louvain communities on one GPU (`kernels/louvain.cu`): the levels of
//! [`chatty_algo::community`] (its sweeps, blocks of decisions, seeded orders and
//! stopping rules) with every step on the device. The host launches, and reads a
//! control block once per sweep and a count once per contraction.

use chatty_algo::community::{self, CommunityParams};
use chatty_comm::cuda::{addr, Dev, Launch};
use chatty_graph::{Progress, WeightType};
use cudarc::driver::{CudaSlice, LaunchConfig};

use super::{Pending, Step};
use crate::context::{ControlBlock, Gpu};
use crate::device_graph::DeviceGraph;
use crate::layouts::{LouvainCtl, LouvainLevel};
use crate::{launch, GpuError, Result};

/// A level's arrays: its own rows (none on the first level, which reads the input's),
/// its arcs' weights, and its vertices' out-, in- and self-weights.
struct Arrays {
    _rows: Option<(CudaSlice<u64>, CudaSlice<u32>)>,
    w: CudaSlice<f64>,
    k: [CudaSlice<f64>; 3],
}

/// A level on the device: `view` is what the kernels read, `_arrays` what it points into.
struct Level {
    n: u32,
    /// Arcs listed (both lists on the first level of a directed graph).
    arcs: u64,
    view: LouvainLevel,
    _arrays: Arrays,
}

impl Level {
    fn new(n: u32, arcs: u64, a: Arrays, rows: LouvainLevel) -> Level {
        let view = LouvainLevel { w: addr(&a.w), k_out: addr(&a.k[0]), k_in: addr(&a.k[1]), inside: addr(&a.k[2]), n, ..rows };
        Level { n, arcs, view, _arrays: a }
    }

    /// The input graph as the first level (louvain_first_level).
    fn first(gpu: &Gpu, dg: &DeviceGraph) -> Result<Level> {
        let n = dg.n as u32;
        let inc = dg.inc.as_ref().filter(|_| dg.directed);
        let arcs = dg.m * if inc.is_some() { 2 } else { 1 };
        let w = gpu.zeros::<f64>(arcs as usize, "arc weights")?;
        let k = [gpu.zeros(dg.n, "out-weights")?, gpu.zeros(dg.n, "in-weights")?, gpu.zeros(dg.n, "self-weights")?];
        let float = (dg.weight_type == WeightType::Float) as u32;
        // SAFETY: the CSRs hold n vertices and m arcs each; w holds both lists' arcs.
        unsafe {
            launch::louvain_first_level(
                gpu,
                Launch::Grid(gpu.cfg()),
                n,
                &dg.out.off,
                &dg.out.adj,
                dg.out.weights.as_ref(),
                inc.map(|a| &a.off),
                inc.map(|a| &a.adj),
                inc.and_then(|a| a.weights.as_ref()),
                float,
                dg.m,
                &w,
                &k[0],
                &k[1],
                &k[2],
            )
        }?;
        let view = LouvainLevel {
            off: addr(&dg.out.off),
            adj: addr(&dg.out.adj),
            off2: inc.map_or(0, |a| addr(&a.off)),
            adj2: inc.map_or(0, |a| addr(&a.adj)),
            m1: dg.m,
            ..Default::default()
        };
        Ok(Level::new(n, arcs, Arrays { _rows: None, w, k }, view))
    }
}

/// Bits of the contraction's table for `arcs` arcs: at least twice as many slots.
fn table_bits(arcs: u64) -> u32 {
    (2 * arcs.max(1)).next_power_of_two().trailing_zeros()
}

/// Device bytes a run needs beyond the graph, for a first level of `n` vertices and
/// `arcs` arcs: its weights, the decisions' and the contraction's tables, the
/// per-vertex state, and two more levels at most as large (the current and the next).
fn bytes_needed(n: u64, arcs: u64) -> u64 {
    let level = arcs * 12 + n * 32;
    arcs * 8 + n * 24 + 2 * arcs * 12 + (16 << table_bits(arcs)) + n * 52 + 2 * level
}

/// The arrays every level reuses, sized for the first.
struct Scratch {
    keys: CudaSlice<u32>,
    vals: CudaSlice<f64>,
    pair_keys: CudaSlice<u64>,
    pair_vals: CudaSlice<f64>,
    movers: CudaSlice<u32>,
    targets: CudaSlice<u32>,
    comm: CudaSlice<u32>,
    tot_out: CudaSlice<f64>,
    tot_in: CudaSlice<f64>,
    size: CudaSlice<u32>,
    coarse: CudaSlice<u32>,
    number: CudaSlice<u64>,
    tiles: CudaSlice<u64>,
    ctl: ControlBlock<LouvainCtl>,
}

impl Scratch {
    fn new(gpu: &Gpu, n: usize, arcs: u64) -> Result<Scratch> {
        let slots = 1usize << table_bits(arcs);
        Ok(Scratch {
            keys: gpu.zeros(2 * arcs as usize, "community tables")?,
            vals: gpu.zeros(2 * arcs as usize, "community tables")?,
            pair_keys: gpu.zeros(slots, "the contraction's table")?,
            pair_vals: gpu.zeros(slots, "the contraction's table")?,
            movers: gpu.zeros(n, "moves")?,
            targets: gpu.zeros(n, "moves")?,
            comm: gpu.zeros(n, "communities")?,
            tot_out: gpu.zeros(n, "community weights")?,
            tot_in: gpu.zeros(n, "community weights")?,
            size: gpu.zeros(n, "community sizes")?,
            coarse: gpu.zeros(n, "the next level's vertices")?,
            number: gpu.zeros(n + 1, "community numbers")?,
            tiles: gpu.zeros((n + 1).div_ceil(1024) + 1, "scan tiles")?,
            ctl: gpu.control(&LouvainCtl::default())?,
        })
    }
}

/// `a[0..len)` replaced by its exclusive prefix sums.
fn exclusive_scan(gpu: &Gpu, a: &CudaSlice<u64>, len: u64, tiles: &CudaSlice<u64>) -> Result<()> {
    let one_block = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (crate::context::BLOCK, 1, 1), shared_mem_bytes: 0 };
    // SAFETY: `a` holds len values and `tiles` one per 1024 of them.
    unsafe {
        launch::scan_tiles(gpu, Launch::Grid(gpu.cfg()), a, len, tiles)?;
        launch::scan_tile_sums(gpu, Launch::Grid(one_block), tiles, len.div_ceil(1024))?;
        launch::scan_apply(gpu, Launch::Grid(gpu.cfg()), a, len, tiles)
    }
}

/// Element `i` of `a`.
fn read_at(gpu: &Gpu, a: &CudaSlice<u64>, i: usize, what: &str) -> Result<u64> {
    let mut x = [0u64];
    gpu.download_into(a, i, &mut x, what)?;
    Ok(x[0])
}

/// Starts a partition of `l`: each vertex alone, or `from`'s communities (swapped in);
/// and the communities' totals.
fn start_partition(gpu: &Gpu, l: &Level, s: &mut Scratch, from: Option<&mut CudaSlice<u32>>) -> Result<()> {
    let n = l.n;
    match from {
        Some(from) => std::mem::swap(&mut s.comm, from),
        // SAFETY: comm holds at least n.
        None => unsafe { launch::iota_u32(gpu, Launch::Grid(gpu.cfg()), &s.comm, n) }?,
    }
    gpu.fill_f64(&mut s.tot_out, n, 0.0)?;
    gpu.fill_f64(&mut s.tot_in, n, 0.0)?;
    gpu.fill_u32(&mut s.size, n, 0)?;
    // SAFETY: every array holds the level's n vertices.
    unsafe { launch::louvain_totals(gpu, Launch::Grid(gpu.cfg()), l.view, &s.comm, &s.tot_out, &s.tot_in, &s.size) }
}

/// Sweeps of moves over `l` from the partition started, until it settles; the moves.
fn move_vertices(gpu: &Gpu, l: &Level, s: &Scratch, cp: CommunityParams, m: f64, rng: &mut community::SweepRng) -> Result<u64> {
    let n = l.n as usize;
    let mut moves = 0;
    for _ in 0..community::MAX_SWEEPS {
        let (a, b) = community::sweep_order(rng, n);
        for lo in (0..n).step_by(community::block_size(n)) {
            let hi = (lo + community::block_size(n)).min(n);
            // SAFETY: the level's arrays hold n vertices; the tables twice its arcs;
            // movers and targets n; a block's moves are applied before the next's.
            unsafe {
                for decide in [launch::louvain_decide, launch::louvain_decide_heavy] {
                    decide(
                        gpu,
                        Launch::Grid(gpu.cfg()),
                        l.view,
                        Dev::from(&s.comm),
                        Dev::from(&s.tot_out),
                        Dev::from(&s.tot_in),
                        Dev::from(&s.size),
                        cp.resolution,
                        m,
                        a,
                        b,
                        lo as u32,
                        hi as u32,
                        Dev::from(&s.keys),
                        Dev::from(&s.vals),
                        Dev::from(&s.movers),
                        Dev::from(&s.targets),
                        Dev::from(&s.ctl),
                    )?;
                }
                launch::louvain_apply(
                    gpu,
                    Launch::Grid(gpu.cfg()),
                    l.view,
                    &s.movers,
                    &s.targets,
                    &s.comm,
                    &s.tot_out,
                    &s.tot_in,
                    &s.size,
                    &s.ctl,
                )?;
            }
        }
        let c = gpu.read_control(&s.ctl)?;
        gpu.write_control(&s.ctl, &LouvainCtl::default())?;
        moves += c.moved;
        if community::sweep_settled(c.moved, n, c.gained) {
            break;
        }
    }
    Ok(moves)
}

/// The modularity of the partition started on `l` (of total arc weight `m`).
fn quality(gpu: &Gpu, l: &Level, s: &Scratch, resolution: f64, m: f64) -> Result<f64> {
    gpu.write_control(&s.ctl, &LouvainCtl::default())?;
    // SAFETY: every array holds the level's n vertices.
    unsafe { launch::louvain_quality(gpu, Launch::Grid(gpu.cfg()), l.view, &s.comm, &s.tot_out, &s.tot_in, resolution, m, &s.ctl) }?;
    Ok(gpu.read_control(&s.ctl)?.sum / m)
}

/// The next level: one vertex per community of `s.comm` on `l` (`s.coarse`: each
/// vertex's vertex in it).
fn contract(gpu: &Gpu, l: &Level, s: &mut Scratch) -> Result<Level> {
    let cfg = Launch::Grid(gpu.cfg());
    let n = l.n as usize;
    gpu.fill_u64(&mut s.number, n as u32 + 1, 0)?;
    // SAFETY: comm's communities are vertices of l; number holds n + 1.
    unsafe { launch::louvain_mark(gpu, cfg, l.n, &s.comm, &s.number) }?;
    exclusive_scan(gpu, &s.number, n as u64 + 1, &s.tiles)?;
    let count = read_at(gpu, &s.number, n, "the community count")? as usize;
    let k = [gpu.zeros(count, "out-weights")?, gpu.zeros(count, "in-weights")?, gpu.zeros(count, "self-weights")?];
    let bits = table_bits(l.arcs);
    let slots = 1u64 << bits;
    gpu.fill_u64(&mut s.pair_keys, slots as u32, u64::MAX)?;
    gpu.fill_f64(&mut s.pair_vals, slots as u32, 0.0)?;
    let off = gpu.zeros::<u64>(count + 1, "offsets")?;
    // SAFETY: coarse ids are below count; the table holds `slots` (at most the first level's).
    unsafe {
        launch::louvain_coarsen_vertices(gpu, cfg, l.view, &s.comm, &s.number, &s.coarse, &k[0], &k[1], &k[2])?;
        launch::louvain_coarsen_arcs(gpu, cfg, l.view, &s.coarse, &s.pair_keys, &s.pair_vals, bits, &k[2])?;
        launch::louvain_count_rows(gpu, cfg, slots, &s.pair_keys, &off)?;
    }
    exclusive_scan(gpu, &off, count as u64 + 1, &s.tiles)?;
    let arcs = read_at(gpu, &off, count, "the arc count")?;
    let adj = gpu.zeros::<u32>(arcs as usize, "targets")?;
    let w = gpu.zeros::<f64>(arcs as usize, "arc weights")?;
    let cursor = gpu.zeros::<u64>(count, "row cursors")?;
    // SAFETY: off holds each row's start among `arcs`, which adj and w hold.
    unsafe { launch::louvain_fill_rows(gpu, cfg, slots, &s.pair_keys, &s.pair_vals, &off, &cursor, &adj, &w) }?;
    let view = LouvainLevel { off: addr(&off), adj: addr(&adj), ..Default::default() };
    Ok(Level::new(count as u32, arcs, Arrays { _rows: Some((off, adj)), w, k }, view))
}

/// Louvain on the device graph: each vertex's community labelled by its smallest
/// member, and the modularity (`Pending::Communities`).
pub(super) fn louvain(gpu: &Gpu, dg: &DeviceGraph, p: &chatty_algo::Params, progress: &dyn Progress, peak: &mut u64) -> Result<Step> {
    let (n, cp) = (dg.n, p.community);
    let arcs = dg.m * if dg.directed { 2 } else { 1 };
    if table_bits(arcs) >= 32 {
        return Err(GpuError::unsupported(format!("louvain on one GPU takes up to 2^30 arcs; this graph lists {arcs}: use --engine cpu")));
    }
    let (needed, free) = (bytes_needed(n as u64, arcs), gpu.free_bytes()?);
    if needed > free {
        return Err(GpuError::OutOfMemory { device: gpu.name.clone(), needed_mib: needed >> 20, free_mib: free >> 20 });
    }
    let mut s = Scratch::new(gpu, n, arcs)?;
    let mut at = gpu.zeros::<u32>(n, "each vertex's community")?;
    let start = gpu.timer()?;
    let first = Level::first(gpu, dg)?;
    // SAFETY: both hold n.
    unsafe {
        launch::iota_u32(gpu, Launch::Grid(gpu.cfg()), &at, n as u32)?;
        launch::louvain_total_weight(gpu, Launch::Grid(gpu.cfg()), first.view, &s.ctl)?;
    }
    let m = gpu.read_control(&s.ctl)?.sum;
    gpu.write_control(&s.ctl, &LouvainCtl::default())?;
    let mut rng = community::sweep_rng(p.seed);
    progress.start("louvain: levels", 0);
    let (mut modularity, mut levels) = (0.0, 0);
    start_partition(gpu, &first, &mut s, None)?;
    // No arcs: every vertex alone, modularity 0 (as networkx).
    if m > 0.0 {
        modularity = quality(gpu, &first, &s, cp.resolution, m)?;
        let mut coarse: Option<Level> = None;
        for depth in 1..=cp.max_level.unwrap_or(community::MAX_LEVELS).min(community::MAX_LEVELS) {
            let level = coarse.as_ref().unwrap_or(&first);
            if depth > 1 {
                start_partition(gpu, level, &mut s, None)?;
            }
            if move_vertices(gpu, level, &s, cp, m, &mut rng)? == 0 {
                break;
            }
            let q = quality(gpu, level, &s, cp.resolution, m)?;
            let next = contract(gpu, level, &mut s)?;
            // SAFETY: `at` holds the input's vertices, each a vertex of `level`.
            unsafe { launch::louvain_follow(gpu, Launch::Grid(gpu.cfg()), n as u32, &at, &s.coarse) }?;
            *peak = (*peak).max(gpu.used_bytes());
            progress.advance(1);
            levels += 1;
            let gained = q - modularity;
            modularity = q;
            coarse = Some(next);
            if gained <= cp.threshold {
                break;
            }
        }
        // The communities found, on the input, and a last sweep of single vertices
        // between them (as on the CPU).
        start_partition(gpu, &first, &mut s, Some(&mut at))?;
        if levels > 0 {
            move_vertices(gpu, &first, &s, cp, m, &mut rng)?;
            modularity = quality(gpu, &first, &s, cp.resolution, m)?;
        }
    }
    // SAFETY: every array holds the input's n vertices; `size` and `at` (no longer
    // needed) take each community's smallest member and each vertex's label.
    unsafe {
        launch::fill_u32(gpu, Launch::Grid(gpu.cfg()), &s.size, n as u32, u32::MAX)?;
        launch::louvain_smallest(gpu, Launch::Grid(gpu.cfg()), n as u32, &s.comm, &s.size)?;
        launch::louvain_label(gpu, Launch::Grid(gpu.cfg()), n as u32, &s.comm, &s.size, &at)?;
    }
    *peak = (*peak).max(gpu.used_bytes());
    Ok((Pending::Communities { labels: at, modularity }, levels, start, gpu.timer()?))
}
