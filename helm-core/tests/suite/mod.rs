mod bad_input;
mod events;
mod exec;
mod invariants;
mod kit;
mod lifecycle;
mod policy;
mod provisioning;
