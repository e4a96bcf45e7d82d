//! Giving start-up's scratch memory back to the OS.
//!
//! Opening the store (migrations, the schema parse) and building the router
//! (each route brings its OpenAPI paths and schemas, dropped once the routes
//! are split off) allocate a few megabytes that are free again by the time
//! the server listens. glibc's allocator keeps freed memory below the top of
//! its heap mapped, so an idle server would carry it for its whole life;
//! `malloc_trim` hands those pages back. Other allocators return memory on
//! their own, so elsewhere this does nothing.

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
