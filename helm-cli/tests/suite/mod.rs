mod authority;
mod channels;
mod computer;
mod kit;
mod recall_mode;
mod remote_memory;
mod server;
mod turns;
