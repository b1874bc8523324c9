//! The request ring between GPU threads (producers) and the host proxy (consumer),
//! laid out as `GmpiRequest` in `gmpi.cuh`.
//!
//! Producers reserve slots by adding to a head counter (on the GPU, one atomic per
//! warp), fill them, fence once (per warp), then publish each slot by writing its
//! sequence word `position + 1`. The consumer reads slot `tail % capacity` when its
//! sequence word says it is published, and advances `tail`, which producers read to
//! stop before overwriting a slot not yet consumed (back-pressure: nothing is lost).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

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

/// Bit of `Slot::kind`: the message's bytes (at most [`INLINE_BYTES`]) travel in the
/// slot itself (the eager protocol of small messages: no copy engine involved).
pub const INLINE: u32 = 0x100;
/// The largest message carried in a slot.
pub const INLINE_BYTES: usize = 24;

const _: () = assert!(INLINE_BYTES <= RECORD_BYTES);

/// One 64-byte slot (`GmpiRequest` in gmpi.cuh).
#[repr(C, align(64))]
#[derive(Debug)]
pub struct Slot {
    /// `position + 1` once published; written last, with release semantics.
    pub seq: AtomicU64,
    /// A [`Kind`], with [`INLINE`] when the bytes are in `inline`.
    pub kind: u32,
    /// The peer rank (the destination of a send, the source of a receive).
    pub peer: u32,
    /// The message's tag.
    pub tag: u32,
    /// The request's number: its completion record is `number % requests`, and
    /// [`Layout::lap`] tells the uses of one record apart (below 2³¹).
    pub request: u32,
    /// The message's size.
    pub bytes: u64,
    /// The buffer's address.
    pub addr: u64,
    /// A small send's bytes.
    pub inline: [u8; INLINE_BYTES],
}

const _: () = assert!(std::mem::size_of::<Slot>() == 64);

/// A request as the proxy sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// A send or a receive.
    pub kind: Kind,
    /// The peer rank (the destination of a send, the source of a receive).
    pub peer: u32,
    /// The message's tag.
    pub tag: u32,
    /// The request's number.
    pub request: u32,
    /// The message's size.
    pub bytes: u64,
    /// The buffer's address.
    pub addr: u64,
    /// A small send's bytes, carried in the slot.
    pub inline: Option<[u8; INLINE_BYTES]>,
}

/// Memory the producers and the proxy share: host-mapped pinned memory for a GPU
/// rank, the heap for a host rank in tests. At least [`Layout::bytes`] bytes,
/// zeroed, 64-byte aligned, alive while the region is.
pub trait Region: Send + Sync {
    /// The first byte, as the host sees it.
    fn base(&self) -> *mut u8;
    /// Its size in bytes.
    fn bytes(&self) -> usize;
}

/// Pinned host memory is a region: the device writes it through its mapping.
impl Region for crate::cuda::Pinned {
    fn base(&self) -> *mut u8 {
        self.host.cast()
    }
    fn bytes(&self) -> usize {
        self.bytes
    }
}

/// A region on the heap.
pub struct HeapRegion(Box<[Line]>);

#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Line([u8; 64]);

impl HeapRegion {
    /// `bytes` zeroed bytes (rounded up to whole lines).
    pub fn new(bytes: usize) -> HeapRegion {
        HeapRegion(vec![Line([0; 64]); bytes.div_ceil(64)].into_boxed_slice())
    }
}

impl Region for HeapRegion {
    fn base(&self) -> *mut u8 {
        self.0.as_ptr().cast_mut().cast()
    }
    fn bytes(&self) -> usize {
        64 * self.0.len()
    }
}

/// Where a rank's ring, consumer position and completions lie in its region: `slots`
/// slots of 64 bytes, then the tail on a line of its own, then a 64-byte completion
/// [`Record`] per request number modulo `requests`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Slots of the request ring (a power of two).
    pub slots: usize,
    /// Completion records (a power of two).
    pub requests: usize,
}

/// Request numbers wrap below this (`GMPI_NUMBERS`): ids at or above it are special.
pub const NUMBERS: u32 = 1 << 31;

impl Layout {
    /// `slots` and `requests` rounded up to powers of two (at least 2).
    pub fn new(slots: usize, requests: usize) -> Layout {
        Layout { slots: slots.max(2).next_power_of_two(), requests: requests.clamp(2, 1 << 30).next_power_of_two() }
    }
    /// Where the consumer position lies.
    pub fn tail_offset(&self) -> usize {
        64 * self.slots
    }
    /// Where the completion records start.
    pub fn records_offset(&self) -> usize {
        self.tail_offset() + 64
    }
    /// The region's size.
    pub fn bytes(&self) -> usize {
        self.records_offset() + 64 * self.requests
    }
    /// The record of request `number`.
    pub fn record(&self, number: u32) -> usize {
        number as usize & (self.requests - 1)
    }
    /// The mark of this use of its record: never 0, and different from the last use.
    pub fn lap(&self, number: u32) -> u32 {
        ((number % NUMBERS) >> self.requests.trailing_zeros()) + 1
    }
}

/// A request's completion, in the manner of NCCL's low-latency protocol: eight 8-byte
/// words, each a 4-byte value and the request's [`Layout::lap`], so a reader that
/// sees the lap in a word knows that word is current, whatever order the words landed
/// in, with no separate flag and no fence between data and flag. Word 0 holds the
/// status (low 16 bits) and a small message's length (high 16), words 1..8 its bytes.
#[repr(C, align(64))]
pub struct Record(pub [AtomicU64; 8]);

/// Bytes of a small message a [`Record`] carries.
pub const RECORD_BYTES: usize = 28;

/// A ring and its consumer position, in a [`Region`] the producers can reach.
pub struct Ring {
    slots: *mut Slot,
    capacity: u64,
    /// Slots consumed; producers wait while `head - tail == capacity`.
    tail: *const AtomicU64,
    /// Slots reserved by host producers (a GPU rank's counter lives in device memory).
    head: AtomicU64,
    region: Arc<dyn Region>,
}

impl Ring {
    /// A ring of `capacity` slots (rounded up to a power of two) on the heap.
    pub fn new(capacity: usize) -> Ring {
        let layout = Layout::new(capacity, 1);
        Ring::in_region(Arc::new(HeapRegion::new(layout.bytes())), layout)
    }

    /// The ring `layout` places in `region`.
    ///
    /// # Panics
    /// If the region is smaller than the layout or not 64-byte aligned.
    pub fn in_region(region: Arc<dyn Region>, layout: Layout) -> Ring {
        assert!(
            region.bytes() >= layout.bytes() && (region.base() as usize).is_multiple_of(64),
            "a ring's region is too small or misaligned"
        );
        let base = region.base();
        // SAFETY: in bounds (checked above); the region outlives the ring (held).
        let tail = unsafe { base.add(layout.tail_offset()) } as *const AtomicU64;
        Ring { slots: base.cast(), capacity: layout.slots as u64, tail, head: AtomicU64::new(0), region }
    }

    /// The region that holds the ring.
    pub fn region(&self) -> &Arc<dyn Region> {
        &self.region
    }

    fn tail(&self) -> &AtomicU64 {
        // SAFETY: `tail` points into the held region, 64-byte aligned.
        unsafe { &*self.tail }
    }

    /// Requests the ring holds.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    fn slot(&self, position: u64) -> *mut Slot {
        // SAFETY: the index is below the capacity the region was checked to hold.
        unsafe { self.slots.add((position & (self.capacity - 1)) as usize) }
    }

    /// The next published request, if any (consumer side; one consumer per ring).
    pub fn poll(&self) -> Option<Request> {
        let tail = self.tail().load(Ordering::Relaxed);
        let slot = self.slot(tail);
        // SAFETY: the slot lives as long as the ring; its fields are read only after
        // the acquire load of `seq` shows the producer's writes are complete.
        unsafe {
            if (*slot).seq.load(Ordering::Acquire) != tail + 1 {
                return None;
            }
            let s = &*slot;
            let kind = if s.kind & 0xff == Kind::Send as u32 { Kind::Send } else { Kind::Recv };
            let inline = (s.kind & INLINE != 0 && s.bytes as usize <= INLINE_BYTES).then_some(s.inline);
            let r = Request { kind, peer: s.peer, tag: s.tag, request: s.request, bytes: s.bytes, addr: s.addr, inline };
            self.tail().store(tail + 1, Ordering::Release);
            Some(r)
        }
    }

    /// Enqueues `r` from the host (a host rank, or a test standing in for GPU warps),
    /// waiting while the ring is full; returns false if `give_up` says to stop waiting.
    pub fn push(&self, r: Request, give_up: &dyn Fn() -> bool) -> bool {
        let position = self.head.fetch_add(1, Ordering::Relaxed);
        let mut idle = Idle::default();
        while position - self.tail().load(Ordering::Acquire) >= self.capacity() {
            if give_up() {
                return false;
            }
            idle.wait();
        }
        let slot = self.slot(position);
        // SAFETY: this producer owns the slot: it reserved `position`, and the consumer
        // has moved past the slot's previous use (tail > position - capacity).
        unsafe {
            (*slot).kind = r.kind as u32 | if r.inline.is_some() { INLINE } else { 0 };
            (*slot).inline = r.inline.unwrap_or_default();
            (*slot).peer = r.peer;
            (*slot).tag = r.tag;
            (*slot).request = r.request;
            (*slot).bytes = r.bytes;
            (*slot).addr = r.addr;
            (*slot).seq.store(position + 1, Ordering::Release);
        }
        true
    }
}

// SAFETY: slots are handed from producer to consumer through `seq` (release/acquire),
// each slot has one writer at a time (its reserving producer), and the region is held.
unsafe impl Sync for Ring {}
// SAFETY: as above; the raw pointers point into the held region.
unsafe impl Send for Ring {}

#[cfg(test)]
mod tests {
    use super::*;

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
                        assert!(ring
                            .push(Request { kind: Kind::Send, peer: p, tag: i, request: 0, bytes: 0, addr: 0, inline: None }, &|| false));
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
        let r = |tag| Request { kind: Kind::Recv, peer: 0, tag, request: 0, bytes: 0, addr: 0, inline: None };
        assert!(ring.push(r(1), &|| false));
        assert!(ring.push(r(2), &|| false));
        assert!(!ring.push(r(3), &|| true), "a third request must wait for the consumer");
        assert_eq!(ring.poll().map(|r| r.tag), Some(1));
        assert_eq!(ring.poll().map(|r| r.tag), Some(2));
    }
}
