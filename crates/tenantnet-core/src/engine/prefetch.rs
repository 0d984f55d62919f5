//! A hint to the processor to start loading memory that the next event will read.
//!
//! On fat-trees of thousands of hosts the ports and packets a run touches outgrow
//! the caches and each event waits for its port or packet to come from memory
//! (BENCHMARKS.md, "Large fat-trees"). The event after the one being handled is
//! known before it runs, so its port or packet can be on its way while this one
//! is handled. A hint changes no result.

/// Asks for the cache line holding the start of `r` (a no-op where the
/// architecture has no hint this crate uses).
#[inline(always)]
pub fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch only hints the cache; it reads nothing and cannot
        // fault, and `r` is a live reference anyway
        unsafe { _mm_prefetch::<_MM_HINT_T0>((r as *const T).cast::<i8>()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}
