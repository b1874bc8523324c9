// SSSP, near-far (Davidson, Baxter, Garland, Owens, IPDPS 2014): the near queue holds
// vertices whose distance is below a threshold and is relaxed until empty; the others
// wait in a far pile, split by a rising threshold. One kernel launch per step, with
// the last block choosing the next step, so the host never waits per iteration.
// Distances are u64: integers, or the bits of non-negative doubles (which order like
// their bit patterns, so atomicMin serves both).

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
};

__device__ __forceinline__ u64 add_weight(u64 d, u32 w, u32 is_float) {
    if (is_float) return (u64)__double_as_longlong(__longlong_as_double((long long)d) + (double)__uint_as_float(w));
    return d + w;
}

__device__ __forceinline__ u64 add_threshold(u64 t, u64 delta, u32 is_float) {
    if (is_float) return (u64)__double_as_longlong(__longlong_as_double((long long)t) + __longlong_as_double((long long)delta));
    return t + delta;
}

__device__ __forceinline__ void push_near(SsspCtl* ctl, u32* near_out, u32* stamp, u32 v, bool want) {
    bool push = want && atomicMax(&stamp[v], ctl->step) < ctl->step;
    warp_append(near_out, &ctl->near_len[ctl->parity ^ 1], v, push);
}

extern "C" __global__ void sssp_step(SsspCtl* ctl, const u64* off, const u32* adj, const u32* weight,
                                     u64* dist, u32* stamp, u32* in_far, u32* near0, u32* near1,
                                     u32* far0, u32* far1, u32 is_float) {
    if (ctl->done) return;
    const u32 parity = ctl->parity;
    u32* near_in = parity ? near1 : near0;
    u32* near_out = parity ? near0 : near1;
    const u64 threshold = ctl->threshold;
    if (!ctl->split) {
        const u32 len = ctl->near_len[parity];
        const u32 lane = threadIdx.x & 31;
        const u32 warps = gridDim.x * blockDim.x / 32;
        u32* far_out = ctl->far_parity ? far1 : far0;
        for (u32 i = (blockIdx.x * blockDim.x + threadIdx.x) / 32; i < len; i += warps) {
            const u32 u = near_in[i];
            const u64 du = dist[u];
            const u64 begin = off[u], end = off[u + 1];
            for (u64 e = begin; e < end; e += 32) {
                bool near = false, far = false;
                u32 v = 0;
                if (e + lane < end) {
                    v = adj[e + lane];
                    const u64 nd = add_weight(du, weight ? weight[e + lane] : 1u, is_float);
                    if (nd < atomicMin(&dist[v], nd)) {
                        near = nd < threshold;
                        far = !near && atomicExch(&in_far[v], 1u) == 0;
                    }
                }
                push_near(ctl, near_out, stamp, v, near);
                warp_append(far_out, &ctl->far_len[ctl->far_parity], v, far);
            }
        }
    } else {
        // Split: far entries now below the threshold move to the near queue; the rest
        // are compacted into the other far array. Track the smallest distance left.
        const u32 fp = ctl->far_parity;
        const u32* far_in = fp ? far1 : far0;
        u32* far_keep = fp ? far0 : far1;
        const u32 len = ctl->far_len[fp];
        u64 smallest = INF64;
        for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < len; i += gridDim.x * blockDim.x) {
            const u32 v = far_in[i];
            const u64 d = dist[v];
            const bool near = d < threshold;
            if (near) in_far[v] = 0;
            else smallest = min(smallest, d);
            push_near(ctl, near_out, stamp, v, near);
            warp_append(far_keep, &ctl->far_len[fp ^ 1], v, !near);
        }
        for (int o = 16; o > 0; o >>= 1) smallest = min(smallest, __shfl_down_sync(__activemask(), smallest, o));
        if ((threadIdx.x & 31) == 0 && smallest != INF64) atomicMin(&ctl->far_min, smallest);
    }
    if (!last_block_done(&ctl->blocks_done)) return;
    // One thread: choose the next step.
    if (ctl->split) {
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
        if (ctl->split && ctl->far_min != INF64) {
            const u64 jump = add_threshold(ctl->far_min, ctl->delta, is_float);
            if (jump > t) t = jump;
        }
        ctl->threshold = t;
        ctl->far_min = INF64;
        ctl->split = 1;
    }
}
