// Device-initiated messaging (GMPI-style, design.md §1.3): GPU threads post send and
// receive requests into a ring in host-mapped memory; a host proxy per rank matches
// them MPI-style and moves the bytes (chatty_comm::messaging, whose ring::Slot and
// Layout this mirrors; chatty_gpu::messaging sets it up); completions come back as
// records in mapped memory that threads poll.
//
// Messages of at most 24 bytes go eagerly: the sender's bytes travel in the request
// slot, so the send is complete once posted (its buffer may be reused at once, as
// with MPI's eager protocol; its failures show only at the receiver), and a receiving
// GPU thread copies them from its completion record when it sees GMPI_DONE_INLINE (no
// copy engine, no host synchronisation); larger ones are moved by the proxy with a
// CUDA copy and complete both sides when copied.
//
// Completions come back in a 64-byte record per request (ring::Record): eight 8-byte
// words, each a 4-byte value and the request's lap (NCCL's low-latency protocol), so a
// word is current when it carries the lap, whatever order the words crossed PCIe in.
// Word 0 is the status and a small message's length, words 1..8 its bytes: one
// 16-byte load sees both the completion and a 4-byte message.
//
// Every access to host-mapped memory is a PCIe round trip for a load, so the hot path
// keeps them few: the consumer position is cached in device memory and re-read only
// when the ring looks full, a slot is written as 8-byte words, and a completion is
// polled with one 16-byte load.
//
// Semantics (MPI point-to-point): a receive from `src` (or GMPI_ANY) with `tag` (or
// GMPI_ANY) takes the earliest posted matching send; two messages from one sender that
// both match are received in posting order. A receive buffer smaller than the message
// fails both sides (GMPI_TRUNCATED); an unmatched operation fails after the proxy's
// timeout (GMPI_TIMED_OUT), and one whose peer's proxy stopped with GMPI_PEER_GONE.
// A thread never waits longer than the context's timeout: if the proxy itself is gone,
// waits and full rings give GMPI_TIMED_OUT.
//
// Posting is warp-aggregated: the lanes of a warp that post together reserve their
// slots (whose positions are their request numbers) with one atomic, and the warp
// pays one system-scope fence, not one per message. Back-pressure: a lane waits while its slot still holds
// a request the proxy has not taken, so a full ring loses nothing.

#define GMPI_SEND 1u
#define GMPI_RECV 2u
#define GMPI_PENDING 0u
#define GMPI_DONE 1u
#define GMPI_TIMED_OUT 2u
#define GMPI_TRUNCATED 3u
#define GMPI_PEER_GONE 4u
#define GMPI_DONE_INLINE 5u  // a receive whose bytes wait in the completion record
#define GMPI_INLINE 0x100u   // kind bit: a send's bytes travel in the slot
#define GMPI_INLINE_BYTES 24u
#define GMPI_ANY 0xffffffffu
#define GMPI_SENT 0xfffffffeu  // the id of an eager send: complete when posted
#define GMPI_NUMBERS 0x80000000u  // request numbers wrap below the special ids

struct __align__(64) GmpiRequest {
    u64 seq;  // position + 1 once published, written last
    u32 kind, peer, tag, request;
    u64 bytes, addr;
    unsigned char inline_bytes[GMPI_INLINE_BYTES];  // a small send's bytes (eager)
};

// A rank's context (chatty_gpu::layouts::GmpiCtx).
struct GmpiCtx {
    GmpiRequest* ring;        // host-mapped, mask + 1 slots (a power of two)
    u64 mask;
    u64* head;                // device memory: slots reserved (a request's number is its slot's position)
    const volatile u64* tail; // host-mapped: slots the proxy has taken
    const u64* done;          // host-mapped: 8 words per record, a record per number % max_requests
    u64* recv_addr;           // device memory: each receive's buffer, by record
    u64* tail_seen;           // device memory: the last consumer position read
    u64 timeout_ns;           // the longest any thread waits
    u32 max_requests;         // records (a power of two): at most this many outstanding
    u32 rank;
};

__device__ __forceinline__ u64 gmpi_now() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Sleeps a little longer each time a poll of host-mapped memory comes back empty:
// thousands of threads spinning on PCIe reads would slow the very proxy they wait for.
__device__ __forceinline__ void gmpi_backoff(u32* ns) {
    if (*ns) __nanosleep(*ns);
    *ns = *ns ? min(*ns * 2, 2048u) : 32u;
}

// Posts one request from each lane with `active`; returns the lane's request number
// (GMPI_SENT for an eager send, GMPI_ANY for inactive lanes and for a lane whose slot
// stayed full for the timeout).
// Lanes publish in rounds: those whose slots are free write them, the warp fences once,
// they publish; so a ring smaller than a warp still drains (a lane's slot frees only
// after the proxy took the lanes before it).
__device__ u32 gmpi_post(const GmpiCtx& c, bool active, u32 kind, u32 peer, u32 tag, const void* buf, u64 bytes) {
    const u32 mask = __activemask();
    const u32 ballot = __ballot_sync(mask, active);
    if (!ballot) return GMPI_ANY;
    const u32 lane = threadIdx.x & 31, leader = __ffs(ballot) - 1, below = __popc(ballot & ((1u << lane) - 1));
    u64 base = 0;
    if (lane == leader) base = atomicAdd(c.head, (u64)__popc(ballot));
    base = __shfl_sync(mask, base, leader);
    // A request's number is its slot's position: one atomic hands out both.
    const u64 pos = base + below;
    const u32 id = (u32)pos & (GMPI_NUMBERS - 1);
    const bool eager = kind == GMPI_SEND && bytes <= GMPI_INLINE_BYTES;
    // The slot as seven 8-byte words after `seq` (fewer, wider writes over PCIe).
    u64 words[7] = {0, 0, bytes, (u64)buf, 0, 0, 0};
    if (active) {
        words[0] = (u64)(kind | (eager ? GMPI_INLINE : 0u)) | ((u64)peer << 32);
        words[1] = (u64)tag | ((u64)id << 32);
        // Aligned: whole words (a read past the message stays in its aligned word,
        // inside the allocation's granularity), then the bytes beyond it cleared.
        if (eager && (u64)buf % 8 == 0) {
            for (u32 w = 0; w < (bytes + 7) / 8; w++) words[4 + w] = ((const u64*)buf)[w];
            if (bytes % 8) words[4 + bytes / 8] &= (1ull << (8 * (bytes % 8))) - 1;  // only the message's bytes
        } else if (eager) {
            for (u32 b = 0; b < bytes; b++) words[4 + b / 8] |= (u64)((const unsigned char*)buf)[b] << (8 * (b % 8));
        }
    }
    bool pending = active, posted = false;
    const u64 start = gmpi_now();
    u32 ns = 0;
    while (__any_sync(mask, pending)) {
        // A free slot: the proxy has taken this slot's previous request. The mapped
        // position is read only when the cached one says the ring is full.
        bool ready = false;
        if (pending) {
            ready = pos - *(volatile u64*)c.tail_seen <= c.mask;
            if (!ready) {
                const u64 t = *c.tail;
                atomicMax((unsigned long long*)c.tail_seen, (unsigned long long)t);
                ready = pos - t <= c.mask;
            }
        }
        if (ready) {
            if (kind == GMPI_RECV) c.recv_addr[id & (c.max_requests - 1)] = (u64)buf;
            volatile u64* s = (volatile u64*)&c.ring[pos & c.mask];
            for (u32 w = 0; w < 7; w++) s[1 + w] = words[w];
        }
        // The round's writes, then one fence for all of them, then the publications.
        const bool any_ready = __any_sync(mask, ready);
        __syncwarp(mask);
        if (any_ready && lane == leader) __threadfence_system();
        __syncwarp(mask);
        if (ready) {
            *(volatile u64*)&c.ring[pos & c.mask].seq = pos + 1;
            pending = false;
            posted = true;
        } else if (pending && gmpi_now() - start > c.timeout_ns) {
            pending = false;  // the proxy stopped taking requests: give up
        } else if (pending) {
            gmpi_backoff(&ns);
        }
    }
    if (posted && eager) return GMPI_SENT;
    return posted ? id : GMPI_ANY;
}

__device__ __forceinline__ u32 gmpi_send(const GmpiCtx& c, u32 dst, const void* buf, u64 bytes, u32 tag) {
    return gmpi_post(c, true, GMPI_SEND, dst, tag, buf, bytes);
}

__device__ __forceinline__ u32 gmpi_recv(const GmpiCtx& c, u32 src, void* buf, u64 bytes, u32 tag) {
    return gmpi_post(c, true, GMPI_RECV, src, tag, buf, bytes);
}

// The mark of this use of a record (ring::Layout::lap).
__device__ __forceinline__ u32 gmpi_lap(const GmpiCtx& c, u32 n) {
    return (n >> (__ffs(c.max_requests) - 1)) + 1;
}

// One look at request n's record: GMPI_PENDING until its status word carries the lap;
// then its status, after copying a small message out of the record.
__device__ u32 gmpi_poll(const GmpiCtx& c, u32 n) {
    const u32 lap = gmpi_lap(c, n), index = n & (c.max_requests - 1);
    const u64* rec = c.done + 8ull * index;
    const ulonglong2 head = __ldcv((const ulonglong2*)rec);  // status and the first 4 bytes
    if ((u32)(head.x >> 32) != lap) return GMPI_PENDING;
    const u32 s = (u32)head.x & 0xffff;
    if (s != GMPI_DONE_INLINE) return s;
    const u32 len = min(((u32)head.x >> 16) & 0xffff, GMPI_INLINE_BYTES), last = (len + 3) / 4;
    u64 w[8] = {head.x, head.y};
    for (u32 i = 2; i <= last; i += 2) {
        const ulonglong2 x = __ldcv((const ulonglong2*)(rec + i));
        w[i] = x.x;
        w[i + 1] = x.y;
    }
    // The proxy writes the bytes before the status, so a word without the lap is rare
    // (it crossed late): read it again, for a bounded while.
    for (u32 i = 1; i <= last; i++)
        for (u32 tries = 0; (u32)(w[i] >> 32) != lap; tries++) {
            if (tries > 100000) return GMPI_TIMED_OUT;
            w[i] = *(const volatile u64*)(rec + i);
        }
    unsigned char* out = (unsigned char*)c.recv_addr[index];
    if ((u64)out % 4 == 0 && len % 4 == 0) {
        for (u32 i = 0; i < last; i++) ((u32*)out)[i] = (u32)w[1 + i];
    } else {
        for (u32 b = 0; b < len; b++) out[b] = (unsigned char)((u32)w[1 + b / 4] >> (8 * (b % 4)));
    }
    return GMPI_DONE;
}

// The request's status (GMPI_PENDING while in flight).
__device__ __forceinline__ u32 gmpi_test(const GmpiCtx& c, u32 id) {
    if (id == GMPI_SENT) return GMPI_DONE;
    return id == GMPI_ANY ? GMPI_TIMED_OUT : gmpi_poll(c, id);
}

// Waits for the request; returns its status (GMPI_DONE, or why it failed).
__device__ u32 gmpi_wait(const GmpiCtx& c, u32 id) {
    if (id == GMPI_SENT) return GMPI_DONE;
    if (id == GMPI_ANY) return GMPI_TIMED_OUT;
    const u64 start = gmpi_now();
    u32 s, ns = 0, polls = 0;
    while ((s = gmpi_poll(c, id)) == GMPI_PENDING) {
        if (gmpi_now() - start > c.timeout_ns) return GMPI_TIMED_OUT;
        // A ping-pong's answer comes within microseconds; thousands of threads
        // polling longer would crowd the PCIe link the proxy answers through.
        if (++polls > 16) gmpi_backoff(&ns);
    }
    __threadfence_system();  // a copied message's bytes before the caller reads them
    return s;
}

__device__ __forceinline__ void gmpi_fail(u32* status, u32 s) {
    if (s != GMPI_DONE) atomicMax(status, s);
}

// Ping-pong between two ranks, one thread (the GMPI report's kernel-initiated latency
// experiment): the initiator sends `bytes` and waits for them back, `rounds` times.
extern "C" __global__ void gmpi_pingpong(const GmpiCtx* ctx, u32 peer, char* buf, u64 bytes, u32 rounds, u32 initiator, u32* status) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    const GmpiCtx c = *ctx;
    for (u32 r = 0; r < rounds; r++) {
        u32 a, b;
        if (initiator) {
            a = gmpi_wait(c, gmpi_send(c, peer, buf, bytes, r));
            b = gmpi_wait(c, gmpi_recv(c, peer, buf, bytes, r));
        } else {
            a = gmpi_wait(c, gmpi_recv(c, peer, buf, bytes, r));
            b = gmpi_wait(c, gmpi_send(c, peer, buf, bytes, r));
        }
        gmpi_fail(status, a);
        gmpi_fail(status, b);
        if (a != GMPI_DONE || b != GMPI_DONE) return;
    }
}

// The raw round trip the messaging layer is measured against: the initiator writes
// round r into `theirs` and waits for r in `mine`; the echo side answers (a host
// thread plays the echo for the GPU<->host round trip).
extern "C" __global__ void gmpi_flags(volatile u32* mine, volatile u32* theirs, u32 rounds, u32 initiator, u64 timeout_ns, u32* status) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    for (u32 r = 1; r <= rounds; r++) {
        if (initiator) {
            *theirs = r;
            __threadfence_system();
        }
        const u64 start = gmpi_now();
        while (*mine != r) {
            if (gmpi_now() - start > timeout_ns) { *status = GMPI_TIMED_OUT; return; }
        }
        if (!initiator) {
            *theirs = r;
            __threadfence_system();
        }
    }
}

// Message rate: every thread posts `per_thread` messages of 8 bytes (sends to `peer`
// with its rank as tag, or receives from any rank with any tag), each waited for
// before the next. `aggregate` = 0 posts the lanes one at a time: one atomic and one
// system fence per message instead of per warp.
extern "C" __global__ void gmpi_rate(const GmpiCtx* ctx, u32 peer, u32 kind, u64* buf, u32 per_thread, u32 aggregate, u32* status) {
    const GmpiCtx c = *ctx;
    const u32 t = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
    for (u32 i = 0; i < per_thread; i++) {
        u64* slot = &buf[t];
        if (kind == GMPI_SEND) *slot = ((u64)t << 32) | i;
        const u32 src_or_dst = kind == GMPI_SEND ? peer : GMPI_ANY, tag = kind == GMPI_SEND ? c.rank : GMPI_ANY;
        u32 id = GMPI_ANY;
        if (aggregate) {
            id = gmpi_post(c, true, kind, src_or_dst, tag, slot, 8);
        } else {
            for (u32 l = 0; l < 32; l++) {
                const u32 got = gmpi_post(c, lane == l, kind, src_or_dst, tag, slot, 8);
                if (lane == l) id = got;
            }
        }
        const u32 s = gmpi_wait(c, id);
        gmpi_fail(status, s);
        if (s != GMPI_DONE) return;
    }
}

// Ordering and tag matching, one thread per side. The sender posts n sends without
// waiting (values i, tag i % 3) through whatever ring it has (wrapping it and meeting
// back-pressure when small); the receiver posts its receives tag 2 first, then tag
// 0, then any tag, into out[], and counts what breaks MPI's rules into `status`:
// within a tag, values must come in sending order, and every value must arrive once.
extern "C" __global__ void gmpi_ordered(const GmpiCtx* ctx, u32 peer, u32* data, u32 n, u32 sender, u32* ids, u32* status) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    const GmpiCtx c = *ctx;
    if (sender) {
        for (u32 i = 0; i < n; i++) {
            data[i] = i;
            ids[i] = gmpi_send(c, peer, &data[i], 4, i % 3);
        }
    } else {
        u32 k = 0;
        const u32 order[2] = {2, 0};
        for (u32 o = 0; o < 2; o++)
            for (u32 i = order[o]; i < n; i += 3) { ids[k] = gmpi_recv(c, peer, &data[k], 4, order[o]); k++; }
        for (; k < n; k++) ids[k] = gmpi_recv(c, GMPI_ANY, &data[k], 4, GMPI_ANY);
    }
    for (u32 i = 0; i < n; i++) gmpi_fail(status, gmpi_wait(c, ids[i]));
    if (sender || *status != 0) return;
    u32 k = 0, broken = 0;
    const u32 order[3] = {2, 0, 1};
    for (u32 o = 0; o < 3; o++)
        for (u32 i = order[o]; i < n; i += 3, k++) broken += data[k] != i;
    status[1] = broken;
}
