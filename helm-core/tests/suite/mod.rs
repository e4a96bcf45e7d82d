mod access;
mod bad_input;
mod events;
mod invariants;
mod kit;
mod lifecycle;
mod policy;
mod provisioning;
