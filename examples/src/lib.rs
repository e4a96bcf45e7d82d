//! Runnable examples of embedding Helm; see the `*.rs` files beside this crate.
