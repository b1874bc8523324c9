// Brandes BC on the GPU (Brandes 2001; the GPU mapping of Sariyüce et al., GPGPU 2013),
// a batch of sources per sweep and every level on the device: one cooperative launch
// per batch runs the forward BFS of all its sources in lockstep (counting shortest
// paths, sigma, with double atomicAdd, and recording each level's (source, vertex)
// pairs contiguously), then the backward sweep, deepest level first, in which each pair
// pulls from its successors. A level costs one grid barrier for the whole batch, so a
// high-diameter graph from many sources pays levels x batches barriers, not levels x
// sources host round trips. The backward sweep keeps (1 + delta) / sigma per pair rather
// than delta, so a pair reads one value per successor; a pair whose path count
// overflowed (infinite) poisons its score with NaN, which the harness refuses. The
// state of source b's vertex v is one 16-byte BcPair at b * n + v, so every gather of
// a neighbour's state (is it at this level? its count or coefficient) reads one
// sector, not one per array; the launch ends by resetting the pairs it reached, so a
// batch costs what it reaches.
// Pairs whose vertex has HUB_DEGREE edges or more are set aside and expanded by groups
// of blocks (hub_groups), so one hub does not hold one warp for a whole level.
// A level is expanded bottom-up instead (Beamer, Asanović, Patterson, SC 2012, applied
// to path counting) when BC_ALPHA times its edges exceed what a bottom-up step reads
// (the edges not yet explored, and every pair's depth), or its pairs are more than
// 1 / up_share of the batch's: every unreached pair sums the path counts of its
// in-neighbours at the level, with no atomics and no early exit (every shortest path
// counts). Blocks sum the edges they discover in shared memory, one atomic each a level.
// Membership is kept in bits as in bfs.cu's bottom-up steps (after BLEST, Elbek and
// Kaya, arXiv 2512.21967), one bit per pair, so the batch's sources are bit-parallel:
// a visited bitmap, whose one word tells a warp which of its 32 pairs are still open,
// and the pairs of a level in one of three rotating bitmaps (level k in bitmap k % 3).
// "Is this neighbour's pair at level d?" is then a bit test in an array of batch x n
// bits (kron22, one source: 512 KiB, L2-resident) rather than a 16-byte gather from
// the pairs (64 MiB), and a pair's value is read only for the neighbours that count:
// parents in the bottom-up steps, successors in the backward sweep. The bitmaps are
// cleared word by word from the level lists, so a batch still costs what it reaches.
// device.rs chooses where the bits are kept and tested (BcArrays::bit_use).

struct BcCtl {
    u32 blocks_done;
    u32 generation;
    u32 tail;       // pairs recorded so far (the forward sweep appends at the tail)
    u32 hub_len;    // pairs set aside in this level
    u32 hubs_now;   // hub_len as the barrier saw it (the same in every block)
    u32 pad;
    u64 level_edges[2];  // out-edges of level d's pairs at [d & 1]
    u64 explored;        // out-edges of every pair reached before the current level
};

// A pair's state: `value` is sigma until the backward sweep passes the pair's level,
// then (1 + delta) / sigma; `level` is depth + 1, 0 while unreached (so zeroed memory
// is the empty state).
struct __align__(16) BcPair {
    double value;
    u32 level;
    u32 pad;
};

// Both fields in one 16-byte load (values change during a launch: through L2).
__device__ __forceinline__ BcPair load_pair(const BcPair* p) {
    const double2 r = __ldcg((const double2*)p);
    BcPair q;
    q.value = r.x;
    q.level = (u32)__double_as_longlong(r.y);
    return q;
}

#define BC_ALPHA 15u
#define BC_MAX_BLOCKS_PER_SM 6
#define BC_NAN __longlong_as_double(0x7ff8000000000000ll)

// Adds the out-degrees of the lanes' newly reached pairs (j = b * n + v) to the
// block's count (shared memory). Warp-wide.
__device__ __forceinline__ void count_level_edges(u64* block_edges, const u64* off, u32 n, u32 j, bool found) {
    const u32 v = j % n;
    u64 edges = found ? off[v + 1] - off[v] : 0;
    for (int o = 16; o > 0; o >>= 1) edges += __shfl_xor_sync(FULL_MASK, edges, o);
    if ((threadIdx.x & 31) == 0 && edges) atomicAdd(block_edges, edges);
}

// Adds the block's count to level `next_level`'s edges. Block-wide, before a barrier.
__device__ __forceinline__ void flush_level_edges(BcCtl* ctl, u64* block_edges, u32 next_level) {
    __syncthreads();
    if (threadIdx.x == 0 && *block_edges) {
        atomicAdd(&ctl->level_edges[next_level & 1], *block_edges);
        *block_edges = 0;
    }
}

// Run by one thread at the end of level d (every pair of level d + 1 recorded).
__device__ __forceinline__ void bc_level_done(BcCtl* ctl, u32* level_end, u32 d) {
    level_end[d + 1] = __ldcg(&ctl->tail);
    ctl->explored += __ldcg(&ctl->level_edges[d & 1]);
    ctl->level_edges[d & 1] = 0;
}

struct BcArrays {
    const u64* off;
    const u32* adj;
    const u64* in_off;   // in-edges for bottom-up levels (null: top-down only)
    const u32* in_adj;
    const u32* sources;  // this batch's
    BcPair* pair;        // batch x n, zero between launches
    double* hub_sum;     // per hub pair of a level, zero between levels
    u32* order;          // the pairs b * n + v in order of discovery
    u32* level_end;      // level d's pairs end at order[level_end[d]]
    u32* hubs;           // indices into order of this level's hub pairs
    double* bc;
    u32* bits;           // BC_BITMAPS bitmaps of `words` words: visited, then level k in 1 + k % 3
    u32 n;
    u32 batch;
    u32 up_share;        // bottom-up when a level holds more than pairs / up_share (0: never)
    u32 words;
    u32 bit_use;         // BC_BITS_*
    u32 l2_pairs;        // pairs whose states fill the L2
};

// Bits of BcArrays::bit_use: the forward sweep keeps the bitmaps (and may go bottom-up);
// the backward sweep tests successors in them.
// The bitmaps in BcArrays::bits (device.rs's BC_BITMAPS).
#define BC_BITMAPS 4u
#define BC_BITS_FORWARD 1u
#define BC_BITS_BACKWARD 2u

__device__ __forceinline__ u32* visited_bits(const BcArrays& a) { return a.bits; }
__device__ __forceinline__ u32* level_bits(const BcArrays& a, u32 level) { return a.bits + (1 + level % 3) * a.words; }
__device__ __forceinline__ bool bit(const u32* bits, u32 x) { return bits[x >> 5] >> (x & 31) & 1; }
__device__ __forceinline__ void set_bit(u32* bits, u32 x) { atomicOr(&bits[x >> 5], 1u << (x & 31)); }

// Level k's pairs are order[level_begin(k), level_end[k]).
__device__ __forceinline__ u32 level_begin(const BcArrays& a, u32 k) { return k ? __ldcg(&a.level_end[k - 1]) : 0; }

// Zeroes the words of `bits` that hold level k's pairs (nothing else is set in them).
__device__ __forceinline__ void clear_level(const BcArrays& a, u32* bits, u32 k, u32 thread, u32 threads) {
    const u32 end = __ldcg(&a.level_end[k]);
    for (u32 i = level_begin(a, k) + thread; i < end; i += threads) bits[__ldcg(&a.order[i]) >> 5] = 0;
}

// Forward step of pair x at level d over its edges from warp_first on, a warp at a
// time (lanes over 32 consecutive edges), `stride` apart.
__device__ __forceinline__ void bc_expand(BcCtl* ctl, u64* block_edges, const BcArrays& a, u32 x, u32 d, u64 warp_first, u64 stride) {
    const u32 b = x / a.n, u = x - b * a.n;
    const u64 base = (u64)b * a.n;
    const double su = __ldcg(&a.pair[x].value);
    const u64 begin = a.off[u], end = a.off[u + 1];
    for (u64 e0 = begin + warp_first; e0 < end; e0 += stride) {
        const u64 e = e0 + (threadIdx.x & 31);
        bool found = false;
        u32 j = 0;
        if (e < end) {
            j = (u32)(base + a.adj[e]);
            u32 lj = __ldcg(&a.pair[j].level);
            if (lj == 0) {
                lj = atomicCAS(&a.pair[j].level, 0, d + 2);
                found = lj == 0;
                if (found) {
                    lj = d + 2;
                    if (a.bit_use & BC_BITS_FORWARD) {
                        set_bit(visited_bits(a), j);
                        set_bit(level_bits(a, d + 1), j);
                    }
                }
            }
            if (lj == d + 2) atomicAdd(&a.pair[j].value, su);
        }
        warp_append(a.order, &ctl->tail, j, found);
        count_level_edges(block_edges, a.off, a.n, j, found);
    }
}

// The sum of the values of the pairs base + adj[e], for e from begin to end by stride,
// that are at level `level` (BcPair::level, depth + 1): tested by their bits in
// `members` (BITS), or by their states. Path counts of the parents in a bottom-up
// step, coefficients of the successors in the backward sweep.
template <bool BITS>
__device__ __forceinline__ double level_sum(const BcArrays& a, const u32* adj, const u32* members, u32 level, u32 base, u64 begin, u64 end, u64 stride) {
    double sum = 0.0;
    for (u64 e = begin; e < end; e += stride) {
        const u32 j = base + adj[e];
        if (BITS) {
            if (bit(members, j)) sum += __ldcg(&a.pair[j].value);
        } else {
            const BcPair pj = load_pair(&a.pair[j]);
            if (pj.level == level) sum += pj.value;
        }
    }
    return sum;
}

// Bottom-up step into level d + 1: each unreached pair sums the path counts of its
// in-neighbours at level d, a lane per pair of at most 32 in-edges, the warp together
// for larger ones. With BC_BITS_FORWARD a warp's 32 pairs are one word of each bitmap,
// which only this warp writes in this step.
template <bool BITS>
__device__ void bc_bottom_up(BcCtl* ctl, u64* block_edges, const BcArrays& a, u32 d, u32 thread, u32 threads) {
    const u32 lane = threadIdx.x & 31, pairs = a.batch * a.n;
    const u32* front = level_bits(a, d);
    u32* next = level_bits(a, d + 1);
    u32* visited = visited_bits(a);
    for (u32 first = thread & ~31u; first < pairs; first += threads) {
        const u32 x = first + lane;
        const u32 seen = BITS ? __ldcg(&visited[first >> 5]) : 0;
        if (seen == FULL_MASK) continue;
        const bool open = x < pairs && (BITS ? !(seen >> lane & 1) : __ldcg(&a.pair[x].level) == 0);
        const u32 base = open ? x / a.n * a.n : 0;
        const u64 begin = open ? a.in_off[x - base] : 0, end = open ? a.in_off[x - base + 1] : 0;
        const bool small = end - begin <= 32;
        double sum = small ? level_sum<BITS>(a, a.in_adj, front, d + 1, base, begin, end, 1) : 0.0;
        for (u32 large = __ballot_sync(FULL_MASK, !small); large; large &= large - 1) {
            const int owner = __ffs(large) - 1;
            const u64 b = __shfl_sync(FULL_MASK, begin, owner), e_end = __shfl_sync(FULL_MASK, end, owner);
            const u32 owner_base = __shfl_sync(FULL_MASK, base, owner);
            const double part = warp_sum(level_sum<BITS>(a, a.in_adj, front, d + 1, owner_base, b + lane, e_end, 32));
            const double total = __shfl_sync(FULL_MASK, part, 0);
            if (lane == owner) sum = total;
        }
        const bool found = open && sum > 0.0;
        if (found) {
            a.pair[x].level = d + 2;
            a.pair[x].value = sum;
        }
        const u32 word = __ballot_sync(FULL_MASK, found);
        if (BITS && lane == 0 && word) {
            next[first >> 5] = word;
            visited[first >> 5] = seen | word;
        }
        warp_append(a.order, &ctl->tail, x, found);
        count_level_edges(block_edges, a.off, a.n, x, found);
    }
}

// Backward partial sum over pair x's edges first, first + stride, ... of its successors'
// coefficients (1 + delta) / sigma, which their values hold once a level is done:
// delta[x] = sigma[x] * sum, and x's own coefficient is sum + 1 / sigma[x].
__device__ __forceinline__ double bc_pull(const BcArrays& a, u32 x, u32 d, u64 first, u64 stride) {
    const u32 b = x / a.n, u = x - b * a.n;
    const u32 base = b * a.n;
    const u64 begin = a.off[u] + first, end = a.off[u + 1];
    const u32* successors = level_bits(a, d + 1);
    return a.bit_use & BC_BITS_BACKWARD ? level_sum<true>(a, a.adj, successors, d + 2, base, begin, end, stride)
                                        : level_sum<false>(a, a.adj, successors, d + 2, base, begin, end, stride);
}

// Backward step of level d's pairs order[begin, end): a lane per pair of at most 32
// edges, the warp together for larger ones; pairs of HUB_DEGREE edges or more are set
// aside for the grid.
__device__ void bc_backward(BcCtl* ctl, const BcArrays& a, u32 d, u32 begin, u32 end, u32 thread, u32 threads) {
    const u32 lane = threadIdx.x & 31;
    for (u32 first = begin + (thread & ~31u); first < end; first += threads) {
        const u32 i = first + lane;
        const u32 x = i < end ? __ldcg(&a.order[i]) : 0;
        const u32 u = x % a.n;
        const u64 degree = i < end ? a.off[u + 1] - a.off[u] : 0;
        const bool hub = degree >= HUB_DEGREE, small = degree <= 32;
        warp_append(a.hubs, &ctl->hub_len, x, hub);
        double sum = small && i < end ? bc_pull(a, x, d, 0, 1) : 0.0;
        for (u32 large = __ballot_sync(FULL_MASK, !small && !hub); large; large &= large - 1) {
            const int owner = __ffs(large) - 1;
            const double part = warp_sum(bc_pull(a, __shfl_sync(FULL_MASK, x, owner), d, lane, 32));
            const double total = __shfl_sync(FULL_MASK, part, 0);
            if (lane == owner) sum = total;
        }
        if (i < end && !hub) {
            const double sx = __ldcg(&a.pair[x].value);
            a.pair[x].value = isinf(sx) ? BC_NAN : sum + 1.0 / sx;
            if (sum != 0.0 || isinf(sx)) atomicAdd(&a.bc[u], isinf(sx) ? BC_NAN : sx * sum);
        }
    }
}

// Registers bounded so that BC_MAX_BLOCKS_PER_SM blocks fit on an SM (device.rs's
// BC_WIDE_BLOCKS_PER_SM; it picks fewer for road-like graphs).
extern "C" __global__ void __launch_bounds__(256, BC_MAX_BLOCKS_PER_SM) bc_batch(BcCtl* ctl, BcArrays a) {
    const u32 lane = threadIdx.x & 31;
    const u32 thread = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
    const u32 warp = thread / 32, warps = threads / 32;
    auto degree = [&](u32 x) { const u32 u = x % a.n; return a.off[u + 1] - a.off[u]; };
    __shared__ u64 block_edges;
    if (threadIdx.x == 0) block_edges = 0;
    // Level 0: the sources.
    for (u32 b = thread; b < a.batch; b += threads) {
        const u32 x = b * a.n + a.sources[b];
        a.pair[x].level = 1;
        a.pair[x].value = 1.0;
        if (a.bit_use & BC_BITS_FORWARD) {
            set_bit(visited_bits(a), x);
            set_bit(level_bits(a, 0), x);
        }
        a.order[b] = x;
        atomicAdd(&ctl->level_edges[0], (u64)degree(x));
    }
    if (thread == 0) {
        a.level_end[0] = a.batch;
        ctl->tail = a.batch;
        ctl->hub_len = 0;
    }
    grid_barrier(&ctl->blocks_done, &ctl->generation, [](u32) {});
    // Forward: level d's pairs expand into level d + 1.
    u32 d = 0;
    for (;; d++) {
        const u32 begin = level_begin(a, d), end = __ldcg(&a.level_end[d]);
        if (begin == end) break;
        if (d && (a.bit_use & BC_BITS_FORWARD)) clear_level(a, level_bits(a, d - 1), d - 1, thread, threads); // bitmap (d + 2) % 3, next level's next
        const u64 pairs = (u64)a.batch * a.n, edges = __ldcg(&ctl->level_edges[d & 1]);
        const u64 unexplored = (u64)a.batch * a.off[a.n] - __ldcg(&ctl->explored);
        if (a.up_share && ((end - begin) * (u64)a.up_share > pairs || edges * BC_ALPHA > unexplored + pairs)) {
            if (a.bit_use & BC_BITS_FORWARD) {
                bc_bottom_up<true>(ctl, &block_edges, a, d, thread, threads);
            } else {
                bc_bottom_up<false>(ctl, &block_edges, a, d, thread, threads);
            }
            flush_level_edges(ctl, &block_edges, d + 1);
            grid_barrier(&ctl->blocks_done, &ctl->generation, [&](u32 l) {
                if (l == 0) bc_level_done(ctl, a.level_end, d);
            });
            continue;
        }
        for (u32 i = begin + warp; i < end; i += warps) {
            const u32 x = __ldcg(&a.order[i]);
            if (degree(x) >= HUB_DEGREE) {
                if (lane == 0) a.hubs[atomicAdd(&ctl->hub_len, 1)] = x;
                continue;
            }
            bc_expand(ctl, &block_edges, a, x, d, 0, 32);
        }
        flush_level_edges(ctl, &block_edges, d + 1);
        grid_barrier(&ctl->blocks_done, &ctl->generation, [&](u32 l) {
            if (l != 0) return;
            ctl->hubs_now = __ldcg(&ctl->hub_len);
            ctl->hub_len = 0;
            if (ctl->hubs_now == 0) bc_level_done(ctl, a.level_end, d);
        });
        const u32 hubs = __ldcg(&ctl->hubs_now);
        if (hubs) {
            const HubGroups g = hub_groups(hubs);
            for (u32 h = g.group; g.group < g.groups && h < hubs; h += g.groups) {
                bc_expand(ctl, &block_edges, a, __ldcg(&a.hubs[h]), d, g.thread & ~31u, g.threads);
            }
            flush_level_edges(ctl, &block_edges, d + 1);
            grid_barrier(&ctl->blocks_done, &ctl->generation, [&](u32 l) {
                if (l == 0) bc_level_done(ctl, a.level_end, d);
            });
        }
    }
    const u32 levels = d;
    // Backward: pairs of level d pull from level d + 1; level 0 holds the sources,
    // which take no score.
    // With BC_BITS_BACKWARD, level d + 1's bits are set when level d's pairs pull from
    // them; level d's are set for the next step, level d + 2's cleared. The bit tests
    // pay once the reached pairs' states outgrow the L2 (kron22 from one source, 2.4 M
    // pairs in 38 MB: 4.94 ms without, 5.26 with; urand22, 4.2 M: 4.52 / 3.56 ms).
    if (__ldcg(&ctl->tail) <= a.l2_pairs) a.bit_use &= ~BC_BITS_BACKWARD;
    for (d = levels - 1; d >= 1; d--) {
        const u32 begin = level_begin(a, d), end = __ldcg(&a.level_end[d]);
        if (a.bit_use & BC_BITS_BACKWARD) {
            for (u32 i = begin + thread; i < end; i += threads) set_bit(level_bits(a, d), __ldcg(&a.order[i]));
            if (d + 2 < levels) clear_level(a, level_bits(a, d + 2), d + 2, thread, threads);
        }
        bc_backward(ctl, a, d, begin, end, thread, threads);
        grid_barrier(&ctl->blocks_done, &ctl->generation, [&](u32 l) {
            if (l != 0) return;
            ctl->hubs_now = __ldcg(&ctl->hub_len);
            ctl->hub_len = 0;
        });
        const u32 hubs = __ldcg(&ctl->hubs_now);
        if (hubs) {
            // A group's warps add their partial sums to the hub's hub_sum; after the
            // barrier a thread per hub turns its sigma into the coefficient.
            const HubGroups g = hub_groups(hubs);
            for (u32 h = g.group; g.group < g.groups && h < hubs; h += g.groups) {
                const double sum = warp_sum(bc_pull(a, __ldcg(&a.hubs[h]), d, g.thread, g.threads));
                if (lane == 0 && sum != 0.0) atomicAdd(&a.hub_sum[h], sum);
            }
            grid_barrier(&ctl->blocks_done, &ctl->generation, [](u32) {});
            for (u32 h = thread; h < hubs; h += threads) {
                const u32 x = __ldcg(&a.hubs[h]);
                const double sx = __ldcg(&a.pair[x].value), sum = __ldcg(&a.hub_sum[h]);
                a.hub_sum[h] = 0.0;
                a.pair[x].value = isinf(sx) ? BC_NAN : sum + 1.0 / sx;
                if (sum != 0.0 || isinf(sx)) atomicAdd(&a.bc[x % a.n], isinf(sx) ? BC_NAN : sx * sum);
            }
            grid_barrier(&ctl->blocks_done, &ctl->generation, [](u32) {});
        }
    }
    // Leave the arrays and the edge counts as the next batch expects them.
    const u32 reached = __ldcg(&ctl->tail);
    if (thread == 0) ctl->level_edges[0] = ctl->level_edges[1] = ctl->explored = 0;
    for (u32 i = thread; i < reached; i += threads) {
        const u32 x = __ldcg(&a.order[i]);
        a.pair[x] = BcPair{};
        for (u32 k = 0; a.bit_use && k < BC_BITMAPS; k++) a.bits[k * a.words + (x >> 5)] = 0;
    }
}
