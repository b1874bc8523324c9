//! `--mode async`: BFS and SSSP driven by the GPUs themselves (design.md §1.3, the
//! GMPI report's point: no host round trip per level). One cooperative kernel per GPU
//! (`mg_async_traverse` in multi.cu) runs every level: it relaxes the part's frontier,
//! stores its improved boundary vertices straight into the peers' receive buffers, and
//! its grid barrier's last block meets the other GPUs through mailbox flags in their
//! memory. The host launches once per GPU and waits, under the watchdog.
//!
//! `--mode gmpi` runs the same kernel over device-initiated messages instead
//! ([`crate::Messaging`]): each level's records go to the peers as one tagged message
//! per peer through the host proxies, with no peer pointers and no remote flags, so
//! its parts may live in several processes (the proxies forward through the job's
//! link); the kernels name parts by their index in the job.

use std::time::Instant;

use bytemuck::Zeroable;
use cudarc::driver::CudaSlice;
use rayon::prelude::*;

use chatty_algo::Output;
use chatty_graph::WeightType;

use super::algorithms::{distances_output, first_frontier, source_distances, Outcome};
use super::{send_words, CommStats, Mode, MultiGpu, Transport};
use crate::context::ControlBlock;
use crate::launch;
use crate::layouts::{MgAsync, PARTS_MAX};
use crate::Messaging;
use crate::{GpuError, Result};
use chatty_comm::cuda::{addr, Check, Launch};
use chatty_comm::messaging::Status;

/// Words of a `--mode gmpi` message before its records (`MG_HEADER_WORDS`).
const HEADER_WORDS: u64 = 4;

/// A part's arrays of `traverse_async`.
struct AsyncBuffers {
    dist: CudaSlice<u64>,
    stamp: CudaSlice<u32>,
    queue: [CudaSlice<u32>; 2],
    mail: CudaSlice<u64>,
    /// --mode gmpi: the outgoing message and the two receive buffers.
    messages: Option<(CudaSlice<u32>, [CudaSlice<u32>; 2])>,
}

impl MultiGpu {
    /// BFS (`weighted` false: every edge weighs 1) or SSSP from `source`, every level
    /// on the GPUs. Levels, records sent and received go into `stats`.
    pub(super) fn traverse_async(&self, source: u32, weighted: bool, stats: &mut CommStats) -> Result<Outcome> {
        // Every part of the job; this process's are `first..first + parts.len()`.
        let k = self.ranges.parts();
        if k > PARTS_MAX {
            return Err(GpuError::option("mode", format!("--mode async runs on at most {PARTS_MAX} GPUs")));
        }
        let messaging = if self.mode == Mode::Gmpi { self.messaging.as_ref() } else { None };
        if messaging.is_none() && k > 1 && !self.available.contains(&Transport::Peer) {
            return Err(GpuError::option(
                "mode",
                "--mode async stores into the other GPUs' memory and needs peer access between every pair; use --mode bsp",
            ));
        }
        let n = self.n;
        let is_float = weighted && self.weight_type == WeightType::Float;
        let bufs = self.per_part(|p| {
            let gpu = &p.gpu;
            let own = (p.hi - p.lo) as usize + 1;
            Ok(AsyncBuffers {
                dist: source_distances(gpu, n, source)?,
                stamp: gpu.zeros(n, "stamps")?,
                queue: [first_frontier(gpu, own, source)?, gpu.zeros(own, "a queue")?],
                mail: gpu.zeros(4 * k, "mailboxes")?,
                messages: match messaging {
                    Some(_) => {
                        let mine = HEADER_WORDS + p.send.len() as u64;
                        debug_assert_eq!(p.send.len() as u64, send_words(p.boundary));
                        let inbox = ((0..k).map(|r| self.capacity(r)).sum::<u64>() - mine) as usize;
                        let out = gpu.zeros(mine as usize, "the outgoing message")?;
                        Some((out, [gpu.zeros(inbox.max(1), "a message inbox")?, gpu.zeros(inbox.max(1), "a message inbox")?]))
                    }
                    None => None,
                },
            })
        })?;
        let ctls = self.async_controls(&bufs, messaging, weighted, is_float)?;
        self.sync_all()?;
        // GPUs that hold several parts split their blocks between them: every part's
        // kernel must be resident at once, or the mailboxes would wait forever.
        let sharing = |g: usize| self.ordinals.iter().filter(|&&o| o == self.ordinals[g]).count() as u32;
        let peak = self.peak();
        let start = Instant::now();
        let issue = |g: usize| -> Result<()> {
            let gpu = &self.parts[g].gpu;
            let f = gpu.f("mg_async_traverse");
            let mut cfg = gpu.cooperative_cfg(f)?;
            cfg.grid_dim.0 = (cfg.grid_dim.0 / sharing(g)).max(1);
            // SAFETY: the control block above, whose pointers address this part's
            // arrays and the peers' receive buffers and mailboxes (peer access enabled
            // at open).
            unsafe { launch::mg_async_traverse(gpu, Launch::Cooperative(cfg), &ctls[g]) }
        };
        self.step(&issue)?;
        let seconds = start.elapsed().as_secs_f64();
        let levels = self.async_levels(&ctls, messaging.is_some(), stats)?;
        let dist = self.gather(&bufs.into_iter().map(|b| b.dist).collect::<Vec<_>>(), stats)?;
        let output = if weighted {
            distances_output(dist, is_float)
        } else {
            Output::Depths(dist.into_par_iter().map(|d| if d == u64::MAX { u32::MAX } else { d as u32 }).collect())
        };
        Ok((output, levels, seconds, peak))
    }

    /// Words of a message from part r: the header, then at most as many words as r's
    /// send buffer.
    fn capacity(&self, r: usize) -> u64 {
        HEADER_WORDS + send_words(self.boundaries[r])
    }

    /// Where part r's messages start in part g's inbox.
    fn inbox_at(&self, g: usize, r: usize) -> u64 {
        (0..r).filter(|&q| q != g).map(|q| self.capacity(q)).sum::<u64>() + HEADER_WORDS
    }

    /// The control blocks of `traverse_async`, one a part: they name the peers'
    /// receive buffers and mailboxes (or, for gmpi, the message buffers).
    fn async_controls(
        &self,
        bufs: &[AsyncBuffers],
        messaging: Option<&Messaging>,
        weighted: bool,
        is_float: bool,
    ) -> Result<Vec<ControlBlock<MgAsync>>> {
        let (k, first) = (self.ranges.parts(), self.first);
        let timeout_ns = self.watchdog.as_nanos().min(u64::MAX as u128) as u64;
        (0..self.parts.len())
            .map(|g| {
                let (p, b) = (&self.parts[g], &bufs[g]);
                let me = first + g;
                let gpu = &p.gpu;
                let push = p.push.as_ref().expect("push edges");
                let mut c = MgAsync::zeroed();
                c.off = addr(&push.off);
                c.adj = addr(&push.adj);
                c.weight = if weighted { push.weights.as_ref().map_or(0, addr) } else { 0 };
                c.dist = addr(&b.dist);
                c.stamp = addr(&b.stamp);
                c.queue = [addr(&b.queue[0]), addr(&b.queue[1])];
                c.outbox = addr(&p.send);
                c.send_flag = addr(&p.send_flag);
                c.mail = addr(&b.mail);
                match (&b.messages, messaging) {
                    (Some((out, inbox)), Some(m)) => {
                        c.msg = m.ctx(g).addr();
                        c.outrec = addr(out);
                        c.inbox = [addr(&inbox[0]), addr(&inbox[1])];
                        for r in (0..k).filter(|&r| r != me) {
                            c.inbox_at[r] = self.inbox_at(me, r);
                            c.in_cap[r] = self.capacity(r) as u32;
                        }
                    }
                    _ => {
                        c.inbox = [addr(&p.recv[0]), addr(&p.recv[1])];
                        for (r, q) in self.parts.iter().enumerate().filter(|&(r, _)| r != g) {
                            for x in 0..2 {
                                c.peer_inbox[x][r] = addr(&q.recv[x]) + 4 * q.slot[g];
                            }
                            c.peer_mail[r] = addr(&bufs[r].mail);
                            c.inbox_at[r] = p.slot[r];
                        }
                    }
                }
                c.timeout_ns = timeout_ns;
                (c.lo, c.hi, c.is_float, c.me, c.parts) = (p.lo, p.hi, is_float as u32, me as u32, k as u32);
                c.len = [1, 0];
                c.level = 1;
                gpu.ctx.bind_to_thread().check("binding a GPU")?;
                gpu.control(&c)
            })
            .collect()
    }

    /// Reads every part's control block after `traverse_async`'s kernels: their errors,
    /// and the levels and records into `stats`; returns the levels.
    fn async_levels(&self, ctls: &[ControlBlock<MgAsync>], gmpi: bool, stats: &mut CommStats) -> Result<u64> {
        let mut levels = 0;
        let mut received = 0;
        for (g, ctl) in ctls.iter().enumerate() {
            let c = self.parts[g].gpu.read_control(ctl)?;
            match c.error {
                0 => {}
                1 => return Err(GpuError::Watchdog { gpu: g, seconds: self.watchdog.as_secs_f64() }),
                e => {
                    let why = match Status::from_code(e & 0xff) {
                        Status::Truncated => "was larger than its receive buffer",
                        _ => "found its peer's proxy gone",
                    };
                    return Err(GpuError::Messaging(format!("--mode gmpi: a level's message on GPU {g} {why}")));
                }
            }
            // Every part ends at the same level.
            levels = c.level as u64 - 1;
            stats.communicated += c.sent;
            stats.updated += c.improved;
            received += c.received;
        }
        (stats.steps, stats.exchanges) = (levels, levels);
        stats.by_transport.insert(if gmpi { "gmpi" } else { Transport::Peer.name() }, (levels, 12 * received));
        Ok(levels)
    }
}
