// Shared definitions for ChattyGraph's GPU kernels (compiled at run time by NVRTC,
// so no system headers).
typedef unsigned int u32;
typedef unsigned long long u64;

#define INF32 0xffffffffu
#define INF64 0xffffffffffffffffull
#define FULL_MASK 0xffffffffu

// Reserves a slot of a list (length counter `len`) for each lane with `take`, with
// one atomic per warp: the lanes that take elect a leader, which reserves room for all
// of them. Returns the lane's index (meaningless where `take` is false).
__device__ __forceinline__ u32 warp_reserve(u32* len, bool take) {
    const u32 ballot = __ballot_sync(__activemask(), take);
    if (!ballot) return 0;
    const u32 lane = threadIdx.x & 31, leader = __ffs(ballot) - 1;
    u32 base = 0;
    if (lane == leader) base = atomicAdd(len, __popc(ballot));
    return __shfl_sync(__activemask(), base, leader) + __popc(ballot & ((1u << lane) - 1));
}

// Appends `v` to `queue` (length counter `len`), one atomic per warp.
__device__ __forceinline__ void warp_append(u32* queue, u32* len, u32 v, bool push) {
    const u32 at = warp_reserve(len, push);
    if (push) queue[at] = v;
}

// The "last block" pattern: returns true in exactly one thread of the grid, after
// every block has finished its work for this launch (their writes are visible).
__device__ __forceinline__ bool last_block_done(u32* blocks_done) {
    __shared__ bool last;
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        last = atomicAdd(blocks_done, 1) == gridDim.x - 1;
    }
    __syncthreads();
    if (!(last && threadIdx.x == 0)) return false;
    __threadfence();
    *blocks_done = 0;
    return true;
}

// Grid barrier of a cooperative (persistent) launch: `decide(lane)` runs in warp 0 of
// the last block to arrive (all 32 lanes, so a decision may use the whole warp), before
// the others are released; what it writes is visible to every block afterwards.
template <typename Decide>
__device__ __forceinline__ void grid_barrier(u32* blocks_done, u32* generation, Decide decide) {
    __syncthreads();
    if (threadIdx.x < 32) {
        u32 gen = 0, last = 0;
        if (threadIdx.x == 0) {
            gen = __ldcg(generation);
            __threadfence();
            last = atomicAdd(blocks_done, 1) == gridDim.x - 1;
        }
        if (__shfl_sync(FULL_MASK, last, 0)) {
            if (threadIdx.x == 0) *blocks_done = 0;
            decide(threadIdx.x);
            __syncwarp();
            if (threadIdx.x == 0) {
                __threadfence();
                atomicAdd(generation, 1);
            }
        } else if (threadIdx.x == 0) {
            // Spin on an L2 load, not an atomic: pollers must not queue behind the
            // arrivals' atomics.
            while (*(volatile u32*)generation == gen) {}
        }
        __syncwarp();
        __threadfence();
    }
    __syncthreads();
}

// The grid split into groups of blocks for expanding hubs (vertices too large for a
// warp), one hub at a time per group: few hubs get the whole grid each, many get a
// block each. Hub h belongs to group h % groups; within it, `thread` of `threads`.
struct HubGroups {
    u32 group, groups, thread, threads;
};

__device__ __forceinline__ HubGroups hub_groups(u32 count) {
    const u32 groups = max(1u, min(count, gridDim.x)), per_group = gridDim.x / groups;
    const u32 group = blockIdx.x / per_group;
    // Blocks past the last whole group (gridDim.x % groups of them) get group >= groups.
    return {group, groups, (blockIdx.x - group * per_group) * blockDim.x + threadIdx.x, per_group * blockDim.x};
}

__device__ __forceinline__ double warp_sum(double x) {
    for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(FULL_MASK, x, o);
    return x;
}

extern "C" __global__ void fill_u32(u32* a, u32 n, u32 value) {
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) a[i] = value;
}

extern "C" __global__ void fill_u64(u64* a, u32 n, u64 value) {
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) a[i] = value;
}

extern "C" __global__ void iota_u32(u32* a, u32 n) {
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) a[i] = i;
}

// A frontier in two queues (queue[parity] the current one) and what the last block of
// a step decides with: the steps of kcore.cu and scc.cu.
struct __align__(8) QueueCtl {
    u32 parity;       // queue[parity] is the frontier, queue[parity ^ 1] the next one
    u32 len[2];       // queue lengths
    u32 blocks_done;  // arrivals at the end of a step
    u32 done;         // the loop is over: the batch's later launches return at once
    u32 steps;        // steps taken
    u32 k;            // kcore: the level being peeled
    u32 scan;         // kcore: the next step looks for the level's vertices
    u32 least;        // kcore: the least degree left; scc: the component's smallest id
    u32 left;         // scc: vertices not yet placed
    u64 best;         // scc: the pivot, as (in-degree x out-degree, ~id) for atomicMax
};

// The end of a queue step, in the last block: the next queue becomes the frontier;
// an empty one ends the loop.
__device__ __forceinline__ void queue_advance(QueueCtl* ctl) {
    ctl->len[ctl->parity] = 0;
    ctl->parity ^= 1;
    ctl->steps++;
    if (ctl->len[ctl->parity] == 0) ctl->done = 1;
}

// One step over the frontier queue[parity], a warp per vertex: f(v, next, next_len)
// for each (`next` the queue it appends to); then the last block advances the queues.
template <typename F>
__device__ __forceinline__ void queue_step(QueueCtl* ctl, u32* queue0, u32* queue1, F f) {
    const u32 parity = __ldcg(&ctl->parity), len = __ldcg(&ctl->len[parity]), warps = gridDim.x * blockDim.x / 32;
    const u32* in_q = parity ? queue1 : queue0;
    u32* out_q = parity ? queue0 : queue1;
    for (u32 i = (blockIdx.x * blockDim.x + threadIdx.x) / 32; i < len; i += warps) f(__ldcg(&in_q[i]), out_q, &ctl->len[parity ^ 1]);
    if (last_block_done(&ctl->blocks_done)) queue_advance(ctl);
}

// Calls f(v) for each of u's neighbours in the ascending list off/adj as a simple
// graph counts them (a repeat of the one before it and a self-loop skipped), a lane
// an edge. Lanes diverge: f may use __activemask collectives only.
template <typename F>
__device__ __forceinline__ void warp_each_distinct(const u64* off, const u32* adj, u32 u, F f) {
    const u64 start = off[u], end = off[u + 1];
    for (u64 e = start + (threadIdx.x & 31); e < end; e += 32) {
        const u32 v = adj[e];
        if (v != u && (e == start || adj[e - 1] != v)) f(v);
    }
}

// The sum over the warp, in lane 0.
__device__ __forceinline__ u32 warp_sum_u32(u32 x) {
    for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(FULL_MASK, x, o);
    return x;
}

// Exclusive prefix sums of u64 arrays in place, in three launches (scan_tiles,
// scan_tile_sums, scan_apply) over tiles of SCAN_TILE items, blocks of 256 threads.
#define SCAN_TILE 1024
#define SCAN_ITEMS (SCAN_TILE / 256)

// The exclusive prefix of x over the block's threads, in thread order; `total`
// receives the block's sum. Every thread of the block must call it.
__device__ __forceinline__ u64 block_exclusive_scan(u64 x, u64* total) {
    __shared__ u64 warp_sums[32];
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    u64 inclusive = x;
    for (int o = 1; o < 32; o <<= 1) {
        const u64 y = __shfl_up_sync(FULL_MASK, inclusive, o);
        if (lane >= o) inclusive += y;
    }
    if (lane == 31) warp_sums[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        u64 s = lane < warps ? warp_sums[lane] : 0;
        for (int o = 1; o < 32; o <<= 1) {
            const u64 y = __shfl_up_sync(FULL_MASK, s, o);
            if (lane >= o) s += y;
        }
        warp_sums[lane] = s;
    }
    __syncthreads();
    const u64 before = warp ? warp_sums[warp - 1] : 0;
    *total = warp_sums[warps - 1];
    __syncthreads();
    return before + inclusive - x;
}

// Each tile's sum of a[0..len).
extern "C" __global__ void scan_tiles(const u64* a, u64 len, u64* tile_sums) {
    for (u64 t = blockIdx.x; t * SCAN_TILE < len; t += gridDim.x) {
        const u64 base = t * SCAN_TILE + threadIdx.x * SCAN_ITEMS;
        u64 s = 0;
        for (u32 j = 0; j < SCAN_ITEMS; j++) s += base + j < len ? a[base + j] : 0;
        u64 total;
        block_exclusive_scan(s, &total);
        if (threadIdx.x == 0) tile_sums[t] = total;
    }
}

// The tiles' sums made exclusive prefixes, by one block.
extern "C" __global__ void scan_tile_sums(u64* tile_sums, u64 tiles) {
    const u64 chunk = (tiles + blockDim.x - 1) / blockDim.x;
    const u64 lo = min(tiles, threadIdx.x * chunk), hi = min(tiles, lo + chunk);
    u64 s = 0;
    for (u64 i = lo; i < hi; i++) s += tile_sums[i];
    u64 total;
    u64 before = block_exclusive_scan(s, &total);
    for (u64 i = lo; i < hi; i++) {
        const u64 x = tile_sums[i];
        tile_sums[i] = before;
        before += x;
    }
}

// a[0..len) replaced by its exclusive prefix sums, each tile offset by its prefix.
extern "C" __global__ void scan_apply(u64* a, u64 len, const u64* tile_sums) {
    for (u64 t = blockIdx.x; t * SCAN_TILE < len; t += gridDim.x) {
        const u64 base = t * SCAN_TILE + threadIdx.x * SCAN_ITEMS;
        u64 x[SCAN_ITEMS], s = 0;
        for (u32 j = 0; j < SCAN_ITEMS; j++) {
            x[j] = base + j < len ? a[base + j] : 0;
            s += x[j];
        }
        u64 total;
        u64 before = tile_sums[t] + block_exclusive_scan(s, &total);
        for (u32 j = 0; j < SCAN_ITEMS; j++) {
            if (base + j < len) a[base + j] = before;
            before += x[j];
        }
    }
}
