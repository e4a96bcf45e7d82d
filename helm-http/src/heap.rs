//! Giving start-up's scratch memory back to the OS.
//!
//! Opening the store (migrations, the schema parse) and building the router
//! allocate scratch memory that is free again by the time the server
//! listens. (The router no longer composes the OpenAPI description at all:
//! see `routes::described`.) glibc's allocator keeps freed memory below the top of
//! its heap mapped, so an idle server would carry it for its whole life;
//! `malloc_trim` hands those pages back. Other allocators return memory on
//! their own, so elsewhere this does nothing.
//!
//! Recall keeps channels' vectors in matrices of megabytes, dropped as the
//! vector cache evicts them. glibc would place such blocks in its heap once
//! one has been freed (its mmap threshold rises to the largest block freed),
//! and keep them after they are freed: resident memory then grew by
//! 1.6 times the cache's budget. Blocks of a megabyte or more are kept as
//! mappings of their own instead, returned to the OS when freed, so the
//! server's memory follows `memory.vector_cache_mb`.

/// Keeps allocations of a megabyte or more as mappings of their own, given
/// back to the OS when freed (glibc only). Called once, before the store
/// is opened.
#[allow(unsafe_code)]
pub(crate) fn map_large_allocations() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        unsafe extern "C" {
            /// glibc: sets an allocator parameter; returns 1 on success.
            fn mallopt(param: std::ffi::c_int, value: std::ffi::c_int) -> std::ffi::c_int;
        }
        /// glibc's `M_MMAP_THRESHOLD`.
        const M_MMAP_THRESHOLD: std::ffi::c_int = -3;
        // SAFETY: mallopt takes two integers and only sets the allocator's
        // own parameters.
        unsafe {
            mallopt(M_MMAP_THRESHOLD, 1 << 20);
        }
    }
}

/// Returns the allocator's free pages to the OS (glibc only). The one
/// foreign call in this crate, hence the local `unsafe` allowance.
#[allow(unsafe_code)]
pub(crate) fn release_free_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        unsafe extern "C" {
            /// glibc: releases free memory from the heap; `pad` bytes are
            /// kept at its top. Returns 1 if memory was released.
            fn malloc_trim(pad: usize) -> std::ffi::c_int;
        }
        // SAFETY: malloc_trim takes no pointers and is safe to call at any
        // time from any thread; it only takes the allocator's own locks.
        unsafe {
            malloc_trim(0);
        }
    }
}
