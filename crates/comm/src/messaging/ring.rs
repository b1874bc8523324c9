//! The request ring between GPU threads (producers) and the host proxy (consumer),
//! laid out as `GmpiRequest` in `gmpi.cuh`.
//!
//! Producers reserve slots by adding to a head counter (on the GPU, one atomic per
//! warp), fill them, fence once (per warp), then publish each slot by writing its
//! sequence word `position + 1`. The consumer reads slot `tail % capacity` when its
//! sequence word says it is published, and advances `tail`, which producers read to
//! stop before overwriting a slot not yet consumed (back-pressure: nothing is lost).

use std::sync::atomic::{AtomicU64, Ordering};

/// Waiting by spinning first (a GPU's next request is microseconds away), then
/// yielding the core.
#[derive(Default)]
pub(crate) struct Idle(u32);

impl Idle {
    pub(crate) fn wait(&mut self) {
        self.0 = self.0.saturating_add(1);
        if self.0 < 1024 {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

/// What a request asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Kind {
    /// Send `bytes` at `addr` to `peer` with `tag`.
    Send = 1,
    /// Receive up to `bytes` into `addr` from `peer` (or any) with `tag` (or any).
    Recv = 2,
}

/// One 64-byte slot (`GmpiRequest` in gmpi.cuh).
#[repr(C, align(64))]
#[derive(Debug)]
pub struct Slot {
    /// `position + 1` once published; written last, with release semantics.
    pub seq: AtomicU64,
    pub kind: u32,
    pub peer: u32,
    pub tag: u32,
    /// Completion slot of the request.
    pub request: u32,
    pub bytes: u64,
    pub addr: u64,
    _pad: [u64; 3],
}

const _: () = assert!(std::mem::size_of::<Slot>() == 64);

/// A request as the proxy sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub kind: Kind,
    pub peer: u32,
    pub tag: u32,
    pub request: u32,
    pub bytes: u64,
    pub addr: u64,
}

/// A ring of `capacity` slots (a power of two) and its consumer position, in memory
/// the producers can reach (host-mapped pinned memory for a GPU; a heap buffer in
/// tests).
pub struct Ring {
    slots: Box<[Slot]>,
    /// Slots consumed; producers wait while `head - tail == capacity`.
    tail: AtomicU64,
    /// Slots reserved by producers (on the GPU this counter lives in device memory;
    /// the host-side producer used by tests and host-initiated messages uses this).
    head: AtomicU64,
}

impl Ring {
    /// A ring of `capacity` slots, rounded up to a power of two (at least 2).
    pub fn new(capacity: usize) -> Ring {
        let capacity = capacity.max(2).next_power_of_two();
        let slots = (0..capacity)
            .map(|_| Slot { seq: AtomicU64::new(0), kind: 0, peer: 0, tag: 0, request: 0, bytes: 0, addr: 0, _pad: [0; 3] })
            .collect();
        Ring { slots, tail: AtomicU64::new(0), head: AtomicU64::new(0) }
    }

    pub fn capacity(&self) -> u64 {
        self.slots.len() as u64
    }

    fn slot(&self, position: u64) -> *mut Slot {
        (&self.slots[(position & (self.capacity() - 1)) as usize] as *const Slot).cast_mut()
    }

    /// The next published request, if any (consumer side; one consumer per ring).
    pub fn poll(&self) -> Option<Request> {
        let tail = self.tail.load(Ordering::Relaxed);
        let slot = self.slot(tail);
        // SAFETY: the slot lives as long as the ring; its fields are read only after
        // the acquire load of `seq` shows the producer's writes are complete.
        unsafe {
            if (*slot).seq.load(Ordering::Acquire) != tail + 1 {
                return None;
            }
            let s = &*slot;
            let kind = if s.kind == Kind::Send as u32 { Kind::Send } else { Kind::Recv };
            let r = Request { kind, peer: s.peer, tag: s.tag, request: s.request, bytes: s.bytes, addr: s.addr };
            self.tail.store(tail + 1, Ordering::Release);
            Some(r)
        }
    }

    /// Enqueues `r` from the host (a host rank, or a test standing in for GPU warps),
    /// waiting while the ring is full; returns false if `give_up` says to stop waiting.
    pub fn push(&self, r: Request, give_up: &dyn Fn() -> bool) -> bool {
        let position = self.head.fetch_add(1, Ordering::Relaxed);
        let mut idle = Idle::default();
        while position - self.tail.load(Ordering::Acquire) >= self.capacity() {
            if give_up() {
                return false;
            }
            idle.wait();
        }
        let slot = self.slot(position);
        // SAFETY: this producer owns the slot: it reserved `position`, and the consumer
        // has moved past the slot's previous use (tail > position - capacity).
        unsafe {
            (*slot).kind = r.kind as u32;
            (*slot).peer = r.peer;
            (*slot).tag = r.tag;
            (*slot).request = r.request;
            (*slot).bytes = r.bytes;
            (*slot).addr = r.addr;
            (*slot).seq.store(position + 1, Ordering::Release);
        }
        true
    }

    /// Where the slots start (for mapping to a device).
    pub fn slots_ptr(&self) -> *const Slot {
        self.slots.as_ptr()
    }
}

// SAFETY: slots are handed from producer to consumer through `seq` (release/acquire),
// and each slot has one writer at a time (its reserving producer).
unsafe impl Sync for Ring {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Several producers through a small ring: every message arrives once, each
    /// producer's in its order, though the ring wraps thousands of times.
    #[test]
    fn wraps_around_and_applies_back_pressure_without_loss() {
        let ring = Arc::new(Ring::new(8));
        let (producers, each) = (4u32, 2000u32);
        let handles: Vec<_> = (0..producers)
            .map(|p| {
                let ring = ring.clone();
                std::thread::spawn(move || {
                    for i in 0..each {
                        assert!(ring.push(Request { kind: Kind::Send, peer: p, tag: i, request: 0, bytes: 0, addr: 0 }, &|| false));
                    }
                })
            })
            .collect();
        let mut next = vec![0u32; producers as usize];
        let mut got = 0;
        while got < producers * each {
            if let Some(r) = ring.poll() {
                assert_eq!(r.tag, next[r.peer as usize], "producer {} out of order", r.peer);
                next[r.peer as usize] += 1;
                got += 1;
            }
        }
        handles.into_iter().for_each(|h| h.join().unwrap());
        assert!(ring.poll().is_none());
    }

    #[test]
    fn a_full_ring_makes_the_producer_wait_not_overwrite() {
        let ring = Ring::new(2);
        let r = |tag| Request { kind: Kind::Recv, peer: 0, tag, request: 0, bytes: 0, addr: 0 };
        assert!(ring.push(r(1), &|| false));
        assert!(ring.push(r(2), &|| false));
        assert!(!ring.push(r(3), &|| true), "a third request must wait for the consumer");
        assert_eq!(ring.poll().map(|r| r.tag), Some(1));
        assert_eq!(ring.poll().map(|r| r.tag), Some(2));
    }
}
