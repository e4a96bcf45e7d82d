mod access;
mod bad_input;
#[cfg(feature = "local-embed")]
mod embed;
mod events;
mod exec;
mod file_events;
mod files;
mod invariants;
mod kit;
mod lifecycle;
mod notes;
mod policy;
mod provisioning;
mod terminals;
mod thread_tail;
