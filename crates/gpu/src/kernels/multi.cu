// The multi-GPU engine's kernels (design.md §1.1). Each GPU owns a contiguous range of
// vertices and computes only their values; every GPU keeps a full value array, and
// after each step only updated *boundary* vertices (those another part reads) travel,
// as records of one id word and `width` value words.

// Packs the updated vertices of `list` (or of lo..lo+len when list is null) that
// another part needs (`send_flag`, indexed from lo) into records at `out`: a warp
// ballots which lanes hold one, its leader reserves room for all with one atomic, and
// each lane finds its slot by popcount of the lanes below it.
extern "C" __global__ void mg_pack(const u32* list, const u32* list_len_ptr, u32 list_len, u32 lo,
                                   const unsigned char* send_flag, const u32* values, u32 width,
                                   u32* out, u32* count) {
    const u32 len = list_len_ptr ? __ldcg(list_len_ptr) : list_len;
    const u32 lane = threadIdx.x & 31;
    const u32 stride = gridDim.x * blockDim.x;
    // The loop bound is uniform across each block, so whole warps enter the ballot.
    for (u32 base = blockIdx.x * blockDim.x; base < len; base += stride) {
        const u32 i = base + threadIdx.x;
        bool take = false;
        u32 v = 0;
        if (i < len) {
            v = list ? __ldcg(&list[i]) : lo + i;
            take = send_flag[v - lo] != 0;
        }
        const u32 ballot = __ballot_sync(FULL_MASK, take);
        if (!ballot) continue;
        const u32 leader = __ffs(ballot) - 1;
        u32 at = 0;
        if (lane == leader) at = atomicAdd(count, __popc(ballot));
        at = __shfl_sync(FULL_MASK, at, leader) + __popc(ballot & ((1u << lane) - 1));
        if (take) {
            u32* r = out + (u64)at * (1 + width);
            r[0] = v;
            for (u32 k = 0; k < width; k++) r[1 + k] = __ldcg(&values[(u64)v * width + k]);
        }
    }
}

// Writes `count` received records into the value array (width 0: every vertex gets
// `fill`) and, when `queue` is set, appends the vertices to it (the next frontier).
extern "C" __global__ void mg_apply(const u32* in, u32 count, u32 width, u32 fill, u32* values, u32* queue,
                                    u32* queue_len) {
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        const u32* r = in + (u64)i * (1 + width);
        const u32 v = r[0];
        if (width == 0) values[v] = fill;
        for (u32 k = 0; k < width; k++) values[(u64)v * width + k] = r[1 + k];
        if (queue) warp_append(queue, queue_len, v, true);
    }
}

// Word copy by loads and stores: through a peer pointer it is the "peer" transport,
// to or from host-mapped memory the zero-copy "uva" one. 16-byte accesses when both
// ends and the length allow.
extern "C" __global__ void mg_copy_words(const u32* src, u32* dst, u64 words) {
    const u64 tid = blockIdx.x * (u64)blockDim.x + threadIdx.x, stride = (u64)gridDim.x * blockDim.x;
    if ((((u64)src | (u64)dst) & 15) == 0) {
        const uint4* s = (const uint4*)src;
        uint4* d = (uint4*)dst;
        for (u64 i = tid; i < words / 4; i += stride) d[i] = s[i];
        for (u64 i = words / 4 * 4 + tid; i < words; i += stride) dst[i] = src[i];
    } else {
        for (u64 i = tid; i < words; i += stride) dst[i] = src[i];
    }
}

// SSSP (and BFS on road graphs, every edge 1) as frontier Bellman-Ford, the BSP form
// that partitions (Gunrock's SSSP without its priority queue). A round costs a host
// round trip, so fewer rounds beat less work: no near-far buckets here.
//
// mg_sssp_relax: a warp per frontier vertex over its out-edges into this part; a
// vertex whose distance dropped enters `next` once per round (`stamp`). Power-law
// graphs and parts cut in the graph's own order take it (it measured 13% faster than
// mg_sssp_step with no chase on rmat20 in two parts).
extern "C" __global__ void mg_sssp_relax(const u32* frontier, const u32* frontier_len, const u64* off, const u32* adj,
                                         const u32* weight, u32 is_float, u64* dist, u32* stamp, u32 round,
                                         u32* next, u32* next_len) {
    const u32 len = __ldcg(frontier_len);
    const u32 lane = threadIdx.x & 31;
    const u32 warps = gridDim.x * blockDim.x / 32;
    for (u32 i = (blockIdx.x * blockDim.x + threadIdx.x) / 32; i < len; i += warps) {
        const u32 u = __ldcg(&frontier[i]);
        const u64 du = __ldcg(&dist[u]);
        const u64 begin = off[u], end = off[u + 1];
        for (u64 e = begin; e < end; e += 32) {
            bool push = false;
            u32 v = 0;
            if (e + lane < end) {
                v = adj[e + lane];
                const u64 nd = add_weight(du, weight ? weight[e + lane] : 1u, is_float);
                push = nd < __ldcg(&dist[v]) && nd < atomicMin(&dist[v], nd) && atomicExch(&stamp[v], round) != round;
            }
            warp_append(next, next_len, v, push);
        }
    }
}

// mg_sssp_step: sssp.cu's relaxing step with no threshold (every improved vertex is
// near) and its block-local chase, for road-like graphs cut in BFS order, where a
// round then settles many hops (moscow on two parts: 1,302 rounds -> 76). The last
// block turns the queues; the host ends the loop when no part has work.
extern "C" __global__ void mg_sssp_step(SsspCtl* ctl, SsspArrays a) {
    sssp_work<true>(ctl, a, false);
    if (last_block_done(&ctl->blocks_done)) {
        const u32 parity = ctl->parity;
        ctl->near_len[parity] = 0;
        ctl->parity = parity ^ 1;
        ctl->step += 1;
    }
}

// --mode async: BFS and SSSP (frontier Bellman-Ford; BFS is its unit-weight case) with
// no host in the loop. Each GPU runs one cooperative kernel for the whole traversal.
// A level relaxes the part's frontier (its own vertices that improved, and the
// boundary vertices the other parts sent at the end of the last level) over the
// edges into the part; then every block stores the records of its improved boundary
// vertices straight into each peer's receive buffer through peer pointers, and the
// grid barrier's last block meets the other GPUs through flags in their memory: it
// writes (level, work left) into each peer's mailbox and waits for theirs. The host
// only launches and waits. Receive buffers alternate by level (a peer writes the
// other buffer while this GPU reads), as in the BSP engine.
//
// --mode gmpi runs the same kernel but meets through device-initiated messages
// (gmpi.cuh) instead: records collect in a local buffer behind a header (records,
// work left, level), and the last block sends it to every peer and receives theirs,
// tagged with the level; host proxies match and move them. No peer pointers, no flags
// in another GPU's memory: the way a kernel would talk to a GPU of another server.
#define MG_PARTS_MAX 8
#define MG_HEADER_WORDS 4

// MgAsync in chatty_gpu::multi::asynchronous (a Pod mirror; keep in step).
struct MgAsync {
    const u64* off;
    const u32* adj;
    const u32* weight;  // null: every edge weighs 1 (BFS)
    u64* dist;
    u32* stamp;
    u32* queue[2];
    u32* outbox;        // this level's improved boundary vertices (weighted runs)
    const unsigned char* send_flag;
    u64* mail;          // [2][2][parts]: by level parity, signals (level << 32 | work) then record counts
    u32* inbox[2];
    u32* peer_inbox[2][MG_PARTS_MAX];  // where this part's records land in part r
    u64* peer_mail[MG_PARTS_MAX];      // part r's mailbox
    u64 inbox_at[MG_PARTS_MAX];        // word offset of part r's records in ours
    const GmpiCtx* msg;                // --mode gmpi: this part's messaging context
    u32* outrec;                       // --mode gmpi: header, then this level's records
    u64 timeout_ns;
    u64 sent, received, improved;      // records and improved vertices, for the statistics
    u32 lo, hi, is_float, me, parts;
    u32 len[2], outlen, blocks_done, generation, level, parity, done, error;
    u32 in_len[MG_PARTS_MAX];          // records received for this level, by sender
    u32 in_cap[MG_PARTS_MAX];          // --mode gmpi: words of part r's message, at most
};

__device__ __forceinline__ u64 mg_now() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Every mode's end of a level, once the peers' record counts are in `in_len`.
__device__ void mg_async_next_level(MgAsync* c, u64 total) {
    const u32 x = c->parity, y = x ^ 1;
    for (u32 r = 0; r < c->parts; r++) c->received += c->in_len[r];
    c->sent += (u64)c->outlen * (c->parts - 1);
    c->improved += c->len[y];
    c->len[x] = 0;
    c->outlen = 0;
    c->parity = y;
    c->level += 1;
    if (total == 0) c->done = 1;
}

// The last block's part of a level's end: tell every peer what this part sent and how
// much work is left, wait for theirs, and decide whether anything remains.
__device__ void mg_async_meet(MgAsync* c) {
    const u32 y = c->parity ^ 1, k = c->parts, me = c->me;
    // Mailbox slots alternate by level: a peer one level ahead writes the other slot.
    const u32 slot = 2 * k * y;
    const u64 work = (u64)c->len[y] + c->outlen;
    __threadfence_system();
    for (u32 r = 0; r < k; r++) {
        if (r != me) *(volatile u64*)&c->peer_mail[r][slot + k + me] = c->outlen;
    }
    __threadfence_system();  // the counts before the signals
    const u64 signal = ((u64)c->level << 32) | (work > 0xffffffffull ? 0xffffffffull : work);
    for (u32 r = 0; r < k; r++) {
        if (r != me) *(volatile u64*)&c->peer_mail[r][slot + me] = signal;
    }
    u64 total = work;
    const u64 start = mg_now();
    for (u32 r = 0; r < k; r++) {
        c->in_len[r] = 0;
        if (r == me) continue;
        u64 m;
        while (((m = *(volatile u64*)&c->mail[slot + r]) >> 32) != c->level) {
            if (mg_now() - start > c->timeout_ns) {
                c->error = 1;
                c->done = 1;
                return;
            }
        }
        __threadfence_system();
        total += m & 0xffffffffull;
        c->in_len[r] = (u32)*(volatile u64*)&c->mail[slot + k + r];
    }
    mg_async_next_level(c, total);
}

// --mode gmpi's meeting, by the whole warp: lane r receives peer r's message for this
// level and lane parts + r sends ours to it, all posted at once (one atomic and one
// fence for the warp) and waited for side by side; a failure or timeout ends the run
// with an error.
__device__ void mg_async_meet_messages(MgAsync* c, u32 lane) {
    const GmpiCtx m = *c->msg;
    const u32 y = c->parity ^ 1, k = c->parts, me = c->me, level = c->level;
    const u64 work = (u64)c->len[y] + c->outlen;
    u32* head = c->outrec;
    if (lane == 0) {
        head[0] = c->outlen;
        head[1] = (u32)min(work, 0xffffffffull);
        head[2] = level;
    }
    __syncwarp();
    const bool recv = lane < k;
    const u32 r = recv ? lane : lane - k;
    const bool active = lane < 2 * k && r != me;
    u32* in = active && recv ? c->inbox[y] + c->inbox_at[r] - MG_HEADER_WORDS : nullptr;
    void* buf = recv ? (void*)in : (void*)head;
    const u64 bytes = !active ? 0 : recv ? 4ull * c->in_cap[r] : 4ull * (MG_HEADER_WORDS + 3ull * c->outlen);
    const u32 id = gmpi_post(m, active, recv ? GMPI_RECV : GMPI_SEND, r, level, buf, bytes);
    const u32 s = active ? gmpi_wait(m, id) : GMPI_DONE;
    const u32 failed = __reduce_max_sync(FULL_MASK, s == GMPI_DONE ? 0u : s);
    if (failed) {
        if (lane == 0) {
            c->error = failed == GMPI_TIMED_OUT ? 1 : 0x100 | failed;
            c->done = 1;
        }
        return;
    }
    // Written by a copy engine or a lane of this warp: past L1 (an older level's
    // header may sit there).
    u64 more = 0;
    if (in) {
        c->in_len[r] = __ldcv(&in[0]);
        more = __ldcv(&in[1]);
    } else if (lane == me) {
        c->in_len[me] = 0;
    }
    for (u32 o = 16; o > 0; o >>= 1) more += __shfl_down_sync(FULL_MASK, more, o);
    __syncwarp();
    if (lane == 0) mg_async_next_level(c, work + more);
}

__device__ __forceinline__ void mg_store_record(u32* rec, u32 v, u64 d) {
    rec[0] = v;
    rec[1] = (u32)d;
    rec[2] = (u32)(d >> 32);
}

// Record `at` of this level (parity x) for every peer: straight into their receive
// buffers, or, with messages, once into the local outgoing one.
__device__ __forceinline__ void mg_send_record(const MgAsync* c, u32 x, u32 at, u32 v, u64 d) {
    if (c->msg) {
        mg_store_record(c->outrec + MG_HEADER_WORDS + 3ull * at, v, d);
        return;
    }
    for (u32 r = 0; r < c->parts; r++)
        if (r != c->me) mg_store_record(c->peer_inbox[x ^ 1][r] + 3ull * at, v, d);
}

extern "C" __global__ void mg_async_traverse(MgAsync* c) {
    const u32 lane = threadIdx.x & 31, warps = gridDim.x * blockDim.x / 32;
    const u32 warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const u32 tid = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
    // BFS: a vertex's first improvement is its depth, so its record leaves at once; with
    // weights a later relaxation of the same level may lower it, so records leave after
    // a barrier, with the level's final distances.
    const bool send_at_once = c->weight == 0 && !c->is_float;
    while (!__ldcg(&c->done)) {
        const u32 x = __ldcg(&c->parity), level = __ldcg(&c->level), k = c->parts, lo = c->lo;
        const u32 own = __ldcg(&c->len[x]);
        u32 items = own;
        for (u32 r = 0; r < k; r++) items += __ldcg(&c->in_len[r]);
        bool sent = false;
        // Relax: a warp per frontier item, own vertices first, then received records.
        for (u32 i = warp; i < items; i += warps) {
            u32 u;
            u64 du;
            if (i < own) {
                u = __ldcg(&c->queue[x][i]);
                du = __ldcg(&c->dist[u]);
            } else {
                u32 j = i - own, r = 0;
                while (j >= __ldcg(&c->in_len[r])) j -= __ldcg(&c->in_len[r++]);
                const u32* rec = c->inbox[x] + c->inbox_at[r] + 3ull * j;
                u = __ldcg(&rec[0]);
                du = (u64)__ldcg(&rec[1]) | ((u64)__ldcg(&rec[2]) << 32);
                // Only u's owner sends u, once per level: this warp alone writes it here.
                if (du >= __ldcg(&c->dist[u])) continue;
                if (lane == 0) c->dist[u] = du;
            }
            const u64 begin = c->off[u], end = c->off[u + 1];
            for (u64 e = begin; e < end; e += 32) {
                bool push = false, boundary = false;
                u32 v = 0;
                u64 nd = 0;
                if (e + lane < end) {
                    v = c->adj[e + lane];
                    nd = add_weight(du, c->weight ? c->weight[e + lane] : 1u, c->is_float);
                    push = nd < __ldcg(&c->dist[v]) && nd < atomicMin(&c->dist[v], nd) && atomicExch(&c->stamp[v], level) != level;
                    boundary = push && c->send_flag[v - lo];
                }
                warp_append(c->queue[x ^ 1], &c->len[x ^ 1], v, push);
                const u32 at = warp_reserve(&c->outlen, boundary);
                if (boundary && send_at_once) {
                    mg_send_record(c, x, at, v, nd);
                    sent = true;
                } else if (boundary) {
                    c->outbox[at] = v;
                }
            }
        }
        if (!send_at_once) {
            grid_barrier(&c->blocks_done, &c->generation, [](u32) {});
            // Send each improved boundary vertex's final distance for this level to every
            // peer, into the buffer it reads next level.
            const u32 out = __ldcg(&c->outlen);
            for (u32 i = tid; i < out; i += threads) {
                const u32 v = __ldcg(&c->outbox[i]);
                mg_send_record(c, x, i, v, __ldcg(&c->dist[v]));
                sent = true;
            }
        }
        // Each sender's stores reach the peers before the last block's signals.
        if (sent) __threadfence_system();
        grid_barrier(&c->blocks_done, &c->generation, [&](u32 lane) {
            if (c->msg) {
                mg_async_meet_messages(c, lane);
            } else if (lane == 0) {
                mg_async_meet(c);
            }
        });
    }
}
