mod authority;
mod channels;
mod computer;
mod kit;
mod lifetimes;
mod remote_memory;
mod server;
mod turns;
