// WCC by Afforest (Sutton, Ben-Nun, Barak, IPDPS 2018) in the GPU form of ECL-CC
// (Jaiganesh, Burtscher, HPDC 2018): link each vertex to its first neighbours and
// compress, which already joins most of the largest component; find that component
// from a sample of labels; then only vertices outside it link along their remaining
// edges (and, on a directed graph, their in-edges, so that an edge into the largest
// component is still seen from its other end). Links hook the larger root under the
// smaller, so comp[x] <= x always holds and each final root is its component's
// smallest id, as on the CPU. comp changes during a launch: loads use __ldcg.

__device__ __forceinline__ u32 find_root(u32* comp, u32 x) {
    u32 p = __ldcg(&comp[x]);
    while (p != __ldcg(&comp[p])) p = __ldcg(&comp[p]);
    return p;
}

// Joins the trees of u and v (Afforest's link).
__device__ __forceinline__ void wcc_link(u32* comp, u32 u, u32 v) {
    u32 p1 = __ldcg(&comp[u]), p2 = __ldcg(&comp[v]);
    while (p1 != p2) {
        const u32 high = max(p1, p2), low = min(p1, p2);
        const u32 p_high = __ldcg(&comp[high]);
        if (p_high == low) break;
        if (p_high == high && atomicCAS(&comp[high], high, low) == high) break;
        p1 = __ldcg(&comp[p_high]);
        p2 = __ldcg(&comp[low]);
    }
}

// Sampling round `r`: every vertex links to its r-th out-neighbour.
extern "C" __global__ void wcc_sample(u32 n, const u64* off, const u32* adj, u32* comp, u32 r) {
    for (u32 u = blockIdx.x * blockDim.x + threadIdx.x; u < n; u += gridDim.x * blockDim.x) {
        const u64 e = off[u] + r;
        if (e < off[u + 1]) wcc_link(comp, u, adj[e]);
    }
}

extern "C" __global__ void wcc_compress(u32 n, u32* comp) {
    for (u32 v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) {
        comp[v] = find_root(comp, v);
    }
}

// The labels of `count` pseudo-random vertices, for the host to find the largest
// intermediate component.
extern "C" __global__ void wcc_sample_labels(u32 n, const u32* comp, u32* labels, u32 count) {
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        labels[i] = comp[(u32)(((u64)i * 2654435761ull + 12345) % n)];
    }
}

// Vertices outside component `skip` link along their out-edges from `first` on and,
// where in_off is not null, all their in-edges; a warp per vertex.
extern "C" __global__ void wcc_finish(u32 n, const u64* off, const u32* adj, const u64* in_off, const u32* in_adj,
                                     u32* comp, u32 skip, u32 first) {
    const u32 lane = threadIdx.x & 31;
    const u32 warps = gridDim.x * blockDim.x / 32;
    for (u32 u = (blockIdx.x * blockDim.x + threadIdx.x) / 32; u < n; u += warps) {
        if (__ldcg(&comp[u]) == skip) continue;
        for (u64 e = off[u] + first + lane; e < off[u + 1]; e += 32) wcc_link(comp, u, adj[e]);
        if (in_off) {
            for (u64 e = in_off[u] + lane; e < in_off[u + 1]; e += 32) wcc_link(comp, u, in_adj[e]);
        }
    }
}

// Joins another part's forest into this one: each vertex links to its parent there.
// Links keep comp[x] <= x, so after compressing, every part that merged the same
// forests holds the same labels (each component's smallest id).
extern "C" __global__ void wcc_merge(u32 n, u32* comp, const u32* other) {
    for (u32 v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) {
        const u32 p = other[v];
        if (p != v) wcc_link(comp, v, p);
    }
}
