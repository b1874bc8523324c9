// Louvain communities on one GPU: the CPU's method (algo/src/community.rs: Blondel et
// al. 2008, with networkit PLM's blocks of moves decided in parallel) with every step
// on the device, as in Naim, Manne, Halappanavar and Tumeo, "Community Detection on
// the GPU", IPDPS 2017: a warp per vertex sums its arcs by neighbouring community in
// a hash table (in shared memory for small degrees, in a slice of a global array
// sized by its degree otherwise) and picks the community that gains most; a level is
// contracted by hashing each arc between two communities into one table keyed by the
// pair, then counting and writing the next level's rows.
//
// A level is a weighted graph whose vertex u lists its arcs in off/adj and, on the
// first level of a directed input, its in-arcs in off2/adj2; arc e weighs w[e]
// (w[m1 + e] in the second list), the arcs both ways between its ends summed. k_out,
// k_in and inside are each vertex's out-, in- and self-arc weights (community.rs's
// Level, whose gain formula this is).

struct LouvainLevel {
    const u64* off;
    const u32* adj;
    const u64* off2;
    const u32* adj2;
    const double* w;
    const double* k_out;
    const double* k_in;
    const double* inside;
    u64 m1;
    u32 n;
    u32 pad;
};

struct __align__(8) LouvainCtl {
    u32 moves;        // moves decided in the current block of vertices
    u32 blocks_done;  // arrivals at the end of an apply
    u64 moved;        // moves applied since the host last reset it
    double gained;    // modularity those moves expected to gain
    double sum;       // louvain_quality's sum
};

// Slots of a warp's table in shared memory (blocks of 256 threads: 8 warps), for
// vertices of up to half as many arcs.
#define LV_SLOTS 128
#define LV_WARPS 8
#define LV_LOWEST (-1.7976931348623157e308)

// Calls f(v, w) for thread `rank` of `group`'s share of u's arcs.
template <typename F>
__device__ __forceinline__ void lv_arcs(const LouvainLevel& lv, u32 u, u32 rank, u32 group, F f) {
    for (u64 e = lv.off[u] + rank; e < lv.off[u + 1]; e += group) f(lv.adj[e], lv.w[e]);
    if (lv.off2)
        for (u64 e = lv.off2[u] + rank; e < lv.off2[u + 1]; e += group) f(lv.adj2[e], lv.w[lv.m1 + e]);
}

// Adds x to key c's slot of a table of `cap` slots (open addressing, linear probing).
__device__ __forceinline__ void lv_add(u32* keys, double* vals, u64 cap, u32 c, double x) {
    u64 h = (u64)(c * 0x9E3779B1u) % cap;
    while (true) {
        const u32 k = atomicCAS(&keys[h], INF32, c);
        if (k == INF32 || k == c) {
            atomicAdd(&vals[h], x);
            return;
        }
        h = h + 1 == cap ? 0 : h + 1;
    }
}

__device__ __forceinline__ double lv_weight(const u32* weights, u64 e, u32 float_weights) {
    if (!weights) return 1.0;
    return float_weights ? (double)__uint_as_float(weights[e]) : (double)weights[e];
}

// The first level from the input's CSR (in_off null: undirected, each edge listed
// from both ends): an undirected edge's arcs weigh twice the edge and a self-loop is
// two arcs inside, as community.rs's undirected_row; a directed graph lists its out-
// and in-arcs, a self-loop once each way. Arcs to the vertex itself weigh 0 in w.
extern "C" __global__ void louvain_first_level(u32 n, const u64* off, const u32* adj, const u32* weights, const u64* in_off,
                                               const u32* in_adj, const u32* in_weights, u32 float_weights, u64 m1, double* w,
                                               double* k_out, double* k_in, double* inside) {
    const u32 lane = threadIdx.x & 31, warps = gridDim.x * blockDim.x / 32;
    for (u32 u = (blockIdx.x * blockDim.x + threadIdx.x) / 32; u < n; u += warps) {
        double ko = 0, ki = 0, self = 0;
        for (u64 e = off[u] + lane; e < off[u + 1]; e += 32) {
            const double x = lv_weight(weights, e, float_weights);
            const bool loop = adj[e] == u;
            if (in_off) {
                ko += x;
                self += loop ? x : 0;
                w[e] = loop ? 0 : x;
            } else {
                ko += loop ? 2 * x : x;
                self += loop ? 2 * x : 0;
                w[e] = loop ? 0 : 2 * x;
            }
        }
        if (in_off) {
            for (u64 e = in_off[u] + lane; e < in_off[u + 1]; e += 32) {
                const double x = lv_weight(in_weights, e, float_weights);
                ki += x;
                w[m1 + e] = in_adj[e] == u ? 0 : x;
            }
        }
        ko = warp_sum(ko);
        ki = warp_sum(ki);
        self = warp_sum(self);
        if (lane == 0) {
            k_out[u] = ko;
            k_in[u] = in_off ? ki : ko;
            inside[u] = self;
        }
    }
}

// The level's total arc weight (its m, Σ k_out), added to ctl->sum.
extern "C" __global__ void louvain_total_weight(LouvainLevel lv, LouvainCtl* ctl) {
    double sum = 0;
    for (u32 u = blockIdx.x * blockDim.x + threadIdx.x; u < lv.n; u += gridDim.x * blockDim.x) sum += lv.k_out[u];
    sum = warp_sum(sum);
    if ((threadIdx.x & 31) == 0 && sum != 0) atomicAdd(&ctl->sum, sum);
}

// Each community's out- and in-weight and size (the arrays zeroed before).
extern "C" __global__ void louvain_totals(LouvainLevel lv, const u32* comm, double* tot_out, double* tot_in, u32* size) {
    for (u32 u = blockIdx.x * blockDim.x + threadIdx.x; u < lv.n; u += gridDim.x * blockDim.x) {
        const u32 c = comm[u];
        atomicAdd(&tot_out[c], lv.k_out[u]);
        atomicAdd(&tot_in[c], lv.k_in[u]);
        atomicAdd(&size[c], 1);
    }
}

// The warp's argmax of (score, -c) over its lanes, in every lane.
__device__ __forceinline__ void lv_warp_best(double& score, u32& c) {
    for (int o = 16; o > 0; o >>= 1) {
        const double s = __shfl_xor_sync(FULL_MASK, score, o);
        const u32 k = __shfl_xor_sync(FULL_MASK, c, o);
        if (s > score || (s == score && k < c)) {
            score = s;
            c = k;
        }
    }
}

// Vertices of more arcs than this are decided by a block (louvain_decide_heavy), the
// others by a warp: a hub of kron22 took a warp tens of milliseconds.
#define LV_HEAVY 1024

// Thread `rank` of the `group` deciding u: the table tk/tv of `cap` slots cleared, u's
// arcs summed into it by community (`sync` waits for the group), then, over the
// thread's share of the slots, the weight to u's own community and the best other.
template <typename Sync>
__device__ __forceinline__ void lv_tally(const LouvainLevel& lv, u32 u, const u32* comm, const double* tot_out, const double* tot_in,
                                         double resolution, double m, u32* tk, double* tv, u64 cap, u32 rank, u32 group, Sync sync,
                                         double& to_own, double& best, u32& best_c) {
    for (u64 s = rank; s < cap; s += group) {
        tk[s] = INF32;
        tv[s] = 0;
    }
    sync();
    lv_arcs(lv, u, rank, group, [&](u32 v, double x) { lv_add(tk, tv, cap, comm[v], x); });
    sync();
    const u32 own = comm[u];
    const double ko = lv.k_out[u], ki = lv.k_in[u];
    to_own = 0;
    best = LV_LOWEST;
    best_c = INF32;
    for (u64 s = rank; s < cap; s += group) {
        const u32 c = tk[s];
        if (c == own) to_own += tv[s];
        if (c == INF32 || c == own) continue;
        const double score = tv[s] - resolution * (ko * tot_in[c] + ki * tot_out[c]) / m;
        if (score > best || (score == best && c < best_c)) {
            best = score;
            best_c = c;
        }
    }
}

// u's move from its group's tally: to best_c if that beats staying by more than
// rounding and is not a singleton swap (a singleton joins another only if that one's
// label is smaller), appended to movers/targets. Returns the gain (times m).
__device__ __forceinline__ double lv_decide(const LouvainLevel& lv, u32 u, const u32* comm, const double* tot_out, const double* tot_in,
                                           const u32* size, double resolution, double m, double to_own, double best, u32 best_c,
                                           u32* movers, u32* targets, LouvainCtl* ctl) {
    const u32 own = comm[u];
    const double ko = lv.k_out[u], ki = lv.k_in[u];
    const double stay = to_own - resolution * (ko * (tot_in[own] - ki) + ki * (tot_out[own] - ko)) / m;
    if (best_c == INF32 || best <= stay + 1e-12 * (ko + ki) || (size[own] == 1 && size[best_c] == 1 && best_c > own)) return 0;
    const u32 at = atomicAdd(&ctl->moves, 1);
    movers[at] = u;
    targets[at] = best_c;
    return best - stay;
}

// Vertex u at position i of a sweep's order ((a i + b) mod n), and its arcs' count
// and first index among both lists.
__device__ __forceinline__ u32 lv_at(const LouvainLevel& lv, u64 a, u64 b, u32 i, u64& deg, u64& first) {
    const u32 u = (u32)((a * i + b) % lv.n);
    const u64 s1 = lv.off[u], s2 = lv.off2 ? lv.off2[u] : 0;
    deg = lv.off[u + 1] - s1 + (lv.off2 ? lv.off2[u + 1] - s2 : 0);
    first = s1 + s2;
    return u;
}

// Decides, a warp a vertex, the moves of the vertices of at most LV_HEAVY arcs at
// positions lo..hi of the sweep's order, each from the state before the block of
// positions: its table in shared memory for small degrees, else in its slice of
// keys/vals (twice its arcs, from twice its first arc's index).
extern "C" __global__ void louvain_decide(LouvainLevel lv, const u32* comm, const double* tot_out, const double* tot_in,
                                          const u32* size, double resolution, double m, u64 a, u64 b, u32 lo, u32 hi, u32* keys,
                                          double* vals, u32* movers, u32* targets, LouvainCtl* ctl) {
    __shared__ u32 shared_keys[LV_WARPS][LV_SLOTS];
    __shared__ double shared_vals[LV_WARPS][LV_SLOTS];
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x / 32, warps = gridDim.x * blockDim.x / 32;
    double gained = 0;
    for (u32 i = lo + (blockIdx.x * blockDim.x + threadIdx.x) / 32; i < hi; i += warps) {
        u64 deg, first;
        const u32 u = lv_at(lv, a, b, i, deg, first);
        if (deg == 0 || deg > LV_HEAVY) continue;
        const bool small = 2 * deg <= LV_SLOTS;
        const u64 cap = small ? LV_SLOTS : 2 * deg;
        u32* tk = small ? shared_keys[warp] : keys + 2 * first;
        double* tv = small ? shared_vals[warp] : vals + 2 * first;
        double to_own, best;
        u32 best_c;
        lv_tally(lv, u, comm, tot_out, tot_in, resolution, m, tk, tv, cap, lane, 32, [] { __syncwarp(); }, to_own, best, best_c);
        to_own = __shfl_sync(FULL_MASK, warp_sum(to_own), 0);
        lv_warp_best(best, best_c);
        if (lane == 0) gained += lv_decide(lv, u, comm, tot_out, tot_in, size, resolution, m, to_own, best, best_c, movers, targets, ctl);
        __syncwarp();
    }
    if (lane == 0 && gained != 0) atomicAdd(&ctl->gained, gained / m);
}

// louvain_decide for the vertices of more than LV_HEAVY arcs, a block a vertex.
extern "C" __global__ void louvain_decide_heavy(LouvainLevel lv, const u32* comm, const double* tot_out, const double* tot_in,
                                                const u32* size, double resolution, double m, u64 a, u64 b, u32 lo, u32 hi,
                                                u32* keys, double* vals, u32* movers, u32* targets, LouvainCtl* ctl) {
    __shared__ double warp_own[LV_WARPS], warp_best[LV_WARPS];
    __shared__ u32 warp_c[LV_WARPS];
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x / 32;
    double gained = 0;
    for (u32 i = lo + blockIdx.x; i < hi; i += gridDim.x) {
        u64 deg, first;
        const u32 u = lv_at(lv, a, b, i, deg, first);
        if (deg <= LV_HEAVY) continue;
        double to_own, best;
        u32 best_c;
        lv_tally(lv, u, comm, tot_out, tot_in, resolution, m, keys + 2 * first, vals + 2 * first, 2 * deg, threadIdx.x, blockDim.x,
                 [] { __syncthreads(); }, to_own, best, best_c);
        to_own = warp_sum(to_own);
        lv_warp_best(best, best_c);
        if (lane == 0) {
            warp_own[warp] = to_own;
            warp_best[warp] = best;
            warp_c[warp] = best_c;
        }
        __syncthreads();
        if (warp == 0) {
            const bool mine = lane < blockDim.x / 32;
            to_own = warp_sum(mine ? warp_own[lane] : 0);
            best = mine ? warp_best[lane] : LV_LOWEST;
            best_c = mine ? warp_c[lane] : INF32;
            to_own = __shfl_sync(FULL_MASK, to_own, 0);
            lv_warp_best(best, best_c);
            if (lane == 0) gained += lv_decide(lv, u, comm, tot_out, tot_in, size, resolution, m, to_own, best, best_c, movers, targets, ctl);
        }
        __syncthreads();
    }
    if (threadIdx.x == 0 && gained != 0) atomicAdd(&ctl->gained, gained / m);
}

// Applies the block's moves to the communities and their totals.
extern "C" __global__ void louvain_apply(LouvainLevel lv, const u32* movers, const u32* targets, u32* comm, double* tot_out,
                                         double* tot_in, u32* size, LouvainCtl* ctl) {
    const u32 len = __ldcg(&ctl->moves);
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < len; i += gridDim.x * blockDim.x) {
        const u32 u = movers[i], c = targets[i], old = comm[u];
        const double ko = lv.k_out[u], ki = lv.k_in[u];
        atomicAdd(&tot_out[old], -ko);
        atomicAdd(&tot_in[old], -ki);
        atomicSub(&size[old], 1);
        atomicAdd(&tot_out[c], ko);
        atomicAdd(&tot_in[c], ki);
        atomicAdd(&size[c], 1);
        comm[u] = c;
    }
    if (last_block_done(&ctl->blocks_done)) {
        ctl->moved += len;
        ctl->moves = 0;
    }
}

// The modularity of the partition comm of lv, times m, added to ctl->sum: the arcs
// inside communities (each listed from both ends) less γ Σ_c out_c in_c / m.
extern "C" __global__ void louvain_quality(LouvainLevel lv, const u32* comm, const double* tot_out, const double* tot_in,
                                           double resolution, double m, LouvainCtl* ctl) {
    const u32 lane = threadIdx.x & 31, warps = gridDim.x * blockDim.x / 32;
    double sum = 0;
    for (u32 u = (blockIdx.x * blockDim.x + threadIdx.x) / 32; u < lv.n; u += warps) {
        const u32 own = comm[u];
        double inner = 0;
        lv_arcs(lv, u, lane, 32, [&](u32 v, double x) { inner += comm[v] == own ? x / 2 : 0; });
        if (lane == 0) inner += lv.inside[u] - resolution * tot_out[u] * tot_in[u] / m;
        sum += inner;
    }
    sum = warp_sum(sum);
    if (lane == 0 && sum != 0) atomicAdd(&ctl->sum, sum);
}

// used[c] = 1 for each community c in use.
extern "C" __global__ void louvain_mark(u32 n, const u32* comm, u64* used) {
    for (u32 u = blockIdx.x * blockDim.x + threadIdx.x; u < n; u += gridDim.x * blockDim.x) used[comm[u]] = 1;
}

// Each vertex's vertex in the next level (its community's number, the prefix sums
// of louvain_mark's flags), and the next level's vertex weights (zeroed before).
extern "C" __global__ void louvain_coarsen_vertices(LouvainLevel lv, const u32* comm, const u64* number, u32* coarse,
                                                    double* k_out, double* k_in, double* inside) {
    for (u32 u = blockIdx.x * blockDim.x + threadIdx.x; u < lv.n; u += gridDim.x * blockDim.x) {
        const u32 c = (u32)number[comm[u]];
        coarse[u] = c;
        atomicAdd(&k_out[c], lv.k_out[u]);
        atomicAdd(&k_in[c], lv.k_in[u]);
        atomicAdd(&inside[c], lv.inside[u]);
    }
}

// Every arc between two communities summed into the table of 2^bits slots keyed by
// the pair (empty slots INF64); arcs inside one add half their weight (each is
// listed from both ends) to its inside weight.
extern "C" __global__ void louvain_coarsen_arcs(LouvainLevel lv, const u32* coarse, u64* keys, double* vals, u32 bits,
                                                double* inside) {
    const u32 lane = threadIdx.x & 31, warps = gridDim.x * blockDim.x / 32;
    const u64 mask = (1ull << bits) - 1;
    for (u32 u = (blockIdx.x * blockDim.x + threadIdx.x) / 32; u < lv.n; u += warps) {
        const u32 cu = coarse[u];
        double self = 0;
        lv_arcs(lv, u, lane, 32, [&](u32 v, double x) {
            const u32 cv = coarse[v];
            if (cv == cu) {
                self += x / 2;
                return;
            }
            const u64 key = (u64)cu << 32 | cv;
            u64 h = (key * 0x9E3779B97F4A7C15ull) >> (64 - bits);
            while (true) {
                const u64 k = atomicCAS(&keys[h], INF64, key);
                if (k == INF64 || k == key) {
                    atomicAdd(&vals[h], x);
                    break;
                }
                h = (h + 1) & mask;
            }
        });
        self = warp_sum(self);
        if (lane == 0 && self != 0) atomicAdd(&inside[cu], self);
    }
}

// count[c]: the next level's arcs from c, one per slot of the table keyed (c, ·).
extern "C" __global__ void louvain_count_rows(u64 slots, const u64* keys, u64* count) {
    for (u64 s = blockIdx.x * blockDim.x + threadIdx.x; s < slots; s += gridDim.x * blockDim.x)
        if (keys[s] != INF64) atomicAdd(&count[keys[s] >> 32], 1ull);
}

// The table's arcs written into the next level's rows (off: their starts; cursor:
// each row's arcs written so far, zeroed before).
extern "C" __global__ void louvain_fill_rows(u64 slots, const u64* keys, const double* vals, const u64* off, u64* cursor,
                                             u32* adj, double* w) {
    for (u64 s = blockIdx.x * blockDim.x + threadIdx.x; s < slots; s += gridDim.x * blockDim.x) {
        const u64 key = keys[s];
        if (key == INF64) continue;
        const u32 c = (u32)(key >> 32);
        const u64 at = off[c] + atomicAdd(&cursor[c], 1ull);
        adj[at] = (u32)key;
        w[at] = vals[s];
    }
}

// Each input vertex's vertex in the next level.
extern "C" __global__ void louvain_follow(u32 n, u32* at, const u32* coarse) {
    for (u32 v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) at[v] = coarse[at[v]];
}

// smallest[c]: the smallest vertex of community c (INF32 before).
extern "C" __global__ void louvain_smallest(u32 n, const u32* comm, u32* smallest) {
    for (u32 v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) atomicMin(&smallest[comm[v]], v);
}

// Each vertex labelled by its community's smallest vertex.
extern "C" __global__ void louvain_label(u32 n, const u32* comm, const u32* smallest, u32* label) {
    for (u32 v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) label[v] = smallest[comm[v]];
}
