//! The C structs the kernels share with the host, laid out as the `.cu` sources
//! declare them (each checked by a test): control blocks the kernels update, and
//! argument structs passed by value. The typed launches of [`crate::launch`] name
//! them.

use bytemuck::{Pod, Zeroable};
use cudarc::driver::DeviceRepr;

/// `BfsPull` in bfs.cu.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(crate) struct BfsPull {
    pub levels: u64,
    pub hub_ids: u64,
    pub hub_masks: u64,
    pub words: u32,
    pub pad: u32,
}

// SAFETY: plain device addresses and integers, laid out as the kernel's struct.
unsafe impl DeviceRepr for BfsPull {}

/// Mirrors `BfsCtl` in bfs.cu.
#[repr(C, align(16))]
#[derive(Copy, Clone, Pod, Zeroable, Default, Debug)]
pub(crate) struct BfsCtl {
    pub level: u32,
    pub flags: u32,
    pub parity: u32,
    pub pad0: u32,
    pub len: [u32; 2],
    pub blocks_done: u32,
    pub generation: u32,
    pub hub_len: u32,
    pub pad1: u32,
    pub scout: u64,
    pub unexplored: u64,
    pub pad2: [u32; 2],
}

/// `BFS_DONE` in bfs.cu.
pub(crate) const BFS_DONE: u32 = 4;

/// Mirrors `QueueCtl` in common.cuh: the control of kcore.cu's and scc.cu's steps.
#[repr(C, align(8))]
#[derive(Copy, Clone, Pod, Zeroable, Default, Debug)]
pub(crate) struct QueueCtl {
    pub parity: u32,
    pub len: [u32; 2],
    pub blocks_done: u32,
    pub done: u32,
    pub steps: u32,
    pub k: u32,
    pub scan: u32,
    pub least: u32,
    pub left: u32,
    pub best: u64,
}

/// Mirrors `SsspCtl` in sssp.cu.
#[repr(C)]
#[derive(Copy, Clone, Pod, Zeroable, Default, Debug)]
pub(crate) struct SsspCtl {
    pub split: u32,
    pub parity: u32,
    pub far_parity: u32,
    pub done: u32,
    pub near_len: [u32; 2],
    pub far_len: [u32; 2],
    pub blocks_done: u32,
    pub step: u32,
    pub threshold: u64,
    pub far_min: u64,
    pub delta: u64,
    pub generation: u32,
    pub hub_len: u32,
    pub hubs_now: u32,
    pub pad: u32,
}

/// `SsspArrays` in sssp.cu: the arrays of a run, passed by value.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(crate) struct SsspArrays {
    pub off: u64,
    pub adj: u64,
    pub weight: u64,
    pub dist: u64,
    pub stamp: u64,
    pub in_far: u64,
    pub near: [u64; 2],
    pub far: [u64; 2],
    pub hubs: u64,
    pub shared: u64,
    pub is_float: u32,
    pub local_rounds: u32,
    pub lo: u32,
    pub pad: u32,
}

// SAFETY: plain device addresses and integers, laid out as the kernel's struct.
unsafe impl DeviceRepr for SsspArrays {}

/// `BcCtl` in bc.cu.
#[repr(C)]
#[derive(Copy, Clone, Pod, Zeroable, Default, Debug)]
pub(crate) struct BcCtl {
    pub blocks_done: u32,
    pub generation: u32,
    pub tail: u32,
    pub hub_len: u32,
    pub hubs_now: u32,
    pub pad: u32,
    pub level_edges: [u64; 2],
    pub explored: u64,
}

/// `BcArrays` in bc.cu.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct BcArrays {
    pub off: u64,
    pub adj: u64,
    pub in_off: u64,
    pub in_adj: u64,
    pub sources: u64,
    pub pair: u64,
    pub hub_sum: u64,
    pub order: u64,
    pub level_end: u64,
    pub hubs: u64,
    pub bc: u64,
    pub bits: u64,
    pub n: u32,
    pub batch: u32,
    pub up_share: u32,
    pub words: u32,
    pub bit_use: u32,
    pub l2_pairs: u32,
}

// SAFETY: plain device addresses and integers, laid out as the kernel's struct.
unsafe impl DeviceRepr for BcArrays {}

/// `GmpiCtx` in gmpi.cuh.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub(crate) struct GmpiCtx {
    pub ring: u64,
    pub mask: u64,
    pub head: u64,
    pub tail: u64,
    pub done: u64,
    pub recv_addr: u64,
    pub tail_seen: u64,
    pub timeout_ns: u64,
    pub max_requests: u32,
    pub rank: u32,
}

/// `LouvainLevel` in louvain.cu: a level's arrays, passed by value.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(crate) struct LouvainLevel {
    pub off: u64,
    pub adj: u64,
    pub off2: u64,
    pub adj2: u64,
    pub w: u64,
    pub k_out: u64,
    pub k_in: u64,
    pub inside: u64,
    pub m1: u64,
    pub n: u32,
    pub pad: u32,
}

// SAFETY: plain device addresses and integers, laid out as the kernel's struct.
unsafe impl DeviceRepr for LouvainLevel {}

/// `LouvainCtl` in louvain.cu.
#[repr(C, align(8))]
#[derive(Copy, Clone, Pod, Zeroable, Default, Debug)]
pub(crate) struct LouvainCtl {
    pub moves: u32,
    pub blocks_done: u32,
    pub moved: u64,
    pub gained: f64,
    pub sum: f64,
}

/// Parts of an async run, at most (`MG_PARTS_MAX` in multi.cu).
pub(crate) const PARTS_MAX: usize = 8;

/// `MgAsync` in multi.cu.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub(crate) struct MgAsync {
    pub off: u64,
    pub adj: u64,
    pub weight: u64,
    pub dist: u64,
    pub stamp: u64,
    pub queue: [u64; 2],
    pub outbox: u64,
    pub send_flag: u64,
    pub mail: u64,
    pub inbox: [u64; 2],
    pub peer_inbox: [[u64; PARTS_MAX]; 2],
    pub peer_mail: [u64; PARTS_MAX],
    pub inbox_at: [u64; PARTS_MAX],
    pub msg: u64,
    pub outrec: u64,
    pub timeout_ns: u64,
    pub sent: u64,
    pub received: u64,
    pub improved: u64,
    pub lo: u32,
    pub hi: u32,
    pub is_float: u32,
    pub me: u32,
    pub parts: u32,
    pub len: [u32; 2],
    pub outlen: u32,
    pub blocks_done: u32,
    pub generation: u32,
    pub level: u32,
    pub parity: u32,
    pub done: u32,
    pub error: u32,
    pub in_len: [u32; PARTS_MAX],
    pub in_cap: [u32; PARTS_MAX],
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The control blocks' layouts as the kernels declare them.
    #[test]
    fn control_blocks_match_the_kernels() {
        assert_eq!(
            (std::mem::size_of::<BfsCtl>(), std::mem::offset_of!(BfsCtl, scout), std::mem::offset_of!(BfsCtl, hub_len)),
            (64, 40, 32)
        );
        assert_eq!(
            (std::mem::size_of::<SsspCtl>(), std::mem::offset_of!(SsspCtl, threshold), std::mem::offset_of!(SsspCtl, generation)),
            (80, 40, 64)
        );
        assert_eq!((std::mem::size_of::<SsspArrays>(), std::mem::offset_of!(SsspArrays, local_rounds)), (112, 100));
        assert_eq!(std::mem::size_of::<BfsPull>(), 32);
        assert_eq!((std::mem::size_of::<QueueCtl>(), std::mem::offset_of!(QueueCtl, best)), (48, 40));
        assert_eq!((std::mem::size_of::<BcCtl>(), std::mem::size_of::<BcArrays>(), std::mem::offset_of!(BcArrays, n)), (48, 120, 96));
        assert_eq!((std::mem::size_of::<LouvainLevel>(), std::mem::offset_of!(LouvainLevel, n)), (80, 72));
        assert_eq!((std::mem::size_of::<LouvainCtl>(), std::mem::offset_of!(LouvainCtl, sum)), (32, 24));
    }

    #[test]
    fn the_device_context_matches_gmpi_cuh() {
        // GmpiCtx: seven pointers and sizes, the timeout, then two u32.
        assert_eq!(std::mem::size_of::<GmpiCtx>(), 72);
        assert_eq!(std::mem::offset_of!(GmpiCtx, done), 32);
        assert_eq!(std::mem::offset_of!(GmpiCtx, timeout_ns), 56);
        assert_eq!(std::mem::offset_of!(GmpiCtx, rank), 68);
    }

    #[test]
    fn the_control_block_matches_multi_cu() {
        // 50 eight-byte words (pointers, offsets, counters), then 30 u32.
        assert_eq!(std::mem::offset_of!(MgAsync, msg), 352);
        assert_eq!(std::mem::offset_of!(MgAsync, lo), 400);
        assert_eq!(std::mem::offset_of!(MgAsync, in_len), 456);
        assert_eq!(std::mem::offset_of!(MgAsync, in_cap), 488);
        assert_eq!(std::mem::size_of::<MgAsync>(), 520);
    }
}
