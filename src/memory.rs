//! Handing memory the process no longer uses back to the system.
//!
//! glibc keeps freed memory for reuse, so the resident size after a burst of
//! work (the start-up scan of 100,000 skills, a rescan, building the search
//! index) stays at its peak long after the burst: the short-lived vectors of
//! a scan held about as much as the skills themselves. `malloc_trim` returns
//! the free pages; the server calls it after such bursts, never per request.

/// Returns free heap pages to the system (glibc; elsewhere nothing to do:
/// musl, macOS and Windows allocators return memory themselves).
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists under its
    // locks; it is safe to call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}
