// SSSP, near-far (Davidson, Baxter, Garland, Owens, IPDPS 2014): the near queue holds
// vertices whose distance is below a threshold and is relaxed until empty; the others
// wait in a far pile, split by a rising threshold. Control stays on the device, as in
// the BFS: sssp_persistent runs every step in one cooperative launch, its grid
// barrier's last block choosing the next step; sssp_step is one launch per step, its
// last block deciding, where a cooperative launch is refused. A graph whose weights
// are all equal runs as a BFS instead (device.rs; depth_to_distance below).
// Distances are u64: integers, or the bits of non-negative doubles (which order like
// their bit patterns, so atomicMin serves both). Loads of data written during the
// launch use __ldcg (the L1 is not coherent).

struct SsspCtl {
    u32 split;        // this launch splits the far pile rather than relaxing
    u32 parity;       // near[parity] is read, near[parity ^ 1] written
    u32 far_parity;   // far[far_parity] is read by a split
    u32 done;
    u32 near_len[2];
    u32 far_len[2];
    u32 blocks_done;
    u32 step;         // stamps pushes so a vertex enters a near queue once per step
    u64 threshold;    // distances below it are near (same encoding as dist)
    u64 far_min;      // smallest distance left in the far pile
    u64 delta;        // threshold increment (same encoding)
    u32 generation;   // barrier generation (persistent driver)
    u32 hub_len;      // hubs set aside by this step (persistent driver)
    u32 hubs_now;     // hub_len as the barrier saw it
    u32 pad;
};

__device__ __forceinline__ u64 add_weight(u64 d, u32 w, u32 is_float) {
    if (is_float) return (u64)__double_as_longlong(__longlong_as_double((long long)d) + (double)__uint_as_float(w));
    return d + w;
}

__device__ __forceinline__ u64 add_threshold(u64 t, u64 delta, u32 is_float) {
    if (is_float) return (u64)__double_as_longlong(__longlong_as_double((long long)t) + __longlong_as_double((long long)delta));
    return t + delta;
}

// The arrays of a run, passed by value to every step.
struct SsspArrays {
    const u64* off;
    const u32* adj;
    const u32* weight;  // null: every weight is 1
    u64* dist;
    u32* stamp;
    u32* in_far;
    u32* near[2];
    u32* far[2];
    u32* hubs;          // near vertices of HUB_DEGREE edges or more, set aside (persistent driver)
    u32 is_float;
};

// What a step reads of the control block, read once.
struct SsspStep {
    u32 parity, far_parity, step;
    u64 threshold;
};

// A vertex enters the next near queue once per step.
__device__ __forceinline__ void push_near(SsspCtl* ctl, const SsspArrays& a, const SsspStep& s, u32 v, bool want) {
    const bool push = want && atomicMax(&a.stamp[v], s.step) < s.step;
    warp_append(a.near[s.parity ^ 1], &ctl->near_len[s.parity ^ 1], v, push);
}

// Relaxes the out-edges of u from warp_first on, a warp at a time (lanes over 32
// consecutive edges), `stride` apart; improved vertices go near or far.
__device__ __forceinline__ void sssp_relax(SsspCtl* ctl, const SsspArrays& a, const SsspStep& s, u32 u, u64 warp_first, u64 stride) {
    const u64 du = __ldcg(&a.dist[u]);
    const u64 begin = a.off[u], end = a.off[u + 1];
    for (u64 e0 = begin + warp_first; e0 < end; e0 += stride) {
        const u64 e = e0 + (threadIdx.x & 31);
        bool near = false, far = false;
        u32 v = 0;
        if (e < end) {
            v = a.adj[e];
            const u64 nd = add_weight(du, a.weight ? a.weight[e] : 1u, a.is_float);
            if (nd < __ldcg(&a.dist[v]) && nd < atomicMin(&a.dist[v], nd)) {
                near = nd < s.threshold;
                far = !near && atomicExch(&a.in_far[v], 1u) == 0;
            }
        }
        push_near(ctl, a, s, v, near);
        warp_append(a.far[s.far_parity], &ctl->far_len[s.far_parity], v, far);
    }
}

// One step: relax the near queue (setting hubs aside if `defer_hubs`), or split the
// far pile.
__device__ void sssp_work(SsspCtl* ctl, const SsspArrays& a, bool defer_hubs) {
    const SsspStep s = {__ldcg(&ctl->parity), __ldcg(&ctl->far_parity), __ldcg(&ctl->step), __ldcg(&ctl->threshold)};
    if (!__ldcg(&ctl->split)) {
        const u32 len = __ldcg(&ctl->near_len[s.parity]);
        const u32* near_in = a.near[s.parity];
        const u32 warps = gridDim.x * blockDim.x / 32;
        for (u32 i = (blockIdx.x * blockDim.x + threadIdx.x) / 32; i < len; i += warps) {
            const u32 u = __ldcg(&near_in[i]);
            if (defer_hubs && a.off[u + 1] - a.off[u] >= HUB_DEGREE) {
                if ((threadIdx.x & 31) == 0) a.hubs[atomicAdd(&ctl->hub_len, 1)] = u;
                continue;
            }
            sssp_relax(ctl, a, s, u, 0, 32);
        }
    } else {
        // Split: far entries now below the threshold move to the near queue; the rest
        // are compacted into the other far array. Track the smallest distance left.
        const u32 fp = s.far_parity;
        const u32* far_in = a.far[fp];
        const u32 len = __ldcg(&ctl->far_len[fp]);
        u64 smallest = INF64;
        for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < len; i += gridDim.x * blockDim.x) {
            const u32 v = __ldcg(&far_in[i]);
            const u64 d = __ldcg(&a.dist[v]);
            const bool near = d < s.threshold;
            if (near) a.in_far[v] = 0;
            else smallest = min(smallest, d);
            push_near(ctl, a, s, v, near);
            warp_append(a.far[fp ^ 1], &ctl->far_len[fp ^ 1], v, !near);
        }
        for (int o = 16; o > 0; o >>= 1) smallest = min(smallest, __shfl_down_sync(__activemask(), smallest, o));
        if ((threadIdx.x & 31) == 0 && smallest != INF64) atomicMin(&ctl->far_min, smallest);
    }
}

// Run by one thread once every block has finished a step: choose the next one.
__device__ void sssp_decide(SsspCtl* ctl_, u32 is_float) {
    volatile SsspCtl* ctl = ctl_;
    const u32 split = ctl->split, parity = ctl->parity;
    if (split) {
        const u32 fp = ctl->far_parity;
        ctl->far_len[fp] = 0;
        ctl->far_parity = fp ^ 1;
    }
    const u32 next = ctl->near_len[parity ^ 1];
    ctl->near_len[parity] = 0;
    ctl->parity = parity ^ 1;
    ctl->step += 1;
    if (next > 0) {
        ctl->split = 0;
    } else if (ctl->far_len[ctl->far_parity] == 0) {
        ctl->done = 1;
    } else {
        // Near is empty: raise the threshold past the far pile's minimum and split.
        u64 t = add_threshold(ctl->threshold, ctl->delta, is_float);
        if (split && ctl->far_min != INF64) {
            const u64 jump = add_threshold(ctl->far_min, ctl->delta, is_float);
            if (jump > t) t = jump;
        }
        ctl->threshold = t;
        ctl->far_min = INF64;
        ctl->split = 1;
    }
}

extern "C" __global__ void sssp_step(SsspCtl* ctl, SsspArrays a) {
    if (__ldcg(&ctl->done)) return;
    sssp_work(ctl, a, false);
    if (last_block_done(&ctl->blocks_done)) sssp_decide(ctl, a.is_float);
}

// Hubs set aside by a relaxing step are relaxed by groups of blocks before the step
// ends (a second barrier, only in steps that have hubs).
extern "C" __global__ void sssp_persistent(SsspCtl* ctl, SsspArrays a) {
    while (!__ldcg(&ctl->done)) {
        sssp_work(ctl, a, true);
        grid_barrier(&ctl->blocks_done, &ctl->generation, [&](u32 lane) {
            if (lane != 0) return;
            ctl->hubs_now = __ldcg(&ctl->hub_len);
            ctl->hub_len = 0;
            if (ctl->hubs_now == 0) sssp_decide(ctl, a.is_float);
        });
        const u32 hubs = __ldcg(&ctl->hubs_now);
        if (hubs) {
            const SsspStep s = {__ldcg(&ctl->parity), __ldcg(&ctl->far_parity), __ldcg(&ctl->step), __ldcg(&ctl->threshold)};
            const HubGroups g = hub_groups(hubs);
            for (u32 h = g.group; g.group < g.groups && h < hubs; h += g.groups) {
                sssp_relax(ctl, a, s, __ldcg(&a.hubs[h]), g.thread & ~31u, g.threads);
            }
            grid_barrier(&ctl->blocks_done, &ctl->generation, [&](u32 lane) {
                if (lane == 0) sssp_decide(ctl, a.is_float);
            });
        }
    }
}

// Distances of a graph whose weights all equal `weight`, from BFS depths.
extern "C" __global__ void depth_to_distance(u32 n, const u32* depth, u64* dist, u32 weight) {
    for (u32 v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) {
        const u32 d = depth[v];
        dist[v] = d == INF32 ? INF64 : (u64)d * weight;
    }
}
