//! Examples live beside this crate as `examples/*.rs`.
