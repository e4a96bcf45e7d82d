//! helm-core's integration tests, through the public API only. One binary;
//! each area in `suite/`.

mod suite;
