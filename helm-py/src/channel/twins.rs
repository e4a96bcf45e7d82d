//! `twins!`: a blocking method and its asyncio twin from one body.
//!
//! Most methods of the blocking classes (`Channel`, `Memory`, `Files`,
//! `Thread`) and their asyncio twins do the same work and differ only in
//! how Python waits for it: [`blocking`](crate::runtime::blocking) or
//! [`awaitable`](crate::runtime::awaitable). Writing each such body once
//! keeps the twins from drifting apart. A method whose twins differ in more
//! than the wait (Ctrl-C handling, the class of what it returns) is written
//! by hand beside them.

/// Emits a `#[pymethods]` block for a blocking class and one for its
/// asyncio twin, each method from one body. Per method: the blocking twin's
/// doc comment, the word `async`, the asyncio twin's doc comment, an
/// optional `#[pyo3(...)]`, then `fn name(&self, args…) -> T { body }`.
///
/// The body runs on the calling Python thread, with the GIL (argument
/// checks, clones, `?` on `PyResult`), and ends with a `'static` future of
/// `Result<T>` that does the work: the blocking twin returns `T` once it
/// is done, the asyncio twin an awaitable of it. The future's `T` must be
/// spelt out where it is inferred (`collect::<Vec<_>>()`), as the asyncio
/// twin has no return type to infer it from.
macro_rules! twins {
    (
        $blocking:ident / $asyncio:ident;
        $(
            $(#[doc = $doc:literal])*
            async
            $(#[doc = $async_doc:literal])*
            $(#[pyo3($($option:tt)*)])?
            fn $name:ident(&$this:ident $(, $arg:ident: $ty:ty)* $(,)?) -> $out:ty $body:block
        )*
    ) => {
        #[::pyo3::pymethods]
        impl $blocking {
            $(
                $(#[doc = $doc])*
                $(#[pyo3($($option)*)])?
                fn $name(
                    &$this,
                    py: ::pyo3::Python<'_>
                    $(, $arg: $ty)*
                ) -> ::pyo3::PyResult<$out> {
                    $crate::runtime::blocking(py, $body)
                }
            )*
        }

        #[::pyo3::pymethods]
        impl $asyncio {
            $(
                $(#[doc = $async_doc])*
                $(#[pyo3($($option)*)])?
                fn $name<'py>(
                    &$this,
                    py: ::pyo3::Python<'py>
                    $(, $arg: $ty)*
                ) -> ::pyo3::PyResult<::pyo3::Bound<'py, ::pyo3::PyAny>> {
                    $crate::runtime::awaitable(py, $body)
                }
            )*
        }
    };
}

pub(super) use twins;
