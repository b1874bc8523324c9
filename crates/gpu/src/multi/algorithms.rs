//! The kernels of the multi-GPU engine, one per method, each a loop of steps: queue
//! the part's compute, pack and state read-back (`step`), then exchange what the other
//! parts read (`send`); the receivers apply it at the start of the next step.

use std::time::Instant;

use cudarc::driver::CudaSlice;

use chatty_algo::{Distances, Output, Params};
use chatty_graph::partition::Form;
use chatty_graph::{NoProgress, WeightType};

use chatty_algo::bfs::{BEAMER_ALPHA, BEAMER_BETA};
use chatty_comm::cuda::{addr, Dev, Launch};

use super::{to_status, zero_words, CommStats, Dst, MultiGpu, Part, Sent};
use crate::context::ControlBlock;
use crate::device_graph::PullGraph;
use crate::launch;
use crate::layouts::{BfsCtl, BfsPull, SsspArrays, SsspCtl};
use crate::run::float_distances;
use crate::run::pull::{pull, PullArgs};
use crate::run::wcc as afforest;
use crate::{Gpu, GpuError, Result};

/// A kernel's values (renumbered ids), its steps, seconds, and peak device bytes.
pub(super) type Outcome = (Output, u64, f64, u64);

/// Distances of `n` vertices (the kernels' u64 encoding): unreached, the source 0.
pub(super) fn source_distances(gpu: &Gpu, n: usize, source: u32) -> Result<CudaSlice<u64>> {
    let mut dist = gpu.zeros::<u64>(n, "distances")?;
    gpu.fill_u64(&mut dist, n as u32, u64::MAX)?;
    gpu.set(&mut dist, source as usize, 0, "the source distance")?;
    Ok(dist)
}

/// A queue of `len` entries whose first is the source.
pub(super) fn first_frontier(gpu: &Gpu, len: usize, source: u32) -> Result<CudaSlice<u32>> {
    let mut q = gpu.zeros::<u32>(len, "a queue")?;
    gpu.set(&mut q, 0, source, "the first frontier")?;
    Ok(q)
}

/// A part's rows both ways, as the Afforest steps read them.
fn both_ways(p: &Part) -> afforest::Edges<'_> {
    let both = p.both.as_ref().expect("edges both ways");
    (&both.off, &both.adj)
}

/// SSSP's result from the kernels' encoding.
pub(super) fn distances_output(dist: Vec<u64>, is_float: bool) -> Output {
    if is_float {
        Output::Distances(Distances::Float(float_distances(dist)))
    } else {
        Output::Distances(Distances::Int(dist))
    }
}

/// A part's arrays of the multi-GPU PageRank (two of each, swapped every iteration).
struct PrBuffers {
    score: [CudaSlice<f64>; 2],
    contrib: [CudaSlice<f32>; 2],
    sums: CudaSlice<f64>,
}

/// A part's arrays of the multi-GPU SSSP rounds.
struct RoundBuffers {
    dist: CudaSlice<u64>,
    ctl: ControlBlock<SsspCtl>,
    arrays: SsspArrays,
    /// The near queues and the stamps, which `arrays` addresses.
    _held: [CudaSlice<u32>; 3],
}

/// A part's arrays of the multi-GPU BFS.
struct BfsBuffers {
    depth: CudaSlice<u32>,
    queue: [CudaSlice<u32>; 2],
    hubs: CudaSlice<u32>,
    ctl: ControlBlock<BfsCtl>,
}

impl MultiGpu {
    /// BFS: each part runs the single-GPU level step (bfs.cu) over its edges with
    /// `pause`, so a finished level stops for the exchange of newly visited boundary
    /// vertices, which the receivers append to their next frontier. Road-like graphs
    /// cut in BFS order (the chase on) run as hop counts instead, a round settling
    /// many levels.
    pub(super) fn bfs(&self, source: u32, stats: &mut CommStats) -> Result<Outcome> {
        if self.local_rounds > 0 {
            return self.bfs_by_rounds(source, stats);
        }
        let bufs = self.bfs_buffers(source)?;
        let peak = self.peak();
        let (alpha, beta) = (BEAMER_ALPHA as u32, BEAMER_BETA as u32);
        let len_at = |b: &BfsBuffers, q: usize| Dev::from(&b.ctl).addr() + 16 + 4 * q as u64;
        let start = Instant::now();
        let (mut level, mut parity) = (1u32, 0usize);
        let mut sent: Option<Sent> = None;
        loop {
            let issue = |g: usize| -> Result<()> {
                let (p, b) = (&self.parts[g], &bufs[g]);
                let gpu = &p.gpu;
                if level > 1 {
                    if let Some(s) = &sent {
                        // The last level's discoveries elsewhere join this level's frontier.
                        self.receive(g, s, addr(&b.depth), level - 1, (addr(&b.queue[parity]), len_at(b, parity)))?;
                    }
                    // SAFETY: the control block of this part's hi - lo vertices.
                    unsafe { launch::mg_bfs_advance(gpu, Launch::Grid(gpu.cfg()), &b.ctl, p.hi - p.lo, alpha, beta) }?;
                }
                let (push, pull) = (p.push.as_ref().expect("push edges"), p.pull.as_ref().expect("pull edges"));
                // Twice: a level whose frontier had hubs finishes in a second launch;
                // otherwise the second returns at once (the level is paused).
                for _ in 0..2 {
                    // SAFETY: queues hold n entries; no bit tests (the exchange writes
                    // depths only).
                    unsafe {
                        launch::bfs_level(
                            gpu,
                            Launch::Grid(gpu.cfg()),
                            &b.ctl,
                            &push.off,
                            &push.adj,
                            &pull.off,
                            &pull.adj,
                            &b.depth,
                            &b.queue[0],
                            &b.queue[1],
                            &b.hubs,
                            BfsPull::default(),
                            p.lo,
                            p.hi,
                            alpha,
                            beta,
                            1,
                        )
                    }?;
                }
                self.pack(g, addr(&b.queue[parity ^ 1]), len_at(b, parity ^ 1), 0, 0)?;
                to_status(gpu, &p.status, 0, Dev::from(&b.ctl).addr(), 32)
            };
            self.step(&issue)?;
            if self.tally(stats, 36, 4 + (parity ^ 1)) == 0 {
                break;
            }
            sent = self.send_records(0, stats)?;
            level += 1;
            parity ^= 1;
        }
        let seconds = start.elapsed().as_secs_f64();
        let depth: Vec<CudaSlice<u32>> = bufs.into_iter().map(|b| b.depth).collect();
        Ok((Output::Depths(self.gather(&depth, stats)?), level as u64 - 1, seconds, peak))
    }

    /// Each part's depths (the source's 0, the rest unreached), queues with the source
    /// first, and control block, for [`MultiGpu::bfs`].
    fn bfs_buffers(&self, source: u32) -> Result<Vec<BfsBuffers>> {
        let n = self.n;
        self.per_part(|p| {
            let gpu = &p.gpu;
            let mut depth = gpu.zeros::<u32>(n, "depths")?;
            gpu.fill_u32(&mut depth, n as u32, u32::MAX)?;
            gpu.set(&mut depth, source as usize, 0, "the source depth")?;
            let q0 = first_frontier(gpu, n, source)?;
            let unexplored = p.push.as_ref().map_or(0, |c| c.edges);
            let ctl = gpu.control(&BfsCtl { level: 1, len: [1, 0], unexplored, ..Default::default() })?;
            Ok(BfsBuffers { depth, queue: [q0, gpu.zeros(n, "a queue")?], hubs: gpu.zeros(n, "the hub list")?, ctl })
        })
    }
}

impl MultiGpu {
    /// SSSP as Bellman–Ford rounds (`rounds`), the distances gathered.
    pub(super) fn sssp(&self, source: u32, stats: &mut CommStats) -> Result<Outcome> {
        let (dist, rounds, seconds, peak) = self.rounds(source, true, stats)?;
        let is_float = self.weight_type == WeightType::Float;
        Ok((distances_output(self.gather(&dist, stats)?, is_float), rounds, seconds, peak))
    }

    /// BFS on a road-like graph: hop counts by `rounds` with the chase, turned into
    /// depths on each part's own vertices; the levels are the deepest depth.
    fn bfs_by_rounds(&self, source: u32, stats: &mut CommStats) -> Result<Outcome> {
        let (dist, _, seconds, peak) = self.rounds(source, false, stats)?;
        let mut deepest = Vec::with_capacity(self.parts.len());
        let mut depths = Vec::with_capacity(self.parts.len());
        for (p, d) in self.parts.iter().zip(&dist) {
            let gpu = &p.gpu;
            let depth = gpu.zeros::<u32>(self.n, "depths")?;
            let most = gpu.zeros::<u32>(1, "the deepest level")?;
            let own = p.lo as u64;
            let (dist_own, depth_own) = (Dev::<u64>::at(addr(d) + 8 * own), Dev::<u32>::at(addr(&depth) + 4 * own));
            // SAFETY: the part's own vertices lo..hi, which both arrays (n entries) hold.
            unsafe { launch::distance_to_depth(gpu, Launch::Grid(gpu.cfg()), p.hi - p.lo, dist_own, depth_own, &most) }?;
            deepest.push(gpu.download(&most, 1, "the deepest level")?[0] as u64);
            depths.push(depth);
        }
        let levels = self.across(deepest).into_iter().max().unwrap_or(0);
        Ok((Output::Depths(self.gather(&depths, stats)?), levels, seconds, peak))
    }

    /// Distances from `source` by Bellman–Ford rounds: each part relaxes its frontier
    /// over the edges into its vertices (multi.cu's `mg_sssp_relax`; `mg_sssp_step`,
    /// which chases within blocks, on road-like graphs cut in BFS order); the improved
    /// vertices another part reads travel as records (id, distance), which the
    /// receivers apply and add to their frontier.
    /// `weighted`: the graph's weights, else every edge counts 1 (hops). Returns each
    /// part's distances (exact on its own vertices) and the rounds.
    fn rounds(&self, source: u32, weighted: bool, stats: &mut CommStats) -> Result<(Vec<CudaSlice<u64>>, u64, f64, u64)> {
        let bufs = self.round_buffers(source, weighted)?;
        let peak = self.peak();
        // The address of the control block's near_len[q].
        let near_len = |b: &RoundBuffers, q: usize| Dev::from(&b.ctl).addr() + (std::mem::offset_of!(SsspCtl, near_len) + 4 * q) as u64;
        let start = Instant::now();
        let (mut round, mut cur) = (1u64, 0usize);
        let mut sent: Option<Sent> = None;
        loop {
            let issue = |g: usize| -> Result<()> {
                let (p, b) = (&self.parts[g], &bufs[g]);
                let gpu = &p.gpu;
                if let Some(s) = &sent {
                    self.receive(g, s, addr(&b.dist), 0, (b.arrays.near[cur], near_len(b, cur)))?;
                }
                let a = &b.arrays;
                if a.local_rounds > 0 {
                    // SAFETY: the queues and stamps hold n entries, a vertex enters the
                    // next queue once per round (stamps), the far piles are never used
                    // (no threshold).
                    unsafe { launch::mg_sssp_step(gpu, Launch::Grid(gpu.cfg()), &b.ctl, *a) }?;
                } else {
                    zero_words(gpu, near_len(b, cur ^ 1), 1)?;
                    // SAFETY: the addresses of `arrays` (above); the queues hold n
                    // entries and a vertex enters the next once per round (stamps).
                    unsafe {
                        launch::mg_sssp_relax(
                            gpu,
                            Launch::Grid(gpu.cfg()),
                            Dev::at(a.near[cur]),
                            Dev::at(near_len(b, cur)),
                            Dev::at(a.off),
                            Dev::at(a.adj),
                            Dev::at(a.weight),
                            a.is_float,
                            Dev::at(a.dist),
                            Dev::at(a.stamp),
                            round as u32,
                            Dev::at(a.near[cur ^ 1]),
                            Dev::at(near_len(b, cur ^ 1)),
                        )
                    }?;
                }
                self.pack(g, b.arrays.near[cur ^ 1], near_len(b, cur ^ 1), addr(&b.dist), 2)?;
                to_status(gpu, &p.status, 0, near_len(b, 0), 8)
            };
            self.step(&issue)?;
            if self.tally(stats, 8, cur ^ 1) == 0 {
                break;
            }
            sent = self.send_records(2, stats)?;
            round += 1;
            cur ^= 1;
        }
        let seconds = start.elapsed().as_secs_f64();
        Ok((bufs.into_iter().map(|b| b.dist).collect(), round - 1, seconds, peak))
    }

    /// Each part's distances (the source's 0), queues with the source first, stamps
    /// and control block, for [`MultiGpu::rounds`].
    fn round_buffers(&self, source: u32, weighted: bool) -> Result<Vec<RoundBuffers>> {
        let n = self.n;
        let is_float = weighted && self.weight_type == WeightType::Float;
        self.per_part(|p| {
            let gpu = &p.gpu;
            let dist = source_distances(gpu, n, source)?;
            let near0 = first_frontier(gpu, n, source)?;
            let near1 = gpu.zeros::<u32>(n, "a queue")?;
            let stamp = gpu.zeros::<u32>(n, "stamps")?;
            let ctl = gpu.control(&SsspCtl { near_len: [1, 0], step: 1, threshold: u64::MAX, far_min: u64::MAX, ..Default::default() })?;
            let push = p.push.as_ref().expect("push edges");
            let arrays = SsspArrays {
                off: addr(&push.off),
                adj: addr(&push.adj),
                weight: if weighted { push.weights.as_ref().map_or(0, addr) } else { 0 },
                dist: addr(&dist),
                stamp: addr(&stamp),
                near: [addr(&near0), addr(&near1)],
                shared: addr(&p.send_flag),
                is_float: is_float as u32,
                local_rounds: self.local_rounds,
                lo: p.lo,
                ..Default::default()
            };
            Ok(RoundBuffers { dist, ctl, arrays, _held: [near0, near1, stamp] })
        })
    }

    fn pull_graph<'a>(&self, p: &'a Part) -> PullGraph<'a> {
        let c = p.pull.as_ref().expect("pull edges");
        PullGraph {
            in_off: &c.off,
            in_adj: &c.adj,
            in_weights: c.weights.as_ref(),
            out_off: p.out_off.as_ref().unwrap_or(&c.off),
            bins: p.bins.as_ref().expect("bins"),
            weight_type: self.weight_type,
        }
    }

    /// PageRank (the single-GPU pull kernels over each part's vertices): after each
    /// iteration the parts' new contributions travel, as one dense slice per part when
    /// that is fewer bytes than records of the boundary ones ([`Form::cheaper`]);
    /// `residual` gets the L1 change of its last iteration.
    pub(super) fn pagerank(&self, params: &Params, stats: &mut CommStats, residual: &mut Option<f64>) -> Result<Outcome> {
        let n = self.n;
        let own = self.n as u64;
        let boundary: u64 = self.boundaries.iter().sum();
        let dense = Form::cheaper(boundary, own, 4) == Form::Dense;
        let bufs = self.pr_buffers()?;
        let peak = self.peak();
        let sum = |p: &Part, i: usize| p.status.word(2 * i) as u64 | (p.status.word(2 * i + 1) as u64) << 32;
        // Over every part of the job, added in part order wherever the parts are.
        let sums = || [0, 1].map(|i| self.across(self.parts.iter().map(|p| sum(p, i)).collect()).into_iter().map(f64::from_bits).sum());
        // Every part computed the whole initial dangling mass.
        let mut dangling = f64::from_bits(sum(&self.parts[0], 1));
        let start = Instant::now();
        let mut cur = 0usize;
        let mut sent: Option<Sent> = None;
        let (iters, change) = params.pr.iterate(n, &NoProgress, |_| {
            let base = params.pr.spread(dangling) / n as f64;
            let issue = |g: usize| -> Result<()> {
                let (p, b) = (&self.parts[g], &bufs[g]);
                let gpu = &p.gpu;
                if let Some(s) = &sent {
                    self.receive(g, s, addr(&b.contrib[cur]), 0, (0, 0))?;
                }
                zero_words(gpu, addr(&b.sums), 4)?;
                let args = PullArgs {
                    contrib: Some(&b.contrib[cur]),
                    x: None,
                    y: &b.score[cur ^ 1],
                    score: Some(&b.score[cur]),
                    contrib_next: Some(&b.contrib[cur ^ 1]),
                    base,
                    damping: params.pr.damping,
                    sums: Some(&b.sums),
                };
                pull(gpu, &self.pull_graph(p), &args)?;
                if !dense {
                    self.pack(g, 0, 0, addr(&b.contrib[cur ^ 1]), 1)?;
                }
                to_status(gpu, &p.status, 0, addr(&b.sums), 16)
            };
            self.step(&issue)?;
            stats.steps += 1;
            stats.state_bytes += 20 * self.parts.len() as u64;
            stats.updated += own;
            let [change, next_dangling] = sums();
            dangling = next_dangling;
            let next: Vec<u64> = bufs.iter().map(|b| addr(&b.contrib[cur ^ 1])).collect();
            sent = if self.k() == 1 {
                None
            } else if dense {
                stats.dense_exchanges += 1;
                let src = next.iter().zip(&self.parts).map(|(&a, p)| a + 4 * p.lo as u64).collect();
                let bytes = (0..self.k()).map(|r| 4 * self.ranges.range(r).len() as u64).collect();
                Some(self.send(src, bytes, Dst::Slices { base: next, elem: 4 }, 0, stats)?)
            } else {
                self.send_records(1, stats)?
            };
            cur ^= 1;
            Ok::<_, GpuError>(change)
        })?;
        let seconds = start.elapsed().as_secs_f64();
        *residual = Some(change);
        let latest: Vec<CudaSlice<f64>> = bufs.into_iter().map(|b| b.score.into_iter().nth(cur).expect("two score arrays")).collect();
        let score = self.gather(&latest, stats)?;
        Ok((Output::Values(score), iters as u64, seconds, peak))
    }

    /// Each part's scores (uniform) and contributions over all n vertices, and its sums
    /// (the initial dangling mass on the status words), for [`MultiGpu::pagerank`].
    fn pr_buffers(&self) -> Result<Vec<PrBuffers>> {
        let n = self.n;
        self.per_part(|p| {
            let gpu = &p.gpu;
            let mut score = gpu.zeros::<f64>(n, "scores")?;
            gpu.fill_f64(&mut score, n as u32, 1.0 / n.max(1) as f64)?;
            let contrib = gpu.zeros::<f32>(n, "contributions")?;
            let sums = gpu.zeros::<f64>(2, "sums")?;
            let out_off = p.out_off.as_ref().expect("out-offsets");
            // SAFETY: over all n vertices, which every array holds; sums two.
            unsafe { launch::pr_init(gpu, Launch::Grid(gpu.cfg()), n as u32, &score, &contrib, out_off, &sums) }?;
            to_status(gpu, &p.status, 0, addr(&sums), 16)?;
            Ok(PrBuffers { score: [score, gpu.zeros(n, "scores")?], contrib: [contrib, gpu.zeros(n, "contributions")?], sums })
        })
    }

    /// SpMV: each part computes its rows; nothing travels.
    pub(super) fn spmv(&self, x: Option<&[f64]>, stats: &mut CommStats) -> Result<Outcome> {
        let bufs = self.per_part(|p| Ok((p.gpu.spmv_x(x, self.n)?, p.gpu.zeros::<f64>(self.n, "y")?)))?;
        let peak = self.peak();
        let start = Instant::now();
        self.step(&|g| {
            let (p, (x, y)) = (&self.parts[g], &bufs[g]);
            pull(
                &p.gpu,
                &self.pull_graph(p),
                &PullArgs { contrib: None, x: Some(x), y, score: None, contrib_next: None, base: 0.0, damping: 0.0, sums: None },
            )
        })?;
        let seconds = start.elapsed().as_secs_f64();
        stats.steps = 1;
        stats.updated = self.n as u64;
        Ok((Output::Values(self.gather(&bufs.into_iter().map(|b| b.1).collect::<Vec<_>>(), stats)?), 1, seconds, peak))
    }

    /// WCC by Afforest (the single-GPU steps, `afforest`) on each part's rows both
    /// ways, every part keeping a forest over all n vertices. The forests are merged
    /// twice, each part sending its whole label array to every other and linking each
    /// vertex to its parent there: after the sampling rounds, so that every part holds
    /// the same labels and skips the same largest component, and at the end, when every
    /// part holds the answer. Edges cross parts in a merge, not round by round, so the
    /// steps do not grow with the diameter as label propagation's rounds did.
    pub(super) fn wcc(&self, stats: &mut CommStats) -> Result<Outcome> {
        struct B {
            comp: CudaSlice<u32>,
            others: CudaSlice<u32>,
            sampled: CudaSlice<u32>,
        }
        let (n, k) = (self.n as u32, self.k());
        let bufs = self.per_part(|p| {
            let gpu = &p.gpu;
            Ok(B {
                comp: gpu.zeros(self.n, "labels")?,
                others: gpu.zeros((self.n * (k - 1)).max(1), "the other parts' labels")?,
                sampled: gpu.zeros(afforest::SAMPLES as usize, "sampled labels")?,
            })
        })?;
        let peak = self.peak();
        let forest_bytes = 4 * self.n as u64;
        let exchange = |stats: &mut CommStats| -> Result<Option<Sent>> {
            if k == 1 {
                return Ok(None);
            }
            let src = bufs.iter().map(|b| addr(&b.comp)).collect();
            let base = bufs.iter().map(|b| addr(&b.others)).collect();
            self.send(src, vec![forest_bytes; k], Dst::Forests { base, bytes: forest_bytes }, 0, stats).map(Some)
        };
        let merge = |g: usize, sent: &Option<Sent>| -> Result<()> {
            let (p, b) = (&self.parts[g], &bufs[g]);
            if let Some(s) = sent {
                self.receive(g, s, 0, 0, (0, 0))?;
                for i in 0..k as u64 - 1 {
                    afforest::merge(&p.gpu, n, &b.comp, addr(&b.others) + i * forest_bytes)?;
                }
            }
            Ok(())
        };
        let start = Instant::now();
        self.step(&|g| afforest::link_first(&self.parts[g].gpu, n, both_ways(&self.parts[g]), &bufs[g].comp))?;
        let sampled = exchange(stats)?;
        self.step(&|g| {
            let (p, b) = (&self.parts[g], &bufs[g]);
            merge(g, &sampled)?;
            let skip = afforest::largest(&p.gpu, n, &b.comp, &b.sampled)?;
            afforest::link_rest(&p.gpu, n, both_ways(p), None, &b.comp, skip)?;
            if k == 1 {
                afforest::compress(&p.gpu, n, &b.comp)?;
            }
            Ok(())
        })?;
        let finished = exchange(stats)?;
        if finished.is_some() {
            self.step(&|g| merge(g, &finished))?;
        }
        let seconds = start.elapsed().as_secs_f64();
        stats.steps = 2 + finished.is_some() as u64;
        stats.updated = self.n as u64;
        let labels = self.gather(&bufs.into_iter().map(|b| b.comp).collect::<Vec<_>>(), stats)?;
        Ok((Output::Labels(labels), afforest::NEIGHBOR_ROUNDS as u64 + 1, seconds, peak))
    }
}
