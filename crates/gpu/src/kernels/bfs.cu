// BFS, direction-optimizing, one kernel launch per level and no host round trip:
// the host enqueues levels in batches; the last block of each launch decides the next
// level's direction (Beamer's alpha/beta rule) and swaps the queues. See bfs.rs.

struct BfsCtl {
    u32 level;        // depth given to vertices discovered by this launch
    u32 bottom_up;    // direction of this launch
    u32 parity;       // queue[parity] is the frontier, queue[parity ^ 1] the next one
    u32 done;         // set once a level discovers nothing
    u32 len[2];       // queue lengths
    u32 blocks_done;
    u32 pad;
    u64 scout;        // out-edges of the vertices discovered by this launch
    u64 unexplored;   // edges not yet examined (Beamer's edges_to_check)
};

extern "C" __global__ void bfs_level(BfsCtl* ctl, const u64* out_off, const u32* out_adj,
                                     const u64* in_off, const u32* in_adj, u32* depth,
                                     u32* queue0, u32* queue1, u32 n, u32 alpha, u32 beta) {
    if (ctl->done) return;
    const u32 level = ctl->level, parity = ctl->parity;
    u32* in_q = parity ? queue1 : queue0;
    u32* out_q = parity ? queue0 : queue1;
    u32* out_len = &ctl->len[parity ^ 1];
    u64 scout = 0;
    if (!ctl->bottom_up) {
        // Top-down: a warp per frontier vertex, lanes over its out-edges.
        const u32 in_len = ctl->len[parity];
        const u32 lane = threadIdx.x & 31;
        const u32 warps = gridDim.x * blockDim.x / 32;
        for (u32 i = (blockIdx.x * blockDim.x + threadIdx.x) / 32; i < in_len; i += warps) {
            const u32 u = in_q[i];
            const u64 begin = out_off[u], end = out_off[u + 1];
            for (u64 e = begin; e < end; e += 32) {
                bool found = false;
                u32 v = 0;
                if (e + lane < end) {
                    v = out_adj[e + lane];
                    found = depth[v] == INF32 && atomicCAS(&depth[v], INF32, level) == INF32;
                    if (found) scout += out_off[v + 1] - out_off[v];
                }
                warp_append(out_q, out_len, v, found);
            }
        }
    } else {
        // Bottom-up: each unvisited vertex looks for any parent in the frontier and
        // stops at the first.
        for (u32 v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) {
            bool found = false;
            if (depth[v] == INF32) {
                for (u64 e = in_off[v]; e < in_off[v + 1]; e++) {
                    if (depth[in_adj[e]] == level - 1) {
                        depth[v] = level;
                        found = true;
                        scout += out_off[v + 1] - out_off[v];
                        break;
                    }
                }
            }
            warp_append(out_q, out_len, v, found);
        }
    }
    for (int o = 16; o > 0; o >>= 1) scout += __shfl_down_sync(__activemask(), scout, o);
    if ((threadIdx.x & 31) == 0 && scout) atomicAdd(&ctl->scout, scout);
    if (!last_block_done(&ctl->blocks_done)) return;
    // One thread: decide the next level.
    const u32 next_len = *out_len;
    if (next_len == 0) {
        ctl->done = 1;
        return;
    }
    const u64 scout_all = ctl->scout;
    ctl->unexplored = ctl->unexplored > scout_all ? ctl->unexplored - scout_all : 0;
    if (!ctl->bottom_up) {
        ctl->bottom_up = scout_all > ctl->unexplored / alpha;
    } else {
        ctl->bottom_up = next_len >= n / beta;
    }
    ctl->scout = 0;
    ctl->len[parity] = 0;
    ctl->parity = parity ^ 1;
    ctl->level = level + 1;
}
