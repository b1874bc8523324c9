// SSSP, near-far (Davidson, Baxter, Garland, Owens, IPDPS 2014): the near queue holds
// vertices whose distance is below a threshold and is relaxed until empty; the others
// wait in a far pile, split by a rising threshold. Control stays on the device, as in
// the BFS: sssp_persistent runs every step in one cooperative launch, its grid
// barrier's last block choosing the next step; sssp_step is one launch per step, its
// last block deciding, where a cooperative launch is refused. A graph whose weights
// are all equal runs as a BFS instead (device.rs; depth_to_distance below).
// Within a step each block chases the near vertices it improved through a queue in
// shared memory for up to `local_rounds` rounds (a block-local barrier each) before the
// grid barrier, as asynchronous GPU SSSP does (ADDS, Wang et al., PPoPP 2021): on road
// graphs a bucket then takes a few grid-wide steps, not one per hop. Only vertices of
// at most LOCAL_DEGREE edges are chased (a thread each); the rest, and whatever does
// not fit, go to the next step's near queue.
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
    const unsigned char* shared;  // several GPUs: vertices another part reads, from lo (read by sssp_push<true> only)
    u32 is_float;
    u32 local_rounds;   // block-local rounds per step (0: every improvement waits for the next step)
    u32 lo;
    u32 pad;
};

#define LOCAL_CAP 512u
#define LOCAL_DEGREE 16u

// A block's queue of improved near vertices in shared memory (q null: none).
struct Local {
    u32* q;
    u32* len;
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

// Lowers v's distance to what the edge (u, v) of weight index e offers; says whether
// v improved to near (below the threshold) and whether it joined the far pile.
__device__ __forceinline__ void sssp_edge(const SsspArrays& a, const SsspStep& s, u64 du, u64 e, u32 v, bool& near, bool& far) {
    const u64 nd = add_weight(du, a.weight ? a.weight[e] : 1u, a.is_float);
    if (nd < __ldcg(&a.dist[v]) && nd < atomicMin(&a.dist[v], nd)) {
        near = nd < s.threshold;
        far = !near && atomicExch(&a.in_far[v], 1u) == 0;
    }
}

// Queues near vertices in the block's local queue where there is one and room, the
// rest in the next step's near queue; far vertices join the far pile. With `Shared`
// (the multi-GPU engine's step, multi.cu), a vertex another part reads joins the near
// queue even when chased here, since the queue is what the engine sends; a template
// argument so the single-GPU kernels carry no such check. Warp-wide.
template <bool Shared>
__device__ __forceinline__ void sssp_push(SsspCtl* ctl, const SsspArrays& a, const SsspStep& s, Local l, u32 v, bool near, bool far) {
    bool global = near;
    if (l.q) {
        const u32 at = warp_reserve(l.len, near);
        global = near && at >= LOCAL_CAP;
        if (near && !global) l.q[at] = v;
        if (Shared) global = global || (near && a.shared[v - a.lo]);
    }
    push_near(ctl, a, s, v, global);
    warp_append(a.far[s.far_parity], &ctl->far_len[s.far_parity], v, far);
}

// Relaxes the out-edges of u from warp_first on, a warp at a time (lanes over 32
// consecutive edges), `stride` apart; improved vertices go near or far.
template <bool Shared>
__device__ __forceinline__ void sssp_relax(SsspCtl* ctl, const SsspArrays& a, const SsspStep& s, Local l, u32 u, u64 warp_first, u64 stride) {
    const u64 du = __ldcg(&a.dist[u]);
    const u64 begin = a.off[u], end = a.off[u + 1];
    for (u64 e0 = begin + warp_first; e0 < end; e0 += stride) {
        const u64 e = e0 + (threadIdx.x & 31);
        bool near = false, far = false;
        u32 v = 0;
        if (e < end) {
            v = a.adj[e];
            sssp_edge(a, s, du, e, v, near, far);
        }
        sssp_push<Shared>(ctl, a, s, l, v, near, far);
    }
}

// Block-local rounds: the block relaxes the vertices its own relaxations queued in
// shared memory, a thread per vertex, until none are left or the rounds run out; what
// is left goes to the next step's near queue. Block-wide (every thread calls it).
template <bool Shared>
__device__ void sssp_chase(SsspCtl* ctl, const SsspArrays& a, const SsspStep& s, u32 (&q)[2][LOCAL_CAP], u32 (&len)[2]) {
    const u32 lane = threadIdx.x & 31, warp_base = threadIdx.x & ~31u;
    u32 cur = 0;
    for (u32 round = 0;; round++) {
        __syncthreads();
        const u32 count = min(len[cur], LOCAL_CAP);
        if (count == 0) break;
        const bool last = round == a.local_rounds;
        for (u32 base = warp_base; base < count; base += blockDim.x) {
            const u32 i = base + lane;
            u32 u = 0;
            u64 begin = 0, end = 0;
            if (i < count) {
                u = q[cur][i];
                begin = a.off[u];
                end = a.off[u + 1];
            }
            // Large vertices, and every vertex in the last round, wait for the next step.
            const bool defer = i < count && (last || end - begin > LOCAL_DEGREE);
            push_near(ctl, a, s, u, defer);
            if (defer) end = begin;
            const u64 du = begin < end ? __ldcg(&a.dist[u]) : 0;
            u32 most = (u32)(end - begin);
            for (int o = 16; o > 0; o >>= 1) most = max(most, __shfl_xor_sync(FULL_MASK, most, o));
            const Local next = {q[cur ^ 1], &len[cur ^ 1]};
            for (u32 k = 0; k < most; k++) {
                bool near = false, far = false;
                u32 v = 0;
                if (begin + k < end) {
                    v = a.adj[begin + k];
                    sssp_edge(a, s, du, begin + k, v, near, far);
                }
                sssp_push<Shared>(ctl, a, s, next, v, near, far);
            }
        }
        __syncthreads();
        if (threadIdx.x == 0) len[cur] = 0;
        cur ^= 1;
    }
}

// One step: relax the near queue (setting hubs aside if `defer_hubs`) and chase what
// that improved within the block, or split the far pile.
template <bool Shared>
__device__ void sssp_work(SsspCtl* ctl, const SsspArrays& a, bool defer_hubs) {
    const SsspStep s = {__ldcg(&ctl->parity), __ldcg(&ctl->far_parity), __ldcg(&ctl->step), __ldcg(&ctl->threshold)};
    if (!__ldcg(&ctl->split)) {
        __shared__ u32 local_q[2][LOCAL_CAP];
        __shared__ u32 local_len[2];
        if (threadIdx.x < 2) local_len[threadIdx.x] = 0;
        __syncthreads();
        const Local local = {a.local_rounds ? local_q[0] : nullptr, &local_len[0]};
        const u32 len = __ldcg(&ctl->near_len[s.parity]);
        const u32* near_in = a.near[s.parity];
        const u32 warps = gridDim.x * blockDim.x / 32;
        for (u32 i = (blockIdx.x * blockDim.x + threadIdx.x) / 32; i < len; i += warps) {
            const u32 u = __ldcg(&near_in[i]);
            if (defer_hubs && a.off[u + 1] - a.off[u] >= HUB_DEGREE) {
                if ((threadIdx.x & 31) == 0) a.hubs[atomicAdd(&ctl->hub_len, 1)] = u;
                continue;
            }
            sssp_relax<Shared>(ctl, a, s, local, u, 0, 32);
        }
        if (a.local_rounds) sssp_chase<Shared>(ctl, a, s, local_q, local_len);
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
    sssp_work<false>(ctl, a, false);
    if (last_block_done(&ctl->blocks_done)) sssp_decide(ctl, a.is_float);
}

// Hubs set aside by a relaxing step are relaxed by groups of blocks before the step
// ends (a second barrier, only in steps that have hubs).
extern "C" __global__ void sssp_persistent(SsspCtl* ctl, SsspArrays a) {
    while (!__ldcg(&ctl->done)) {
        sssp_work<false>(ctl, a, true);
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
                sssp_relax<false>(ctl, a, s, Local{nullptr, nullptr}, __ldcg(&a.hubs[h]), g.thread & ~31u, g.threads);
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

// Depths from hop counts (a BFS run as SSSP with every weight 1), and the deepest.
extern "C" __global__ void distance_to_depth(u32 n, const u64* dist, u32* depth, u32* deepest) {
    u32 mine = 0;
    for (u32 v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) {
        const u64 d = dist[v];
        depth[v] = d == INF64 ? INF32 : (u32)d;
        if (d != INF64 && (u32)d > mine) mine = (u32)d;
    }
    for (int o = 16; o > 0; o >>= 1) mine = max(mine, __shfl_xor_sync(FULL_MASK, mine, o));
    if ((threadIdx.x & 31) == 0 && mine) atomicMax(deepest, mine);
}
