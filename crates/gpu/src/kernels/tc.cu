// Triangle counting on one GPU: the ordered algorithm (Schank and Wagner, WEA 2005)
// with edge-centric intersections by binary search, as GPU counters do (Wang et al.,
// "A Comparative Study on Exact Triangle Counting Algorithms on the GPU", HPGP 2016;
// Gunrock's TC).
//
// Each edge of the undirected simple graph beneath the input is oriented from the
// vertex earlier in the order (degree, id) to the later one (tc_before), so no
// oriented list is longer than sqrt(2m) and each triangle u < v < w is found once,
// from its edge u -> v, as a w in both oriented lists. The oriented list of u holds
// its out-neighbours, then (a directed graph's) in-neighbours that are not also
// out-neighbours: two runs, each ascending, the first `split[u]` long; lookups search
// both. Each triangle credits its three vertices: u and v once per edge (the edge's
// count), w by an atomic per triangle.

__device__ __forceinline__ u64 tc_degree(const u64* off, const u64* in_off, u32 x) {
    return off[x + 1] - off[x] + (in_off ? in_off[x + 1] - in_off[x] : 0);
}

// Whether a precedes b in the orientation's order.
__device__ __forceinline__ bool tc_before(const u64* off, const u64* in_off, u32 a, u32 b) {
    const u64 da = tc_degree(off, in_off, a), db = tc_degree(off, in_off, b);
    return da < db || (da == db && a < b);
}

// Whether w lies in the ascending adj[lo, hi).
__device__ __forceinline__ bool tc_in(const u32* adj, u64 lo, u64 hi, u32 w) {
    u64 a = lo, b = hi;
    while (a < b) {
        const u64 mid = a + (b - a) / 2;
        if (__ldg(&adj[mid]) < w) a = mid + 1; else b = mid;
    }
    return a < hi && __ldg(&adj[a]) == w;
}

// Whether w lies in x's oriented list (both of its runs).
__device__ __forceinline__ bool tc_listed(const u64* dag_off, const u32* split, const u32* dag, u32 x, u32 w) {
    const u64 a = dag_off[x], m = a + split[x], b = dag_off[x + 1];
    return tc_in(dag, a, m, w) || (m < b && tc_in(dag, m, b, w));
}

// The oriented lists, a warp per vertex u. Without `dag` (the first pass) it counts:
// count[u] the oriented list's length, split[u] its first run's, simple[u] u's degree
// in the simple graph. With `dag` it writes each list at dag_off[u] in order (a
// ballot per 32 neighbours keeps their order), and `src` the edges' first vertex.
// A neighbour counts once: a repeat of the one before it in a sorted list, a self-loop,
// or an in-neighbour that is also an out-neighbour adds nothing.
extern "C" __global__ void tc_orient(u32 n, const u64* off, const u32* adj, const u64* in_off, const u32* in_adj,
                                     u32* count, u32* split, u32* simple, const u64* dag_off, u32* dag, u32* src) {
    const u32 lane = threadIdx.x & 31;
    const u32 warps = gridDim.x * blockDim.x / 32;
    for (u32 u = (blockIdx.x * blockDim.x + threadIdx.x) / 32; u < n; u += warps) {
        u32 kept = 0, first_run = 0, distinct = 0;
        for (u32 side = 0; side < (in_off ? 2 : 1); side++) {
            const u64* o = side ? in_off : off;
            const u32* a = side ? in_adj : adj;
            const u64 start = o[u], end = o[u + 1];
            for (u64 base = start; base < end; base += 32) {
                const u64 e = base + lane;
                bool fresh = false;
                u32 v = 0;
                if (e < end) {
                    v = a[e];
                    fresh = v != u && (e == start || a[e - 1] != v) && !(side && tc_in(adj, off[u], off[u + 1], v));
                }
                const bool keep = fresh && tc_before(off, in_off, u, v);
                const u32 mask = __ballot_sync(FULL_MASK, keep);
                distinct += __popc(__ballot_sync(FULL_MASK, fresh));
                if (dag && keep) {
                    const u64 at = dag_off[u] + kept + __popc(mask & ((1u << lane) - 1));
                    dag[at] = v;
                    src[at] = u;
                }
                kept += __popc(mask);
            }
            if (side == 0) first_run = kept;
        }
        if (!dag && lane == 0) {
            count[u] = kept;
            split[u] = first_run;
            simple[u] = distinct;
        }
    }
}

// Oriented lists of at most this many vertices are intersected by one lane alone.
#define TC_LANE_LIST 32

// The triangles on each vertex (`tri`, zeroed), from the m oriented edges: a warp
// takes 32 edges, a lane each; an edge whose shorter list is long is taken by the
// whole warp, one after another. The shorter list's vertices are looked up in the
// longer one.
extern "C" __global__ void tc_count(u64 m, const u64* dag_off, const u32* split, const u32* dag, const u32* src,
                                    u64* tri) {
    const u32 lane = threadIdx.x & 31;
    const u64 warps = (u64)gridDim.x * blockDim.x / 32;
    for (u64 base = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / 32 * 32; base < m; base += warps * 32) {
        const u64 e = base + lane;
        u32 u = 0, v = 0, shorter = 0, longer = 0;
        u64 len = 0;
        if (e < m) {
            u = src[e];
            v = dag[e];
            const u64 lu = dag_off[u + 1] - dag_off[u], lv = dag_off[v + 1] - dag_off[v];
            shorter = lu <= lv ? u : v;
            longer = lu <= lv ? v : u;
            len = lu <= lv ? lu : lv;
        }
        const bool alone = e < m && len <= TC_LANE_LIST;
        if (alone) {
            u64 found = 0;
            for (u64 i = dag_off[shorter]; i < dag_off[shorter + 1]; i++) {
                const u32 w = dag[i];
                if (tc_listed(dag_off, split, dag, longer, w)) {
                    found++;
                    atomicAdd(&tri[w], 1ull);
                }
            }
            if (found) {
                atomicAdd(&tri[u], found);
                atomicAdd(&tri[v], found);
            }
        }
        u32 together = __ballot_sync(FULL_MASK, e < m && !alone);
        while (together) {
            const u32 j = __ffs(together) - 1;
            together &= together - 1;
            const u32 ju = __shfl_sync(FULL_MASK, u, j), jv = __shfl_sync(FULL_MASK, v, j);
            const u32 js = __shfl_sync(FULL_MASK, shorter, j), jl = __shfl_sync(FULL_MASK, longer, j);
            u64 found = 0;
            for (u64 i = dag_off[js] + lane; i < dag_off[js + 1]; i += 32) {
                const u32 w = dag[i];
                if (tc_listed(dag_off, split, dag, jl, w)) {
                    found++;
                    atomicAdd(&tri[w], 1ull);
                }
            }
            for (u32 s = 16; s > 0; s >>= 1) found += __shfl_down_sync(FULL_MASK, found, s);
            if (lane == 0 && found) {
                atomicAdd(&tri[ju], found);
                atomicAdd(&tri[jv], found);
            }
        }
    }
}
