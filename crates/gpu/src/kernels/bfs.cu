// BFS, direction-optimizing (Beamer, Asanovic, Patterson, SC 2012), with control on
// the device. Two drivers share one level step:
// - bfs_persistent: one cooperative launch runs every level; blocks meet at a grid
//   barrier whose last arrival decides the next level (Beamer's alpha/beta rule) and
//   swaps the queues. A level then costs one barrier, not a launch: what road graphs,
//   with thousands of levels, need.
// - bfs_level: one launch per level, the last block deciding; used where a
//   cooperative launch is refused.
// Loads of data written during the launch (depths, queues, the control block) use
// __ldcg, which bypasses the non-coherent L1.
//
// On one GPU the bottom-up steps test frontier membership in bits (BfsPull), after the
// bit-vector BFS of BLEST (Elbek and Kaya, arXiv 2512.21967), which packs adjacency
// into bit slices so a pull step reads a fraction of a CSR's bytes:
// - the levels as bitmaps (three of n bits, level L's discoveries in levels[L % 3]), so
//   "is this in-neighbour in the frontier?" reads a 512 KB array, not the 16 MB
//   depths (kron22); the third bitmap is cleared while the other two are in use.
//   Plain loads of the frontier bitmap are coherent: it was written before the grid
//   barrier (or launch) whose fence invalidates L1, and nothing writes it during the
//   step;
// - the columns of the 64 vertices of highest in-degree packed as one 64-bit mask per
//   vertex: on power-law graphs most vertices have a hub in-neighbour, and one
//   coalesced load against the frontier's hub bits settles them without a gather.

// Bits of BfsCtl::flags.
#define BFS_BOTTOM_UP 1u  // this step pulls
#define BFS_HUB_PHASE 2u  // this step expands the hubs set aside by the previous one
#define BFS_DONE 4u       // a level discovered nothing
#define BFS_EXCHANGE 8u   // multi-GPU: the level is complete; the host exchanges, then mg_bfs_advance

struct __align__(16) BfsCtl {
    u32 level;        // depth given to vertices discovered by this step
    u32 flags;        // BFS_* bits
    u32 parity;       // queue[parity] is the frontier, queue[parity ^ 1] the next one
    u32 pad0;
    u32 len[2];       // queue lengths
    u32 blocks_done;  // arrivals at the end of a step
    u32 generation;   // barrier generation (persistent driver)
    u32 hub_len;      // frontier vertices of degree >= HUB_DEGREE, set aside
    u32 pad1;
    u64 scout;        // out-edges of the vertices discovered by this step
    u64 unexplored;   // edges not yet examined (Beamer's edges_to_check)
    u32 pad2[2];
};

// A top-down warp expands one frontier vertex at a time; a hub of 10^5 edges would
// hold its warp for thousands of rounds while the rest of the grid idles. Hubs are
// set aside and expanded in a second step by groups of blocks (hub_groups), edge by
// edge. When the frontier has fewer vertices than the grid has warps, most warps idle
// anyway, and a vertex of a few hundred edges already holds the level: kron22's second
// level, four vertices of about 4,000 edges, took 200 us one warp each.
#define HUB_DEGREE 4096u
#define SMALL_FRONTIER_HUB_DEGREE 256u

__device__ __forceinline__ void visit(u32 v, u32 level, u32* depth, const u64* out_off, u32* next_bits, u64* scout,
                                      bool* found) {
    *found = __ldcg(&depth[v]) == INF32 && atomicCAS(&depth[v], INF32, level) == INF32;
    if (*found) {
        *scout += out_off[v + 1] - out_off[v];
        if (next_bits) atomicOr(&next_bits[v >> 5], 1u << (v & 31));
    }
}

// The first 32 bytes of the control block in two independent loads (level, flags,
// parity; then the queue lengths): every dependent load here is an L2 round trip on
// the critical path of a level, which is what road graphs pay per level.
struct BfsHead {
    uint4 head, lens;
};

__device__ __forceinline__ BfsHead bfs_head(const BfsCtl* ctl) {
    return {__ldcg((const uint4*)ctl), __ldcg((const uint4*)ctl + 1)};
}

#define PULL_HUBS 64u

// One GPU's bit tests for bottom-up steps; null pointers with several GPUs, whose
// exchange writes depths only.
struct BfsPull {
    u32* levels;          // three bitmaps of `words` words
    const u32* hub_ids;   // PULL_HUBS vertices (INF32 where n is smaller)
    const u64* hub_masks; // per vertex, bit i: an in-edge from hub_ids[i] (null: none)
    u32 words;
    u32 pad;
};

// Bottom-up steps visit vertices lo..hi (one GPU's part; 0..n on a single GPU; lo = 0
// where `pull` has bitmaps).
__device__ void bfs_step(BfsCtl* ctl, BfsHead h, const u64* out_off, const u32* out_adj, const u64* in_off,
                         const u32* in_adj, u32* depth, u32* queue0, u32* queue1, u32* hubs, BfsPull pull, u32 lo,
                         u32 hi) {
    const uint4 head = h.head;
    const u32 level = head.x, bottom_up = head.y & BFS_BOTTOM_UP, parity = head.z, hub_phase = head.y & BFS_HUB_PHASE;
    const u32* in_q = parity ? queue1 : queue0;
    u32* out_q = parity ? queue0 : queue1;
    u32* out_len = &ctl->len[parity ^ 1];
    u32* const bits = pull.levels;
    const u32 words = pull.words;
    const u32* front_bits = bits ? bits + (level - 1) % 3 * words : nullptr;
    u32* next_bits = bits ? bits + level % 3 * words : nullptr;
    if (bits) {
        u32* spare = bits + (level + 1) % 3 * words;
        for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += gridDim.x * blockDim.x) spare[i] = 0;
    }
    u64 scout = 0;
    if (hub_phase) {
        // Groups of blocks over the hubs' edges, each group one hub after another.
        const u32 hub_len = __ldcg(&ctl->hub_len);
        const HubGroups g = hub_groups(hub_len);
        for (u32 h = g.group; g.group < g.groups && h < hub_len; h += g.groups) {
            const u32 u = __ldcg(&hubs[h]);
            const u64 begin = out_off[u], end = out_off[u + 1];
            for (u64 base = begin; base < end; base += g.threads) {
                const u64 e = base + g.thread;
                bool found = false;
                u32 v = 0;
                if (e < end) {
                    v = out_adj[e];
                    visit(v, level, depth, out_off, next_bits, &scout, &found);
                }
                warp_append(out_q, out_len, v, found);
            }
        }
    } else if (!bottom_up) {
        // Top-down: a warp per frontier vertex, lanes over its out-edges; hubs are
        // set aside for the next step.
        const u32 in_len = parity ? h.lens.y : h.lens.x;
        const u32 lane = threadIdx.x & 31;
        const u32 warps = gridDim.x * blockDim.x / 32;
        const u64 hub_degree = in_len < warps ? SMALL_FRONTIER_HUB_DEGREE : HUB_DEGREE;
        for (u32 i = (blockIdx.x * blockDim.x + threadIdx.x) / 32; i < in_len; i += warps) {
            const u32 u = __ldcg(&in_q[i]);
            const u64 begin = out_off[u], end = out_off[u + 1];
            if (end - begin >= hub_degree) {
                if (lane == 0) hubs[atomicAdd(&ctl->hub_len, 1)] = u;
                continue;
            }
            for (u64 e = begin; e < end; e += 32) {
                bool found = false;
                u32 v = 0;
                if (e + lane < end) {
                    v = out_adj[e + lane];
                    visit(v, level, depth, out_off, next_bits, &scout, &found);
                }
                warp_append(out_q, out_len, v, found);
            }
        }
    } else {
        // Bottom-up: each unvisited vertex looks for any parent in the frontier and
        // stops at the first, its hub in-neighbours first (one mask).
        __shared__ u32 front_hub_words[PULL_HUBS / 32];
        if (pull.hub_masks && threadIdx.x < PULL_HUBS) {
            const u32 hub = pull.hub_ids[threadIdx.x];
            const bool in_front = hub != INF32 && front_bits[hub >> 5] >> (hub & 31) & 1;
            const u32 word = __ballot_sync(FULL_MASK, in_front);
            if ((threadIdx.x & 31) == 0) front_hub_words[threadIdx.x / 32] = word;
        }
        __syncthreads();
        const u64 front_hubs = (u64)front_hub_words[1] << 32 | front_hub_words[0];
        const u32 stride = gridDim.x * blockDim.x, span = hi - lo;
        for (u32 r = 0; r < (span + stride - 1) / stride; r++) {
            const u32 v = lo + r * stride + blockIdx.x * blockDim.x + threadIdx.x;
            bool found = false;
            if (v < hi && __ldcg(&depth[v]) == INF32) {
                if (pull.hub_masks && (pull.hub_masks[v] & front_hubs)) {
                    depth[v] = level;
                    found = true;
                    scout += out_off[v + 1] - out_off[v];
                }
                for (u64 e = in_off[v]; !found && e < in_off[v + 1]; e++) {
                    const u32 u = in_adj[e];
                    if (front_bits ? front_bits[u >> 5] >> (u & 31) & 1 : __ldcg(&depth[u]) == level - 1) {
                        depth[v] = level;
                        found = true;
                        scout += out_off[v + 1] - out_off[v];
                    }
                }
            }
            // A warp's vertices are one aligned word of the bitmap (lo = 0, blocks of
            // whole warps), written by that warp alone.
            const u32 word = __ballot_sync(FULL_MASK, found);
            if (next_bits && (threadIdx.x & 31) == 0 && word) next_bits[v >> 5] = word;
            warp_append(out_q, out_len, v, found);
        }
    }
    for (int o = 16; o > 0; o >>= 1) scout += __shfl_down_sync(__activemask(), scout, o);
    if ((threadIdx.x & 31) == 0 && scout) atomicAdd(&ctl->scout, scout);
}

// The next level's direction (Beamer's alpha/beta rule over this part's n vertices)
// and queue swap. On one GPU an empty next queue ends the search; with several, only
// the host, which sees every part, can end it (`multi`).
__device__ void bfs_advance(BfsCtl* ctl, u32 flags, u32 n, u32 alpha, u32 beta, u32 multi) {
    const u32 parity = ctl->parity;
    const u32 next_len = ctl->len[parity ^ 1];
    if (next_len == 0 && !multi) {
        ctl->flags = BFS_DONE;
        return;
    }
    const u64 scout = ctl->scout;
    ctl->unexplored = ctl->unexplored > scout ? ctl->unexplored - scout : 0;
    bool pull;
    if (!(flags & BFS_BOTTOM_UP)) {
        // Only while the frontier grows (Beamer et al.'s condition; GAPBS omits it): at
        // the tail of a search the unexplored edges dwindle, and a few hundred frontier
        // vertices would buy a sweep over all n (kron22 from 3474147: 56 us for 628).
        pull = alpha && scout > ctl->unexplored / alpha && next_len > ctl->len[parity]; // alpha 0: top-down only (no in-edges)
    } else {
        pull = next_len >= n / beta;
    }
    ctl->flags = pull ? BFS_BOTTOM_UP : 0;
    ctl->scout = 0;
    ctl->len[parity] = 0;
    ctl->parity = parity ^ 1;
    ctl->level += 1;
}

// Run by one thread once every block has finished a step: choose the next one. With
// `pause` (multi-GPU), a finished level stops for the host's exchange instead.
__device__ void bfs_decide(BfsCtl* ctl, u32 n, u32 alpha, u32 beta, u32 pause) {
    const u32 flags = ctl->flags;
    if (!(flags & BFS_HUB_PHASE) && ctl->hub_len > 0) {
        ctl->flags = flags | BFS_HUB_PHASE; // same level: expand the hubs set aside
        return;
    }
    ctl->hub_len = 0;
    if (pause) {
        ctl->flags = (flags & ~BFS_HUB_PHASE) | BFS_EXCHANGE;
        return;
    }
    bfs_advance(ctl, flags, n, alpha, beta, 0);
}

// Multi-GPU: after the exchange appended the other parts' discoveries to the next
// queue, start the next level.
extern "C" __global__ void mg_bfs_advance(BfsCtl* ctl, u32 n, u32 alpha, u32 beta) {
    if (blockIdx.x == 0 && threadIdx.x == 0) bfs_advance(ctl, ctl->flags & ~BFS_EXCHANGE, n, alpha, beta, 1);
}

extern "C" __global__ void bfs_level(BfsCtl* ctl, const u64* out_off, const u32* out_adj,
                                     const u64* in_off, const u32* in_adj, u32* depth,
                                     u32* queue0, u32* queue1, u32* hubs, BfsPull pull, u32 lo, u32 hi,
                                     u32 alpha, u32 beta, u32 pause) {
    const BfsHead h = bfs_head(ctl);
    if (h.head.y & (BFS_DONE | BFS_EXCHANGE)) return;
    bfs_step(ctl, h, out_off, out_adj, in_off, in_adj, depth, queue0, queue1, hubs, pull, lo, hi);
    if (last_block_done(&ctl->blocks_done)) bfs_decide(ctl, hi - lo, alpha, beta, pause);
}

// Registers bounded so that 8 blocks of 256 fit an SM (device.rs BFS_WIDE_BLOCKS_PER_SM;
// 44 unbounded allowed 5; bounded, 4 bytes spill).
#define BFS_MAX_BLOCKS_PER_SM 8
extern "C" __global__ void __launch_bounds__(256, BFS_MAX_BLOCKS_PER_SM) bfs_persistent(BfsCtl* ctl, const u64* out_off, const u32* out_adj,
                                          const u64* in_off, const u32* in_adj, u32* depth,
                                          u32* queue0, u32* queue1, u32* hubs, BfsPull pull, u32 n, u32 alpha,
                                          u32 beta) {
    for (BfsHead h = bfs_head(ctl); !(h.head.y & BFS_DONE); h = bfs_head(ctl)) {
        bfs_step(ctl, h, out_off, out_adj, in_off, in_adj, depth, queue0, queue1, hubs, pull, 0, n);
        grid_barrier(&ctl->blocks_done, &ctl->generation, [&](u32 lane) {
            if (lane == 0) bfs_decide(ctl, n, alpha, beta, 0);
        });
    }
}

// BfsPull's hub masks: slot[v] = i + 1 for hub_ids[i] (slot zeroed before).
extern "C" __global__ void bfs_hub_slots(const u32* hub_ids, unsigned char* slot) {
    const u32 i = threadIdx.x;
    if (blockIdx.x == 0 && i < PULL_HUBS && hub_ids[i] != INF32) slot[hub_ids[i]] = i + 1;
}

// A warp per vertex ORs the bits of its hub in-neighbours.
extern "C" __global__ void bfs_hub_masks(u32 n, const u64* in_off, const u32* in_adj, const unsigned char* slot,
                                         u64* masks) {
    const u32 lane = threadIdx.x & 31, warps = gridDim.x * blockDim.x / 32;
    for (u32 v = (blockIdx.x * blockDim.x + threadIdx.x) / 32; v < n; v += warps) {
        u64 mask = 0;
        for (u64 e = in_off[v] + lane; e < in_off[v + 1]; e += 32) {
            const u32 s = slot[in_adj[e]];
            if (s) mask |= 1ull << (s - 1);
        }
        for (int o = 16; o > 0; o >>= 1) mask |= __shfl_xor_sync(FULL_MASK, mask, o);
        if (lane == 0) masks[v] = mask;
    }
}
