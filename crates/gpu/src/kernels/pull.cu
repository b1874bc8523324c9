// Pull sums for PageRank and SpMV: y[v] = sum over in-edges u->v of x(u, e).
// Load balancing by degree bins, built once per graph (Merrill-style binning, as in
// Gunrock's "thread-warp-CTA" mapping): vertices of small in-degree get a thread each,
// larger ones a warp each, and the few huge ones (an RMAT hub has 10^5-10^6
// in-edges, whose warp alone would outlast the rest of the grid) a block each.

// x(u, e): PageRank gathers float contributions; SpMV gathers x[u] * weight[e].
__device__ __forceinline__ double gather(const float* contrib, const double* x, const u32* weight, u32 wkind,
                                         u32 u, u64 e) {
    if (contrib) return (double)contrib[u];
    double w = wkind == 0 ? 1.0 : wkind == 1 ? (double)weight[e] : (double)__uint_as_float(weight[e]);
    return x[u] * w;
}

// PageRank finishing step per vertex: the new score and (for the next iteration) its
// contribution; its change and dangling mass are added to the caller's partial sums.
__device__ __forceinline__ void finish(u32 v, double sum, double* y, const double* score, float* contrib_next,
                                       const u64* out_off, double base, double damping, double* change, double* dangling) {
    if (!score) { y[v] = sum; return; }
    double s = base + damping * sum;
    y[v] = s;
    u64 d = out_off[v + 1] - out_off[v];
    contrib_next[v] = d ? (float)(s / (double)d) : 0.0f;
    *change += fabs(s - score[v]);
    if (!d) *dangling += s;
}

// Adds each thread's (change, dangling) into sums[0..2] with one atomic per warp: a
// single address updated once per vertex serialises the whole grid.
__device__ __forceinline__ void add_sums(double* sums, double change, double dangling) {
    if (!sums) return;
    change = warp_sum(change);
    dangling = warp_sum(dangling);
    if ((threadIdx.x & 31) == 0) {
        if (change != 0.0) atomicAdd(&sums[0], change);
        if (dangling != 0.0) atomicAdd(&sums[1], dangling);
    }
}

extern "C" __global__ void pull_small(const u32* vertices, u32 count, const u64* in_off, const u32* in_adj,
                                      const float* contrib, const double* x, const u32* weight, u32 wkind,
                                      double* y, const double* score, float* contrib_next, const u64* out_off,
                                      double base, double damping, double* sums) {
    double change = 0.0, dangling = 0.0;
    // Every lane of a warp runs the same number of rounds, so the warp sums below
    // see the whole warp.
    const u32 stride = gridDim.x * blockDim.x;
    const u32 rounds = (count + stride - 1) / stride;
    for (u32 r = 0; r < rounds; r++) {
        u32 i = r * stride + blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= count) continue;
        u32 v = vertices[i];
        double sum = 0.0;
        for (u64 e = in_off[v]; e < in_off[v + 1]; e++) sum += gather(contrib, x, weight, wkind, in_adj[e], e);
        finish(v, sum, y, score, contrib_next, out_off, base, damping, &change, &dangling);
    }
    add_sums(sums, change, dangling);
}

extern "C" __global__ void pull_large(const u32* vertices, u32 count, const u64* in_off, const u32* in_adj,
                                      const float* contrib, const double* x, const u32* weight, u32 wkind,
                                      double* y, const double* score, float* contrib_next, const u64* out_off,
                                      double base, double damping, double* sums) {
    const u32 lane = threadIdx.x & 31;
    const u32 warps = gridDim.x * blockDim.x / 32;
    double change = 0.0, dangling = 0.0;
    for (u32 i = (blockIdx.x * blockDim.x + threadIdx.x) / 32; i < count; i += warps) {
        u32 v = vertices[i];
        double sum = 0.0;
        for (u64 e = in_off[v] + lane; e < in_off[v + 1]; e += 32) sum += gather(contrib, x, weight, wkind, in_adj[e], e);
        sum = warp_sum(sum);
        if (lane == 0) finish(v, sum, y, score, contrib_next, out_off, base, damping, &change, &dangling);
    }
    add_sums(sums, change, dangling);
}

extern "C" __global__ void pull_huge(const u32* vertices, u32 count, const u64* in_off, const u32* in_adj,
                                     const float* contrib, const double* x, const u32* weight, u32 wkind,
                                     double* y, const double* score, float* contrib_next, const u64* out_off,
                                     double base, double damping, double* sums) {
    __shared__ double partial[32];
    double change = 0.0, dangling = 0.0;
    for (u32 i = blockIdx.x; i < count; i += gridDim.x) {
        const u32 v = vertices[i];
        double sum = 0.0;
        for (u64 e = in_off[v] + threadIdx.x; e < in_off[v + 1]; e += blockDim.x) sum += gather(contrib, x, weight, wkind, in_adj[e], e);
        sum = warp_sum(sum);
        if ((threadIdx.x & 31) == 0) partial[threadIdx.x / 32] = sum;
        __syncthreads();
        if (threadIdx.x < 32) {
            sum = warp_sum(threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : 0.0);
            if (threadIdx.x == 0) finish(v, sum, y, score, contrib_next, out_off, base, damping, &change, &dangling);
        }
        __syncthreads();
    }
    if (threadIdx.x < 32) add_sums(sums, change, dangling);
}

// contrib[v] = score[v] / out_degree(v) (0 for dangling vertices), and the dangling mass.
extern "C" __global__ void pr_init(u32 n, const double* score, float* contrib, const u64* out_off, double* sums) {
    double dangling = 0.0;
    const u32 stride = gridDim.x * blockDim.x;
    for (u32 r = 0; r < (n + stride - 1) / stride; r++) {
        u32 v = r * stride + blockIdx.x * blockDim.x + threadIdx.x;
        if (v >= n) continue;
        u64 d = out_off[v + 1] - out_off[v];
        contrib[v] = d ? (float)(score[v] / (double)d) : 0.0f;
        if (!d) dangling += score[v];
    }
    add_sums(sums, 0.0, dangling);
}
