// Device-initiated messaging (GMPI-style, design.md §1.3): GPU threads post send and
// receive requests into a ring in host-mapped memory; a host proxy per GPU matches
// them MPI-style and moves the bytes (chatty_comm::messaging, whose ring::Slot this
// mirrors); completions come back as flags in mapped memory that threads poll.
//
// Posting is warp-aggregated: the lanes of a warp that post together reserve their
// slots and request ids with one atomic each, and the warp pays one system-scope
// fence, not one per message. Back-pressure: a lane waits while its slot still holds
// a request the proxy has not taken, so a full ring loses nothing.

#define GMPI_SEND 1u
#define GMPI_RECV 2u
#define GMPI_PENDING 0u
#define GMPI_DONE 1u
#define GMPI_ANY 0xffffffffu

struct __align__(64) GmpiRequest {
    u64 seq;  // position + 1 once published, written last
    u32 kind, peer, tag, request;
    u64 bytes, addr;
    u64 pad[3];
};

struct GmpiCtx {
    GmpiRequest* ring;       // host-mapped, capacity mask + 1 (a power of two)
    u64 mask;
    u64* head;               // device memory: slots reserved
    const volatile u64* tail;// host-mapped: slots the proxy has taken
    volatile u32* flags;     // host-mapped: completion per request id
    u32* next_request;       // device memory: request ids handed out
    u32 max_requests;        // ids wrap; at most this many may be outstanding
    u32 rank;
};

// Posts one request from each lane with `active`; returns the lane's request id
// (GMPI_ANY for inactive lanes).
__device__ u32 gmpi_post(const GmpiCtx& c, bool active, u32 kind, u32 peer, u32 tag, const void* buf, u64 bytes) {
    const u32 mask = __activemask();
    const u32 ballot = __ballot_sync(mask, active);
    if (!ballot) return GMPI_ANY;
    const u32 lane = threadIdx.x & 31, leader = __ffs(ballot) - 1, below = __popc(ballot & ((1u << lane) - 1));
    u64 base = 0;
    u32 first_id = 0;
    if (lane == leader) {
        base = atomicAdd(c.head, (u64)__popc(ballot));
        first_id = atomicAdd(c.next_request, __popc(ballot));
    }
    base = __shfl_sync(mask, base, leader);
    first_id = __shfl_sync(mask, first_id, leader);
    const u64 pos = base + below;
    u32 id = GMPI_ANY;
    if (active) {
        while (pos - *c.tail > c.mask) {}  // the proxy has not taken this slot's last request
        id = (first_id + below) % c.max_requests;
        c.flags[id] = GMPI_PENDING;
        GmpiRequest* s = &c.ring[pos & c.mask];
        s->kind = kind;
        s->peer = peer;
        s->tag = tag;
        s->request = id;
        s->bytes = bytes;
        s->addr = (u64)buf;
    }
    // The warp's writes, then one fence for all of them, then the publications.
    __syncwarp(mask);
    if (lane == leader) __threadfence_system();
    __syncwarp(mask);
    if (active) *(volatile u64*)&c.ring[pos & c.mask].seq = pos + 1;
    return id;
}

__device__ __forceinline__ u32 gmpi_send(const GmpiCtx& c, u32 dst, const void* buf, u64 bytes, u32 tag) {
    return gmpi_post(c, true, GMPI_SEND, dst, tag, buf, bytes);
}

__device__ __forceinline__ u32 gmpi_recv(const GmpiCtx& c, u32 src, void* buf, u64 bytes, u32 tag) {
    return gmpi_post(c, true, GMPI_RECV, src, tag, buf, bytes);
}

// The request's status (GMPI_PENDING while in flight).
__device__ __forceinline__ u32 gmpi_test(const GmpiCtx& c, u32 id) {
    return c.flags[id];
}

// Waits for the request; returns its status (GMPI_DONE, or the proxy's error code:
// timed out, truncated, peer gone).
__device__ u32 gmpi_wait(const GmpiCtx& c, u32 id) {
    u32 s;
    while ((s = c.flags[id]) == GMPI_PENDING) {}
    return s;
}

// Ping-pong between two ranks, one thread: the initiator sends `bytes` and waits for
// them back, `rounds` times (the GMPI report's kernel-initiated latency experiment).
extern "C" __global__ void gmpi_pingpong(GmpiCtx c, u32 peer, char* buf, u64 bytes, u32 rounds, u32 initiator, u32* status) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    u32 worst = GMPI_DONE;
    for (u32 r = 0; r < rounds; r++) {
        u32 a, b;
        if (initiator) {
            a = gmpi_wait(c, gmpi_send(c, peer, buf, bytes, r));
            b = gmpi_wait(c, gmpi_recv(c, peer, buf, bytes, r));
        } else {
            a = gmpi_wait(c, gmpi_recv(c, peer, buf, bytes, r));
            b = gmpi_wait(c, gmpi_send(c, peer, buf, bytes, r));
        }
        if (a != GMPI_DONE) worst = a;
        if (b != GMPI_DONE) worst = b;
    }
    *status = worst;
}
