//! A counting wrapper around the system allocator, for `idemsim bench`.
//!
//! The binary installs it as its `#[global_allocator]`; the library only reads
//! it. It counts only while a benchmark has switched it on, so every other
//! command pays one relaxed load per allocation and nothing else. Counting
//! covers all threads: a sweep's workers allocate on their own threads.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

static ENABLED: AtomicBool = AtomicBool::new(false);
static ALLOCS: AtomicU64 = AtomicU64::new(0);
/// Set by the first allocation through the wrapper: tells a library caller
/// (a test binary has no such allocator) whether counts mean anything.
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// The system allocator, counting allocations and reallocations while enabled.
pub struct CountingAlloc;

impl CountingAlloc {
    #[inline(always)]
    fn note(&self) {
        if !INSTALLED.load(Ordering::Relaxed) {
            INSTALLED.store(true, Ordering::Relaxed);
        }
        if ENABLED.load(Ordering::Relaxed) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
    }
}

// SAFETY: every call forwards to `System` with the caller's arguments unchanged.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.note();
        // SAFETY: forwarded as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        self.note();
        // SAFETY: forwarded as is.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as is.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // A growing Vec reallocates: that is an allocation on the hot path too.
        self.note();
        // SAFETY: forwarded as is.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Whether the running binary counts allocations at all.
pub fn installed() -> bool {
    // Any allocation marks it; make sure one happened.
    drop(std::hint::black_box(Box::new(0u8)));
    INSTALLED.load(Ordering::Relaxed)
}

/// Counts the allocations `f` makes (on any thread), or `None` when the
/// counting allocator is not installed (the library used from tests).
pub fn count<R>(f: impl FnOnce() -> R) -> (R, Option<u64>) {
    if !installed() {
        return (f(), None);
    }
    let before = ALLOCS.load(Ordering::SeqCst);
    ENABLED.store(true, Ordering::SeqCst);
    let r = f();
    ENABLED.store(false, Ordering::SeqCst);
    (r, Some(ALLOCS.load(Ordering::SeqCst) - before))
}
