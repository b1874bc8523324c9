// k-core decomposition on one GPU: level-synchronous peeling (Kabir and Madduri,
// "Parallel k-Core Decomposition on Multicore Platforms", IPDPSW 2017), as on the CPU
// (algo/src/kcore.rs), with its control on the device. A scan step queues the vertices
// left whose degree is at most the level k (finding none, k becomes the least degree
// left); peel steps take the queue, lowering each live neighbour's degree, and queue
// the neighbour that this lowers to k (exactly one atomicSub sees k + 1). A vertex
// queued at level k has core number k. Degrees are those of networkx's simple graphs:
// distinct neighbours, self-loops left out, in- plus out-neighbours when directed.

// Calls f(v) for each neighbour v of u as its degree counts it.
template <typename F>
__device__ __forceinline__ void kcore_each(const u64* off, const u32* adj, const u64* in_off, const u32* in_adj, u32 u,
                                           F f) {
    warp_each_distinct(off, adj, u, f);
    if (in_off) warp_each_distinct(in_off, in_adj, u, f);
}

// Every vertex's degree, a warp per vertex.
extern "C" __global__ void kcore_degrees(u32 n, const u64* off, const u32* adj, const u64* in_off, const u32* in_adj,
                                         u32* degree) {
    const u32 warps = gridDim.x * blockDim.x / 32;
    for (u32 u = (blockIdx.x * blockDim.x + threadIdx.x) / 32; u < n; u += warps) {
        u32 d = 0;
        kcore_each(off, adj, in_off, in_adj, u, [&](u32) { d++; });
        d = warp_sum_u32(d);
        if ((threadIdx.x & 31) == 0) degree[u] = d;
    }
}

// One step: a scan (ctl->scan) or a peel of queue[parity]. `core` holds INF32 for the
// vertices left.
extern "C" __global__ void kcore_step(u32 n, const u64* off, const u32* adj, const u64* in_off, const u32* in_adj,
                                      u32* degree, u32* core, u32* queue0, u32* queue1, QueueCtl* ctl) {
    if (__ldcg(&ctl->done)) return;
    const u32 k = __ldcg(&ctl->k), parity = __ldcg(&ctl->parity), scan = __ldcg(&ctl->scan);
    u32* const in_q = parity ? queue1 : queue0;
    u32* const out_q = parity ? queue0 : queue1;
    if (scan) {
        u32 least = INF32;
        for (u32 v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) {
            bool take = false;
            if (core[v] == INF32) {
                const u32 d = degree[v];
                take = d <= k;
                if (take) core[v] = k;
                else least = min(least, d);
            }
            warp_append(in_q, &ctl->len[parity], v, take);
        }
        for (int o = 16; o > 0; o >>= 1) least = min(least, __shfl_down_sync(FULL_MASK, least, o));
        if ((threadIdx.x & 31) == 0 && least != INF32) atomicMin(&ctl->least, least);
    } else {
        const u32 len = __ldcg(&ctl->len[parity]), warps = gridDim.x * blockDim.x / 32;
        for (u32 i = (blockIdx.x * blockDim.x + threadIdx.x) / 32; i < len; i += warps) {
            kcore_each(off, adj, in_off, in_adj, __ldcg(&in_q[i]), [&](u32 w) {
                const bool reached = __ldcg(&core[w]) == INF32 && atomicSub(&degree[w], 1) == k + 1;
                if (reached) core[w] = k;
                warp_append(out_q, &ctl->len[parity ^ 1], w, reached);
            });
        }
    }
    if (last_block_done(&ctl->blocks_done)) {
        ctl->steps++;
        if (scan) {
            // Nothing at level k and nothing left: done; nothing at k: the least degree left.
            if (ctl->len[parity] > 0) ctl->scan = 0;
            else if (ctl->least == INF32) ctl->done = 1;
            else ctl->k = ctl->least;
            ctl->least = INF32;
        } else {
            ctl->len[parity] = 0;
            ctl->parity = parity ^ 1;
            if (ctl->len[parity ^ 1] == 0) ctl->scan = 1;
        }
    }
}
