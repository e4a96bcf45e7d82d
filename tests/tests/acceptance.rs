//! The end-to-end acceptance suite across crates. One binary; each area in
//! `suite/`.

mod suite;
