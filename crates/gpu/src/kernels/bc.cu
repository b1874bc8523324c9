// Brandes BC on the GPU (Brandes 2001; the GPU mapping of Sariyüce et al., GPGPU 2013),
// a batch of sources per sweep and every level on the device: one cooperative launch
// per batch runs the forward BFS of all its sources in lockstep (counting shortest
// paths, sigma, with double atomicAdd, and recording each level's (source, vertex)
// pairs contiguously), then the backward sweep, deepest level first, in which each pair
// pulls from its successors. A level costs one grid barrier for the whole batch, so a
// high-diameter graph from many sources pays levels x batches barriers, not levels x
// sources host round trips. The state of source b's vertex v lives at b * n + v; the
// launch ends by resetting the pairs it reached, so a batch costs what it reaches.
// Pairs whose vertex has HUB_DEGREE edges or more are set aside and expanded by groups
// of blocks (hub_groups), so one hub does not hold one warp for a whole level.

struct BcCtl {
    u32 blocks_done;
    u32 generation;
    u32 tail;       // pairs recorded so far (the forward sweep appends at the tail)
    u32 hub_len;    // pairs set aside in this level
    u32 hubs_now;   // hub_len as the barrier saw it (the same in every block)
    u32 pad[3];
};

struct BcArrays {
    const u64* off;
    const u32* adj;
    const u32* sources;  // this batch's
    u32* depth;          // batch x n, INF32 between launches
    double* sigma;       // batch x n, 0 between launches
    double* delta;       // batch x n, 0 between launches
    u32* order;          // the pairs b * n + v in order of discovery
    u32* level_end;      // level d's pairs end at order[level_end[d]]
    u32* hubs;           // indices into order of this level's hub pairs
    double* bc;
    u32 n;
    u32 batch;
};

// Forward step of pair x at level d over its edges from warp_first on, a warp at a
// time (lanes over 32 consecutive edges), `stride` apart.
__device__ __forceinline__ void bc_expand(BcCtl* ctl, const BcArrays& a, u32 x, u32 d, u64 warp_first, u64 stride) {
    const u32 b = x / a.n, u = x - b * a.n;
    const u64 base = (u64)b * a.n;
    const double su = __ldcg(&a.sigma[x]);
    const u64 begin = a.off[u], end = a.off[u + 1];
    for (u64 e0 = begin + warp_first; e0 < end; e0 += stride) {
        const u64 e = e0 + (threadIdx.x & 31);
        bool found = false;
        u32 j = 0;
        if (e < end) {
            j = (u32)(base + a.adj[e]);
            u32 dj = __ldcg(&a.depth[j]);
            if (dj == INF32) {
                dj = atomicCAS(&a.depth[j], INF32, d + 1);
                found = dj == INF32;
                if (found) dj = d + 1;
            }
            if (dj == d + 1) atomicAdd(&a.sigma[j], su);
        }
        warp_append(a.order, &ctl->tail, j, found);
    }
}

// Backward partial sum of pair x over its edges first, first + stride, ... at level d.
__device__ __forceinline__ double bc_pull(const BcArrays& a, u32 x, u32 d, u64 first, u64 stride) {
    const u32 b = x / a.n, u = x - b * a.n;
    const u64 base = (u64)b * a.n;
    const double sx = __ldcg(&a.sigma[x]);
    double sum = 0.0;
    for (u64 e = a.off[u] + first; e < a.off[u + 1]; e += stride) {
        const u32 j = (u32)(base + a.adj[e]);
        if (__ldcg(&a.depth[j]) == d + 1) sum += sx / __ldcg(&a.sigma[j]) * (1.0 + __ldcg(&a.delta[j]));
    }
    return sum;
}

extern "C" __global__ void bc_batch(BcCtl* ctl, BcArrays a) {
    const u32 lane = threadIdx.x & 31;
    const u32 thread = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
    const u32 warp = thread / 32, warps = threads / 32;
    auto degree = [&](u32 x) { const u32 u = x % a.n; return a.off[u + 1] - a.off[u]; };
    // Level 0: the sources.
    for (u32 b = thread; b < a.batch; b += threads) {
        const u32 x = b * a.n + a.sources[b];
        a.depth[x] = 0;
        a.sigma[x] = 1.0;
        a.order[b] = x;
    }
    if (thread == 0) {
        a.level_end[0] = a.batch;
        ctl->tail = a.batch;
        ctl->hub_len = 0;
    }
    grid_barrier(&ctl->blocks_done, &ctl->generation, [](u32) {});
    // Forward: level d's pairs expand into level d + 1.
    u32 d = 0;
    for (;; d++) {
        const u32 begin = d ? __ldcg(&a.level_end[d - 1]) : 0, end = __ldcg(&a.level_end[d]);
        if (begin == end) break;
        for (u32 i = begin + warp; i < end; i += warps) {
            const u32 x = __ldcg(&a.order[i]);
            if (degree(x) >= HUB_DEGREE) {
                if (lane == 0) a.hubs[atomicAdd(&ctl->hub_len, 1)] = x;
                continue;
            }
            bc_expand(ctl, a, x, d, 0, 32);
        }
        grid_barrier(&ctl->blocks_done, &ctl->generation, [&](u32 l) {
            if (l != 0) return;
            ctl->hubs_now = __ldcg(&ctl->hub_len);
            ctl->hub_len = 0;
            if (ctl->hubs_now == 0) a.level_end[d + 1] = __ldcg(&ctl->tail);
        });
        const u32 hubs = __ldcg(&ctl->hubs_now);
        if (hubs) {
            const HubGroups g = hub_groups(hubs);
            for (u32 h = g.group; g.group < g.groups && h < hubs; h += g.groups) {
                bc_expand(ctl, a, __ldcg(&a.hubs[h]), d, g.thread & ~31u, g.threads);
            }
            grid_barrier(&ctl->blocks_done, &ctl->generation, [&](u32 l) {
                if (l == 0) a.level_end[d + 1] = __ldcg(&ctl->tail);
            });
        }
    }
    const u32 levels = d;
    // Backward: pairs of level d pull from level d + 1; level 0 holds the sources,
    // which take no score.
    for (d = levels - 1; d >= 1; d--) {
        const u32 begin = __ldcg(&a.level_end[d - 1]), end = __ldcg(&a.level_end[d]);
        for (u32 i = begin + warp; i < end; i += warps) {
            const u32 x = __ldcg(&a.order[i]);
            if (degree(x) >= HUB_DEGREE) {
                if (lane == 0) a.hubs[atomicAdd(&ctl->hub_len, 1)] = x;
                continue;
            }
            const double sum = warp_sum(bc_pull(a, x, d, lane, 32));
            if (lane == 0) {
                a.delta[x] = sum;
                atomicAdd(&a.bc[x - x / a.n * a.n], sum);
            }
        }
        grid_barrier(&ctl->blocks_done, &ctl->generation, [&](u32 l) {
            if (l != 0) return;
            ctl->hubs_now = __ldcg(&ctl->hub_len);
            ctl->hub_len = 0;
        });
        const u32 hubs = __ldcg(&ctl->hubs_now);
        if (hubs) {
            // Partial sums of a group's warps add up in delta (0 until now) and bc.
            const HubGroups g = hub_groups(hubs);
            for (u32 h = g.group; g.group < g.groups && h < hubs; h += g.groups) {
                const u32 x = __ldcg(&a.hubs[h]);
                const double sum = warp_sum(bc_pull(a, x, d, g.thread, g.threads));
                if (lane == 0 && sum != 0.0) {
                    atomicAdd(&a.delta[x], sum);
                    atomicAdd(&a.bc[x - x / a.n * a.n], sum);
                }
            }
            grid_barrier(&ctl->blocks_done, &ctl->generation, [](u32) {});
        }
    }
    // Leave the arrays as the next batch expects them.
    const u32 reached = __ldcg(&ctl->tail);
    for (u32 i = thread; i < reached; i += threads) {
        const u32 x = __ldcg(&a.order[i]);
        a.depth[x] = INF32;
        a.sigma[x] = 0.0;
        a.delta[x] = 0.0;
    }
}
