// WCC by hooking and compression (Shiloach-Vishkin; the edge-parallel GPU form of
// Soman, Kishore, Narayanan, IPDPSW 2010): hook the larger root under the smaller with
// atomicMin, compress paths, repeat until no edge joins two roots. comp[x] <= x always
// holds, so each final root is its component's smallest id, as on the CPU.

__device__ __forceinline__ u32 find_root(u32* comp, u32 x) {
    u32 p = comp[x];
    while (p != comp[p]) p = comp[p];
    return p;
}

extern "C" __global__ void wcc_hook(u32 n, const u64* off, const u32* adj, u32* comp, u32* changed) {
    const u32 lane = threadIdx.x & 31;
    const u32 warps = gridDim.x * blockDim.x / 32;
    for (u32 u = (blockIdx.x * blockDim.x + threadIdx.x) / 32; u < n; u += warps) {
        for (u64 e = off[u] + lane; e < off[u + 1]; e += 32) {
            u32 ru = find_root(comp, u), rv = find_root(comp, adj[e]);
            if (ru != rv) {
                u32 hi = max(ru, rv), lo = min(ru, rv);
                atomicMin(&comp[hi], lo);
                *changed = 1;
            }
        }
    }
}

extern "C" __global__ void wcc_compress(u32 n, u32* comp) {
    for (u32 v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) {
        comp[v] = find_root(comp, v);
    }
}
