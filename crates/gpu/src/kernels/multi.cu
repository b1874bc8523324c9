// The multi-GPU engine's kernels (design.md §1.1). Each GPU owns a contiguous range of
// vertices and computes only their values; every GPU keeps a full value array, and
// after each step only updated *boundary* vertices (those another part reads) travel,
// as records of one id word and `width` value words.

// Packs the updated vertices of `list` (or of lo..lo+len when list is null) that
// another part needs (`send_flag`, indexed from lo) into records at `out`: a warp
// ballots which lanes hold one, its leader reserves room for all with one atomic, and
// each lane finds its slot by popcount of the lanes below it.
extern "C" __global__ void mg_pack(const u32* list, const u32* list_len_ptr, u32 list_len, u32 lo,
                                   const unsigned char* send_flag, const u32* values, u32 width,
                                   u32* out, u32* count) {
    const u32 len = list_len_ptr ? __ldcg(list_len_ptr) : list_len;
    const u32 lane = threadIdx.x & 31;
    const u32 stride = gridDim.x * blockDim.x;
    // The loop bound is uniform across each block, so whole warps enter the ballot.
    for (u32 base = blockIdx.x * blockDim.x; base < len; base += stride) {
        const u32 i = base + threadIdx.x;
        bool take = false;
        u32 v = 0;
        if (i < len) {
            v = list ? __ldcg(&list[i]) : lo + i;
            take = send_flag[v - lo] != 0;
        }
        const u32 ballot = __ballot_sync(FULL_MASK, take);
        if (!ballot) continue;
        const u32 leader = __ffs(ballot) - 1;
        u32 at = 0;
        if (lane == leader) at = atomicAdd(count, __popc(ballot));
        at = __shfl_sync(FULL_MASK, at, leader) + __popc(ballot & ((1u << lane) - 1));
        if (take) {
            u32* r = out + (u64)at * (1 + width);
            r[0] = v;
            for (u32 k = 0; k < width; k++) r[1 + k] = __ldcg(&values[(u64)v * width + k]);
        }
    }
}

// Writes `count` received records into the value array (width 0: every vertex gets
// `fill`) and, when `queue` is set, appends the vertices to it (the next frontier).
extern "C" __global__ void mg_apply(const u32* in, u32 count, u32 width, u32 fill, u32* values, u32* queue,
                                    u32* queue_len) {
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        const u32* r = in + (u64)i * (1 + width);
        const u32 v = r[0];
        if (width == 0) values[v] = fill;
        for (u32 k = 0; k < width; k++) values[(u64)v * width + k] = r[1 + k];
        if (queue) warp_append(queue, queue_len, v, true);
    }
}

// Word copy by loads and stores: through a peer pointer it is the "peer" transport,
// to or from host-mapped memory the zero-copy "uva" one. 16-byte accesses when both
// ends and the length allow.
extern "C" __global__ void mg_copy_words(const u32* src, u32* dst, u64 words) {
    const u64 tid = blockIdx.x * (u64)blockDim.x + threadIdx.x, stride = (u64)gridDim.x * blockDim.x;
    if ((((u64)src | (u64)dst) & 15) == 0) {
        const uint4* s = (const uint4*)src;
        uint4* d = (uint4*)dst;
        for (u64 i = tid; i < words / 4; i += stride) d[i] = s[i];
        for (u64 i = words / 4 * 4 + tid; i < words; i += stride) dst[i] = src[i];
    } else {
        for (u64 i = tid; i < words; i += stride) dst[i] = src[i];
    }
}

// SSSP relaxation, frontier Bellman-Ford (the BSP form that partitions: Gunrock's SSSP
// without its priority queue): a warp per frontier vertex over its out-edges into this
// part. A vertex whose distance dropped enters `next` once per round (`stamp`).
extern "C" __global__ void mg_sssp_relax(const u32* frontier, const u32* frontier_len, const u64* off, const u32* adj,
                                         const u32* weight, u32 is_float, u64* dist, u32* stamp, u32 round,
                                         u32* next, u32* next_len) {
    const u32 len = __ldcg(frontier_len);
    const u32 lane = threadIdx.x & 31;
    const u32 warps = gridDim.x * blockDim.x / 32;
    for (u32 i = (blockIdx.x * blockDim.x + threadIdx.x) / 32; i < len; i += warps) {
        const u32 u = __ldcg(&frontier[i]);
        const u64 du = __ldcg(&dist[u]);
        const u64 begin = off[u], end = off[u + 1];
        for (u64 e = begin; e < end; e += 32) {
            bool push = false;
            u32 v = 0;
            if (e + lane < end) {
                v = adj[e + lane];
                const u64 nd = add_weight(du, weight ? weight[e + lane] : 1u, is_float);
                push = nd < __ldcg(&dist[v]) && nd < atomicMin(&dist[v], nd) && atomicExch(&stamp[v], round) != round;
            }
            warp_append(next, next_len, v, push);
        }
    }
}

// One round of WCC by minimum-label propagation with shortcutting, over this part's
// vertices lo..hi and their neighbours both ways, a warp per vertex: a vertex takes
// the smallest label among its own, its neighbours' and its label's label. Labels only
// fall and stay ids of the component, so the fixed point is each component's smallest
// id, as on the CPU. Only the owner writes a vertex's label.
extern "C" __global__ void mg_wcc_round(u32 lo, u32 hi, const u64* off, const u32* adj, u32* label, u32* changed,
                                        u32* changed_len) {
    const u32 lane = threadIdx.x & 31;
    const u32 warps = gridDim.x * blockDim.x / 32;
    for (u32 v = lo + (blockIdx.x * blockDim.x + threadIdx.x) / 32; v < hi; v += warps) {
        const u32 old = __ldcg(&label[v]);
        u32 m = old;
        for (u64 e = off[v] + lane; e < off[v + 1]; e += 32) m = min(m, __ldcg(&label[adj[e]]));
        for (int o = 16; o > 0; o >>= 1) m = min(m, __shfl_down_sync(FULL_MASK, m, o));
        m = min(__shfl_sync(FULL_MASK, m, 0), __ldcg(&label[__shfl_sync(FULL_MASK, m, 0)]));
        const bool lower = lane == 0 && m < old;
        if (lower) label[v] = m;
        warp_append(changed, changed_len, v, lower);
    }
}
