// Shared definitions for ChattyGraph's GPU kernels (compiled at run time by NVRTC,
// so no system headers).
typedef unsigned int u32;
typedef unsigned long long u64;

#define INF32 0xffffffffu
#define INF64 0xffffffffffffffffull
#define FULL_MASK 0xffffffffu

// Appends `v` to `queue` (length counter `len`) with one atomic per warp: the lanes
// that have something to push elect a leader, which reserves room for all of them.
__device__ __forceinline__ void warp_append(u32* queue, u32* len, u32 v, bool push) {
    u32 ballot = __ballot_sync(__activemask(), push);
    if (!ballot) return;
    u32 lane = threadIdx.x & 31;
    u32 leader = __ffs(ballot) - 1;
    u32 base = 0;
    if (lane == leader) base = atomicAdd(len, __popc(ballot));
    base = __shfl_sync(__activemask(), base, leader);
    if (push) queue[base + __popc(ballot & ((1u << lane) - 1))] = v;
}

// The "last block" pattern: returns true in exactly one thread of the grid, after
// every block has finished its work for this launch (their writes are visible).
__device__ __forceinline__ bool last_block_done(u32* blocks_done) {
    __shared__ bool last;
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        last = atomicAdd(blocks_done, 1) == gridDim.x - 1;
    }
    __syncthreads();
    if (!(last && threadIdx.x == 0)) return false;
    __threadfence();
    *blocks_done = 0;
    return true;
}

__device__ __forceinline__ double warp_sum(double x) {
    for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(FULL_MASK, x, o);
    return x;
}

extern "C" __global__ void fill_u32(u32* a, u32 n, u32 value) {
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) a[i] = value;
}

extern "C" __global__ void fill_u64(u64* a, u32 n, u64 value) {
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) a[i] = value;
}

extern "C" __global__ void iota_u32(u32* a, u32 n) {
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) a[i] = i;
}
