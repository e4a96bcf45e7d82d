//! helm-http's tests: the router without a port, and the binary on a real one.

mod suite;
