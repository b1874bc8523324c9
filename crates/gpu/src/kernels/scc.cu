// Strongly connected components on one GPU: Multistep (Slota, Rajamanickam, Madduri,
// IPDPS 2014) as on the CPU (algo/src/scc.rs): trimming passes, forward-backward from
// a pivot, then colouring rounds until every vertex is placed. `label` holds a placed
// vertex's component (its smallest id) and SCC_LIVE for the others. The host sequences
// the phases; each phase's steps run in batches with the control on the device.

#define SCC_LIVE INF32

// Whether u has a live neighbour other than itself in off/adj (the whole warp answers).
__device__ __forceinline__ bool scc_has_live(const u64* off, const u32* adj, const u32* label, u32 u) {
    const u64 end = off[u + 1];
    for (u64 base = off[u]; base < end; base += 32) {
        const u64 e = base + (threadIdx.x & 31);
        bool live = false;
        if (e < end) {
            const u32 v = adj[e];
            live = v != u && __ldcg(&label[v]) == SCC_LIVE;
        }
        if (__any_sync(FULL_MASK, live)) return true;
    }
    return false;
}

// A trimming pass, a warp per vertex: a live vertex with no live in-neighbour or none
// out is a component of its own (so is one whose neighbours this pass placed). The
// loop ends after a pass that places none, or after `passes` (colouring places the rest).
extern "C" __global__ void scc_trim(u32 n, const u64* off, const u32* adj, const u64* in_off, const u32* in_adj,
                                    u32* label, u32 passes, QueueCtl* ctl) {
    if (__ldcg(&ctl->done)) return;
    const u32 warps = gridDim.x * blockDim.x / 32;
    u32 placed = 0;
    for (u32 u = (blockIdx.x * blockDim.x + threadIdx.x) / 32; u < n; u += warps) {
        if (__ldcg(&label[u]) != SCC_LIVE) continue;
        if (!scc_has_live(off, adj, label, u) || !scc_has_live(in_off, in_adj, label, u)) {
            if ((threadIdx.x & 31) == 0) {
                label[u] = u;
                placed++;
            }
        }
    }
    if (placed) atomicAdd(&ctl->len[0], placed);
    if (last_block_done(&ctl->blocks_done)) {
        ctl->steps++;
        if (ctl->len[0] == 0 || ctl->steps >= passes) ctl->done = 1;
        ctl->len[0] = 0;
    }
}

// The live vertex of largest in-degree x out-degree (the smallest id among equals), into
// ctl->best; 0 when none is live.
extern "C" __global__ void scc_pivot(u32 n, const u64* off, const u64* in_off, const u32* label, QueueCtl* ctl) {
    u64 best = 0;
    for (u32 v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) {
        if (label[v] != SCC_LIVE) continue;
        const u64 product = min((off[v + 1] - off[v]) * (in_off[v + 1] - in_off[v]), (u64)INF32);
        best = max(best, product << 32 | (INF32 - v));
    }
    for (int o = 16; o > 0; o >>= 1) best = max(best, __shfl_down_sync(FULL_MASK, best, o));
    if ((threadIdx.x & 31) == 0 && best) atomicMax(&ctl->best, best);
}

// A step of a search over live vertices along off/adj, marking `bit` in `mark`.
extern "C" __global__ void scc_reach(const u64* off, const u32* adj, const u32* label, u32* mark, u32 bit, u32* queue0,
                                     u32* queue1, QueueCtl* ctl) {
    if (__ldcg(&ctl->done)) return;
    queue_step(ctl, queue0, queue1, [&](u32 v, u32* next, u32* next_len) {
        for (u64 e = off[v] + (threadIdx.x & 31); e < off[v + 1]; e += 32) {
            const u32 w = adj[e];
            const bool seen =
                label[w] == SCC_LIVE && !(__ldcg(&mark[w]) & bit) && !(atomicOr(&mark[w], bit) & bit);
            warp_append(next, next_len, w, seen);
        }
    });
}

// The smallest vertex both searches marked (mark 3), into ctl->least (INF32 before).
extern "C" __global__ void scc_both_least(u32 n, const u32* mark, QueueCtl* ctl) {
    u32 least = INF32;
    for (u32 v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) {
        if (mark[v] == 3) least = min(least, v);
    }
    for (int o = 16; o > 0; o >>= 1) least = min(least, __shfl_down_sync(FULL_MASK, least, o));
    if ((threadIdx.x & 31) == 0 && least != INF32) atomicMin(&ctl->least, least);
}

// Places the vertices both searches marked, labelled ctl->least.
extern "C" __global__ void scc_place_both(u32 n, u32* label, const u32* mark, const QueueCtl* ctl) {
    const u32 least = ctl->least;
    for (u32 v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) {
        if (mark[v] == 3) label[v] = least;
    }
}

// The live vertices, counted into ctl->left.
extern "C" __global__ void scc_count_live(u32 n, const u32* label, QueueCtl* ctl) {
    u32 live = 0;
    for (u32 v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) live += label[v] == SCC_LIVE;
    live = warp_sum_u32(live);
    if ((threadIdx.x & 31) == 0 && live) atomicAdd(&ctl->left, live);
}

// A colouring round's start: every live vertex its own colour, and queued.
extern "C" __global__ void scc_colour_init(u32 n, const u32* label, u32* colour, u32* queue0, QueueCtl* ctl) {
    for (u32 v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) {
        const bool live = label[v] == SCC_LIVE;
        colour[v] = live ? v : INF32;
        warp_append(queue0, &ctl->len[0], v, live);
    }
}

// A step of min-colour propagation along out-edges between live vertices: a vertex
// whose colour this lowers is queued once per step (`stamp` holds the step, epoch +
// ctl->steps, that last queued it; the host moves `epoch` past every step used).
extern "C" __global__ void scc_spread(const u64* off, const u32* adj, const u32* label, u32* colour, u32* stamp,
                                      u32 epoch, u32* queue0, u32* queue1, QueueCtl* ctl) {
    if (__ldcg(&ctl->done)) return;
    const u32 step = epoch + __ldcg(&ctl->steps);
    queue_step(ctl, queue0, queue1, [&](u32 v, u32* next, u32* next_len) {
        const u32 c = __ldcg(&colour[v]);
        for (u64 e = off[v] + (threadIdx.x & 31); e < off[v + 1]; e += 32) {
            const u32 w = adj[e];
            const bool lowered = label[w] == SCC_LIVE && c < __ldcg(&colour[w]) && atomicMin(&colour[w], c) > c;
            warp_append(next, next_len, w, lowered && atomicExch(&stamp[w], step) != step);
        }
    });
}

// A colouring round's roots: each live vertex whose colour is its own id heads its
// component; placed and queued.
extern "C" __global__ void scc_roots(u32 n, u32* label, const u32* colour, u32* queue0, QueueCtl* ctl) {
    for (u32 v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) {
        const bool root = label[v] == SCC_LIVE && colour[v] == v;
        if (root) label[v] = v;
        warp_append(queue0, &ctl->len[0], v, root);
    }
}

// A step of the roots' backward searches: the live in-neighbours of a member that
// share its colour are members.
extern "C" __global__ void scc_gather(const u64* in_off, const u32* in_adj, u32* label, const u32* colour, u32* queue0,
                                      u32* queue1, QueueCtl* ctl) {
    if (__ldcg(&ctl->done)) return;
    queue_step(ctl, queue0, queue1, [&](u32 v, u32* next, u32* next_len) {
        const u32 c = colour[v];
        for (u64 e = in_off[v] + (threadIdx.x & 31); e < in_off[v + 1]; e += 32) {
            const u32 w = in_adj[e];
            const bool member = colour[w] == c && __ldcg(&label[w]) == SCC_LIVE && atomicCAS(&label[w], SCC_LIVE, c) == SCC_LIVE;
            warp_append(next, next_len, w, member);
        }
    });
}
