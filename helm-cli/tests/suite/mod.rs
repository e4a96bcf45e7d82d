mod authority;
mod channels;
mod computer;
mod kit;
mod server;
mod turns;
