//! `1helm` as a user runs it: a real binary over real temporary data dirs.

mod suite;
