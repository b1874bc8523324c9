// Brandes BC on the GPU: a level-synchronous forward BFS that counts shortest paths
// (sigma, double atomicAdd) and records each level's vertices contiguously, then a
// backward sweep, deepest level first, in which each vertex pulls from its successors
// without atomics (Brandes 2001; the GPU mapping of Sariyüce et al., GPGPU 2013).

extern "C" __global__ void bc_forward(const u64* off, const u32* adj, u32* depth, double* sigma, u32* order,
                                      u32 level_begin, u32 level_end, u32* next_len, u32 level) {
    const u32 lane = threadIdx.x & 31;
    const u32 warps = gridDim.x * blockDim.x / 32;
    for (u32 i = level_begin + (blockIdx.x * blockDim.x + threadIdx.x) / 32; i < level_end; i += warps) {
        const u32 u = order[i];
        const double su = sigma[u];
        for (u64 e = off[u]; e < off[u + 1]; e += 32) {
            bool found = false;
            u32 v = 0;
            if (e + lane < off[u + 1]) {
                v = adj[e + lane];
                found = depth[v] == INF32 && atomicCAS(&depth[v], INF32, level + 1) == INF32;
                if (depth[v] == level + 1) atomicAdd(&sigma[v], su);
            }
            warp_append(order + level_end, next_len, v, found);
        }
    }
}

extern "C" __global__ void bc_backward(const u64* off, const u32* adj, const u32* depth, const double* sigma,
                                       double* delta, double* bc, const u32* order, u32 level_begin,
                                       u32 level_end, u32 level, u32 source) {
    const u32 lane = threadIdx.x & 31;
    const u32 warps = gridDim.x * blockDim.x / 32;
    for (u32 i = level_begin + (blockIdx.x * blockDim.x + threadIdx.x) / 32; i < level_end; i += warps) {
        const u32 u = order[i];
        double sum = 0.0;
        for (u64 e = off[u] + lane; e < off[u + 1]; e += 32) {
            u32 v = adj[e];
            if (depth[v] == level + 1) sum += sigma[u] / sigma[v] * (1.0 + delta[v]);
        }
        sum = warp_sum(sum);
        if (lane == 0) {
            delta[u] = sum;
            if (u != source) bc[u] += sum;
        }
    }
}
