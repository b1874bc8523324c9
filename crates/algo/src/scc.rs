//! Kernel: strongly connected components (SCC) of a directed graph. Returns, for
//! every vertex, the smallest vertex id in its component (as [`crate::wcc`] labels);
//! on an undirected graph the strong components are the weak ones, and WCC answers.
//!
//! Multistep, written over the edge map so that every engine with one runs it:
//! 1. trim: a vertex with no live in-edge or no live out-edge (self-loops aside) is
//!    a component of its own; removing it may trim its neighbours, round after round;
//! 2. forward-backward from a pivot (the live vertex of largest in × out degree): the
//!    vertices both reached from it and reaching it are its component, on most graphs
//!    the giant one;
//! 3. colouring, until no vertex is left: every live vertex takes the smallest id
//!    that reaches it (min-label propagation along out-edges); a vertex whose colour
//!    is its own id is a root, and the vertices of its colour that reach it backwards
//!    are its component, of which it is the smallest id (anything smaller reaching a
//!    member would reach the root too). Each of steps 2 and 3 trims what it frees.
//!
//! [1] George M. Slota, Sivasankaran Rajamanickam, Kamesh Madduri. "BFS and
//!     Coloring-Based Parallel Algorithms for Strongly Connected Components and
//!     Related Problems." IPDPS 2014 (Multistep).
//! [2] Lisa K. Fleischer, Bruce Hendrickson, Ali Pınar. "On Identifying Strongly
//!     Connected Components in Parallel." IPDPS Workshops 2000 (forward-backward).
//! [3] Robert Tarjan. "Depth-First Search and Linear Graph Algorithms." SIAM J.
//!     Computing 1(2), 1972 (the reference).

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use rayon::prelude::*;

use chatty_graph::{Graph, Progress};

use crate::edge_map::{EdgeMapGraph, EdgeMapOptions, EdgeOp, Edges};
use crate::frontier::{Bitmap, Frontier};
use crate::Result;

/// The label of a vertex whose component is not known yet.
const LIVE: u32 = u32::MAX;

/// Components' smallest ids, by Multistep on a directed graph, by WCC on an undirected one.
pub fn scc<G: EdgeMapGraph + ?Sized>(g: &G, progress: &dyn Progress) -> Result<Vec<u32>> {
    if !g.is_directed() {
        return crate::wcc::wcc(g);
    }
    let n = g.num_vertices();
    let state = State {
        label: (0..n).into_par_iter().map(|_| AtomicU32::new(LIVE)).collect(),
        ins: counts(g, Edges::Out)?,
        outs: counts(g, Edges::In)?,
    };
    progress.start("scc: vertices placed", n as u64);
    let sources: Vec<u32> = (0..n as u32).into_par_iter().filter(|&v| state.stranded(v)).collect();
    sources.par_iter().for_each(|&v| state.label[v as usize].store(v, Relaxed));
    progress.advance(sources.len() as u64);
    state.trim(g, Frontier::Sparse { n, ids: sources }, progress)?;
    if let Some(pivot) =
        (0..n as u32).into_par_iter().filter(|&v| state.live(v)).max_by_key(|&v| (state.degree_product(v), std::cmp::Reverse(v)))
    {
        let placed = state.forward_backward(g, pivot)?;
        progress.advance(placed.len() as u64);
        state.trim(g, placed, progress)?;
    }
    loop {
        let left: Vec<u32> = (0..n as u32).into_par_iter().filter(|&v| state.live(v)).collect();
        if left.is_empty() {
            break;
        }
        let placed = state.colour(g, left)?;
        progress.advance(placed.len() as u64);
        state.trim(g, placed, progress)?;
    }
    Ok(state.label.into_iter().map(AtomicU32::into_inner).collect())
}

/// Per vertex, the edges of `edges` that reach it from another vertex: in-degrees
/// from out-edges, out-degrees from in-edges (self-loops left out).
fn counts<G: EdgeMapGraph + ?Sized>(g: &G, edges: Edges) -> Result<Vec<AtomicU32>> {
    struct Count<'a>(&'a [AtomicU32]);
    impl EdgeOp for Count<'_> {
        fn update(&self, src: u32, dst: u32, w: u32) -> bool {
            self.update_atomic(src, dst, w)
        }
        fn update_atomic(&self, src: u32, dst: u32, _w: u32) -> bool {
            if src != dst {
                self.0[dst as usize].fetch_add(1, Relaxed);
            }
            false
        }
    }
    let c: Vec<AtomicU32> = (0..g.num_vertices()).into_par_iter().map(|_| AtomicU32::new(0)).collect();
    g.edge_map(edges, Frontier::all(g.num_vertices()), &Count(&c), EdgeMapOptions::PUSH)?;
    Ok(c)
}

/// Labels, and the live edges into and out of each vertex.
struct State {
    label: Vec<AtomicU32>,
    ins: Vec<AtomicU32>,
    outs: Vec<AtomicU32>,
}

impl State {
    fn live(&self, v: u32) -> bool {
        self.label[v as usize].load(Relaxed) == LIVE
    }

    /// Live, with no live edge in or none out: a component of its own.
    fn stranded(&self, v: u32) -> bool {
        self.live(v) && (self.ins[v as usize].load(Relaxed) == 0 || self.outs[v as usize].load(Relaxed) == 0)
    }

    fn degree_product(&self, v: u32) -> u64 {
        self.ins[v as usize].load(Relaxed) as u64 * self.outs[v as usize].load(Relaxed) as u64
    }

    /// Removes the just-placed vertices `placed` from their neighbours' counts, and
    /// places every vertex that this strands as a component of its own, until none is.
    fn trim<G: EdgeMapGraph + ?Sized>(&self, g: &G, mut placed: Frontier, progress: &dyn Progress) -> Result<()> {
        while !placed.is_empty() {
            let n = placed.universe();
            // Out-edges lower their targets' in-counts; in-edges their sources' out-counts.
            let mut via_out = g.edge_map(Edges::Out, placed.clone(), &Strand { state: self, count: &self.ins }, EdgeMapOptions::PUSH)?;
            let mut via_in = g.edge_map(Edges::In, placed, &Strand { state: self, count: &self.outs }, EdgeMapOptions::PUSH)?;
            let mut ids = via_out.ids().to_vec();
            ids.extend_from_slice(via_in.ids());
            progress.advance(ids.len() as u64);
            placed = Frontier::Sparse { n, ids };
        }
        Ok(())
    }

    /// Places the component of `pivot`: the live vertices it reaches and that reach
    /// it, labelled by the smallest of them. Returns them.
    fn forward_backward<G: EdgeMapGraph + ?Sized>(&self, g: &G, pivot: u32) -> Result<Frontier> {
        let n = g.num_vertices();
        let reach = |edges: Edges| -> Result<Bitmap> {
            let seen = Bitmap::new(n);
            seen.set(pivot as usize);
            let mut frontier = Frontier::single(n, pivot);
            while !frontier.is_empty() {
                frontier = g.edge_map(edges, frontier, &Reach { state: self, seen: &seen }, EdgeMapOptions::PUSH)?;
            }
            Ok(seen)
        };
        let (forward, backward) = (reach(Edges::Out)?, reach(Edges::In)?);
        forward.and_with(&backward);
        let members = forward.to_ids();
        let smallest = members[0];
        members.par_iter().for_each(|&v| self.label[v as usize].store(smallest, Relaxed));
        Ok(Frontier::Sparse { n, ids: members })
    }

    /// One round of colouring over the live vertices `left`: places the component of
    /// every root and returns its members.
    fn colour<G: EdgeMapGraph + ?Sized>(&self, g: &G, left: Vec<u32>) -> Result<Frontier> {
        let n = g.num_vertices();
        let colour: Vec<AtomicU32> = (0..n as u32).into_par_iter().map(AtomicU32::new).collect();
        let mut frontier = Frontier::Sparse { n, ids: left.clone() };
        let spread = Spread { state: self, colour: &colour };
        while !frontier.is_empty() {
            frontier = g.edge_map(Edges::Out, frontier, &spread, EdgeMapOptions { dedup: true, ..EdgeMapOptions::PUSH })?;
        }
        let roots: Vec<u32> = left.into_par_iter().filter(|&v| colour[v as usize].load(Relaxed) == v).collect();
        roots.par_iter().for_each(|&r| self.label[r as usize].store(r, Relaxed));
        let mut placed = roots.clone();
        let mut frontier = Frontier::Sparse { n, ids: roots };
        let gather = Gather { state: self, colour: &colour };
        while !frontier.is_empty() {
            frontier = g.edge_map(Edges::In, frontier, &gather, EdgeMapOptions::PUSH)?;
            placed.extend_from_slice(frontier.ids());
        }
        Ok(Frontier::Sparse { n, ids: placed })
    }
}

/// Lowers `count[dst]` for a live `dst`; the edge that strands it places it, alone.
struct Strand<'a> {
    state: &'a State,
    count: &'a [AtomicU32],
}

impl EdgeOp for Strand<'_> {
    fn update(&self, src: u32, dst: u32, w: u32) -> bool {
        self.update_atomic(src, dst, w)
    }
    fn update_atomic(&self, src: u32, dst: u32, _w: u32) -> bool {
        src != dst
            && self.state.live(dst)
            && self.count[dst as usize].fetch_sub(1, Relaxed) == 1
            && self.state.label[dst as usize].compare_exchange(LIVE, dst, Relaxed, Relaxed).is_ok()
    }
}

/// Marks a live `dst` seen.
struct Reach<'a> {
    state: &'a State,
    seen: &'a Bitmap,
}

impl EdgeOp for Reach<'_> {
    fn update(&self, src: u32, dst: u32, w: u32) -> bool {
        self.update_atomic(src, dst, w)
    }
    fn update_atomic(&self, _src: u32, dst: u32, _w: u32) -> bool {
        self.state.live(dst) && self.seen.set_new(dst as usize)
    }
}

/// Lowers a live `dst`'s colour to `src`'s.
struct Spread<'a> {
    state: &'a State,
    colour: &'a [AtomicU32],
}

impl EdgeOp for Spread<'_> {
    fn update(&self, src: u32, dst: u32, w: u32) -> bool {
        self.update_atomic(src, dst, w)
    }
    fn update_atomic(&self, src: u32, dst: u32, _w: u32) -> bool {
        let c = self.colour[src as usize].load(Relaxed);
        self.state.live(dst) && self.colour[dst as usize].fetch_min(c, Relaxed) > c
    }
}

/// Walking in-edges back from a placed vertex `src`, places a live `dst` of its colour
/// in the component that colour names.
struct Gather<'a> {
    state: &'a State,
    colour: &'a [AtomicU32],
}

impl EdgeOp for Gather<'_> {
    fn update(&self, src: u32, dst: u32, w: u32) -> bool {
        self.update_atomic(src, dst, w)
    }
    fn update_atomic(&self, src: u32, dst: u32, _w: u32) -> bool {
        let c = self.colour[src as usize].load(Relaxed);
        self.colour[dst as usize].load(Relaxed) == c && self.state.label[dst as usize].compare_exchange(LIVE, c, Relaxed, Relaxed).is_ok()
    }
}

/// The components of `labels` (an answer of [`scc`]: each vertex's component's
/// smallest member) ordered sinks first: every edge between two components leads
/// from a later one to an earlier one, as Tarjan's algorithm completes them (networkx
/// numbers a condensation's nodes in that order). Kahn's algorithm over the
/// condensation, sources first and ties by label, reversed; out-edges only.
pub fn sinks_first(g: &Graph, labels: &[u32]) -> Vec<u32> {
    let n = g.num_vertices();
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut entering = vec![0u64; n];
    for u in 0..n as u32 {
        members[labels[u as usize] as usize].push(u);
        for &v in g.out_edges().neighbors(u) {
            if labels[v as usize] != labels[u as usize] {
                entering[labels[v as usize] as usize] += 1;
            }
        }
    }
    let mut order: Vec<u32> = (0..n as u32).filter(|&c| !members[c as usize].is_empty() && entering[c as usize] == 0).collect();
    let mut next = 0;
    while next < order.len() {
        let c = order[next];
        next += 1;
        for &u in &members[c as usize] {
            for &v in g.out_edges().neighbors(u) {
                let d = labels[v as usize];
                if d != c {
                    entering[d as usize] -= 1;
                    if entering[d as usize] == 0 {
                        order.push(d);
                    }
                }
            }
        }
    }
    order.reverse();
    order
}

/// The reference: Tarjan's algorithm, iterative, over the out-lists; each component
/// labelled by its smallest member.
pub fn reference(g: &Graph) -> Vec<u32> {
    let n = g.num_vertices();
    const NONE: u32 = u32::MAX;
    let (mut index, mut low, mut on_stack) = (vec![NONE; n], vec![0u32; n], vec![false; n]);
    let (mut stack, mut label, mut next) = (Vec::new(), vec![NONE; n], 0u32);
    for root in 0..n as u32 {
        if index[root as usize] != NONE {
            continue;
        }
        // (vertex, position in its out-list) of the depth-first path.
        let mut path = vec![(root, 0usize)];
        index[root as usize] = next;
        low[root as usize] = next;
        next += 1;
        stack.push(root);
        on_stack[root as usize] = true;
        while let Some(&(v, at)) = path.last() {
            if let Some(&w) = g.out_edges().neighbors(v).get(at) {
                path.last_mut().expect("on the path").1 += 1;
                if index[w as usize] == NONE {
                    index[w as usize] = next;
                    low[w as usize] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w as usize] = true;
                    path.push((w, 0));
                } else if on_stack[w as usize] {
                    low[v as usize] = low[v as usize].min(index[w as usize]);
                }
                continue;
            }
            path.pop();
            if let Some(&(parent, _)) = path.last() {
                low[parent as usize] = low[parent as usize].min(low[v as usize]);
            }
            if low[v as usize] == index[v as usize] {
                let start = stack.iter().rposition(|&x| x == v).expect("v is on the stack");
                let members = stack.split_off(start);
                let smallest = *members.iter().min().expect("v is a member");
                for m in members {
                    on_stack[m as usize] = false;
                    label[m as usize] = smallest;
                }
            }
        }
    }
    label
}

/// Checks labels against [`reference`].
pub fn verify(g: &Graph, labels: &[u32]) -> Result<()> {
    crate::first_mismatch(&reference(g), labels, |a, b| a == b)
}
